//! A scene played frame by frame: the stages every purpose builds alike ([`water`]: the
//! timeline, the water within its shore, the heights each frame is drawn from), and
//! [`Player`], the scene's frames drawn in RGB one after another through a `Lens`, for what
//! needs a render's pictures without an encoder: the GIF palette's first pass, and `diff`'s
//! scene side. The render itself plays the same water and draws in its encoder's pixels
//! (`render::canvas`).

use std::borrow::Cow;

use super::Inputs;
use crate::base::threads::Bands;
use crate::draw::Lens;
use crate::draw::fields::Fields;
use crate::draw::look::{Backdrop, Pens};
use crate::draw::refract::Height;
use crate::scene::{Model, Scene, Stone, Swipe};
use crate::sim::shore::Shore;
use crate::sim::timeline::Schedule;
use crate::sim::water::{Classic, Spring, Water};
use crate::sim::{Simulation, Surface};

/// The water `scene` is played on, within `shore`, stepping in bands on `threads`: its
/// timeline, the water itself, and the heights each frame is drawn from.
pub fn water<W: Water>(scene: &Scene, shore: &Shore, threads: Bands) -> Surface<W> {
    Surface::new(scene, Simulation::<W>::new(scene, Schedule::new(scene), shore, threads), shore)
}

/// What a player's frames are drawn from.
enum Source {
    /// Gathered, nearest pixel, from these colours (the background's, or its GIF palette's).
    Gather(Vec<[u8; 3]>),
    /// Drawn with the scene's look, resolved, from the background packed for it.
    Look(Box<Pens>, Backdrop),
}

/// A scene's output frames drawn in RGB, one after another: the pre-roll simulated, each output
/// frame simulated, then drawn when asked. The scene is borrowed, or owned (`'static`) where the
/// player outlives its maker.
pub struct Player<'r> {
    scene: Cow<'r, Scene>,
    water: Box<dyn Play>,
    source: Source,
    lens: Lens,
    frame: Vec<[u8; 3]>,
}

/// The lens and source a scene's frames are drawn through: what [`Player::new`] makes, and a
/// [`Painter`].
fn lens_and_source(scene: &Scene, inputs: &Inputs, gather: Cow<'_, [[u8; 3]]>, threads: Bands) -> (Lens, Source) {
    let lens = Lens::new(scene, &inputs.shore, threads);
    let source = if scene.look.is_gather() {
        Source::Gather(gather.into_owned())
    } else {
        Source::Look(Box::new(lens.pens(&scene.look)), Backdrop::new(&inputs.background.pixels, scene.width as usize))
    };
    (lens, source)
}

/// A frame's drawn heights copied out of a player ([`Player::copy_heights`]), to be drawn by a
/// [`Painter`] elsewhere, on another thread, while the water steps on.
pub enum Copied {
    /// The classic model's cells.
    Narrow(Vec<i16>),
    /// The spring model's cells.
    Wide(Vec<i32>),
}

/// Draws a scene's frames from copied heights exactly as its [`Player`] draws them: its own
/// lens and source, made alike, on one thread.
pub struct Painter {
    lens: Lens,
    source: Source,
}

impl Painter {
    /// The painter of `scene`'s frames over `inputs` (as [`Player::new`]'s `gather`, for a
    /// scene without a look).
    pub fn new(scene: &Scene, inputs: &Inputs, gather: Cow<'_, [[u8; 3]]>) -> Painter {
        let (lens, source) = lens_and_source(scene, inputs, gather, Bands::new(1));
        Painter { lens, source }
    }

    /// Draws the frame whose heights are `heights` into `out`.
    pub fn paint(&self, heights: &Copied, out: &mut [[u8; 3]]) {
        match heights {
            Copied::Narrow(h) => self.paint_cells(h, out),
            Copied::Wide(h) => self.paint_cells(h, out),
        }
    }

    fn paint_cells<H: Height>(&self, heights: &[H], out: &mut [[u8; 3]]) {
        match &self.source {
            Source::Gather(pixels) => self.lens.refract(heights, pixels, out),
            Source::Look(pens, backdrop) => self.lens.look(heights, pens, backdrop, out),
        }
    }
}

impl<'r> Player<'r> {
    /// The frames of `scene` over `inputs`, stepped and drawn in bands on `threads`: with its
    /// look if it has one, else gathered from `gather` (the background, or its GIF palette's
    /// colours: one per pixel).
    pub fn new(scene: Cow<'r, Scene>, inputs: &Inputs, gather: Cow<'_, [[u8; 3]]>, threads: usize) -> Self {
        let threads = Bands::new(threads);
        let water: Box<dyn Play> = match scene.water.model {
            Model::Classic => Box::new(water::<Classic>(&scene, &inputs.shore, threads.clone())),
            Model::Spring => Box::new(water::<Spring>(&scene, &inputs.shore, threads.clone())),
        };
        let (lens, source) = lens_and_source(&scene, inputs, gather, threads);
        let frame = vec![[0; 3]; inputs.background.pixels.len()];
        Player { scene, water, source, lens, frame }
    }

    /// The heights the frame [`Player::advance`] simulated last is drawn from, copied.
    pub fn copy_heights(&self) -> Copied {
        let [drawn, _] = self.water.heights();
        let bytes = drawn.bytes;
        if drawn.wide {
            Copied::Wide(bytes.chunks_exact(4).map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]])).collect())
        } else {
            Copied::Narrow(bytes.chunks_exact(2).map(|b| i16::from_ne_bytes([b[0], b[1]])).collect())
        }
    }

    /// Simulates the next output frame (and the pre-roll before the first) and returns its
    /// number, from 0; `None` after the last.
    pub fn advance(&mut self) -> Option<u64> {
        loop {
            let k = self.water.advance()?;
            if let Some(i) = k.checked_sub(self.scene.first_frame) {
                return Some(i);
            }
        }
    }

    /// Draws the frame [`Player::advance`] simulated last.
    pub fn draw(&mut self) -> &[[u8; 3]] {
        self.water.draw(&self.lens, &self.source, &mut self.frame);
        &self.frame
    }

    /// The heights the frame [`Player::advance`] simulated last is drawn from (smoothed, if the
    /// look smooths), and the water's own buffer before the seam's fade and smoothing.
    pub fn heights(&self) -> [Cells<'_>; 2] {
        self.water.heights()
    }

    /// The slopes and sample positions the frame [`Player::advance`] simulated last is drawn
    /// with, into `out`.
    pub fn fields(&self, out: &mut Fields) {
        self.water.fields(&self.lens, out);
    }

    /// The scene played.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The units the next [`Player::advance`] applies the events of.
    pub fn next_units(&self) -> std::ops::Range<u64> {
        self.water.next_units()
    }

    /// Adds the stone `index` (after the scene's) to the units to come.
    pub fn add_stone(&mut self, index: u32, stone: &Stone) {
        self.water.schedule().add_stone(index, stone);
    }

    /// Adds the swipe `index` (after the scene's) to the units to come.
    pub fn add_swipe(&mut self, index: u32, swipe: &Swipe) {
        let shape = self.scene.water.drop;
        self.water.schedule().add_swipe(index, swipe, shape);
    }
}

/// A height field's cells as bytes (the machine's order, little-endian on every target the
/// crate builds for), of the classic model's i16 or (`wide`) the spring model's i32.
#[derive(Debug, Clone, Copy)]
pub struct Cells<'a> {
    /// Whether a cell is an i32 (else an i16).
    pub wide: bool,
    /// The cells' bytes, row-major.
    pub bytes: &'a [u8],
}

impl<'a> Cells<'a> {
    fn of<C: crate::sim::field::Cell>(cells: &'a [C]) -> Cells<'a> {
        Cells { wide: std::mem::size_of::<C>() == 4, bytes: bytemuck::cast_slice(cells) }
    }
}

/// The water of one model, played: what [`Player`] needs of its `Surface` whatever the cell.
trait Play: Send {
    /// [`Surface::advance`].
    fn advance(&mut self) -> Option<u64>;

    /// Draws the current heights from `source` through `lens` into `out`.
    fn draw(&self, lens: &Lens, source: &Source, out: &mut [[u8; 3]]);

    /// [`Simulation::next_units`].
    fn next_units(&self) -> std::ops::Range<u64>;

    /// The schedule of events to come.
    fn schedule(&mut self) -> &mut Schedule;

    /// The heights drawn and the water's own.
    fn heights(&self) -> [Cells<'_>; 2];

    /// The fields the current heights are drawn with through `lens`.
    fn fields(&self, lens: &Lens, out: &mut Fields);
}

impl<W: Water> Play for Surface<W>
where
    W::Cell: Height,
{
    fn advance(&mut self) -> Option<u64> {
        Surface::advance(self)
    }

    fn next_units(&self) -> std::ops::Range<u64> {
        self.simulation().next_units()
    }

    fn schedule(&mut self) -> &mut Schedule {
        self.simulation_mut().schedule_mut()
    }

    fn heights(&self) -> [Cells<'_>; 2] {
        [Cells::of(Surface::heights(self)), Cells::of(self.simulation().heights())]
    }

    fn fields(&self, lens: &Lens, out: &mut Fields) {
        lens.fields(Surface::heights(self), out);
    }

    fn draw(&self, lens: &Lens, source: &Source, out: &mut [[u8; 3]]) {
        match source {
            Source::Gather(pixels) => lens.refract(self.heights(), pixels, out),
            Source::Look(pens, backdrop) => lens.look(self.heights(), pens, backdrop, out),
        }
    }
}
