//! A scene played live, as a web page plays it (`web/`): its frames one after another in RGBA,
//! looping, seekable, and what a pointer adds to the water on the way, recorded as the
//! `[[stone]]` and `[[swipe]]` lines that make the CLI render the same frames.
//!
//! Frames are the render's: the same stages ([`Player`]: timeline, water, heights, look) on one
//! thread, so every frame's RGB is what `--hashes` hashes. A click adds a stone, and each frame
//! of a drag a spread swipe from where the pointer was to where it is, on the units the next
//! frame applies, exactly as the same lines written at the end of the scene would land. The
//! frames that follow are the CLI's for the scene with those lines, with one exception: with
//! `[seamless] repeat`, the CLI's pre-roll replays them too, which the water already under way
//! cannot. From the next loop on, the player starts again from the scene with every line
//! added, and every frame is the CLI's.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::base::error::Result;
use crate::base::picture::Given;
use crate::encode::manifest::frame_hash;
use crate::render::Inputs;
use crate::render::player::Player;
use crate::scene::{Scene, Stone, Swipe, SwipeTiming, frame_of};
use crate::sim::timeline::bresenham;

/// The most stones and swipe pieces a pointer may add: past it, the pointer adds nothing (a
/// drag adds one piece a frame: over six minutes of dragging at 25 fps).
pub const MOST_ADDED: usize = 10_000;

/// A scene played live. See the [module](self).
pub struct Live {
    /// The scene with what the pointer added.
    scene: Scene,
    /// The stones and swipes the scene itself holds (those after them were added).
    written: (usize, usize),
    inputs: Inputs,
    player: Player<'static>,
    /// The output frame simulated last (`None` before the first).
    frame: Option<u64>,
    drag: Option<Drag>,
    rgba: Vec<u8>,
    hash: u64,
}

/// A drag under way: where the pointer was when the last piece of swipe was added (or pressed),
/// where it is now, and whether a piece was added yet.
struct Drag {
    last: [i64; 2],
    now: [i64; 2],
    started: bool,
}

impl Live {
    /// The images `text` (the scene named `name`) reads, as it names them (relative to its
    /// folder): what a page fetches and hands to [`Live::open`].
    pub fn files(text: &str, name: &Path) -> Result<Vec<PathBuf>> {
        let scene = Scene::from_toml_str(text, name)?;
        Ok(scene.input_files().into_iter().skip(1).map(Path::to_path_buf).collect())
    }

    /// The scene `text` (named `name`), its images read from `given`, within the memory
    /// `budget`, simulated to its first frame.
    pub fn open(text: &str, name: &Path, given: &Given, budget: u64) -> Result<Live> {
        let scene = Scene::from_toml_str(text, name)?;
        let inputs = Inputs::for_scene_given(&scene, budget, given)?;
        let player = player(&scene, &inputs);
        let written = (scene.stones.len(), scene.swipes.len());
        let cells = inputs.background.pixels.len();
        let mut live =
            Live { scene, written, inputs, player, frame: None, drag: None, rgba: vec![255; cells * 4], hash: 0 };
        live.advance();
        Ok(live)
    }

    /// The scene played, with what the pointer added.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The output frame simulated last, from 0.
    pub fn frame(&self) -> u64 {
        self.frame.unwrap_or(0)
    }

    /// Simulates the next output frame, from the first again after the last, and returns its
    /// number. A drag's piece since the last frame is added first.
    pub fn advance(&mut self) -> u64 {
        self.add_drag_piece();
        let k = match self.player.advance() {
            Some(k) => k,
            None => {
                self.restart();
                self.player.advance().unwrap_or(0)
            }
        };
        self.frame = Some(k);
        k
    }

    /// Simulates up to output frame `frame` (the last, if past it): forward from here, or from
    /// the start when it lies behind.
    pub fn seek(&mut self, frame: u64) -> u64 {
        let frame = frame.min(self.scene.frames.saturating_sub(1));
        if self.frame.is_none_or(|k| k > frame) {
            self.restart();
        }
        while self.frame.is_none_or(|k| k < frame) {
            match self.player.advance() {
                Some(k) => self.frame = Some(k),
                None => break,
            }
        }
        self.frame()
    }

    /// Draws the frame simulated last, in RGBA (alpha 255), row-major.
    pub fn draw(&mut self) -> &[u8] {
        let rgb = self.player.draw();
        self.hash = frame_hash(bytemuck::cast_slice(rgb));
        for (out, p) in self.rgba.chunks_exact_mut(4).zip(rgb) {
            out[..3].copy_from_slice(p);
        }
        &self.rgba
    }

    /// The XXH3-64 of the last frame drawn's RGB bytes: the hash `--hashes` writes for it.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Drops a stone (the scene's `[interaction]` radius and weight) at `(x, y)`, clamped to
    /// the canvas, on the units the next frame applies. False when no more may be added.
    pub fn press(&mut self, x: i64, y: i64) -> bool {
        if self.added() >= MOST_ADDED {
            return false;
        }
        let [x, y] = self.on_canvas(x, y);
        let pen = self.scene.interaction;
        let stone = Stone { unit: self.player.next_units().start, x, y, radius: pen.radius, weight: pen.weight };
        self.player.add_stone(self.scene.stones.len() as u32, &stone);
        self.scene.stones.push(stone);
        true
    }

    /// Starts a drag at `(x, y)`: the point is pressed with the next frame's piece of swipe.
    pub fn drag_start(&mut self, x: i64, y: i64) {
        let at = self.on_canvas(x, y);
        self.drag = Some(Drag { last: at, now: at, started: false });
    }

    /// Moves the drag under way to `(x, y)`; the next frame adds the piece of swipe that got
    /// it there.
    pub fn drag_to(&mut self, x: i64, y: i64) {
        let at = self.on_canvas(x, y);
        if let Some(drag) = &mut self.drag {
            drag.now = at;
        }
    }

    /// Ends the drag under way, its last piece added first (on the next frame's units).
    pub fn drag_end(&mut self) {
        self.add_drag_piece();
        self.drag = None;
    }

    /// Forgets what the pointer added; the scene plays again from its first frame.
    pub fn clear(&mut self) {
        self.scene.stones.truncate(self.written.0);
        self.scene.swipes.truncate(self.written.1);
        self.drag = None;
        self.restart();
        self.advance();
    }

    /// How many stones and pieces of swipe the pointer added.
    pub fn added(&self) -> usize {
        self.scene.stones.len() - self.written.0 + self.scene.swipes.len() - self.written.1
    }

    /// What the pointer added, as scene lines: pasted at the end of the scene, they make the
    /// CLI render the frames played here (see the [module](self)).
    pub fn export(&self) -> String {
        let scene = &self.scene;
        let rate = scene.units_per_second();
        let time = |unit: u64| seconds(unit - scene.event_offset.min(unit), rate);
        let mut out = String::new();
        for s in &scene.stones[self.written.0..] {
            out += &format!(
                "[[stone]]\nat = {}\nx = {}\ny = {}\nradius = {}\nweight = {}\n\n",
                time(s.unit),
                s.x,
                s.y,
                s.radius,
                s.weight
            );
        }
        for s in &scene.swipes[self.written.1..] {
            let path: Vec<String> = s.path.iter().map(|[x, y]| format!("[{x}, {y}]")).collect();
            out += &format!(
                "[[swipe]]\nfrom = {}\nuntil = {}\npath = [{}]\nradius = {}\nweight = {}\ntiming = \"{}\"\n\n",
                time(s.first_unit),
                time(s.last_unit),
                path.join(", "),
                s.radius,
                s.weight,
                s.timing.name()
            );
        }
        out
    }

    /// Adds the drag's piece of swipe since the last one, if the pointer moved (or the drag
    /// has added none yet), on the units the next frame applies.
    fn add_drag_piece(&mut self) {
        let Some(drag) = &self.drag else { return };
        if (drag.started && drag.now == drag.last) || self.added() >= MOST_ADDED {
            return;
        }
        // A piece starts at the point after the last piece's end, which that piece pressed.
        let start = match drag.started {
            false => drag.last,
            true => {
                let mut line = Vec::new();
                bresenham(drag.last, drag.now, &mut line);
                line[0]
            }
        };
        let units = self.player.next_units();
        let pen = self.scene.interaction;
        let swipe = Swipe {
            first_unit: units.start,
            last_unit: (units.end.max(units.start + 1)) - 1,
            path: vec![start, drag.now],
            radius: pen.radius,
            weight: pen.weight,
            timing: SwipeTiming::Spread,
        };
        self.player.add_swipe(self.scene.swipes.len() as u32, &swipe);
        self.scene.swipes.push(swipe);
        self.drag = Some(Drag { last: drag.now, now: drag.now, started: true });
    }

    /// Back to before the first frame: the player made again from the scene with what was
    /// added.
    fn restart(&mut self) {
        self.player = player(&self.scene, &self.inputs);
        self.frame = None;
    }

    /// `(x, y)` moved onto the canvas.
    fn on_canvas(&self, x: i64, y: i64) -> [i64; 2] {
        [x.clamp(0, i64::from(self.scene.width) - 1), y.clamp(0, i64::from(self.scene.height) - 1)]
    }
}

/// The player of `scene` over `inputs`, on one thread.
fn player(scene: &Scene, inputs: &Inputs) -> Player<'static> {
    Player::new(Cow::Owned(scene.clone()), inputs, Cow::Borrowed(&inputs.background.pixels), 1)
}

/// The shortest decimal time (one decimal at least) that lands on `unit` at `rate` units a
/// second, as the scene reads it (`frame_of`).
fn seconds(unit: u64, rate: u32) -> String {
    let exact = unit as f64 / f64::from(rate);
    (1..=12)
        .map(|digits| format!("{exact:.digits$}"))
        .find(|text| text.parse::<f64>().is_ok_and(|t| frame_of(t, rate) == unit))
        .unwrap_or_else(|| format!("{exact:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_written_short_and_lands_on_its_unit() {
        assert_eq!(seconds(0, 25), "0.0");
        assert_eq!(seconds(31, 25), "1.24");
        assert_eq!(seconds(109, 42), "2.6");
        for rate in [1, 7, 25, 42, 100, 1000] {
            for unit in (0..5000).step_by(37) {
                assert_eq!(frame_of(seconds(unit, rate).parse().unwrap(), rate), unit, "{unit} at {rate}");
            }
        }
    }
}
