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

pub mod advice;
pub mod background;
pub mod budget;
pub mod diff;
pub mod encode;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod look;
pub mod manifest;
pub mod output;
pub mod picture;
pub mod plan;
pub mod provenance;
pub mod refract;
mod rng;
pub mod scene;
pub mod seamless;
pub mod shore;
mod simd;
pub mod starter;
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

use timeline::{Event, Schedule};
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
    schedule: Schedule,
    water: Water,
    damping_shift: u32,
    clock: scene::Clock,
    fps: u32,
    /// The next frame to draw, and the last frame's number plus one (K0 + N).
    next_frame: u64,
    end_frame: u64,
    /// Steps done so far (in step mode).
    steps: u64,
    width: usize,
    refraction_q8: i64,
    shore: shore::Shore,
}

impl Simulation {
    /// Still water before frame 0, within `shore` (the background's).
    pub fn new(scene: &Scene, shore: &shore::Shore) -> Self {
        Simulation {
            pool: None,
            schedule: Schedule::new(scene),
            water: Water::with_shore(scene.water.model, shore).settling(scene.water.settle),
            shore: shore.clone(),
            damping_shift: scene.water.damping_shift,
            clock: scene.water.clock,
            fps: scene.fps,
            next_frame: 0,
            end_frame: scene.end_frame(),
            steps: 0,
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

    /// Simulates up to the next frame and returns its number, or `None` after frame K0+N-1.
    /// A frame's events, then its steps (SPEC §3); in step mode (§10), each step's events then
    /// the step, until the frame is due (`n(k)` steps done, before that step's events).
    pub fn advance(&mut self) -> Option<u64> {
        match self.clock {
            scene::Clock::Frames { steps_per_frame } => {
                let k = self.apply_next_unit()?;
                for _ in 0..steps_per_frame {
                    self.water.step(self.damping_shift, self.pool.as_deref());
                }
                Some(k)
            }
            scene::Clock::Steps { .. } => {
                let k = self.next_frame;
                if k >= self.end_frame {
                    return None;
                }
                let due = self.clock.steps_before_drawing(k, self.fps);
                while self.steps < due {
                    self.apply_next_unit();
                    self.water.step(self.damping_shift, self.pool.as_deref());
                    self.steps += 1;
                }
                self.next_frame += 1;
                Some(k)
            }
        }
    }

    /// Applies the next unit's events; returns the unit.
    fn apply_next_unit(&mut self) -> Option<u64> {
        let (water, damping_shift) = (&mut self.water, &mut self.damping_shift);
        self.schedule.next_unit_each(|_, event| match event {
            Event::Damping { shift } => *damping_shift = *shift,
            Event::Drop(drop) => water.drop(drop),
        })
    }

    /// The water's current heights.
    pub fn heights(&self) -> water::Heights<'_> {
        self.water.heights()
    }

    /// Draws `heights` with a look (bilinear sampling, light): the `backdrop` seen through the
    /// water, into `out`.
    pub fn look_into(
        &self,
        heights: water::Heights<'_>,
        look: &scene::Look,
        backdrop: &look::Backdrop,
        out: &mut [[u8; 3]],
    ) {
        let (width, r, shore) = (self.width, self.refraction_q8, &self.shore);
        let edges = shore.edges();
        let pen = look::Pen::new(look, r, width, out.len() / width.max(1)).wrapping(edges.wrap_x(), edges.wrap_y());
        water::for_bands(out, width, self.pool.as_deref(), water::PARALLEL_REFRACT_PIXELS, |band, y0| {
            look::look_band(heights, width, look, r, backdrop, band, y0);
            if !shore.is_open() {
                let pixel = |x, y| {
                    let (dx, dy) = shore.slopes_at(heights, x, y);
                    pen.draw(x, y, dx, dy, backdrop)
                };
                let reach = |y| shore.reach(heights, r, y);
                shore.finish_band(band, y0, reach, pixel, |i| look::Pen::unmoved(backdrop, i));
            }
        });
    }

    /// Draws `heights`: `background` refracted by them, into `out`.
    pub fn refract_into<P: Copy + Send + Sync>(&self, heights: water::Heights<'_>, background: &[P], out: &mut [P]) {
        let (width, r, shore) = (self.width, self.refraction_q8, &self.shore);
        water::for_bands(out, width, self.pool.as_deref(), water::PARALLEL_REFRACT_PIXELS, |band, y0| {
            refract::refract_band(heights, width, r, background, band, y0);
            if !shore.is_open() {
                let pixel = |x, y| {
                    let (dx, dy) = shore.slopes_at(heights, x, y);
                    background[shore.source(x + ((dx * r) >> 8), y + ((dy * r) >> 8))]
                };
                let reach = |y| shore.reach(heights, r, y);
                shore.finish_band(band, y0, reach, pixel, |i| background[i]);
            }
        });
    }
}

/// A scene's frames, one after another: scene → timeline → water (walls, edges) → heights to
/// draw (a crossfade into the start) → look. [`Frames::advance`] simulates a frame; the frame is
/// then drawn on demand, in an encoder's own pixels or in RGB.
pub struct Frames {
    simulation: Simulation,
    fade: Option<seamless::Crossfade>,
    seam: Option<seamless::Seam>,
    first_frame: u64,
}

impl Frames {
    /// Before frame 0 of `scene`, within `shore` (the background's).
    pub fn new(scene: &Scene, shore: &shore::Shore) -> Frames {
        Frames {
            simulation: Simulation::new(scene, shore),
            fade: seamless::Crossfade::new(scene),
            seam: None,
            first_frame: scene.first_frame,
        }
    }

    /// Steps and draws on `threads` threads (the same result as one).
    pub fn threads(mut self, threads: usize) -> Frames {
        self.simulation = self.simulation.threads(threads);
        self
    }

    /// Measures the render's seam (SPEC §11) as frames are output.
    pub fn with_seam(mut self, scene: &Scene, shore: &shore::Shore) -> Frames {
        let (w, h) = shore.size();
        let walls = shore.walls().map_or(0, |w| w.count());
        self.seam = Some(seamless::Seam::new((w * h) as u64 - walls, scene.frames));
        self
    }

    /// Simulates the next frame, pre-roll included, and returns its number, or `None` after
    /// frame K0+N-1.
    pub fn advance(&mut self) -> Option<u64> {
        let k = self.simulation.advance()?;
        if let Some(fade) = &mut self.fade {
            fade.take(k, self.simulation.heights());
        }
        if k >= self.first_frame
            && let Some(mut seam) = self.seam.take()
        {
            seam.add(self.heights(), self.simulation.pool.as_deref());
            self.seam = Some(seam);
        }
        Some(k)
    }

    /// The heights the current frame is drawn from.
    pub fn heights(&self) -> water::Heights<'_> {
        match &self.fade {
            Some(fade) => fade.drawn(self.simulation.heights()),
            None => self.simulation.heights(),
        }
    }

    /// Draws the current frame: `background` refracted by the water, into `out`.
    pub fn draw<P: Copy + Send + Sync>(&self, background: &[P], out: &mut [P]) {
        self.simulation.refract_into(self.heights(), background, out);
    }

    /// Draws the current frame with a look: the `backdrop` seen through the water, into `out`.
    pub fn draw_look(&self, look: &scene::Look, backdrop: &look::Backdrop, out: &mut [[u8; 3]]) {
        self.simulation.look_into(self.heights(), look, backdrop, out);
    }

    /// The seam so far (see [`Frames::with_seam`]).
    pub fn seam(&self) -> Option<f64> {
        self.seam.as_ref().and_then(seamless::Seam::value)
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
    /// The seam of SPEC §11: the jump from the last frame to the first against the median
    /// frame-to-frame change; `None` with fewer than 3 frames or no change, or when not
    /// measured ([`Run::seam`]).
    pub seam: Option<f64>,
}

/// Renders every frame of `scene` over `background` into `encoder`, in order, then finishes it,
/// on every core: the pipeline scene → timeline → water → look → encoder.
///
/// Frames stream: memory holds the water, the background and a few frames, whatever the length.
pub fn render<E: Encoder>(
    scene: &Scene,
    background: &Background,
    encoder: E,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    let never = AtomicBool::new(false);
    let run = Run { background, manifest: None, threads: encode::pool::default_threads(), stop: &never, seam: false };
    render_with(scene, encoder, run, progress)
}

/// How a render runs, beside its scene and encoder.
pub struct Run<'a> {
    /// The background in RGB: what a look draws from, and a manifest hashes.
    pub background: &'a Background,
    /// A manifest sink that takes every frame's exact RGB pixels, if one is written.
    pub manifest: Option<&'a mut dyn manifest::Sink>,
    /// Threads to step and draw on (the encoder has its own setting).
    pub threads: usize,
    /// Once set, the render stops with [`Error::Interrupted`] before the next frame.
    pub stop: &'a AtomicBool,
    /// Whether to measure the seam ([`Stats::seam`]): a pass over the heights drawn each frame,
    /// a few percent of a render's time, so only when it is shown.
    pub seam: bool,
}

/// [`render`] with its settings: threads, a stop flag and a manifest.
///
/// A frame is drawn one of two ways. Nearest-pixel sampling without light only moves
/// background pixels, so the frame is a gather in the encoder's own pixels (palette indices for
/// a GIF) from the encoder's copy of the background. A look (bilinear sampling, light) makes
/// colours the background lacks: the frame is drawn in RGB and the encoder converts it.
pub fn render_with<E: Encoder>(
    scene: &Scene,
    mut encoder: E,
    mut run: Run<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    let shore = &run.background.shore;
    let mut frames = Frames::new(scene, shore).threads(run.threads);
    if run.seam {
        frames = frames.with_seam(scene, shore);
    }
    let gather = scene.look.is_gather();
    let mut frame = if gather { encoder.background().to_vec() } else { Vec::new() };
    let backdrop = (!gather).then(|| look::Backdrop::new(&run.background.pixels, scene.width as usize));
    let (mut scratch, mut rgb) = (Vec::new(), Vec::new());
    let mut stats = Stats::default();
    let wanted = encoder.wanted();
    loop {
        if run.stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let started = Instant::now();
        let Some(k) = frames.advance() else { break };
        stats.simulate += started.elapsed();
        // Frames before the window are simulated, not drawn; so are frames the encoder does not
        // take (a still's others), unless a manifest needs them.
        let Some(i) = k.checked_sub(scene.first_frame) else {
            progress(Progress { simulated: k + 1, total: scene.end_frame(), rendered: stats.frames });
            continue;
        };
        let taken = wanted.contains(&i);
        if !taken && run.manifest.is_none() {
            progress(Progress { simulated: k + 1, total: scene.end_frame(), rendered: stats.frames });
            continue;
        }
        let started = Instant::now();
        if let Some(backdrop) = &backdrop {
            rgb.resize(run.background.pixels.len(), [0; 3]);
            frames.draw_look(&scene.look, backdrop, &mut rgb);
            stats.refract += started.elapsed();
            if taken {
                encoder.write_rgb(&rgb)?;
            }
        } else {
            frames.draw(encoder.background(), &mut frame);
            stats.refract += started.elapsed();
            // The encoder counts its own time (on whichever thread it works).
            if taken {
                encoder.write_frame(&frame)?;
            }
        }
        if let Some(sink) = run.manifest.as_deref_mut() {
            let started = Instant::now();
            let exact = if !gather {
                rgb.as_flattened()
            } else if let Some(exact) = encoder.exact_rgb(&frame, &mut scratch) {
                exact
            } else {
                // A GIF of a quantized palette: the exact frame is drawn again, in RGB.
                rgb.resize(frame.len(), [0; 3]);
                frames.draw(&run.background.pixels, &mut rgb);
                rgb.as_flattened()
            };
            sink.add(exact)?;
            stats.encode += started.elapsed();
        }
        stats.frames += 1;
        progress(Progress { simulated: k + 1, total: scene.end_frame(), rendered: stats.frames });
        if run.manifest.is_none() && i + 1 >= wanted.end {
            break;
        }
    }
    let times = encoder.finish()?;
    if let Some(sink) = run.manifest.as_deref_mut() {
        let started = Instant::now();
        sink.finish()?;
        stats.write += started.elapsed();
    }
    stats.encode += times.encode;
    stats.write += times.write;
    stats.seam = frames.seam();
    Ok(stats)
}

/// Renders `scene` as an animated GIF into `writer` (a file, or a `Vec<u8>` in memory).
pub fn render_gif<W: Write>(
    scene: &Scene,
    background: &Background,
    writer: W,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    let palette = gif_palette(scene, background, false, encode::pool::default_threads());
    let encoder = encode::gif::GifEncoder::with_palette(writer, scene, background, palette)?;
    render(scene, background, encoder, progress).map(drop)
}

/// Frames sampled over a render to choose a look's palette from.
pub const PALETTE_SAMPLES: u64 = 24;

/// The one palette of a GIF of `scene`: the background's own colours when there are at most
/// 256 and frames only move them; otherwise 255 colours chosen from the background, and for a
/// look (which makes colours the background lacks) from [`PALETTE_SAMPLES`] frames drawn
/// evenly over the render in a first pass of the simulation. With `dither`, a quantized
/// background is dithered to the palette once (frames only move its pixels, so they do not
/// shimmer); a look's frames are not dithered.
pub fn gif_palette(scene: &Scene, background: &Background, dither: bool, threads: usize) -> encode::gif::Palette {
    gif_palette_within(scene, background, dither, threads, 256)
}

/// [`gif_palette`] in a palette of at most `entries` (2 to 256, one of them left for
/// transparency when the colours are chosen): fewer colours, a smaller GIF.
pub fn gif_palette_within(
    scene: &Scene,
    background: &Background,
    dither: bool,
    threads: usize,
    entries: usize,
) -> encode::gif::Palette {
    use encode::gif::Palette;
    if scene.look.is_gather() {
        let mut palette = Palette::for_background_within(&background.pixels, entries);
        if dither {
            palette.dither(&background.pixels, background.width);
        }
        return palette;
    }
    let mut frames = Frames::new(scene, &background.shore).threads(threads);
    let (n, samples) = (scene.frames, PALETTE_SAMPLES.min(scene.frames));
    let wanted: Vec<u64> = (0..samples).map(|j| j * (n - 1) / (samples - 1).max(1)).collect();
    let mut histogram = encode::quantize::Histogram::default();
    let mut frame = vec![[0u8; 3]; background.pixels.len()];
    let backdrop = look::Backdrop::new(&background.pixels, scene.width as usize);
    // Every sampled frame contributes alike, all of them together at most a palette's sample.
    let per_frame = encode::palette::SAMPLE / wanted.len().max(1);
    while let Some(k) = frames.advance() {
        let Some(i) = k.checked_sub(scene.first_frame) else { continue };
        if wanted.binary_search(&i).is_ok() {
            frames.draw_look(&scene.look, &backdrop, &mut frame);
            histogram.add_sample(&frame, per_frame);
        }
        if Some(&i) == wanted.last() {
            break;
        }
    }
    Palette::for_look_within(histogram, &background.pixels, entries.clamp(2, 256) - 1)
}

/// Renders `scene` as PNG files `frame_0000.png`, … into the existing folder `dir`.
pub fn render_png_sequence(
    scene: &Scene,
    background: &Background,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    render(scene, background, encode::png::PngSequence::new(dir, scene, background), progress).map(drop)
}
