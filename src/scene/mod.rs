//! The validated scene: every key of the scene file checked, defaulted and turned into frames.
//!
//! Reading happens in two layers: `toml_reader` walks the TOML tree with spans and key paths,
//! and this module turns what it reads into the domain types below. Once a [`Scene`] exists,
//! nothing about it can fail.

mod background;
mod events;
mod look;
mod overrides;
mod seamless;
mod shore;
mod toml_reader;
mod video;
mod water;

use std::path::{Path, PathBuf};

use crate::error::{Diagnostic, Error, Result};
pub use crate::picture::Fit;
pub use background::parse_color;
pub use shore::{Edge, Edges, MaskSpec, Obstacle, ShoreSpec};
use toml_reader::{Document, Table, Value};

/// Largest canvas side, and the largest canvas area (8192·8192).
pub const MAX_SIDE: i64 = 16384;
/// Largest canvas area in pixels.
pub const MAX_AREA: i64 = 8192 * 8192;
/// Most frames one render may output.
pub const MAX_FRAMES: u64 = 1_000_000;
/// Latest first rendered frame (the length of the pre-roll).
pub const MAX_START_FRAME: u64 = 10_000_000;
/// Canvas size when neither the scene nor a background image gives one.
pub const DEFAULT_SIZE: (u32, u32) = (320, 240);
/// Scene files larger than this are refused before parsing.
pub const MAX_SCENE_BYTES: u64 = 16 << 20;

/// A fully validated scene, with times resolved to frame numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// The scene file, as given (used in messages).
    pub file: PathBuf,
    /// Canvas width in pixels.
    pub width: u32,
    /// Canvas height in pixels.
    pub height: u32,
    /// Frames per second.
    pub fps: u32,
    /// K0: the first rendered frame; frames before it are simulated but not output.
    pub first_frame: u64,
    /// N: how many frames are output.
    pub frames: u64,
    /// Whether a GIF loops forever (true) or plays once.
    pub looping: bool,
    /// What lies under the water.
    pub background: BackgroundSpec,
    /// The simulation.
    pub water: WaterSpec,
    /// Stones in file order.
    pub stones: Vec<Stone>,
    /// Swipes in file order.
    pub swipes: Vec<Swipe>,
    /// Rain, if any.
    pub rain: Option<Rain>,
    /// Damping changes in file order.
    pub damping: Vec<DampingChange>,
    /// How frames are drawn: sampling and light (SPEC §9).
    pub look: Look,
    /// Walls and edges (SPEC §8).
    pub shore: ShoreSpec,
    /// A loop without a seam (SPEC §11).
    pub seamless: Seamless,
    /// Where `fps` was written, for the GIF frame-rate refusal.
    pub(crate) fps_site: Option<Diagnostic>,
    /// XXH3-64 of the scene text (for provenance).
    pub source_hash: u64,
    /// The scene text's length in bytes (for the memory budget).
    pub source_bytes: u64,
}

/// How the background picture is made and fitted.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundSpec {
    /// The image file, resolved against the scene's folder.
    pub image: Option<PathBuf>,
    /// How an image of another size is fitted to the canvas.
    pub fit: Fit,
    /// Canvas colour, `contain` bars and the colour alpha is flattened over.
    pub color: [u8; 3],
    /// A procedural picture drawn instead of an image (an addition to SPEC).
    pub pattern: Option<Pattern>,
    /// Where `image` was written, so image errors point into the scene.
    pub(crate) image_site: Option<Diagnostic>,
}

impl BackgroundSpec {
    /// Turns an [`Error::Background`] into a scene diagnostic at the `image` key, when known.
    pub(crate) fn locate(&self, error: Error) -> Error {
        match (error, &self.image_site) {
            (Error::Background { path, reason }, Some(site)) => {
                let message = if std::fs::symlink_metadata(&path).is_err() {
                    // Name the path that was tried, and where a relative one starts.
                    let folder = site.file.parent().filter(|f| !f.as_os_str().is_empty());
                    let start = match folder {
                        Some(folder) if path.starts_with(folder) => {
                            format!(" (a relative path starts at the scene's folder, {})", folder.display())
                        }
                        None if path.is_relative() => {
                            " (a relative path starts at the scene's folder, here the current folder)".to_string()
                        }
                        _ => String::new(),
                    };
                    format!("{}: no such file: {}{start}", site.message, path.display())
                } else {
                    format!("{}: {}: {reason}", site.message, path.display())
                };
                Error::Scene(Box::new(Diagnostic { message, ..site.clone() }))
            }
            (error, _) => error,
        }
    }
}

/// A procedural background, drawn by [`crate::background`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Swimming-pool tiles with grout lines and a gentle light gradient (many colours).
    Tiles,
    /// A two-colour checkerboard (few colours: GIF output is exact).
    Checker,
}

/// How a frame is drawn from the background and the water's slope (`[look]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// How the displaced position is sampled.
    pub sampling: Sampling,
    /// Light and dark sides of the waves, 0..=4096 (0: none).
    pub shading: i64,
    /// Glints where the water faces the light, 0..=4096 (0: none).
    pub highlight: i64,
    /// Toward the light, [x, y] in -256..=256, not both 0 (not normalized).
    pub light: [i64; 2],
}

impl Default for Look {
    /// Nearest-pixel sampling and no light: frames are gathers of background pixels.
    fn default() -> Self {
        Look { sampling: Sampling::Nearest, shading: 0, highlight: 0, light: [-1, -1] }
    }
}

impl Look {
    /// True when every pixel of a frame is a background pixel (nearest sampling, no light): the
    /// frame is a gather, and an encoder can work in its own pixels.
    pub fn is_gather(&self) -> bool {
        self.sampling == Sampling::Nearest && self.shading == 0 && self.highlight == 0
    }
}

/// How a displaced position is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// The pixel the position falls in (SPEC §5).
    Nearest,
    /// The four pixels around it, weighted by the position's 1/256 fractions.
    Bilinear,
}

/// The water model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Two i16 height buffers, four neighbours (SPEC §4, classic).
    Classic,
    /// Hooke's law over eight neighbours with a velocity buffer (SPEC §4, spring).
    Spring,
}

impl Model {
    /// The name used in scene files and `plan`.
    pub fn name(self) -> &'static str {
        match self {
            Model::Classic => "classic",
            Model::Spring => "spring",
        }
    }
}

/// Simulation settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaterSpec {
    /// The model.
    pub model: Model,
    /// The damping shift in force from the start (1..=15).
    pub damping_shift: u32,
    /// How the water's steps follow time.
    pub clock: Clock,
    /// Spring only: damping that truncates toward zero, so the water comes to rest.
    pub settle: bool,
    /// R = floor(refraction·256 + 0.5).
    pub refraction_q8: i64,
}

/// How the render loops without a seam (`[seamless]`, SPEC §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seamless {
    /// O: the last O output frames are drawn from heights blended into the pre-roll's.
    pub crossfade: Option<u64>,
    /// The window's events replayed through the pre-roll, with the period of the render.
    pub repeat: bool,
}

/// How the water's steps follow time: so many a frame (SPEC §3), or so many a second (§10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// `steps_per_frame` steps after each frame's events (1..=16); events fall on frames.
    Frames {
        /// Steps a frame.
        steps_per_frame: u32,
    },
    /// S steps a second, whatever the frame rate; events fall on steps, and frame k is drawn
    /// once `n(k) = floor((k+1)·S / fps)` steps are done.
    Steps {
        /// S.
        per_second: u32,
    },
}

impl Clock {
    /// Units (frames or steps) a second, at `fps` frames a second.
    pub fn per_second(self, fps: u32) -> u32 {
        match self {
            Clock::Frames { .. } => fps,
            Clock::Steps { per_second } => per_second,
        }
    }

    /// Steps done when frame `k` is drawn: `(k+1)·steps_per_frame`, or `n(k)`.
    pub fn steps_before_drawing(self, k: u64, fps: u32) -> u64 {
        match self {
            Clock::Frames { steps_per_frame } => (k + 1) * u64::from(steps_per_frame),
            Clock::Steps { per_second } => ((u128::from(k) + 1) * u128::from(per_second) / u128::from(fps)) as u64,
        }
    }

    /// What a unit is called: "frame" or "step".
    pub fn unit_name(self) -> &'static str {
        match self {
            Clock::Frames { .. } => "frame",
            Clock::Steps { .. } => "step",
        }
    }

    /// The first frame drawn after the events of `unit`: the frame itself, or in step mode the
    /// first k with `n(k) > unit` (`ceil((unit+1)·fps / S) − 1`).
    pub fn frame_showing(self, unit: u64, fps: u32) -> u64 {
        match self {
            Clock::Frames { .. } => unit,
            Clock::Steps { per_second } => {
                ((u128::from(unit) + 1) * u128::from(fps)).div_ceil(u128::from(per_second)) as u64 - 1
            }
        }
    }

    /// Steps a second.
    pub fn steps_per_second(self, fps: u32) -> u64 {
        match self {
            Clock::Frames { steps_per_frame } => u64::from(fps) * u64::from(steps_per_frame),
            Clock::Steps { per_second } => u64::from(per_second),
        }
    }
}

/// One stone: a drop at a set time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stone {
    /// The unit it lands on (a frame, or a step in step mode: see [`Clock`]).
    pub unit: u64,
    /// Centre column (on the canvas).
    pub x: i64,
    /// Centre row (on the canvas).
    pub y: i64,
    /// Drop radius in cells.
    pub radius: i64,
    /// Depth of the dent.
    pub weight: i64,
}

/// A finger swiped along a polyline between two times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swipe {
    /// kf: the unit of `from`.
    pub first_unit: u64,
    /// kt: the unit of `until`.
    pub last_unit: u64,
    /// The polyline's corners, as written (may leave the canvas).
    pub path: Vec<[i64; 2]>,
    /// Drop radius.
    pub radius: i64,
    /// Drop depth.
    pub weight: i64,
}

/// Random drops at a steady rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Rain {
    /// Drops per second (0..=100,000).
    pub drops_per_second: f64,
    /// Radius range, inclusive.
    pub radius: [i64; 2],
    /// Weight range, inclusive.
    pub weight: [i64; 2],
    /// First unit with rain.
    pub first_unit: u64,
    /// The unit rain stops before; `None` means the end of the render.
    pub end_unit: Option<u64>,
    /// Generator seed.
    pub seed: u64,
}

/// A change of damping shift from a time on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DampingChange {
    /// The unit it takes effect on (before that unit's steps).
    pub unit: u64,
    /// The new shift.
    pub shift: u32,
}

const TOP_KEYS: &[&str] = &[
    "video",
    "background",
    "water",
    "look",
    "stone",
    "swipe",
    "rain",
    "damping",
    "obstacle",
    "mask",
    "edges",
    "seamless",
];
const VIDEO_KEYS: &[&str] = &["width", "height", "fps", "duration", "frames", "start", "loop"];
const BACKGROUND_KEYS: &[&str] = &["image", "fit", "color", "pattern"];
const WATER_KEYS: &[&str] =
    &["model", "damping_shift", "steps_per_frame", "steps_per_second", "speed", "refraction", "settle"];
const STONE_KEYS: &[&str] = &["at", "x", "y", "radius", "weight"];
const SWIPE_KEYS: &[&str] = &["from", "until", "path", "radius", "weight"];
const RAIN_KEYS: &[&str] = &["drops_per_second", "radius", "weight", "from", "until", "seed"];
const DAMPING_KEYS: &[&str] = &["at", "shift"];

const RADIUS: std::ops::RangeInclusive<i64> = 1..=256;
const WEIGHT: std::ops::RangeInclusive<i64> = 1..=16384;
const SHIFT: std::ops::RangeInclusive<i64> = 1..=15;
const COORD: std::ops::RangeInclusive<i64> = -65536..=65536;

impl Scene {
    /// Reads and validates a scene file. Relative paths in it are relative to its folder.
    pub fn load(path: &Path) -> Result<Scene> {
        Scene::from_bytes(Scene::read_file(path)?, path)
    }

    /// A scene file's bytes, at most [`MAX_SCENE_BYTES`] of them whatever the file is (to check
    /// what parsing them takes before [`Scene::from_bytes`]).
    pub fn read_file(path: &Path) -> Result<Vec<u8>> {
        read_limited(path, MAX_SCENE_BYTES, "scene files")
            .map_err(|source| Error::SceneUnreadable { path: path.to_path_buf(), source })
    }

    /// Validates scene bytes, which must be UTF-8 text. `file` names it in messages; its folder
    /// anchors relative paths.
    pub fn from_bytes(bytes: Vec<u8>, path: &Path) -> Result<Scene> {
        Scene::from_bytes_with(bytes, path, &[])
    }

    /// [`Scene::from_bytes`] with `--set` overrides (see [`Scene::from_toml_str_with`]).
    pub fn from_bytes_with(bytes: Vec<u8>, path: &Path, overrides: &[String]) -> Result<Scene> {
        let src = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let prefix = String::from_utf8_lossy(&e.as_bytes()[..at]).len();
                let message = format!("the scene is not UTF-8 text (byte {at} is not valid UTF-8)");
                return Err(Error::Scene(Box::new(Diagnostic::at(path, &lossy, prefix..prefix + 1, message))));
            }
        };
        Scene::from_toml_str_with(&src, path, overrides)
    }

    /// Validates scene text. `file` names it in messages; its folder anchors relative paths.
    pub fn from_toml_str(src: &str, file: &Path) -> Result<Scene> {
        Scene::from_toml_str_with(src, file, &[])
    }

    /// [`Scene::from_toml_str`] with `--set KEY=VALUE` overrides (`water.refraction=0.4`,
    /// `stone[0].x=10`), each validated like the file and named in messages. The scene's hash
    /// (provenance) is of the text and its overrides.
    pub fn from_toml_str_with(src: &str, file: &Path, overrides: &[String]) -> Result<Scene> {
        // A byte-order mark is not part of the text: without it, columns count from the first key.
        let src = src.strip_prefix('\u{feff}').unwrap_or(src);
        let placed = overrides::Override::place(src.len(), overrides);
        let doc = Document { file, src, overrides: &placed };
        if let Some(at) = src.find('\0') {
            return Err(doc.error(at..at + 1, "the scene contains a NUL byte".into()));
        }
        let mut root = doc.parse()?;
        for o in &placed {
            overrides::apply(&doc, root.get_mut(), o)?;
        }
        let top = doc.table(String::new(), 0..0, root.get_ref(), TOP_KEYS)?;
        let section = |key: &str, allowed: &[&str]| -> Result<Option<Table<'_, '_>>> {
            top.get(key).map(|v| v.table(allowed, &format!("a table, written [{key}]"))).transpose()
        };
        let video = section("video", VIDEO_KEYS)?;
        let background = section("background", BACKGROUND_KEYS)?;
        let water = section("water", WATER_KEYS)?;
        let look = section("look", look::KEYS)?;
        let rain = section("rain", RAIN_KEYS)?;
        let mask = section("mask", shore::MASK_KEYS)?;
        let edges = section("edges", shore::EDGES_KEYS)?;
        let seamless = section("seamless", seamless::KEYS)?;
        let list = |key: &str, allowed: &[&str]| -> Result<Vec<Table<'_, '_>>> {
            top.get(key).map_or(Ok(Vec::new()), |v| v.tables(allowed))
        };
        let stones = list("stone", STONE_KEYS)?;
        let swipes = list("swipe", SWIPE_KEYS)?;
        let damping = list("damping", DAMPING_KEYS)?;
        let obstacles = list("obstacle", shore::OBSTACLE_KEYS)?;

        let base = file.parent().unwrap_or(Path::new(""));
        let background = background::read_background(&doc, background.as_ref(), base)?;
        let (width, height) =
            video::read_canvas(&doc, video.as_ref(), &background).map_err(|e| background.locate(e))?;
        let fps = match opt(video.as_ref(), "fps") {
            Some(v) => v.int(1..=100)?,
            None => 25,
        } as u32;
        let fps_site = opt(video.as_ref(), "fps").map(|v| doc.diagnostic(v.span, String::new()));
        let (first_frame, frames) = video::read_length(&doc, video.as_ref(), fps)?;
        let looping = opt(video.as_ref(), "loop").map(|v| v.bool()).transpose()?.unwrap_or(true);
        let water = water::read_water(water.as_ref(), fps)?;
        let seamless = seamless
            .as_ref()
            .map(|t| seamless::read_seamless(t, first_frame, frames, water.clock, fps))
            .transpose()?
            .unwrap_or_default();
        let look = look.as_ref().map(look::read_look).transpose()?.unwrap_or_default();

        // Event times count in frames, or in steps when the water keeps its own time.
        let rate = water.clock.per_second(fps);
        let stones = read_all(&stones, |t| events::read_stone(t, rate, width, height))?;
        let swipes = read_all(&swipes, |t| events::read_swipe(t, rate))?;
        let rain = rain.as_ref().map(|t| events::read_rain(t, rate)).transpose()?;
        let damping = read_all(&damping, |t| events::read_damping(t, rate))?;
        let shore = ShoreSpec {
            obstacles: read_all(&obstacles, shore::read_obstacle)?,
            mask: mask.as_ref().map(|t| shore::read_mask(&doc, t, base)).transpose()?,
            edges: shore::read_edges(edges.as_ref())?,
        };

        Ok(Scene {
            file: file.to_path_buf(),
            width,
            height,
            fps,
            first_frame,
            frames,
            looping,
            background,
            water,
            stones,
            swipes,
            rain,
            damping,
            look,
            shore,
            seamless,
            fps_site,
            source_hash: source_hash(src, overrides),
            source_bytes: (src.len() + overrides.iter().map(String::len).sum::<usize>()) as u64,
        })
    }

    /// The number of frames simulated in all: pre-roll plus output (K0 + N).
    pub fn end_frame(&self) -> u64 {
        self.first_frame + self.frames
    }

    /// Units (frames, or steps in step mode) a second: what event times are counted in.
    pub fn units_per_second(&self) -> u32 {
        self.water.clock.per_second(self.fps)
    }

    /// The render's window of units `[U0, U1)` (SPEC §11): the output frames' units, `[K0, K0+N)`
    /// in frame mode, `[n(K0−1), n(K0+N−1))` in step mode (`n(−1) = 0`).
    pub fn window(&self) -> std::ops::Range<u64> {
        let start = match (self.water.clock, self.first_frame) {
            (Clock::Frames { .. }, k0) => k0,
            (Clock::Steps { .. }, 0) => 0,
            (clock, k0) => clock.steps_before_drawing(k0 - 1, self.fps),
        };
        start..self.end_unit()
    }

    /// The first unit whose events are never applied: K0 + N in frame mode; in step mode
    /// `n(K0+N-1)`, the step at which the last frame is drawn (before that step's events).
    pub fn end_unit(&self) -> u64 {
        match self.water.clock {
            Clock::Frames { .. } => self.end_frame(),
            Clock::Steps { .. } => self.water.clock.steps_before_drawing(self.end_frame() - 1, self.fps),
        }
    }

    /// Refuses frame rates a GIF cannot play faithfully (SPEC §6.1).
    pub fn check_gif_fps(&self) -> Result<()> {
        if self.fps <= 50 {
            return Ok(());
        }
        let message = format!(
            "video.fps = {} is too high for GIF output: allowed 1..=50 for GIF (players show delays under 2 cs as 10 cs)",
            self.fps
        );
        let hint = Some("lower video.fps, or render a PNG sequence (-o frames/)".to_string());
        Err(match &self.fps_site {
            Some(site) => Error::Scene(Box::new(Diagnostic { message, ..site.clone() }.with_hint(hint))),
            None => Error::Output { message, hint },
        })
    }
}

/// Reads a file of at most `limit` bytes, whatever it is: a regular file, or a pipe or device
/// (`/dev/stdin`, `<(…)`), of which at most `limit + 1` bytes are read, so an endless one is
/// refused without filling memory. A folder is refused.
/// `what` names such files in the message ("scene files").
pub fn read_limited(path: &Path, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::other("it is a folder, not a file"));
    }
    let too_large = |size: String| {
        let shown = crate::units::show(limit);
        std::io::Error::other(format!("it holds {size} bytes: {what} are limited to {limit} bytes ({shown})"))
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(meta.len().to_string()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(format!("more than {limit}")));
    }
    Ok(bytes)
}

/// XXH3-64 of the scene text, followed by each override (none: the text's own hash, as always).
fn source_hash(src: &str, overrides: &[String]) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(src.as_bytes());
    for o in overrides {
        hasher.update(b"\n--set ");
        hasher.update(o.as_bytes());
    }
    hasher.digest()
}

/// Reads each of `items` into a list of exactly their number (a scene may hold a great many,
/// and the memory budget counts them at their size).
pub(crate) fn read_all<I, T>(items: &[I], read: impl Fn(&I) -> Result<T>) -> Result<Vec<T>> {
    let mut all = Vec::with_capacity(items.len());
    for item in items {
        all.push(read(item)?);
    }
    Ok(all)
}

/// The frame a time belongs to: `floor(t·fps + 0.5)` in f64 (2.5 rounds up to 3). Times too
/// large for a frame number saturate, which puts them past any render.
pub fn frame_of(seconds: f64, fps: u32) -> u64 {
    (seconds * f64::from(fps) + 0.5).floor() as u64
}

fn opt<'t, 's>(table: Option<&Table<'t, 's>>, key: &str) -> Option<Value<'t, 's>> {
    table.and_then(|t| t.get(key))
}

#[cfg(test)]
mod tests;
