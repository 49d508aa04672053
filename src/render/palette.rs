//! The one palette of a GIF of a scene: the background's own colours when there are at most 256
//! and frames only move them; otherwise 255 colours chosen from the background, and for a look
//! (which makes colours the background lacks) from frames sampled evenly over the render in a
//! first pass of the simulation.

use std::borrow::Cow;

use std::sync::Arc;

use super::Inputs;
use super::player::{Copied, Painter, Player};
use crate::base::pool::Ordered;
use crate::encode::palette::quantize::Histogram;
use crate::encode::palette::{Palette, SAMPLE};
use crate::scene::Scene;

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
    let histogram = sampled_frames(scene, inputs, threads);
    Palette::for_look_within(histogram, &background.pixels, entries.clamp(2, 256) - 1)
}

/// The colours of [`SAMPLES`] frames of a render of `scene` with its look, drawn evenly over it.
/// On several threads, the water steps on the caller's thread while the sampled frames are
/// drawn from copies of their heights in a lane (a histogram's counts add up in any order).
fn sampled_frames(scene: &Scene, inputs: &Inputs, threads: usize) -> Histogram {
    let background = &inputs.background.pixels;
    let mut player = Player::new(Cow::Borrowed(scene), inputs, Cow::Borrowed(background), threads);
    let (n, samples) = (scene.frames, SAMPLES.min(scene.frames));
    let wanted: Vec<u64> = (0..samples).map(|j| j * (n - 1) / (samples - 1).max(1)).collect();
    let mut histogram = Histogram::default();
    // Every sampled frame contributes alike, all of them together at most a palette's sample.
    let per_frame = SAMPLE / wanted.len().max(1);
    if threads > 1 {
        let painter = Arc::new(Painter::new(scene, inputs, Cow::Borrowed(background)));
        let cells = background.len();
        let mut lane = Ordered::new(threads, move |heights: Copied| {
            let mut frame = vec![[0u8; 3]; cells];
            painter.paint(&heights, &mut frame);
            Ok(frame)
        });
        let mut add = |frame: Vec<[u8; 3]>| {
            histogram.add_sample(&frame, per_frame);
            Ok(())
        };
        while let Some(i) = player.advance() {
            if wanted.binary_search(&i).is_ok() && lane.submit(player.copy_heights(), &mut add).is_err() {
                break;
            }
            if Some(&i) == wanted.last() {
                break;
            }
        }
        // A drawing cannot fail; a lane whose thread would not start has drawn on this one.
        let _ = lane.finish(&mut add);
        return histogram;
    }
    while let Some(i) = player.advance() {
        if wanted.binary_search(&i).is_ok() {
            histogram.add_sample(player.draw(), per_frame);
        }
        if Some(&i) == wanted.last() {
            break;
        }
    }
    histogram
}
