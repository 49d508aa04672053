//! The render: the stages put together. [`render_with`] reads as the pipeline itself, scene →
//! timeline → water (walls, edges) → heights to draw → look → encoder; [`formats`] picks the
//! encoder for an output format (and fits a size budget); [`budget`] sums the stages' own
//! memory figures before anything large is allocated.

pub mod budget;
mod canvas;
pub mod checkpoints;
pub mod formats;
pub mod palette;
pub mod player;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use canvas::{Canvas, Drawn};
use checkpoints::{Checkpoints, Resumed};

use crate::base::error::{Error, Result};
use crate::base::limits::DEFAULT_BUDGET;
use crate::base::picture::Given;
use crate::base::pool::{Ordered, Pool, default_threads};
use crate::base::threads::Bands;
use crate::draw::Lens;
use crate::draw::background::Background;
use crate::draw::refract::Height;
use crate::encode::Encoder;
use crate::encode::manifest::Sink;
use crate::encode::provenance::Provenance;
use crate::scene::{Model, Scene};
use crate::sim::Surface;
use crate::sim::shore::Shore;
use crate::sim::water::{Classic, Spring, Water};

/// What a render draws on and within, made once from its scene: the picture under the water
/// and the shore around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// The picture, fitted to the canvas.
    pub background: Arc<Background>,
    /// Where the water ends (§8).
    pub shore: Arc<Shore>,
    /// Who renders it from what: this build, the scene's text and the fitted background (what a
    /// file records of its render).
    pub provenance: Provenance,
}

impl Inputs {
    /// The scene's background and shore, within the default memory budget.
    pub fn for_scene(scene: &Scene) -> Result<Inputs> {
        Inputs::for_scene_within(scene, DEFAULT_BUDGET)
    }

    /// The scene's background and shore, refusing an image or a mask whose decode would take
    /// more than a quarter of `budget` bytes.
    pub fn for_scene_within(scene: &Scene, budget: u64) -> Result<Inputs> {
        Inputs::for_scene_given(scene, budget, &Given::none())
    }

    /// [`Inputs::for_scene_within`], the images read from `given` where they are there (a web
    /// page hands over the picture and mask it fetched).
    pub fn for_scene_given(scene: &Scene, budget: u64, given: &Given) -> Result<Inputs> {
        let background = Arc::new(Background::for_scene_given(scene, budget, given)?);
        let shore = Arc::new(Shore::for_scene_given(scene, budget, given)?);
        let provenance = Provenance::of(scene.source_hash, &background.pixels);
        Ok(Inputs { background, shore, provenance })
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
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// The seam of §11: the jump from the last frame to the first against the median
    /// frame-to-frame change; `None` with fewer than 3 frames or no change, or when not
    /// measured ([`Run::seam`]).
    pub seam: Option<f64>,
    /// The checkpoint the render started from, if it did, and those it passed over.
    pub resumed: Resumed,
}

/// How a render runs, beside its scene and encoder.
pub struct Run<'a> {
    /// The background (what a look draws from, and a manifest hashes) and the shore.
    pub inputs: &'a Inputs,
    /// A manifest sink that takes every frame's exact RGB pixels, if one is written.
    pub manifest: Option<&'a mut dyn Sink>,
    /// The threads frames are drawn on, the caller's among them, which steps the water
    /// meanwhile: frames are drawn side by side, a few ahead of the encoder, which compresses on
    /// the same threads (the render hands it the pool). The water steps in bands on all of them only while no frame is drawn yet
    /// (a part's run-ahead), when they would be idle.
    pub pool: Pool,
    /// Once set, the render stops with [`Error::Interrupted`] before the next frame.
    pub stop: &'a AtomicBool,
    /// Whether to measure the seam ([`Stats::seam`]): a pass over the heights drawn each frame,
    /// a few percent of a render's time, so only when it is shown.
    pub seam: bool,
    /// Checkpoints to start from (the nearest at or before the first frame drawn) and to write.
    pub checkpoints: Option<&'a Checkpoints>,
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
    let pool = Pool::new(default_threads());
    let run = Run { inputs, manifest: None, pool, stop: &never, seam: false, checkpoints: None };
    render_with(scene, encoder, run, progress)
}

/// [`render`] with its settings: threads, a stop flag, a manifest and the seam.
pub fn render_with<E: Encoder>(
    scene: &Scene,
    encoder: E,
    run: Run<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    render_again(scene, encoder, run, progress, Redraw::Simulate)
}

/// A render's heights before smoothing, one field per output frame, of either water model:
/// what a render of the same scene with another `[look]` can be drawn from without simulating.
#[derive(Clone)]
pub struct Heights(Arc<dyn std::any::Any + Send + Sync>);

/// Whether a render simulates, simulates and keeps its heights (within a budget), or draws
/// from heights kept before.
pub enum Redraw<'a> {
    /// Simulate, as every render does.
    Simulate,
    /// Simulate, and keep the heights in `.0` when they take at most `.1` bytes.
    Keep(&'a mut Option<Heights>, u64),
    /// Draw from these heights, which a render of this scene but for its `[look]` kept.
    From(Heights),
}

/// [`render_with`], keeping the heights or drawing from kept ones (`serve`'s redraw when only
/// the look changed). The frames are the same either way.
pub fn render_again<E: Encoder>(
    scene: &Scene,
    encoder: E,
    run: Run<'_>,
    progress: &mut dyn FnMut(Progress),
    redraw: Redraw<'_>,
) -> Result<Stats> {
    match scene.water.model {
        Model::Classic => pipeline::<Classic, E>(scene, encoder, run, progress, redraw),
        Model::Spring => pipeline::<Spring, E>(scene, encoder, run, progress, redraw),
    }
}

/// The pipeline, for the water model `W`: scene → timeline → water (walls, edges) → heights to
/// draw → look → encoder.
fn pipeline<W: Water, E: Encoder>(
    scene: &Scene,
    mut encoder: E,
    run: Run<'_>,
    progress: &mut dyn FnMut(Progress),
    redraw: Redraw<'_>,
) -> Result<Stats>
where
    W::Cell: Height,
{
    let Run { inputs: Inputs { background, shore, .. }, manifest, pool, stop, seam, checkpoints } = run;
    encoder.compress_on(&pool);
    // The water steps on the caller's thread; the pool's threads draw the frames.
    let mut surface = player::water::<W>(scene, shore, Bands::new(1));
    if seam {
        surface = surface.measuring_seam(scene, shore);
    }
    let mut keep = None;
    match redraw {
        Redraw::Simulate => {}
        Redraw::Keep(into, budget) => {
            let cells = scene.width as u64 * scene.height as u64;
            if cells * scene.frames * std::mem::size_of::<W::Cell>() as u64 <= budget {
                surface = surface.recording();
                keep = Some(into);
            }
        }
        Redraw::From(heights) => match heights.0.downcast::<Vec<Vec<W::Cell>>>() {
            Ok(frames) => surface = surface.replaying(frames),
            Err(_) => return Err(Error::Encode("kept heights of another water model".into())),
        },
    }
    let wanted = encoder.wanted();
    let mut resumed = Resumed::default();
    if manifest.is_none() {
        // Frames before the encoder's first are simulated alone (a part's run-ahead, a still's),
        // from the nearest checkpoint if there is one; none at all if it takes none.
        surface = surface.drawing_from(if wanted.is_empty() { u64::MAX } else { wanted.start });
        if pool.threads() > 1 && wanted.start > 0 {
            surface = surface.running_ahead_on(Bands::new(pool.threads()));
        }
        if let Some(checkpoints) = checkpoints.filter(|_| wanted.start > 0 && !seam) {
            resumed = checkpoints.resume(wanted.start, &mut surface)?;
        }
    }
    // Each frame is drawn on one thread, frames side by side.
    let lens = Lens::new(scene, shore, Bands::new(1));
    let canvas = Arc::new(Canvas::new(scene, &lens, background, &encoder, manifest.is_some(), pool.threads() > 1));
    let out = Out { encoder, manifest, stats: Stats { resumed, ..Stats::default() }, spare: Vec::new() };
    let (stats, mut surface) = Frames { scene, surface, checkpoints, pool, lens, canvas, out }.run(stop, progress)?;
    if let Some(into) = keep
        && let Some(kept) = surface.recorded()
    {
        *into = Some(Heights(Arc::new(kept)));
    }
    Ok(stats)
}

/// A render under way: the water, the frames it draws and where they go.
struct Frames<'s, 'r, W: Water, E: Encoder> {
    scene: &'s Scene,
    surface: Surface<W>,
    checkpoints: Option<&'r Checkpoints>,
    /// The threads frames are drawn on.
    pool: Pool,
    lens: Lens,
    canvas: Arc<Canvas<E::Pixel>>,
    out: Out<'r, E, W::Cell>,
}

/// Where drawn frames go, in order: the encoder and a manifest; and where the time went.
struct Out<'r, E: Encoder, H> {
    encoder: E,
    manifest: Option<&'r mut dyn Sink>,
    stats: Stats,
    /// Frames handed on, whose buffers the next frames are drawn into.
    spare: Vec<Drawn<E::Pixel, H>>,
}

impl<W: Water, E: Encoder> Frames<'_, '_, W, E>
where
    W::Cell: Height,
{
    /// Simulates every frame, pre-roll included, and draws and encodes those the encoder takes
    /// (and those a manifest hashes), then finishes the encoder: until the end, or until `stop`.
    /// The caller's thread steps the water; frames are drawn (and their colours mapped) in a
    /// lane of the pool, a few frames ahead, and handed to the encoder in order.
    fn run(mut self, stop: &AtomicBool, progress: &mut dyn FnMut(Progress)) -> Result<(Stats, Surface<W>)> {
        let (scene, wanted) = (self.scene, self.out.encoder.wanted());
        let (canvas, lens) = (self.canvas.clone(), self.lens.clone());
        // A frame drawn apart holds its heights, its RGB and its pixels in the encoder's type.
        let cells = u64::from(scene.width) * u64::from(scene.height);
        let job = (std::mem::size_of::<W::Cell>() + 3 + std::mem::size_of::<E::Pixel>()) as u64 * cells;
        let mut drawing = Ordered::on(
            &self.pool,
            Arc::new(move |mut frame: Drawn<E::Pixel, W::Cell>| {
                canvas.draw(&lens, &mut frame);
                Ok(frame)
            }),
        )
        .holding(job);
        let canvas = &*self.canvas;
        let apart = canvas.draws_apart();
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            let started = Instant::now();
            let Some(k) = self.surface.advance() else { break };
            self.out.stats.simulate += started.elapsed();
            let output = k.checked_sub(scene.first_frame);
            if let Some(checkpoints) = self.checkpoints
                && let Some(i) = output.filter(|&i| checkpoints.due_after(i, scene.frames))
            {
                let started = Instant::now();
                checkpoints.write(i + 1, &mut self.surface)?;
                self.out.stats.write += started.elapsed();
            }
            // Frames before the window are simulated, not drawn; so are frames the encoder does
            // not take (a still's others), unless a manifest needs them.
            let taken = output.is_some_and(|i| wanted.contains(&i));
            if taken || (output.is_some() && self.out.manifest.is_some()) {
                let mut frame = self.out.spare.pop().unwrap_or_default();
                frame.taken = taken;
                if apart {
                    // The frame's heights go with it: the water steps on meanwhile.
                    frame.heights.clear();
                    frame.heights.extend_from_slice(self.surface.heights());
                    drawing.submit(frame, &mut |done| self.out.take(canvas, done))?;
                } else {
                    // Drawn here from the water's own heights.
                    let source = self.out.encoder.background();
                    canvas.draw_from(&self.lens, self.surface.heights(), source, &mut frame);
                    self.out.take(canvas, frame)?;
                }
            }
            progress(Progress { simulated: k + 1, total: scene.end_frame(), rendered: self.out.stats.frames });
            // A still's frame, or the last of a part (`--frames`): nothing after it is needed.
            let last = wanted.end < scene.frames && output.is_some_and(|i| i + 1 >= wanted.end);
            if taken && self.out.manifest.is_none() && last {
                break;
            }
        }
        drawing.finish(&mut |done| self.out.take(canvas, done))?;
        let Out { encoder, manifest, mut stats, .. } = self.out;
        let times = encoder.finish()?;
        if let Some(sink) = manifest {
            let started = Instant::now();
            sink.finish()?;
            stats.write += started.elapsed();
        }
        stats.encode += times.encode;
        stats.write += times.write;
        stats.seam = self.surface.seam();
        Ok((stats, self.surface))
    }
}

impl<E: Encoder, H> Out<'_, E, H> {
    /// Hands a frame drawn to the encoder if it takes it, and its exact RGB to the manifest if
    /// there is one; keeps its buffers for a later frame.
    fn take(&mut self, canvas: &Canvas<E::Pixel>, mut frame: Drawn<E::Pixel, H>) -> Result<()> {
        self.stats.refract += frame.took;
        if let Some(sink) = self.manifest.as_deref_mut() {
            let started = Instant::now();
            sink.add(canvas.exact(&mut frame, &self.encoder))?;
            self.stats.encode += started.elapsed();
        }
        if frame.taken {
            // The encoder counts its own time (on whichever thread it works).
            canvas.hand_to(&mut frame, &mut self.encoder)?;
        }
        self.stats.frames += 1;
        self.spare.push(frame);
        Ok(())
    }
}
