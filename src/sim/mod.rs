//! The water in time: the scene's events, unit by unit ([`timeline`]), the water that receives
//! them within its shore ([`water`], [`shore`]), stepped frame after frame ([`Simulation`]),
//! and the heights each frame is drawn from ([`Surface`], with [`seamless`]'s crossfade and
//! seam, and [`smooth`]'s filter). Nothing here draws: [`field`] is what the drawing stage is handed.

pub mod field;
pub mod seamless;
pub mod shore;
pub mod smooth;
pub mod state;
pub mod timeline;
pub mod water;

use crate::base::threads::Bands;
use seamless::{Crossfade, Seam};
use shore::Shore;
use smooth::Smoothing;
use timeline::{Event, Schedule};
use water::{Basin, Water};

use crate::scene::{Clock, Scene};

/// The water of a scene advanced frame by frame, pre-roll included: each frame's events
/// (§3), then its steps; in step mode (§10), each step's events then the step, until the
/// frame is due.
pub struct Simulation<W: Water> {
    threads: Bands,
    schedule: Schedule,
    water: W,
    damping_shift: u32,
    clock: Clock,
    fps: u32,
    /// The next frame to draw, and the last frame's number plus one (K0 + N).
    next_frame: u64,
    end_frame: u64,
    /// Steps done so far (in step mode).
    steps: u64,
    /// Timeline units whose events have been applied.
    units: u64,
}

impl<W: Water> Simulation<W> {
    /// Still water before frame 0 of `scene`, within `shore`, that will receive `schedule`'s
    /// events and step in bands of rows on `threads` (the same result as on one).
    pub fn new(scene: &Scene, schedule: Schedule, shore: &Shore, threads: Bands) -> Self {
        let mut water = W::still(Basin::within(shore), &scene.water);
        if let Some(surface) = &scene.surface {
            water.start(&water::start::start_field(surface, scene.width as usize, scene.height as usize));
        }
        Simulation {
            threads,
            schedule,
            water,
            damping_shift: scene.water.damping_shift,
            clock: scene.water.clock,
            fps: scene.fps,
            next_frame: 0,
            end_frame: scene.end_frame(),
            steps: 0,
            units: 0,
        }
    }

    /// Simulates up to the next frame and returns its number, or `None` after frame K0+N-1.
    /// A frame's events, then its steps (§3); in step mode (§10), each step's events then
    /// the step, until the frame is due (`n(k)` steps done, before that step's events).
    pub fn advance(&mut self) -> Option<u64> {
        match self.clock {
            Clock::Frames { steps_per_frame } => {
                let k = self.apply_next_unit()?;
                for _ in 0..steps_per_frame {
                    self.water.step(self.damping_shift, &self.threads);
                }
                Some(k)
            }
            Clock::Steps { .. } => {
                let k = self.next_frame;
                if k >= self.end_frame {
                    return None;
                }
                let due = self.clock.steps_before_drawing(k, self.fps);
                while self.steps < due {
                    self.apply_next_unit();
                    self.water.step(self.damping_shift, &self.threads);
                    self.steps += 1;
                }
                self.next_frame += 1;
                Some(k)
            }
        }
    }

    /// The units the next [`Simulation::advance`] applies the events of: one frame's, or the
    /// steps up to the next frame's.
    pub fn next_units(&self) -> std::ops::Range<u64> {
        match self.clock {
            Clock::Frames { .. } => self.units..self.units + 1,
            Clock::Steps { .. } => {
                self.units..self.clock.steps_before_drawing(self.next_frame, self.fps).max(self.units)
            }
        }
    }

    /// The schedule, to add events to the units to come.
    pub fn schedule_mut(&mut self) -> &mut Schedule {
        &mut self.schedule
    }

    /// Applies the next unit's events; returns the unit.
    fn apply_next_unit(&mut self) -> Option<u64> {
        let (water, damping_shift) = (&mut self.water, &mut self.damping_shift);
        let unit = self.schedule.next_unit_each(|_, event| match event {
            Event::Damping { shift } => *damping_shift = *shift,
            Event::Drop(drop) => water.drop(drop),
        });
        self.units += u64::from(unit.is_some());
        unit
    }

    /// Writes the state (see [`state`]): counters, damping, the water's buffers.
    fn save(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for n in [self.units, self.steps, self.next_frame] {
            out.write_all(&n.to_le_bytes())?;
        }
        out.write_all(&self.damping_shift.to_le_bytes())?;
        let buffers = self.water.buffers();
        out.write_all(&(buffers.len() as u32).to_le_bytes())?;
        buffers.iter().try_for_each(|b| state::write_cells(out, b))
    }

    /// Reads back what [`Simulation::save`] wrote after `simulated` frames (pre-roll included),
    /// onto still water made for the same scene: the timeline is played to the same unit without
    /// applying its drops. The counters must be those `simulated` frames give, and the damping
    /// the one in force there.
    fn restore(&mut self, input: &mut impl std::io::Read, simulated: u64) -> std::io::Result<()> {
        let units = state::read_u64(input)?;
        let (steps, next_frame) = (state::read_u64(input)?, state::read_u64(input)?);
        let damping_shift = state::read_u32(input)?;
        if self.units != 0 || simulated > self.end_frame || (units, steps, next_frame) != self.counters_at(simulated) {
            return Err(state::invalid("a clock that is not this render's at that frame"));
        }
        let mut buffers = self.water.buffers();
        if state::read_u32(input)? as usize != buffers.len() {
            return Err(state::invalid("another water model"));
        }
        buffers.iter_mut().try_for_each(|b| state::read_cells(input, b))?;
        let mut in_force = self.damping_shift;
        for _ in 0..units {
            self.schedule.next_unit_each(|_, event| {
                if let Event::Damping { shift } = event {
                    in_force = *shift;
                }
            });
        }
        if damping_shift != in_force {
            return Err(state::invalid("a damping shift that is not the scene's at that frame"));
        }
        (self.units, self.steps, self.next_frame, self.damping_shift) = (units, steps, next_frame, damping_shift);
        Ok(())
    }

    /// The counters (units, steps, next frame) after `simulated` frames, pre-roll included.
    fn counters_at(&self, simulated: u64) -> (u64, u64, u64) {
        match self.clock {
            Clock::Frames { .. } => (simulated, 0, 0),
            Clock::Steps { .. } => {
                let steps = simulated.checked_sub(1).map_or(0, |k| self.clock.steps_before_drawing(k, self.fps));
                (steps, steps, simulated)
            }
        }
    }

    /// The bytes [`Simulation::save`] writes.
    fn saved_len(&mut self) -> u64 {
        let cell = std::mem::size_of::<W::Cell>() as u64;
        let buffers: u64 = self.water.buffers().iter().map(|b| 8 + b.len() as u64 * cell).sum();
        3 * 8 + 4 + 4 + buffers
    }

    /// The water's current heights.
    pub fn heights(&self) -> &[W::Cell] {
        self.water.heights()
    }
}

/// The heights each frame is drawn from: the water's, or over a seamless loop's last frames
/// their blend into the pre-roll's (§11), smoothed if the look asks; and, when asked, the
/// render's seam measured over them (before smoothing) as frames are output.
pub struct Surface<W: Water> {
    simulation: Simulation<W>,
    fade: Option<Crossfade<W::Cell>>,
    smoothing: Option<Smoothing<W::Cell>>,
    seam: Option<Seam<W::Cell>>,
    first_frame: u64,
    /// The first frame whose heights are made ready to draw (smoothed, measured): frames before
    /// it are only simulated.
    drawn_from: u64,
    /// While frames are only simulated, the threads the water steps on in drawing's stead, and
    /// the drawing's own, handed back at `drawn_from`.
    drawing_threads: Option<Bands>,
    /// Each output frame's heights before smoothing, kept (`recording`) or played back in the
    /// water's stead (`replaying`): a redraw with another look needs no simulation.
    record: Option<Vec<Vec<W::Cell>>>,
    replay: Option<(Recorded<W::Cell>, usize)>,
}

/// Each output frame's heights before smoothing, as a render recorded them.
pub type Recorded<C> = std::sync::Arc<Vec<Vec<C>>>;

impl<W: Water> Surface<W> {
    /// The heights `simulation` gives a render of `scene` within `shore`, crossfaded and
    /// smoothed if the scene asks.
    pub fn new(scene: &Scene, simulation: Simulation<W>, shore: &Shore) -> Surface<W> {
        let smoothing = Smoothing::new(scene, shore, simulation.threads.clone());
        let first_frame = scene.first_frame;
        let drawing_threads = None;
        Surface {
            simulation,
            fade: Crossfade::new(scene),
            smoothing,
            seam: None,
            first_frame,
            drawn_from: first_frame,
            drawing_threads,
            record: None,
            replay: None,
        }
    }

    /// Keeps each output frame's heights before smoothing, for [`Surface::recorded`].
    pub fn recording(mut self) -> Surface<W> {
        self.record = Some(Vec::new());
        self
    }

    /// The heights kept by [`Surface::recording`], one field per output frame so far.
    pub fn recorded(&mut self) -> Option<Vec<Vec<W::Cell>>> {
        self.record.take()
    }

    /// Plays `frames` (what [`Surface::recorded`] kept of a render of this scene with another
    /// look) in the water's stead: each is smoothed as this scene's look asks, and nothing is
    /// simulated. The frames are those a render of this scene would draw from.
    pub fn replaying(mut self, frames: Recorded<W::Cell>) -> Surface<W> {
        self.replay = Some((frames, 0));
        self
    }

    /// Prepares heights to draw only from output frame `frame` on (a part of a render, or a
    /// still): the frames before are simulated, not smoothed. Not with a seam, which measures
    /// every output frame.
    pub fn drawing_from(mut self, frame: u64) -> Surface<W> {
        if self.seam.is_none() {
            self.drawn_from = self.first_frame.saturating_add(frame);
        }
        self
    }

    /// Steps the water on `threads` until the first frame to draw (see
    /// [`Surface::drawing_from`]), then on its own again: the same water either way.
    pub fn running_ahead_on(mut self, threads: Bands) -> Surface<W> {
        self.drawing_threads = Some(std::mem::replace(&mut self.simulation.threads, threads));
        self
    }

    /// Measures the render's seam (§11) over the water cells of `shore` as frames are
    /// output: a pass over the heights each frame.
    pub fn measuring_seam(mut self, scene: &Scene, shore: &Shore) -> Surface<W> {
        let (w, h) = shore.size();
        let walls = shore.walls().map_or(0, |w| w.count());
        self.seam = Some(Seam::new((w * h) as u64 - walls, scene.frames));
        self
    }

    /// Simulates the next frame, pre-roll included, and returns its number, or `None` after
    /// frame K0+N-1.
    pub fn advance(&mut self) -> Option<u64> {
        if let Some((frames, next)) = &mut self.replay {
            let field = frames.get(*next)?;
            *next += 1;
            if let Some(smoothing) = &mut self.smoothing {
                smoothing.run(field);
            }
            return Some(self.first_frame + *next as u64 - 1);
        }
        let k = self.simulation.advance()?;
        if k + 1 >= self.drawn_from
            && let Some(threads) = self.drawing_threads.take()
        {
            self.simulation.threads = threads;
        }
        if let Some(fade) = &mut self.fade {
            fade.take(k, self.simulation.heights());
        }
        if k < self.drawn_from {
            return Some(k);
        }
        let Surface { simulation, fade, smoothing, seam, .. } = self;
        let drawn = match fade {
            Some(fade) => fade.drawn(simulation.heights()),
            None => simulation.heights(),
        };
        if let Some(seam) = seam {
            seam.add(drawn, &simulation.threads);
        }
        if let Some(record) = &mut self.record {
            record.push(drawn.to_vec());
        }
        if let Some(smoothing) = smoothing {
            smoothing.run(drawn);
        }
        Some(k)
    }

    /// The water simulated.
    pub fn simulation(&self) -> &Simulation<W> {
        &self.simulation
    }

    /// The water simulated, to add events to the units to come.
    pub fn simulation_mut(&mut self) -> &mut Simulation<W> {
        &mut self.simulation
    }

    /// The heights the current frame is drawn from.
    pub fn heights(&self) -> &[W::Cell] {
        if let Some(smoothing) = &self.smoothing {
            return smoothing.heights();
        }
        self.unsmoothed()
    }

    /// The heights before smoothing.
    fn unsmoothed(&self) -> &[W::Cell] {
        if let Some((frames, next)) = &self.replay {
            return &frames[next - 1];
        }
        match &self.fade {
            Some(fade) => fade.drawn(self.simulation.heights()),
            None => self.simulation.heights(),
        }
    }

    /// Writes the state from which the render goes on with the next frame (see [`state`]):
    /// the water's and a seamless loop's kept fields.
    pub fn save(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        self.simulation.save(out)?;
        let kept = self.fade.as_ref().map_or(&[][..], Crossfade::kept);
        out.write_all(&(kept.len() as u32).to_le_bytes())?;
        kept.iter().try_for_each(|field| state::write_cells(out, field))
    }

    /// Goes on from a state [`Surface::save`] wrote for the same scene at the start of output
    /// frame `frame`, before any frame was simulated here.
    pub fn restore(&mut self, input: &mut impl std::io::Read, frame: u64) -> std::io::Result<()> {
        let simulated = self.first_frame.saturating_add(frame);
        self.simulation.restore(input, simulated)?;
        let count = u64::from(state::read_u32(input)?);
        let cells = self.simulation.heights().len() as u64;
        if count != self.kept_at(simulated) {
            return Err(state::invalid("other crossfade fields than this scene keeps"));
        }
        let kept = (0..count).map(|_| state::read_field(input, cells)).collect::<std::io::Result<Vec<_>>>()?;
        let fits = match &mut self.fade {
            Some(fade) => fade.keep(kept, simulated, cells as usize),
            None => kept.is_empty(),
        };
        if fits { Ok(()) } else { Err(state::invalid("other crossfade fields than this scene keeps")) }
    }

    /// The bytes [`Surface::save`] writes at the start of output frame `frame`: known before
    /// a checkpoint is read, so that one of another length is passed over unread.
    pub fn saved_len(&mut self, frame: u64) -> u64 {
        let simulated = self.first_frame.saturating_add(frame);
        let cells = self.simulation.heights().len() as u64;
        let field = 8 + cells * std::mem::size_of::<W::Cell>() as u64;
        self.simulation.saved_len() + 4 + self.kept_at(simulated) * field
    }

    /// How many pre-roll fields a seamless loop has kept after `simulated` frames.
    fn kept_at(&self, simulated: u64) -> u64 {
        self.fade.as_ref().map_or(0, |fade| fade.due(simulated))
    }

    /// The seam so far (see [`Surface::measuring_seam`]).
    pub fn seam(&self) -> Option<f64> {
        self.seam.as_ref().and_then(Seam::value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::water::{Classic, Spring};

    fn surface<W: Water>(src: &str) -> Surface<W> {
        let scene = Scene::from_toml_str(src, std::path::Path::new("s.toml")).unwrap();
        let shore = Shore::open(scene.width as usize, scene.height as usize);
        let simulation = Simulation::<W>::new(&scene, Schedule::new(&scene), &shore, Bands::new(1));
        Surface::new(&scene, simulation, &shore)
    }

    /// What a checkpoint is checked against before it is read (its length, its clock) is what a
    /// render saves there, for either clock, with and without a loop's kept fields; and a state
    /// read back saves the same bytes again.
    fn saves_what_is_expected<W: Water>(src: &str) {
        let mut running = surface::<W>(src);
        // Output frame 0 starts after the pre-roll.
        for _ in 0..running.first_frame {
            running.advance();
        }
        for frame in 0..12u64 {
            let mut saved = Vec::new();
            running.save(&mut saved).unwrap();
            let mut fresh = surface::<W>(src);
            assert_eq!(saved.len() as u64, fresh.saved_len(frame), "{src} at {frame}");
            fresh.restore(&mut saved.as_slice(), frame).unwrap();
            let mut again = Vec::new();
            fresh.save(&mut again).unwrap();
            assert!(again == saved, "{src} at {frame}");
            // A state read as another frame's is refused by its clock or its kept fields.
            let mut other = surface::<W>(src);
            assert!(other.restore(&mut saved.as_slice(), frame + 1).is_err(), "{src} at {frame}");
            running.advance();
        }
    }

    #[test]
    fn saved_states_are_checked_by_length_and_clock() {
        let events = "[[stone]]\nat = 0.04\nx = 5\ny = 5\n[[damping]]\nat = 0.2\nshift = 3\n";
        for video in [
            "[video]\nwidth = 16\nheight = 12\nframes = 14\n",
            "[video]\nwidth = 16\nheight = 12\nframes = 14\nstart = 0.12\n[seamless]\ncrossfade = 2\n",
            "[video]\nwidth = 16\nheight = 12\nframes = 14\n[water]\nsteps_per_second = 70\n",
        ] {
            saves_what_is_expected::<Classic>(&format!("{video}{events}"));
            saves_what_is_expected::<Spring>(&format!("{video}{events}"));
        }
    }

    #[test]
    fn a_saved_damping_that_is_not_the_scenes_is_refused() {
        let src = "[video]\nwidth = 16\nheight = 12\nframes = 14\n[[damping]]\nat = 0.2\nshift = 3\n";
        let mut running = surface::<Classic>(src);
        for _ in 0..8 {
            running.advance();
        }
        let mut saved = Vec::new();
        running.save(&mut saved).unwrap();
        assert!(surface::<Classic>(src).restore(&mut saved.as_slice(), 8).is_ok());
        saved[24] = 5;
        let refused = surface::<Classic>(src).restore(&mut saved.as_slice(), 8).unwrap_err();
        assert!(refused.to_string().contains("damping shift"), "{refused}");
    }
}

#[cfg(test)]
mod wake_tests {
    use super::*;
    use crate::sim::water::{Classic, Spring};

    /// How much a swipe's wake is ladder: along a line 2 cells beside a straight fast swipe,
    /// the heights less their moving average over one unit's points (which leaves a pattern of
    /// that period whole), against the heights themselves (root mean squares).
    fn rungs<W: Water>(timing: &str, model: &str) -> f64
    where
        W::Cell: Into<i64>,
    {
        let text = format!(
            "[video]\nwidth = 400\nheight = 60\nfps = 20\nduration = 1.0\n[water]\nmodel = \"{model}\"\n\
             drop = \"smooth\"\nsteps_per_frame = 1\n[[swipe]]\nfrom = 0.0\nuntil = 0.9\npath = [[20, 30], [380, 30]]\n\
             radius = 3\nweight = 72\ntiming = \"{timing}\"\n"
        );
        let scene = Scene::from_toml_str(&text, std::path::Path::new("wake.toml")).unwrap();
        let shore = Shore::for_scene(&scene).unwrap();
        let mut surface =
            Surface::new(&scene, Simulation::<W>::new(&scene, Schedule::new(&scene), &shore, Bands::new(1)), &shore);
        while surface.advance().is_some_and(|k| k < 19) {}
        // 360 points over 18 units: 20 a unit.
        let row: Vec<f64> = surface.heights()[32 * 400..33 * 400].iter().map(|&h| h.into() as f64).collect();
        let (period, span) = (20usize, 60..300);
        let mean = |i: usize| row[i - period / 2..i + period / 2].iter().sum::<f64>() / period as f64;
        let ladder: f64 = span.clone().map(|i| (row[i] - mean(i)).powi(2)).sum();
        let whole: f64 = span.map(|i| row[i].powi(2)).sum();
        (ladder / whole).sqrt()
    }

    #[test]
    fn a_spread_swipe_leaves_a_fainter_ladder_than_a_batched_one() {
        // Measured: classic 0.049 against 0.249, spring 0.053 against 0.087 (its batched
        // ladder is fainter to begin with).
        let (batched, spread) = (rungs::<Classic>("batched", "classic"), rungs::<Classic>("spread", "classic"));
        assert!(spread < 0.3 * batched, "classic: spread {spread:.3} against batched {batched:.3}");
        let (batched, spread) = (rungs::<Spring>("batched", "spring"), rungs::<Spring>("spread", "spring"));
        assert!(spread < 0.7 * batched, "spring: spread {spread:.3} against batched {batched:.3}");
    }
}
