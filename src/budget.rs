//! The memory budget: before anything large is allocated, a render's peak memory is estimated
//! from the scene, the background image's header and the output, and a scene that would need
//! more than the budget is refused with the estimate, the budget and how to raise it.
//!
//! The estimate is an upper bound of the heap the render uses (checked against a counting
//! allocator in `tests/memory.rs`); the decoded background may take at most a quarter of it,
//! which stops decompression bombs (a small file that inflates to hundreds of MB).

use std::fmt::Write as _;

use crate::error::{Error, Result};
pub use crate::picture::ImageHeader;
use crate::scene::{Model, Scene};
use crate::units::{show, suggest};

pub use crate::units::parse_size;

/// The budget when none is given: 1 GiB.
pub const DEFAULT_BUDGET: u64 = 1 << 30;

/// What is being made, as far as memory goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// An animated GIF.
    Gif,
    /// A PNG sequence, or one still PNG.
    Png,
    /// An animated PNG: frames compressed on threads as for a PNG sequence, and the last frame
    /// kept to find what changed.
    Apng,
    /// An animated WebP: the same, with our VP8L encoder's working memory.
    Webp,
    /// A video: each frame goes into ffmpeg's pipe (ffmpeg's own memory is its own).
    Video,
    /// Nothing but the simulation (a hash manifest, `plan`).
    Nothing,
}

/// The estimated peak memory of a render: its fixed costs, then the largest of its phases
/// (decoding the background, making the GIF palette, rendering), each by part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// Costs present throughout: code, tables, the rasterized swipes.
    pub fixed: Vec<(&'static str, u64)>,
    /// Each phase's name and parts; the phases follow one another, so only the largest counts.
    pub phases: Vec<(&'static str, Vec<(&'static str, u64)>)>,
}

/// Points of a swipe's polyline once rasterized (SPEC §3), counted without rasterizing it.
pub fn swipe_points(path: &[[i64; 2]]) -> u64 {
    crate::timeline::point_count(path)
}

/// Fixed costs: code, thread stacks, the LZW and deflate tables, I/O buffers.
const BASE: u64 = 16 << 20;
/// The name of the fixed cost of the program itself.
const PROGRAM: &str = "program, threads and tables";
/// Bytes per rasterized swipe point.
const SWIPE_POINT: u64 = std::mem::size_of::<[i64; 2]>() as u64;
/// The most the scene parser holds per byte of scene text, at its peak (its token stream and
/// tree beside the text itself): measured at up to 125 for the densest text (`[1,1,1,…]`), and
/// about 95 for lists of stones or of path points.
pub const PARSE_PER_BYTE: u64 = 160;

impl Estimate {
    /// Reading (parsing) a scene file of `bytes` bytes: checked before it is parsed.
    pub fn for_scene_text(bytes: u64) -> Estimate {
        let parsing = bytes.saturating_mul(PARSE_PER_BYTE + 1);
        Estimate { fixed: Vec::new(), phases: vec![("reading the scene", vec![("scene text", parsing)])] }
    }

    /// The scene as parsed and its timeline (what `plan` needs): the stones, damping changes and
    /// swipes, each held by the scene and copied by the timeline, and the rasterized swipes.
    pub fn for_timeline(scene: &Scene) -> Estimate {
        use std::mem::size_of;
        let points: u64 = scene.swipes.iter().map(|s| swipe_points(&s.path)).sum();
        let corners: u64 = scene.swipes.iter().map(|s| s.path.len() as u64).sum();
        let count = |n: usize, each: usize| (n as u64).saturating_mul(each as u64);
        let held = count(scene.stones.len(), size_of::<crate::scene::Stone>() + crate::timeline::STONE_BYTES)
            .saturating_add(count(scene.damping.len(), 2 * size_of::<crate::scene::DampingChange>()))
            .saturating_add(count(scene.swipes.len(), size_of::<crate::scene::Swipe>() + crate::timeline::SWIPE_BYTES))
            .saturating_add(corners.saturating_mul(SWIPE_POINT));
        Estimate {
            fixed: vec![("scene and timeline", held), ("swipe paths", points.saturating_mul(SWIPE_POINT))],
            phases: vec![(
                "reading the scene",
                vec![("scene text", scene.source_bytes.saturating_mul(PARSE_PER_BYTE + 1))],
            )],
        }
    }

    /// A render of `scene` into `output`, with `threads` encoder threads (each keeps up to two
    /// frames in flight) and its background `image`, if any.
    pub fn for_render(scene: &Scene, image: Option<&ImageHeader>, output: Output, threads: usize) -> Estimate {
        let cells = u64::from(scene.width) * u64::from(scene.height);
        let in_flight = 2 * threads.max(1) as u64;
        let mut estimate = Estimate::for_timeline(scene);
        estimate.fixed.insert(0, (PROGRAM, BASE));
        // The fitted background (RGB) lives from the decode to the end.
        let background = ("background", 3 * cells);
        if let Some(image) = image {
            estimate.phases.push(("decoding the background", vec![("image", image.decode_bytes()), background]));
        }
        // A look reads the background packed one pixel per word.
        let backdrop = crate::look::Backdrop::BYTES_PER_PIXEL;
        let colour_index = ("colour table", crate::encode::palette::index_bytes(cells));
        // A plain colour or the checker has few colours: its GIF palette is exact, unless a
        // look adds colours. An image or the tiles may have more than 256.
        let few_colours = scene.background.image.is_none()
            && scene.background.pattern != Some(crate::scene::Pattern::Tiles)
            && scene.look.is_gather();
        if output == Output::Gif && few_colours {
            estimate.phases.push(("making the palette", vec![background, ("palette indices", cells)]));
        } else if output == Output::Gif {
            // The background's palette indices; the quantizer's tables over the sampled pixels
            // (for a look, also a frame to sample in); the table of each colour's nearest entry.
            let sampled = cells.min(crate::encode::palette::SAMPLE as u64);
            let mut parts = vec![
                background,
                ("palette indices", cells),
                ("quantizer", sampled * crate::encode::palette::QUANTIZER_BYTES_PER_PIXEL),
                colour_index,
            ];
            if !scene.look.is_gather() {
                parts.extend([("sampled frame", 3 * cells), ("backdrop", backdrop * cells)]);
            }
            estimate.phases.push(("making the palette", parts));
        }
        let water = match scene.water.model {
            Model::Classic => 2 * 2,
            Model::Spring => 3 * 4,
        };
        let (frame, encoder) = match output {
            // Palette indices of the background and of the previous frame; each frame in flight
            // as indices plus its compressed bytes.
            Output::Gif => (1, 2 + in_flight * 2),
            // The encoder's copy of the background; each frame in flight as RGB, and on each
            // thread the buffers of the frame it compresses.
            Output::Png => (3, 3 + in_flight * 3 + threads.max(1) as u64 * crate::encode::png::WORKING_BYTES_PER_PIXEL),
            Output::Apng => {
                (3, 3 + 3 + in_flight * 3 + threads.max(1) as u64 * crate::encode::apng::WORKING_BYTES_PER_PIXEL)
            }
            Output::Webp => {
                (3, 3 + 3 + in_flight * 3 + threads.max(1) as u64 * crate::encode::webp::WORKING_BYTES_PER_PIXEL)
            }
            // The encoder's copy of the background and a row.
            Output::Video => (3, 3),
            // A copy of the background to refract from.
            Output::Nothing => (3, 3),
        };
        // A manifest converts each frame to RGB to hash it.
        let hashing = 3;
        let mut rendering = vec![
            background,
            ("water", water * cells),
            ("walls and edges", shore_bytes(scene)),
            // The seam's first and previous fields and its sum a frame; a crossfade's kept
            // fields and its blend.
            ("seam", field_bytes(scene) * 2 * cells + scene.frames * crate::seamless::Seam::BYTES_PER_FRAME),
            ("crossfade", scene.seamless.crossfade.map_or(0, |o| (o + 1) * field_bytes(scene) * cells)),
            ("frame", frame * cells),
            ("encoder", (encoder + hashing) * cells),
        ];
        if !scene.look.is_gather() {
            // A look draws each frame in RGB from the backdrop; a GIF maps it to indices through
            // the colour table.
            rendering.extend([("backdrop", backdrop * cells), ("frame in RGB", 3 * cells)]);
            if output == Output::Gif {
                rendering.extend([("frame indices", cells), colour_index]);
            }
        }
        estimate.phases.push(("rendering", rendering));
        estimate
    }

    fn sum(parts: &[(&'static str, u64)]) -> u64 {
        parts.iter().fold(0u64, |sum, (_, bytes)| sum.saturating_add(*bytes))
    }

    /// The fixed costs and the largest phase.
    pub fn total(&self) -> u64 {
        let largest = self.phases.iter().map(|(_, parts)| Estimate::sum(parts)).max().unwrap_or(0);
        Estimate::sum(&self.fixed).saturating_add(largest)
    }

    /// Refuses an estimate over `budget`.
    pub fn check(&self, budget: u64) -> Result<()> {
        let total = self.total();
        if total <= budget {
            return Ok(());
        }
        let mut detail = String::new();
        let largest = self.phases.iter().max_by_key(|(_, parts)| Estimate::sum(parts));
        let parts = self.fixed.iter().chain(largest.iter().flat_map(|(_, parts)| parts.iter()));
        for (name, bytes) in parts.filter(|(_, b)| *b >= 1 << 20) {
            let _ = write!(detail, "{}{name} {}", if detail.is_empty() { "" } else { ", " }, show(*bytes));
        }
        if let Some((phase, _)) = largest {
            detail = format!("{phase}: {detail}");
        }
        // Advise what the scene can change, unless the program's own part alone is over.
        let program = self.fixed.iter().filter(|(name, _)| *name == PROGRAM).map(|(_, b)| *b).sum::<u64>();
        let scene_parts = self.fixed.iter().chain(largest.iter().flat_map(|(_, p)| p.iter()));
        let biggest = scene_parts.filter(|(name, _)| *name != PROGRAM).max_by_key(|(_, b)| *b);
        let remedy = match biggest.map(|(name, _)| *name) {
            _ if program >= budget => format!(" (the program itself takes {})", show(program)),
            Some("swipe paths") => ", or shorten the swipe paths".into(),
            Some("scene text") | Some("scene and timeline") => ", or make the scene smaller".into(),
            Some("image") => ", or use a smaller background image".into(),
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

/// The decode budget of a background image: a quarter of the memory budget.
pub fn decode_budget(budget: u64) -> u64 {
    budget / 4
}

/// Refuses a background image whose decode would take more than a quarter of `budget`.
pub fn check_image(image: &ImageHeader, budget: u64) -> std::result::Result<(), String> {
    let bytes = image.decode_bytes();
    if bytes <= decode_budget(budget) {
        return Ok(());
    }
    Err(format!(
        "it is {}×{} and would take {} to decode, over the decode budget of {} (a quarter of the memory budget, {}); \
         raise it with --max-memory {}",
        image.width,
        image.height,
        show(bytes),
        show(decode_budget(budget)),
        show(budget),
        suggest(bytes.saturating_mul(4))
    ))
}

/// What a scene's walls and edges (SPEC §8) hold at most: the walls' bits, shared; and in each
/// of two copies of the shore (the drawing's and the water's) the listed wall runs (at most a
/// byte per 8 cells, see [`crate::shore::CELLS_PER_LISTED_RUN`]), the cells of absorbing and
/// wrapped edges with their neighbours (44 bytes per border cell at most) and three row indexes.
/// Bytes a cell of a model's height field takes.
fn field_bytes(scene: &Scene) -> u64 {
    match scene.water.model {
        Model::Classic => 2,
        Model::Spring => 4,
    }
}

fn shore_bytes(scene: &Scene) -> u64 {
    if scene.shore.is_open() {
        return 0;
    }
    let (w, h) = (u64::from(scene.width), u64::from(scene.height));
    let cells = w * h;
    let bits = if scene.shore.has_walls() { cells.div_ceil(8) } else { 0 };
    let runs = if scene.shore.has_walls() { cells / crate::shore::CELLS_PER_LISTED_RUN as u64 * 8 + 8 } else { 0 };
    let copy = runs + 2 * (w + h) * 44 + 3 * 4 * (h + 1);
    bits + 2 * copy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swipe_points_are_counted_as_rasterized() {
        let path = [[0, 0], [5, 2], [5, 2], [-3, 10]];
        assert_eq!(swipe_points(&path), crate::timeline::rasterize(&path).len() as u64);
        assert_eq!(swipe_points(&[[7, 7]]), 1);
        assert_eq!(swipe_points(&[[-65536, -65536], [65536, 0]]), 131073);
    }

    #[test]
    fn the_message_names_the_estimate_the_budget_and_the_way_out() {
        let estimate = Estimate {
            fixed: vec![("swipe paths", 0), ("tables", 1 << 20)],
            phases: vec![("decoding", vec![("image", 1 << 30)]), ("rendering", vec![("water", 2 << 30)])],
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
