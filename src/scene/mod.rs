//! The validated scene: every key of the scene file checked, defaulted and turned into frames.
//!
//! Reading happens in two layers: `toml_reader` walks the TOML tree with spans and key paths,
//! and `read` turns what it reads, table by table, into the domain types below. Once a
//! [`Scene`] exists, nothing about it can fail.

mod background;
mod events;
mod look;
mod overrides;
mod read;
mod seamless;
mod shore;
pub mod starter;
pub(crate) mod toml_reader;
mod video;
mod water;

use std::path::PathBuf;

use crate::base::error::{Diagnostic, Error, Result};
pub use crate::base::picture::Fit;
pub use background::parse_color;
pub use read::{Picture, parsing_bytes};
pub use seamless::{loop_preroll, settle_seconds};
pub use shore::{Edge, Edges, MaskSpec, Obstacle, ShoreSpec};

/// Canvas size when neither the scene nor a background image gives one.
pub const DEFAULT_SIZE: (u32, u32) = (320, 240);

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
    /// How frames are drawn: sampling and light (§9).
    pub look: Look,
    /// Walls and edges (§8).
    pub shore: ShoreSpec,
    /// A loop without a seam (§11).
    pub seamless: Seamless,
    /// What a pointer presses on a live page (`[interaction]`).
    pub interaction: Interaction,
    /// The water's first heights, if not flat (`[surface]`).
    pub surface: Option<StartSurface>,
    /// The units every event time was moved by (the pre-roll's, with `[video] preroll`): a
    /// time written `t` lands on unit `frame_of(t) + event_offset`.
    pub event_offset: u64,
    /// Where `fps` was written, for the GIF frame-rate refusal.
    pub(crate) fps_site: Option<Diagnostic>,
    /// XXH3-64 of the scene text (for provenance).
    pub source_hash: u64,
    /// The most memory reading the scene took: its text and parse ([`parsing_bytes`], for the
    /// memory budget).
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
    /// A procedural picture drawn instead of an image (an addition to the format).
    pub pattern: Option<Pattern>,
    /// Whether the scene says anything of its background (an image, a colour or a pattern):
    /// without, its canvas is black by default rather than by choice.
    pub given: bool,
    /// Where `image` was written, so image errors point into the scene.
    pub(crate) image_site: Option<Diagnostic>,
}

impl BackgroundSpec {
    /// Turns an [`Error::Background`] into a scene diagnostic at the `image` key, when known.
    pub(crate) fn locate(&self, error: Error) -> Error {
        match (error, &self.image_site) {
            (Error::Background { path, reason }, Some(site)) => {
                let missing = std::fs::symlink_metadata(&path).is_err().then(|| path.clone());
                let message = if missing.is_some() {
                    // Name the path that was tried, and where a relative one starts.
                    let folder = Some(read::folder_of(&site.file)).filter(|f| !f.as_os_str().is_empty());
                    let start = match folder {
                        Some(folder) if path.starts_with(folder) => {
                            format!(" (a relative path starts at the scene's folder, {})", folder.display())
                        }
                        None if path.is_relative()
                            && read::folder_of(&site.file) != site.file.parent().unwrap_or(&path) =>
                        {
                            " (the scene was read from a stream: a relative path starts at the current folder)"
                                .to_string()
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
                let hint = near_file(&path).map(|name| format!("did you mean `{name}`?")).or_else(|| site.hint.clone());
                Error::Scene(Box::new(Diagnostic { message, hint, missing, ..site.clone() }))
            }
            (error, _) => error,
        }
    }
}

/// The name of a file beside where `path` was looked for that is plausibly what was meant (a
/// typo, another case), when `path` does not exist. At most a few thousand names are read.
fn near_file(path: &std::path::Path) -> Option<String> {
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let names: Vec<String> = std::fs::read_dir(folder)
        .ok()?
        .take(4096)
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    let lowered: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
    let near = toml_reader::closest(name, &lowered.iter().map(String::as_str).collect::<Vec<_>>())?;
    let at = lowered.iter().position(|n| n == near)?;
    Some(names[at].clone())
}

/// A procedural background, drawn by the drawing stage (`draw::background`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Swimming-pool tiles with grout lines and a gentle light gradient (many colours).
    Tiles,
    /// A two-colour checkerboard (few colours: GIF output is exact).
    Checker,
}

/// How a frame is drawn from the background and the water's slope (`[look]`): §9's sampling
/// and light, and the water terms added to them (smoothing, a soft tone, caustics, a sky).
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
    /// Passes of the [1 2 1] filter over the heights before they are drawn, 0..=4 (0: none).
    pub smooth: u32,
    /// How the light meets the ends of the channel range.
    pub tone: Tone,
    /// Light focused on the bottom where the surface curves, 0..=4096 (0: none).
    pub caustics: i64,
    /// The colour the surface mirrors where it tilts.
    pub sky: [u8; 3],
    /// How fast the mirrored sky rises with the tilt, 0..=4096 (0: none).
    pub reflection: i64,
    /// The gain tone's cap of the sky's share, 0..=256 (/256).
    pub sky_max: i64,
    /// The gain tone's sun glint: peak share, where it lies, how large, and its colour.
    pub glint: Glint,
    /// How far below the surface the gain tone's caustics land, in 1/256 of refraction's units
    /// (`None`: twice the refraction).
    pub caustics_depth_q8: Option<i64>,
}

/// The sun mirrored in the water where its slope reflects it (`tone = "gain"`: `glint`,
/// `glint_at`, `glint_size`, `glint_spread`, `sun`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glint {
    /// Peak share of the sun, 0..=256 (/256; 0: none).
    pub peak: i64,
    /// The slope, along the light, that mirrors the sun, 1..=65536.
    pub at: i64,
    /// The lobe's radius in slope units, 1..=65535.
    pub size: i64,
    /// How much curvature widens and dims the lobe, 0..=65536 (/256).
    pub spread: i64,
    /// The sun's colour.
    pub sun: [u8; 3],
}

impl Glint {
    /// No glint; the other figures are the defaults a scene that turns it on gets.
    pub const NONE: Glint = Glint { peak: 0, at: 80, size: 40, spread: 4096, sun: [0xff, 0xfa, 0xeb] };

    /// The slope that mirrors the sun, `(tx, ty)`: `glint_at` along `light`,
    /// `L = isqrt(65536·(lx² + ly²))`, `tx = (lx·at·256) ÷ L`, `ty = (ly·at·256) ÷ L`, `÷`
    /// truncating toward zero.
    pub fn target(&self, light: [i64; 2]) -> [i64; 2] {
        let l = (65536 * (light[0] * light[0] + light[1] * light[1])).isqrt();
        light.map(|c| c * self.at * 256 / l)
    }

    /// Whether calm water stays out of the lobe: `tx² + ty² ≥ size²`.
    pub fn clear_of_calm(&self, light: [i64; 2]) -> bool {
        let [tx, ty] = self.target(light);
        tx * tx + ty * ty >= self.size * self.size
    }
}

impl Default for Look {
    fn default() -> Self {
        Look::PLAIN
    }
}

impl Look {
    /// Nearest-pixel sampling and no light: frames are gathers of background pixels.
    pub const PLAIN: Look = Look {
        sampling: Sampling::Nearest,
        shading: 0,
        highlight: 0,
        light: [-1, -1],
        smooth: 0,
        tone: Tone::Clamp,
        caustics: 0,
        sky: DEFAULT_SKY,
        reflection: 0,
        sky_max: 128,
        glint: Glint::NONE,
        caustics_depth_q8: None,
    };
}

/// The sky a reflection mirrors when the scene names none: a pale blue.
pub const DEFAULT_SKY: [u8; 3] = [0xc8, 0xdc, 0xf0];

/// The reflection a scene that names a sky and no reflection gets.
pub const DEFAULT_REFLECTION: i64 = 256;

impl Look {
    /// True when every pixel of a frame is a background pixel (nearest sampling, no light): the
    /// frame is a gather, and an encoder can work in its own pixels.
    pub fn is_gather(&self) -> bool {
        self.sampling == Sampling::Nearest && self.shading == 0 && self.highlight == 0 && !self.has_water_terms()
    }

    /// True when the floor's caustics light the picture: the gain tone's caustics (the lit
    /// tones take theirs from the curvature alone, without a floor).
    pub fn makes_caustics(&self) -> bool {
        self.tone == Tone::Gain && self.caustics > 0
    }

    /// True when the look has a term beyond §9 that changes colours: a soft tone, caustics or
    /// a reflection. (Smoothing changes the heights, not how they are drawn.)
    pub fn has_water_terms(&self) -> bool {
        self.tone != Tone::Clamp || self.caustics > 0 || self.reflection > 0
    }
}

/// How the light meets the ends of the channel range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Added and clamped to 0..=255 (§9): steep light saturates.
    Clamp,
    /// Moved part of the way toward 245 (lighter) or 10 (darker), along a knee: light never
    /// makes black or white.
    Soft,
    /// The light multiplies the floor, brightening squeezed into the headroom: never a flat
    /// limit; with a capped sky share, sun glints and caustics by rays.
    Gain,
}

/// How a displaced position is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// The pixel the position falls in (§5).
    Nearest,
    /// The four pixels around it, weighted by the position's 1/256 fractions.
    Bilinear,
}

/// The water model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Two i16 height buffers, four neighbours (§4, classic).
    Classic,
    /// Hooke's law over eight neighbours with a velocity buffer (§4, spring).
    Spring,
}

impl Model {
    /// Both models.
    pub const ALL: [Model; 2] = [Model::Classic, Model::Spring];

    /// The refraction a scene of this model gets without `[water] refraction` (§2).
    pub fn default_refraction(self) -> f64 {
        match self {
            Model::Classic => 1.0,
            Model::Spring => 0.1,
        }
    }

    /// [`Model::default_refraction`] as R, in 1/256.
    pub fn default_refraction_q8(self) -> i64 {
        water::refraction_q8(self.default_refraction())
    }

    /// The model a scene file names `name`, if any.
    pub fn from_name(name: &str) -> Option<Model> {
        Model::ALL.into_iter().find(|model| model.name() == name)
    }

    /// What the model is, in a few words.
    pub fn help(self) -> &'static str {
        match self {
            Model::Classic => "Two height buffers, four neighbours, damped by a shift",
            Model::Spring => "Hooke's law over eight neighbours with a velocity buffer",
        }
    }

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
    /// The damping shift in force from the start (1..=15; 0 with `undamped = true`: no damping).
    pub damping_shift: u32,
    /// How the water's steps follow time.
    pub clock: Clock,
    /// Spring only: damping that truncates toward zero, so the water comes to rest.
    pub settle: bool,
    /// R = floor(refraction·256 + 0.5).
    pub refraction_q8: i64,
    /// How a drop (stone, swipe point, raindrop) is pressed into the water.
    pub drop: DropShape,
}

/// How a drop is pressed into the water (`[water] drop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropShape {
    /// Every cell strictly inside the radius is set to −weight (§4): a flat disc.
    Disc,
    /// A triweight crater twice the radius wide that blends each cell toward −weight.
    Smooth,
}

/// How the render loops without a seam (`[seamless]`, §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seamless {
    /// O: the last O output frames are drawn from heights blended into the pre-roll's.
    pub crossfade: Option<u64>,
    /// The window's events replayed through the pre-roll, with the period of the render.
    pub repeat: bool,
}

/// How the water's steps follow time: so many a frame (§3), or so many a second (§10).
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

/// The frame a time belongs to: `floor(t·fps + 0.5)` in f64 (2.5 rounds up to 3). Times too
/// large for a frame number saturate, which puts them past any render.
pub fn frame_of(seconds: f64, fps: u32) -> u64 {
    (seconds * f64::from(fps) + 0.5).floor() as u64
}

/// The unit U0 at which output frame 0's units begin, after `k0` pre-roll frames at `fps`:
/// `k0` in frame mode, `n(k0−1)` in step mode (`n(−1) = 0`).
pub fn window_start(clock: Clock, k0: u64, fps: u32) -> u64 {
    match (clock, k0) {
        (Clock::Frames { .. }, k0) => k0,
        (Clock::Steps { .. }, 0) => 0,
        (clock, k0) => clock.steps_before_drawing(k0 - 1, fps),
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
    /// When within its unit each point is pressed.
    pub timing: SwipeTiming,
}

/// When a swipe's points are pressed (`[[swipe]] timing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SwipeTiming {
    /// A unit's points at once, as the finger left them at the unit's start (a smooth swipe of
    /// more than one unit pressed again, graded, in the next unit): the format's first rule,
    /// which leaves faint rungs behind a finger moving several pixels a unit.
    #[default]
    Batched,
    /// Each point pressed at its moment within the unit, as a share split between its unit and
    /// the next: one even wake at any speed.
    Spread,
}

impl SwipeTiming {
    /// The names `timing` takes.
    pub const NAMES: [&str; 2] = ["batched", "spread"];

    /// The timing of this name.
    pub fn from_name(name: &str) -> Option<SwipeTiming> {
        match name {
            "batched" => Some(SwipeTiming::Batched),
            "spread" => Some(SwipeTiming::Spread),
            _ => None,
        }
    }

    /// Its name in a scene.
    pub fn name(self) -> &'static str {
        match self {
            SwipeTiming::Batched => "batched",
            SwipeTiming::Spread => "spread",
        }
    }
}

/// A smooth random surface the water starts from, at rest (`[surface]`, the setup of Tian and
/// Narasimhan's generator): seeded noise blurred and scaled so its highest |height| is `height`
/// (docs/scene-format.md pins the arithmetic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartSurface {
    /// The peak |height|, 1..=16384.
    pub height: i64,
    /// The blur's box radius, 1..=64 (three box passes a axis: about a Gaussian of that σ).
    pub blur: i64,
    /// The noise's seed.
    pub seed: u64,
}

/// What a pointer presses into the water where a page plays the scene live (`[interaction]`):
/// a click a stone, a drag a spread swipe, both of this radius and weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interaction {
    /// Drop radius.
    pub radius: i64,
    /// Drop depth.
    pub weight: i64,
}

impl Default for Interaction {
    /// A ring a click makes plainly seen on any look: radius 4, weight 256 (four times a
    /// stone's default depth, which the smooth drop's crater also widens).
    fn default() -> Interaction {
        Interaction { radius: 4, weight: 256 }
    }
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

impl Scene {
    /// Whether `other` is this scene but for its `[look]` (and its text): the same water, so
    /// the same heights to draw from, frame by frame.
    pub fn same_but_look(&self, other: &Scene) -> bool {
        let plain =
            |s: &Scene| Scene { look: Look::default(), fps_site: None, source_hash: 0, source_bytes: 0, ..s.clone() };
        plain(self) == plain(other)
    }

    /// The number of frames simulated in all: pre-roll plus output (K0 + N).
    pub fn end_frame(&self) -> u64 {
        self.first_frame + self.frames
    }

    /// Units (frames, or steps in step mode) a second: what event times are counted in.
    pub fn units_per_second(&self) -> u32 {
        self.water.clock.per_second(self.fps)
    }

    /// The render's window of units `[U0, U1)` (§11): the output frames' units, `[K0, K0+N)`
    /// in frame mode, `[n(K0−1), n(K0+N−1))` in step mode (`n(−1) = 0`).
    pub fn window(&self) -> std::ops::Range<u64> {
        window_start(self.water.clock, self.first_frame, self.fps)..self.end_unit()
    }

    /// The first unit whose events are never applied: K0 + N in frame mode; in step mode
    /// `n(K0+N-1)`, the step at which the last frame is drawn (before that step's events).
    pub fn end_unit(&self) -> u64 {
        match self.water.clock {
            Clock::Frames { .. } => self.end_frame(),
            Clock::Steps { .. } => self.water.clock.steps_before_drawing(self.end_frame() - 1, self.fps),
        }
    }

    /// Refuses frame rates a GIF cannot play faithfully (§6.1).
    pub fn check_gif_fps(&self) -> Result<()> {
        if self.fps <= 50 {
            return Ok(());
        }
        let message = format!(
            "video.fps = {} is too high for GIF output: allowed 1..=50 for GIF (players show delays under 2 cs as 10 cs)",
            self.fps
        );
        let hint = Some(
            "lower video.fps, or write a format that plays it: an APNG (-o out.apng), a WebP (-o out.webp), a video \
             (-o out.mp4) or a PNG sequence (-o frames/)"
                .to_string(),
        );
        Err(match &self.fps_site {
            Some(site) => Error::Scene(Box::new(Diagnostic { message, ..site.clone() }.with_hint(hint))),
            None => Error::Usage { message, hint },
        })
    }
}

#[cfg(test)]
mod tests;
