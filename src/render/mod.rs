//! The render: the stages put together. [`render_with`] reads as the pipeline itself, scene →
//! timeline → water (walls, edges) → heights to draw → look → encoder; [`formats`] picks the
//! encoder for an output format (and fits a size budget); [`budget`] sums the stages' own
//! memory figures before anything large is allocated.

pub mod budget;
mod canvas;
pub mod formats;
pub mod palette;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use canvas::Canvas;

use crate::base::error::{Error, Result};
use crate::base::limits::DEFAULT_BUDGET;
use crate::draw::Lens;
use crate::draw::background::Background;
use crate::draw::refract::Height;
use crate::encode::Encoder;
use crate::encode::manifest::Sink;
use crate::scene::{Model, Scene};
use crate::sim::field::Threads;
use crate::sim::shore::Shore;
use crate::sim::timeline::Schedule;
use crate::sim::water::{Classic, Spring, Water};
use crate::sim::{Simulation, Surface};

/// What a render draws on and within, made once from its scene: the picture under the water
/// and the shore around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// The picture, fitted to the canvas.
    pub background: Background,
    /// Where the water ends (SPEC §8).
    pub shore: Shore,
}

impl Inputs {
    /// The scene's background and shore, within the default memory budget.
    pub fn for_scene(scene: &Scene) -> Result<Inputs> {
        Inputs::for_scene_within(scene, DEFAULT_BUDGET)
    }

    /// The scene's background and shore, refusing an image or a mask whose decode would take
    /// more than a quarter of `budget` bytes.
    pub fn for_scene_within(scene: &Scene, budget: u64) -> Result<Inputs> {
        let background = Background::for_scene_within(scene, budget)?;
        let shore = Shore::for_scene_within(scene, budget)?;
        Ok(Inputs { background, shore })
    }
}

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

/// How a render runs, beside its scene and encoder.
pub struct Run<'a> {
    /// The background (what a look draws from, and a manifest hashes) and the shore.
    pub inputs: &'a Inputs,
    /// A manifest sink that takes every frame's exact RGB pixels, if one is written.
    pub manifest: Option<&'a mut dyn Sink>,
    /// Threads to step and draw on (the encoder has its own setting).
    pub threads: usize,
    /// Once set, the render stops with [`Error::Interrupted`] before the next frame.
    pub stop: &'a AtomicBool,
    /// Whether to measure the seam ([`Stats::seam`]): a pass over the heights drawn each frame,
    /// a few percent of a render's time, so only when it is shown.
    pub seam: bool,
}

/// Renders every frame of `scene` over `inputs` into `encoder`, in order, then finishes it, on
/// every core.
///
/// Frames stream: memory holds the water, the background and a few frames, whatever the length.
pub fn render<E: Encoder>(
    scene: &Scene,
    inputs: &Inputs,
    encoder: E,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    let never = AtomicBool::new(false);
    let threads = crate::encode::workers::default_threads();
    let run = Run { inputs, manifest: None, threads, stop: &never, seam: false };
    render_with(scene, encoder, run, progress)
}

/// [`render`] with its settings: threads, a stop flag, a manifest and the seam.
pub fn render_with<E: Encoder>(
    scene: &Scene,
    encoder: E,
    run: Run<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    match scene.water.model {
        Model::Classic => pipeline::<Classic, E>(scene, encoder, run, progress),
        Model::Spring => pipeline::<Spring, E>(scene, encoder, run, progress),
    }
}

/// The pipeline, for the water model `W`: scene → timeline → water (walls, edges) → heights to
/// draw → look → encoder, one frame at a time.
fn pipeline<W: Water, E: Encoder>(
    scene: &Scene,
    mut encoder: E,
    mut run: Run<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats>
where
    W::Cell: Height,
{
    let (Inputs { background, shore }, threads) = (run.inputs, Threads::new(run.threads));
    let timeline = Schedule::new(scene);
    let water = Simulation::<W>::new(scene, timeline, shore, threads.clone());
    let mut surface = Surface::new(scene, water);
    if run.seam {
        surface = surface.measuring_seam(scene, shore);
    }
    let lens = Lens::new(scene, shore, threads);
    let mut canvas = Canvas::new(scene, background, &encoder);

    let mut stats = Stats::default();
    let wanted = encoder.wanted();
    loop {
        if run.stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let started = Instant::now();
        let Some(k) = surface.advance() else { break };
        stats.simulate += started.elapsed();
        // Frames before the window are simulated, not drawn; so are frames the encoder does not
        // take (a still's others), unless a manifest needs them.
        let output = k.checked_sub(scene.first_frame);
        let taken = output.is_some_and(|i| wanted.contains(&i));
        if taken || (output.is_some() && run.manifest.is_some()) {
            let started = Instant::now();
            canvas.draw(&lens, surface.heights(), &encoder);
            stats.refract += started.elapsed();
            if taken {
                // The encoder counts its own time (on whichever thread it works).
                canvas.hand_to(&mut encoder)?;
            }
            if let Some(sink) = run.manifest.as_deref_mut() {
                let started = Instant::now();
                sink.add(canvas.exact(&lens, surface.heights(), background, &encoder))?;
                stats.encode += started.elapsed();
            }
            stats.frames += 1;
        }
        progress(Progress { simulated: k + 1, total: scene.end_frame(), rendered: stats.frames });
        if taken && run.manifest.is_none() && output.is_some_and(|i| i + 1 >= wanted.end) {
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
    stats.seam = surface.seam();
    Ok(stats)
}
