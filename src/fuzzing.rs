//! Entry points of the fuzz targets (`fuzz/`), kept in the library so that every input the
//! fuzzer found worth keeping is replayed by `cargo test` (`tests/it/fuzz.rs`).
//!
//! Each takes arbitrary bytes and must return without panicking, whatever they hold; every
//! value and error is also rendered to text, so message formatting is fuzzed too. Work is kept
//! small (tiny canvases, short timelines, a 64 MiB budget) so the fuzzer runs thousands of
//! inputs a second.

use std::io::Write;
use std::path::Path;

use crate::base::error::Error;
use crate::draw::background::Background;
use crate::encode::Effort;
use crate::encode::gif::GifEncoder;
use crate::encode::palette::Palette;
use crate::inspect::plan;
use crate::output::Format;
use crate::render::budget::Estimate;
use crate::render::formats::stream_of;
use crate::render::{Inputs, Run, render_with};
use crate::scene::Scene;
use crate::sim::shore::Shore;
use crate::sim::timeline::point_count;

/// The memory budget under fuzzing.
const BUDGET: u64 = 64 << 20;

/// Whether a valid scene's timeline is small enough to walk: few frames, swipe points and drops.
fn small_timeline(scene: &Scene, frames: u64) -> bool {
    let seconds = scene.end_frame() as f64 / f64::from(scene.fps);
    let rain = scene.rain.as_ref().map_or(0.0, |r| r.drops_per_second * seconds);
    let swipes: u64 = scene.swipes.iter().map(|s| point_count(&s.path)).sum();
    scene.end_frame() <= frames && rain <= 20_000.0 && swipes <= 20_000
}

/// Scene parsing and validation, then the timeline (`plan`, text and JSON) of a small scene.
pub fn scene(data: &[u8]) {
    match Scene::from_bytes(data.to_vec(), Path::new("fuzz/scene.toml")) {
        Ok(scene) => {
            if Estimate::for_timeline(&scene).check(BUDGET).is_ok() && small_timeline(&scene, 2_000) {
                let mut out = Vec::new();
                // A mask's file is not there under fuzzing: its error is described instead.
                let shore = Shore::for_scene_within(&scene, BUDGET).unwrap_or_else(|e| {
                    describe(&e);
                    Shore::open(scene.width as usize, scene.height as usize)
                });
                plan::write_text(&scene, &shore, (plan::Detail::Summary, None), &mut out).expect("plan to memory");
                out.clear();
                plan::write_text(&scene, &shore, (plan::Detail::Events, None), &mut out).expect("plan to memory");
                out.clear();
                plan::write_json(&scene, &shore, None, &mut out).expect("plan to memory");
            }
        }
        Err(e) => describe(&e),
    }
}

/// Background decoding and fitting. The first three bytes choose the canvas (1..=64 a side) and
/// the fit; the rest is the image file.
pub fn background(data: &[u8], scratch: &Path) {
    let [w, h, how, image @ ..] = data else { return };
    let fit = ["cover", "contain", "stretch"][usize::from(*how % 3)];
    let (w, h) = (3 + u32::from(*w % 62), 3 + u32::from(*h % 62));
    if std::fs::write(scratch, image).is_err() {
        return;
    }
    let text = format!(
        "[video]\nwidth = {w}\nheight = {h}\nframes = 1\n[background]\nimage = \"{}\"\nfit = \"{fit}\"\ncolor = \"#{:02x}80c0\"\n",
        scratch.display().to_string().replace('\\', "\\\\").replace('"', "\\\""),
        how
    );
    let scene = match Scene::from_toml_str(&text, Path::new("fuzz/background.toml")) {
        Ok(scene) => scene,
        Err(e) => return describe(&e),
    };
    match Background::for_scene_within(&scene, BUDGET) {
        Ok(background) => assert_eq!(background.pixels.len(), (w * h) as usize),
        Err(e) => describe(&e),
    }
}

/// A tiny end-to-end render: a small valid scene (at most 48×48, 60 frames) to a GIF in memory,
/// which must decode to as many frames as the scene has.
pub fn render(data: &[u8]) {
    let scene = match Scene::from_bytes(data.to_vec(), Path::new("fuzz/render.toml")) {
        Ok(scene) => scene,
        Err(e) => return describe(&e),
    };
    let estimate = Estimate::for_render(&scene, None, (Some(Format::Gif), Effort::Default), 1);
    if scene.width * scene.height > 48 * 48 || estimate.check(BUDGET).is_err() || !small_timeline(&scene, 60) {
        return;
    }
    let inputs = match Inputs::for_scene_within(&scene, BUDGET) {
        Ok(inputs) => inputs,
        Err(e) => return describe(&e),
    };
    let mut gif = Vec::new();
    let palette = Palette::for_background(&inputs.background.pixels);
    let encoder =
        match scene.check_gif_fps().and_then(|()| GifEncoder::new(&mut gif, &stream_of(&scene, &inputs), palette)) {
            Ok(encoder) => encoder.threads(1),
            Err(e) => return describe(&e),
        };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let run = Run {
        inputs: &inputs,
        manifest: None,
        pool: crate::base::pool::Pool::new(1),
        stop: &stop,
        seam: true,
        checkpoints: None,
    };
    match render_with(&scene, encoder, run, &mut |_| {}) {
        Ok(stats) => assert_eq!(stats.frames, scene.frames),
        Err(e) => return describe(&e),
    }
    let mut decoder = gif::DecodeOptions::new().read_info(gif.as_slice()).expect("our GIF decodes");
    let mut frames = 0;
    while decoder.read_next_frame().expect("our GIF's frames decode").is_some() {
        frames += 1;
    }
    assert_eq!(frames, scene.frames, "frames in the GIF");
}

/// Formats an error the way the command line does.
fn describe(e: &Error) {
    let mut sink = std::io::sink();
    let _ = writeln!(sink, "error: {e}");
    for hint in e.hints() {
        let _ = writeln!(sink, "hint: {hint}");
    }
}
