//! ripple-render: integer water ripples over a still image, rendered to an animated GIF or a PNG
//! sequence, the same bytes on every machine.
//!
//! The pipeline is [`render`]: scene → timeline → water → refraction → encoder.
//!
//! ```no_run
//! use ripple_render::{Background, Scene};
//! let scene = Scene::load("scenes/pond.toml".as_ref())?;
//! let background = Background::for_scene(&scene)?;
//! let mut gif = Vec::new();
//! ripple_render::render_gif(&scene, &background, &mut gif, &mut |_| {})?;
//! # Ok::<(), ripple_render::Error>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod background;
pub mod encode;
pub mod error;
pub mod output;
pub mod plan;
pub mod refract;
mod rng;
pub mod scene;
pub mod timeline;
pub mod water;

use std::io::Write;
use std::path::Path;

pub use background::Background;
pub use encode::Encoder;
pub use error::{Error, Result};
pub use scene::Scene;

use timeline::{Event, Timeline};
use water::Water;

/// How far a render has got, reported after every simulated frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Frames simulated so far, pre-roll included.
    pub simulated: u64,
    /// Frames to simulate in all (K0 + N).
    pub total: u64,
    /// Frames handed to the encoder so far.
    pub rendered: u64,
}

/// Renders every frame of `scene` into `encoder`, in order, then finishes it.
///
/// Frames stream: memory holds the water, the background and one frame, whatever the length.
pub fn render<E: Encoder>(scene: &Scene, mut encoder: E, progress: &mut dyn FnMut(Progress)) -> Result<()> {
    let (width, height) = (scene.width as usize, scene.height as usize);
    let mut timeline = Timeline::new(scene);
    let mut water = Water::new(scene.water.model, width, height);
    let mut damping_shift = scene.water.damping_shift;
    let mut frame = encoder.background().to_vec();
    let mut events = Vec::new();
    let mut rendered = 0;
    while let Some(k) = timeline.next_frame(&mut events) {
        for event in &events {
            match event {
                Event::Damping { shift } => damping_shift = *shift,
                Event::Drop(drop) => water.drop(drop),
            }
        }
        for _ in 0..scene.water.steps_per_frame {
            water.step(damping_shift);
        }
        if k >= scene.first_frame {
            refract::refract(water.heights(), width, scene.water.refraction_q8, encoder.background(), &mut frame);
            encoder.write_frame(&frame)?;
            rendered += 1;
        }
        progress(Progress { simulated: k + 1, total: scene.end_frame(), rendered });
    }
    encoder.finish()
}

/// Renders `scene` as an animated GIF into `writer` (a file, or a `Vec<u8>` in memory).
pub fn render_gif<W: Write>(
    scene: &Scene,
    background: &Background,
    writer: W,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    render(scene, encode::gif::GifEncoder::new(writer, scene, background)?, progress)
}

/// Renders `scene` as PNG files `frame_0000.png`, … into the existing folder `dir`.
pub fn render_png_sequence(
    scene: &Scene,
    background: &Background,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    render(scene, encode::png::PngSequence::new(dir, background, scene.frames), progress)
}
