//! The memory budget: before anything large is allocated, a render's peak memory is estimated
//! from the scene, the background image's header and the output, and a scene that would need
//! more than the budget is refused with the estimate, the budget and how to raise it.
//!
//! The estimate sums the stages' own figures (the timeline's events, the water's fields, the
//! shore's lists, the seam's, crossfade's and smoothing's fields, the backdrop, the palette's tables, each
//! encoder's buffers): it is an upper bound of the heap the render uses (checked against a
//! counting allocator in `tests/memory.rs`).

use std::fmt::Write as _;

use crate::base::error::{Error, Result};
use crate::base::picture::ImageHeader;
use crate::base::pool::in_flight;
use crate::base::units::{show, suggest};
use crate::draw::caustics::Caustics;
use crate::draw::look::Backdrop;
use crate::encode::png::apng;
use crate::encode::{Effort, gif, palette, png, video, webp};
use crate::output::Format;
use crate::scene::{Pattern, Scene};
use crate::sim::field::cell_bytes;
use crate::sim::seamless::{crossfade_bytes, seam_bytes};
use crate::sim::shore::Shore;
use crate::sim::smooth::smoothing_bytes;
use crate::sim::timeline::{events_bytes, swipe_path_bytes};
use crate::sim::water;

/// What a part of the estimate grows with, and so what a scene can change to shrink it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grows {
    /// Nothing the scene says: the program itself.
    Program,
    /// The canvas (and what is held per pixel).
    Canvas,
    /// The background image's size.
    Image,
    /// The scene's text and events.
    Scene,
    /// The swipes' paths.
    Swipes,
}

/// One part of the estimate: what it is, its bytes, and what it grows with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its name in messages.
    pub what: &'static str,
    /// Its bytes.
    pub bytes: u64,
    /// What it grows with.
    pub grows: Grows,
}

/// A phase of a render: its parts are held together, and phases follow one another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// Its name in messages.
    pub name: &'static str,
    /// Its parts.
    pub parts: Vec<Part>,
}

/// The estimated peak memory of a render: its fixed costs, then the largest of its phases
/// (reading the scene, decoding the background, making the GIF palette, rendering), each by
/// part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// Costs present throughout: code, tables, the events and the rasterized swipes.
    pub fixed: Vec<Part>,
    /// The phases; only the largest counts.
    pub phases: Vec<Phase>,
}

/// Fixed costs: code, thread stacks, the LZW and deflate tables, I/O buffers.
const BASE: u64 = 16 << 20;

const fn part(what: &'static str, bytes: u64, grows: Grows) -> Part {
    Part { what, bytes, grows }
}

/// A part that grows with the canvas.
const fn canvas(what: &'static str, bytes: u64) -> Part {
    part(what, bytes, Grows::Canvas)
}

/// Reads the scene file at `path` with its `--set` `overrides`, within `budget` bytes: a file
/// whose parsing alone would take more is refused before it is parsed.
pub fn read_scene(path: &std::path::Path, overrides: &[String], budget: u64) -> Result<Scene> {
    read_scene_bytes(Scene::read_file(path)?, path, overrides, budget)
}

/// [`read_scene`] of the scene file's `bytes`, read already.
pub fn read_scene_bytes(bytes: Vec<u8>, path: &std::path::Path, overrides: &[String], budget: u64) -> Result<Scene> {
    Estimate::for_scene_text(crate::scene::parsing_bytes(&bytes, overrides)).check(budget)?;
    Scene::from_bytes_with(bytes, path, overrides)
}

impl Estimate {
    /// Reading (parsing) a scene whose text and parse take `parsing` bytes (see
    /// [`crate::scene::parsing_bytes`]): checked before it is parsed.
    pub fn for_scene_text(parsing: u64) -> Estimate {
        let reading = Phase { name: "reading the scene", parts: vec![part("scene text", parsing, Grows::Scene)] };
        Estimate { fixed: Vec::new(), phases: vec![reading] }
    }

    /// The scene as parsed and its timeline (what `plan` needs): the stones, damping changes and
    /// swipes, each held by the scene and copied by the timeline, and the rasterized swipes.
    pub fn for_timeline(scene: &Scene) -> Estimate {
        let mut estimate = Estimate::for_scene_text(scene.source_bytes);
        estimate.fixed = vec![
            part("scene and timeline", events_bytes(scene), Grows::Scene),
            part("swipe paths", swipe_path_bytes(scene), Grows::Swipes),
        ];
        estimate
    }

    /// A render of `scene` into `format` (`None`: nothing but the simulation, for a hash
    /// manifest) at `effort`, with `threads` encoder threads, and its background `image`, if any.
    pub fn for_render(
        scene: &Scene,
        image: Option<&ImageHeader>,
        (format, effort): (Option<Format>, Effort),
        threads: usize,
    ) -> Estimate {
        let cells = u64::from(scene.width) * u64::from(scene.height);
        let gif = format == Some(Format::Gif);
        let mut estimate = Estimate::for_timeline(scene);
        estimate.fixed.insert(0, part("program, threads and tables", BASE, Grows::Program));
        // The fitted background (RGB) lives from the decode to the end.
        let background = canvas("background", 3 * cells);
        if let Some(image) = image {
            let decoding = vec![part("image", image.decode_bytes(), Grows::Image), background.clone()];
            estimate.phases.push(Phase { name: "decoding the background", parts: decoding });
        }
        if gif {
            estimate.phases.push(Phase { name: "making the palette", parts: palette_parts(scene, cells, threads) });
        }
        // Each frame, in the encoder's pixels; the encoder's own buffers; a manifest converts
        // each frame to RGB to hash it.
        let (frame, encoder) = encoder_bytes_per_pixel(format, effort, threads, cells);
        let mut rendering = vec![
            background,
            canvas("water", water::bytes_per_cell(scene.water.model) * cells),
            canvas("starting surface", water::start::bytes_for(scene)),
            canvas("walls and edges", Shore::bytes_for(scene)),
            canvas("seam", seam_bytes(scene)),
            canvas("crossfade", crossfade_bytes(scene)),
            canvas("smoothing", smoothing_bytes(scene)),
            canvas("frame", frame * cells),
            canvas("encoder", encoder * cells),
            canvas(MANIFEST, 3 * cells),
        ];
        let compresses_apart = matches!(format, Some(Format::Gif | Format::Apng | Format::Webp | Format::PngSequence));
        if scene.look.is_gather() && !compresses_apart && threads > 1 {
            // Frames gathered apart from the water (the encoder leaves the threads to the
            // drawing): a copy of the background in the encoder's pixels, and a few frames in
            // flight (and one kept for the next), each with a copy of its heights.
            let heights = cell_bytes(scene.water.model);
            let frames = (in_flight(threads, (frame + heights) * cells) + 1) * (frame + heights);
            rendering.push(canvas("frames drawn", (frame + frames) * cells));
        }
        if !scene.look.is_gather() {
            // A look draws each frame in RGB from the backdrop; a GIF maps it to indices through
            // the colour table. On several threads, frames are drawn apart from the water, each
            // from a copy of its heights, a few in flight (and one kept for the next).
            let mapped = if gif { 1 } else { 0 };
            let heights = if threads > 1 { cell_bytes(scene.water.model) } else { 0 };
            let apart = if threads > 1 { in_flight(threads, (3 + mapped + heights) * cells) + 1 } else { 1 };
            rendering.extend([
                canvas("backdrop", Backdrop::BYTES_PER_PIXEL * cells),
                canvas("frames drawn", apart * (3 + mapped + heights) * cells),
            ]);
            if gif {
                // One colour table for every thread that maps.
                rendering.push(canvas("colour table", palette::index_bytes(cells)));
            }
            if scene.look.makes_caustics() {
                // Each thread that draws makes the floor's light of its frame, and keeps its
                // buffers for the next.
                rendering.push(canvas("caustics", threads as u64 * Caustics::BYTES_PER_PIXEL * cells));
            }
        }
        estimate.phases.push(Phase { name: "rendering", parts: rendering });
        estimate
    }

    /// The same, without the seam's fields: a render that does not measure it ([`Run::seam`]:
    /// one whose summary is not shown).
    ///
    /// [`Run::seam`]: crate::render::Run::seam
    pub fn without_seam(self) -> Estimate {
        self.without("seam")
    }

    /// The same, without a manifest's frame in RGB: a render that writes no `--hashes`.
    pub fn without_manifest(self) -> Estimate {
        self.without(MANIFEST)
    }

    /// The same, without its parts named `what`.
    fn without(mut self, what: &str) -> Estimate {
        for phase in &mut self.phases {
            phase.parts.retain(|part| part.what != what);
        }
        self
    }

    /// The same, with a stage beside the render that holds `bytes` throughout (a ground truth).
    pub fn beside(mut self, what: &'static str, bytes: u64) -> Estimate {
        self.fixed.push(canvas(what, bytes));
        self
    }

    /// The same, holding a file of at most `limit` bytes in memory (a rung of `--max-size`).
    pub fn holding_file(mut self, limit: u64) -> Estimate {
        self.fixed.push(canvas("file within --max-size", limit));
        self
    }

    fn sum(parts: &[Part]) -> u64 {
        parts.iter().fold(0u64, |sum, part| sum.saturating_add(part.bytes))
    }

    /// The largest phase.
    fn largest(&self) -> Option<&Phase> {
        self.phases.iter().max_by_key(|phase| Estimate::sum(&phase.parts))
    }

    /// The fixed costs and the largest phase.
    pub fn total(&self) -> u64 {
        let largest = self.largest().map_or(0, |phase| Estimate::sum(&phase.parts));
        Estimate::sum(&self.fixed).saturating_add(largest)
    }

    /// Refuses an estimate over `budget`, naming its large parts and what would shrink them.
    pub fn check(&self, budget: u64) -> Result<()> {
        let total = self.total();
        if total <= budget {
            return Ok(());
        }
        let largest = self.largest();
        let parts = || self.fixed.iter().chain(largest.iter().flat_map(|phase| phase.parts.iter()));
        let mut detail = String::new();
        for part in parts().filter(|part| part.bytes >= 1 << 20) {
            let _ = write!(detail, "{}{} {}", if detail.is_empty() { "" } else { ", " }, part.what, show(part.bytes));
        }
        if let Some(phase) = largest {
            detail = format!("{}: {detail}", phase.name);
        }
        // Advise what the scene can change, unless the program's own part alone is over.
        let program: u64 = self.fixed.iter().filter(|part| part.grows == Grows::Program).map(|part| part.bytes).sum();
        let biggest = parts().filter(|part| part.grows != Grows::Program).max_by_key(|part| part.bytes);
        let remedy = match biggest.map(|part| part.grows) {
            _ if program >= budget => format!(" (the program itself takes {})", show(program)),
            Some(Grows::Swipes) => ", or shorten the swipe paths".into(),
            Some(Grows::Scene) => ", or make the scene smaller".into(),
            Some(Grows::Image) => ", or use a smaller background image".into(),
            _ => ", or make the canvas smaller".into(),
        };
        Err(Error::Budget {
            message: format!(
                "this render needs an estimated {} of memory, over the budget of {} ({detail})",
                show(total),
                show(budget)
            ),
            hint: format!("raise the budget with --max-memory {}{remedy}", suggest(total)),
        })
    }
}

/// Making a GIF's palette: the background's indices, and unless its few colours are the
/// palette, the quantizer's tables over the sampled pixels (for a look, also a frame to sample
/// in, and on several threads the frames drawn beside the water: each its heights' copy and its
/// pixels, and the painter's own backdrop) and the table of each colour's nearest entry.
fn palette_parts(scene: &Scene, cells: u64, threads: usize) -> Vec<Part> {
    let mut parts = vec![canvas("background", 3 * cells), canvas("palette indices", cells)];
    // A plain colour or the checker has few colours: its GIF palette is exact, unless a look
    // adds colours. An image or the tiles may have more than 256.
    let few_colours =
        scene.background.image.is_none() && scene.background.pattern != Some(Pattern::Tiles) && scene.look.is_gather();
    if few_colours {
        return parts;
    }
    let sampled = cells.min(palette::SAMPLE as u64);
    parts.extend([
        canvas("quantizer", sampled * palette::QUANTIZER_BYTES_PER_PIXEL),
        canvas("colour table", palette::index_bytes(cells)),
    ]);
    if !scene.look.is_gather() {
        parts.extend([canvas("sampled frame", 3 * cells), canvas("backdrop", Backdrop::BYTES_PER_PIXEL * cells)]);
        if threads > 1 {
            let job = (water::bytes_per_cell(scene.water.model) + 3) * cells;
            let in_flight = crate::base::pool::in_flight(threads, job);
            parts.extend([
                canvas("sampled frames in flight", in_flight * job),
                canvas("painter's backdrop", Backdrop::BYTES_PER_PIXEL * cells),
            ]);
        }
    }
    parts
}

/// What a manifest's frame in RGB is called (each frame is turned into RGB to be hashed).
const MANIFEST: &str = "manifest's frame";

/// Bytes per canvas pixel of a frame in the encoder's pixels, and of the encoder of `format`
/// at `effort` on `threads` threads, on a canvas of `cells` pixels.
fn encoder_bytes_per_pixel(format: Option<Format>, effort: Effort, threads: usize, cells: u64) -> (u64, u64) {
    match format {
        Some(Format::Gif) => (1, gif::bytes_per_pixel(threads, effort, cells)),
        Some(Format::PngSequence | Format::Still) => (3, png::bytes_per_pixel(threads, cells)),
        Some(Format::Apng) => (3, apng::bytes_per_pixel(threads, effort, cells)),
        Some(Format::Webp) => (3, webp::bytes_per_pixel(threads, effort, cells)),
        Some(Format::Mp4 | Format::Webm) => (3, video::BYTES_PER_PIXEL),
        // A copy of the background to refract from.
        None => (3, 3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest canvas there is (16384×4096, rain everywhere) renders to a GIF under
    /// `--max-memory 2G`: its estimate was measured against the peak of such a render, 1.37 GiB
    /// over noise (the worst case for LZW) with the seam measured, 1.12 GiB without.
    #[test]
    fn the_largest_canvas_fits_two_gigabytes_as_a_gif() {
        let src = "[video]\nwidth = 16384\nheight = 4096\nframes = 16\n[rain]\ndrops_per_second = 20000\nseed = 3\n";
        let scene = Scene::from_toml_str(src, std::path::Path::new("big.toml")).unwrap();
        let estimate = Estimate::for_render(&scene, None, (Some(Format::Gif), Effort::Default), 2);
        let shown = estimate.clone().without_manifest().total();
        let quiet = estimate.without_seam().without_manifest().total();
        let (measured_shown, measured_quiet) = (1_430_236u64 << 10, 1_176_616u64 << 10);
        assert!(shown <= 2 << 30 && shown >= measured_shown && shown * 10 <= measured_shown * 11, "{shown}");
        assert!(quiet >= measured_quiet && quiet * 10 <= measured_quiet * 11, "{quiet}");
    }

    #[test]
    fn the_message_names_the_estimate_the_budget_and_the_way_out() {
        let estimate = Estimate {
            fixed: vec![part("swipe paths", 0, Grows::Swipes), part("tables", 1 << 20, Grows::Program)],
            phases: vec![
                Phase { name: "decoding", parts: vec![part("image", 1 << 30, Grows::Image)] },
                Phase { name: "rendering", parts: vec![canvas("water", 2 << 30)] },
            ],
        };
        let e = estimate.check(1 << 30).unwrap_err();
        assert_eq!(
            e.to_string(),
            "this render needs an estimated 2.0 GiB of memory, over the budget of 1.0 GiB \
             (rendering: tables 1.0 MiB, water 2.0 GiB)"
        );
        assert_eq!(e.hints(), vec!["raise the budget with --max-memory 3G, or make the canvas smaller".to_string()]);
        assert!(estimate.check((2 << 30) + (1 << 20)).is_ok());
    }
}
