//! The one palette of a GIF of a scene: the background's own colours when there are at most 256
//! and frames only move them; otherwise 255 colours chosen from the background, and for a look
//! (which makes colours the background lacks) from frames sampled evenly over the render in a
//! first pass of the simulation.

use super::Inputs;
use crate::draw::Lens;
use crate::draw::look::Backdrop;
use crate::draw::refract::Height;
use crate::encode::palette::{Palette, SAMPLE};
use crate::encode::quantize::Histogram;
use crate::scene::{Model, Scene};
use crate::sim::field::Threads;
use crate::sim::timeline::Schedule;
use crate::sim::water::{Classic, Spring, Water};
use crate::sim::{Simulation, Surface};

/// Frames sampled over a render to choose a look's palette from.
pub const SAMPLES: u64 = 24;

/// The one palette of a GIF of `scene` (see the module's summary). With `dither`, a quantized
/// background is dithered to the palette once (frames only move its pixels, so they do not
/// shimmer); a look's frames are not dithered. The first pass runs on `threads`.
pub fn gif_palette(scene: &Scene, inputs: &Inputs, dither: bool, threads: usize) -> Palette {
    gif_palette_within(scene, inputs, dither, threads, 256)
}

/// [`gif_palette`] in a palette of at most `entries` (2 to 256, one of them left for
/// transparency when the colours are chosen): fewer colours, a smaller GIF.
pub fn gif_palette_within(scene: &Scene, inputs: &Inputs, dither: bool, threads: usize, entries: usize) -> Palette {
    let background = &inputs.background;
    if scene.look.is_gather() {
        let mut palette = Palette::for_background_within(&background.pixels, entries);
        if dither {
            palette.dither(&background.pixels, background.width);
        }
        return palette;
    }
    let histogram = match scene.water.model {
        Model::Classic => sampled_frames::<Classic>(scene, inputs, threads),
        Model::Spring => sampled_frames::<Spring>(scene, inputs, threads),
    };
    Palette::for_look_within(histogram, &background.pixels, entries.clamp(2, 256) - 1)
}

/// The colours of [`SAMPLES`] frames of a render of `scene` with its look, drawn evenly over it.
fn sampled_frames<W: Water>(scene: &Scene, inputs: &Inputs, threads: usize) -> Histogram
where
    W::Cell: Height,
{
    let (background, shore, threads) = (&inputs.background, &inputs.shore, Threads::new(threads));
    let water = Simulation::<W>::new(scene, Schedule::new(scene), shore, threads.clone());
    let mut surface = Surface::new(scene, water, shore);
    let lens = Lens::new(scene, shore, threads);
    let (n, samples) = (scene.frames, SAMPLES.min(scene.frames));
    let wanted: Vec<u64> = (0..samples).map(|j| j * (n - 1) / (samples - 1).max(1)).collect();
    let mut histogram = Histogram::default();
    let mut frame = vec![[0u8; 3]; background.pixels.len()];
    let backdrop = Backdrop::new(&background.pixels, scene.width as usize);
    // Every sampled frame contributes alike, all of them together at most a palette's sample.
    let per_frame = SAMPLE / wanted.len().max(1);
    while let Some(k) = surface.advance() {
        let Some(i) = k.checked_sub(scene.first_frame) else { continue };
        if wanted.binary_search(&i).is_ok() {
            lens.look(surface.heights(), &scene.look, &backdrop, &mut frame);
            histogram.add_sample(&frame, per_frame);
        }
        if Some(&i) == wanted.last() {
            break;
        }
    }
    histogram
}
