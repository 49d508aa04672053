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

// Unsafe code is denied everywhere but the CPU-feature dispatch in `simd`, which allows it
// for one call per kernel, each with its SAFETY reason.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod background;
pub mod budget;
pub mod diff;
pub mod encode;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod manifest;
pub mod output;
pub mod picture;
pub mod plan;
pub mod provenance;
pub mod refract;
mod rng;
pub mod scene;
mod simd;
pub mod timeline;
pub mod units;
pub mod water;

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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

/// The water of a scene advanced frame by frame, pre-roll included.
pub struct Simulation {
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
    timeline: Timeline,
    water: Water,
    damping_shift: u32,
    steps_per_frame: u32,
    first_frame: u64,
    width: usize,
    refraction_q8: i64,
}

impl Simulation {
    /// Still water before frame 0.
    pub fn new(scene: &Scene) -> Self {
        Simulation {
            pool: None,
            timeline: Timeline::new(scene),
            water: Water::new(scene.water.model, scene.width as usize, scene.height as usize),
            damping_shift: scene.water.damping_shift,
            steps_per_frame: scene.water.steps_per_frame,
            first_frame: scene.first_frame,
            width: scene.width as usize,
            refraction_q8: scene.water.refraction_q8,
        }
    }

    /// Steps and refracts on `threads` threads, in bands of rows (the same result as one).
    pub fn threads(mut self, threads: usize) -> Self {
        self.pool = (threads > 1)
            .then(|| rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok().map(std::sync::Arc::new))
            .flatten();
        self
    }

    /// Simulates the next frame (its events, then its steps) and returns its number, or `None`
    /// after frame K0+N-1.
    pub fn advance(&mut self) -> Option<u64> {
        let (water, damping_shift) = (&mut self.water, &mut self.damping_shift);
        let k = self.timeline.next_frame_each(|_, event| match event {
            Event::Damping { shift } => *damping_shift = *shift,
            Event::Drop(drop) => water.drop(drop),
        })?;
        for _ in 0..self.steps_per_frame {
            self.water.step(self.damping_shift, self.pool.as_deref());
        }
        Some(k)
    }

    /// Draws the current frame: `background` refracted by the water, into `out`.
    pub fn refract_into<P: Copy + Send + Sync>(&self, background: &[P], out: &mut [P]) {
        let (heights, width, r) = (self.water.heights(), self.width, self.refraction_q8);
        water::for_bands(out, width, self.pool.as_deref(), water::PARALLEL_REFRACT_PIXELS, |band, y0| {
            refract::refract_band(heights, width, r, background, band, y0);
        });
    }

    /// Advances past any pre-roll to the next output frame and draws it; returns the output
    /// frame's index (0-based), or `None` after the last.
    pub fn next_frame_into<P: Copy + Send + Sync>(&mut self, background: &[P], out: &mut [P]) -> Option<u64> {
        loop {
            let k = self.advance()?;
            if k >= self.first_frame {
                self.refract_into(background, out);
                return Some(k - self.first_frame);
            }
        }
    }
}

/// Where a render's time went: each stage's own work, in seconds of work (encoding on several
/// threads adds up their times).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Frames output.
    pub frames: u64,
    /// Applying events and stepping the water, pre-roll included.
    pub simulate: Duration,
    /// Refracting the background into frames.
    pub refract: Duration,
    /// Compressing frames.
    pub encode: Duration,
    /// Writing bytes.
    pub write: Duration,
}

/// Renders every frame of `scene` into `encoder`, in order, then finishes it: the pipeline
/// scene → timeline → water → refraction → encoder.
///
/// Frames stream: memory holds the water, the background and a few frames, whatever the length.
pub fn render<E: Encoder>(scene: &Scene, encoder: E, progress: &mut dyn FnMut(Progress)) -> Result<Stats> {
    let never = AtomicBool::new(false);
    render_threads(scene, encoder, encode::pool::default_threads(), &never, progress)
}

/// [`render`], stepping and refracting on `threads` threads (the encoder has its own setting),
/// and stopping with [`Error::Interrupted`] before the next frame once `stop` is set.
pub fn render_threads<E: Encoder>(
    scene: &Scene,
    encoder: E,
    threads: usize,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    render_with(scene, encoder, None, threads, stop, progress)
}

/// A manifest written beside a render's encoder: the hash of every exact frame.
pub struct ManifestOutput<'a> {
    /// Where the hashes go.
    pub sink: &'a mut dyn manifest::Sink,
    /// The background in RGB, to draw a frame exactly when the encoder's own pixels do not hold
    /// it (a GIF whose palette is quantized).
    pub background: &'a Background,
}

/// [`render_threads`], also handing every frame's exact RGB pixels to `manifest` if given.
pub fn render_with<E: Encoder>(
    scene: &Scene,
    mut encoder: E,
    mut manifest: Option<ManifestOutput<'_>>,
    threads: usize,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    let mut simulation = Simulation::new(scene).threads(threads);
    let mut frame = encoder.background().to_vec();
    let (mut scratch, mut exact) = (Vec::new(), Vec::new());
    let mut stats = Stats::default();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let started = Instant::now();
        let Some(k) = simulation.advance() else { break };
        stats.simulate += started.elapsed();
        if k >= scene.first_frame {
            let started = Instant::now();
            simulation.refract_into(encoder.background(), &mut frame);
            stats.refract += started.elapsed();
            // The encoder counts its own time (on whichever thread it works).
            encoder.write_frame(&frame)?;
            if let Some(manifest) = &mut manifest {
                let started = Instant::now();
                let rgb = match encoder.exact_rgb(&frame, &mut scratch) {
                    Some(rgb) => rgb,
                    None => {
                        exact.resize(frame.len(), [0; 3]);
                        simulation.refract_into(&manifest.background.pixels, &mut exact);
                        exact.as_flattened()
                    }
                };
                manifest.sink.add(rgb)?;
                stats.encode += started.elapsed();
            }
            stats.frames += 1;
        }
        progress(Progress { simulated: k + 1, total: scene.end_frame(), rendered: stats.frames });
    }
    let times = encoder.finish()?;
    if let Some(manifest) = &mut manifest {
        let started = Instant::now();
        manifest.sink.finish()?;
        stats.write += started.elapsed();
    }
    stats.encode += times.encode;
    stats.write += times.write;
    Ok(stats)
}

/// Renders `scene` as an animated GIF into `writer` (a file, or a `Vec<u8>` in memory).
pub fn render_gif<W: Write>(
    scene: &Scene,
    background: &Background,
    writer: W,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    render(scene, encode::gif::GifEncoder::new(writer, scene, background)?, progress).map(drop)
}

/// Renders `scene` as PNG files `frame_0000.png`, … into the existing folder `dir`.
pub fn render_png_sequence(
    scene: &Scene,
    background: &Background,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    render(scene, encode::png::PngSequence::new(dir, scene, background), progress).map(drop)
}
