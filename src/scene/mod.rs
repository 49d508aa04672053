//! The validated scene: every key of the scene file checked, defaulted and turned into frames.
//!
//! Reading happens in two layers: `toml_reader` walks the TOML tree with spans and key paths,
//! and this module turns what it reads into the domain types below. Once a [`Scene`] exists,
//! nothing about it can fail.

mod toml_reader;

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{Diagnostic, Error, Result};
use crate::timeline::frame_of;
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
    /// Where `fps` was written, for the GIF frame-rate refusal.
    pub(crate) fps_site: Option<Diagnostic>,
    /// XXH3-64 of the scene text (for provenance).
    pub source_hash: u64,
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
                let message = format!("{}: {}: {reason}", site.message, path.display());
                Error::Scene(Box::new(Diagnostic { message, ..site.clone() }))
            }
            (error, _) => error,
        }
    }
}

/// How an image whose size differs from the canvas is fitted to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Scale to cover the canvas, keeping the aspect ratio; crop the overflow evenly.
    Cover,
    /// Scale to fit inside the canvas, keeping the aspect ratio; fill bars with `color`.
    Contain,
    /// Scale each axis independently to the canvas size.
    Stretch,
}

/// A procedural background, drawn by [`crate::background`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Swimming-pool tiles with grout lines and a gentle light gradient (many colours).
    Tiles,
    /// A two-colour checkerboard (few colours: GIF output is exact).
    Checker,
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
    /// The damping shift in force from frame 0 (1..=15).
    pub damping_shift: u32,
    /// Simulation steps per frame (1..=16).
    pub steps_per_frame: u32,
    /// R = floor(refraction·256 + 0.5).
    pub refraction_q8: i64,
}

/// One stone: a drop at a set frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stone {
    /// The frame it lands on.
    pub frame: u64,
    /// Centre column (on the canvas).
    pub x: i64,
    /// Centre row (on the canvas).
    pub y: i64,
    /// Drop radius in cells.
    pub radius: i64,
    /// Depth of the dent.
    pub weight: i64,
}

/// A finger swiped along a polyline between two frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swipe {
    /// kf = frame_of(from).
    pub first_frame: u64,
    /// kt = frame_of(until).
    pub last_frame: u64,
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
    /// First frame with rain.
    pub first_frame: u64,
    /// The frame rain stops before; `None` means the end of the render.
    pub end_frame: Option<u64>,
    /// Generator seed.
    pub seed: u64,
}

/// A change of damping shift from a frame on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DampingChange {
    /// The frame it takes effect on (before that frame's steps).
    pub frame: u64,
    /// The new shift.
    pub shift: u32,
}

const TOP_KEYS: &[&str] = &["video", "background", "water", "stone", "swipe", "rain", "damping"];
const VIDEO_KEYS: &[&str] = &["width", "height", "fps", "duration", "frames", "start", "loop"];
const BACKGROUND_KEYS: &[&str] = &["image", "fit", "color", "pattern"];
const WATER_KEYS: &[&str] = &["model", "damping_shift", "steps_per_frame", "refraction"];
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
        let unreadable = |source| Error::SceneUnreadable { path: path.to_path_buf(), source };
        let meta = std::fs::metadata(path).map_err(unreadable)?;
        if meta.is_dir() {
            let source = std::io::Error::other("it is a folder, not a scene file");
            return Err(unreadable(source));
        }
        if meta.len() > MAX_SCENE_BYTES {
            let message = format!("is {} bytes: scene files are limited to {MAX_SCENE_BYTES} bytes", meta.len());
            return Err(unreadable(std::io::Error::other(message)));
        }
        let bytes = std::fs::read(path).map_err(unreadable)?;
        Scene::from_bytes(bytes, path)
    }

    /// Validates scene bytes, which must be UTF-8 text. `file` names it in messages; its folder
    /// anchors relative paths.
    pub fn from_bytes(bytes: Vec<u8>, path: &Path) -> Result<Scene> {
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
        Scene::from_toml_str(&src, path)
    }

    /// Validates scene text. `file` names it in messages; its folder anchors relative paths.
    pub fn from_toml_str(src: &str, file: &Path) -> Result<Scene> {
        let doc = Document { file, src };
        if let Some(at) = src.find('\0') {
            return Err(doc.error(at..at + 1, "the scene contains a NUL byte".into()));
        }
        let root = doc.parse()?;
        let top = doc.table(String::new(), 0..0, root.get_ref(), TOP_KEYS)?;
        let section = |key: &str, allowed: &[&str]| -> Result<Option<Table<'_, '_>>> {
            top.get(key).map(|v| v.table(allowed, &format!("a table, written [{key}]"))).transpose()
        };
        let video = section("video", VIDEO_KEYS)?;
        let background = section("background", BACKGROUND_KEYS)?;
        let water = section("water", WATER_KEYS)?;
        let rain = section("rain", RAIN_KEYS)?;
        let list = |key: &str, allowed: &[&str]| -> Result<Vec<Table<'_, '_>>> {
            top.get(key).map_or(Ok(Vec::new()), |v| v.tables(allowed))
        };
        let stones = list("stone", STONE_KEYS)?;
        let swipes = list("swipe", SWIPE_KEYS)?;
        let damping = list("damping", DAMPING_KEYS)?;

        let base = file.parent().unwrap_or(Path::new(""));
        let background = read_background(&doc, background.as_ref(), base)?;
        let (width, height) = read_canvas(&doc, video.as_ref(), &background).map_err(|e| background.locate(e))?;
        let fps = match opt(video.as_ref(), "fps") {
            Some(v) => v.int(1..=100)?,
            None => 25,
        } as u32;
        let fps_site = opt(video.as_ref(), "fps").map(|v| Diagnostic::at(file, src, v.span, String::new()));
        let (first_frame, frames) = read_length(&doc, video.as_ref(), fps)?;
        let looping = opt(video.as_ref(), "loop").map(|v| v.bool()).transpose()?.unwrap_or(true);
        let water = read_water(water.as_ref())?;

        let stones = stones.iter().map(|t| read_stone(t, fps, width, height)).collect::<Result<_>>()?;
        let swipes = swipes.iter().map(|t| read_swipe(t, fps)).collect::<Result<_>>()?;
        let rain = rain.as_ref().map(|t| read_rain(t, fps)).transpose()?;
        let damping = damping
            .iter()
            .map(|t| {
                let frame = frame_of(t.require("at", "a time in seconds")?.time()?, fps);
                let shift = t.require("shift", "a damping shift in 1..=15")?.int(SHIFT)? as u32;
                Ok(DampingChange { frame, shift })
            })
            .collect::<Result<_>>()?;

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
            fps_site,
            source_hash: xxhash_rust::xxh3::xxh3_64(src.as_bytes()),
        })
    }

    /// The number of frames simulated in all: pre-roll plus output (K0 + N).
    pub fn end_frame(&self) -> u64 {
        self.first_frame + self.frames
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

fn opt<'t, 's>(table: Option<&Table<'t, 's>>, key: &str) -> Option<Value<'t, 's>> {
    table.and_then(|t| t.get(key))
}

fn read_background(doc: &Document<'_>, t: Option<&Table<'_, '_>>, base: &Path) -> Result<BackgroundSpec> {
    let image_site = opt(t, "image")
        .map(|v| Diagnostic::at(doc.file, doc.src, v.span.clone(), format!("{} = {}", v.path, v.text())));
    let image = match opt(t, "image") {
        Some(v) => {
            let s = v.string()?;
            if s.is_empty() {
                return Err(v.error("is empty: expected the path of a PNG, JPEG, GIF, BMP or WebP image"));
            }
            Some(base.join(s))
        }
        None => None,
    };
    let fit = match opt(t, "fit") {
        Some(v) => match v.string()? {
            "cover" => Fit::Cover,
            "contain" => Fit::Contain,
            "stretch" => Fit::Stretch,
            other => return Err(v.error(choice_message(other, &["cover", "contain", "stretch"]))),
        },
        None => Fit::Cover,
    };
    let color = match opt(t, "color") {
        Some(v) => {
            parse_color(v.string()?).ok_or_else(|| v.error("is not a colour: expected \"#rrggbb\" or \"#rgb\""))?
        }
        None => [0, 0, 0],
    };
    let pattern = match opt(t, "pattern") {
        Some(v) => {
            let p = match v.string()? {
                "tiles" => Pattern::Tiles,
                "checker" => Pattern::Checker,
                other => return Err(v.error(choice_message(other, &["tiles", "checker"]))),
            };
            if image.is_some() {
                return Err(v.error("cannot be combined with background.image: choose one"));
            }
            Some(p)
        }
        None => None,
    };
    Ok(BackgroundSpec { image, fit, color, pattern, image_site })
}

fn choice_message(value: &str, allowed: &[&str]) -> String {
    let quoted: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
    let mut message = format!("is not allowed: expected {}", quoted.join(" or "));
    if let Some(near) = toml_reader::closest(value, allowed) {
        message.push_str(&format!(" (did you mean \"{near}\"?)"));
    }
    message
}

/// Parses `#rrggbb` or `#rgb` in any case.
pub fn parse_color(s: &str) -> Option<[u8; 3]> {
    let hex = s.strip_prefix('#')?;
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize| u8::from_str_radix(&hex[i..=i], 16).ok();
    match hex.len() {
        6 => Some([
            u8::from_str_radix(&hex[0..2], 16).ok()?,
            u8::from_str_radix(&hex[2..4], 16).ok()?,
            u8::from_str_radix(&hex[4..6], 16).ok()?,
        ]),
        3 => Some([digit(0)? * 17, digit(1)? * 17, digit(2)? * 17]),
        _ => None,
    }
}

fn read_canvas(doc: &Document<'_>, video: Option<&Table<'_, '_>>, bg: &BackgroundSpec) -> Result<(u32, u32)> {
    let side = |key: &str| opt(video, key).map(|v| v.int(3..=MAX_SIDE).map(|n| (n, v))).transpose();
    let width = side("width")?;
    let height = side("height")?;
    let image_size = match (&width, &height, &bg.image) {
        (Some(_), Some(_), _) | (_, _, None) => None,
        (_, _, Some(path)) => Some(crate::background::image_size(path)?),
    };
    let pick = |given: &Option<(i64, Value<'_, '_>)>, from_image: Option<u32>, fallback: u32, key: &str| {
        if let Some((n, _)) = given {
            return Ok(*n);
        }
        match from_image {
            Some(n) if (3..=MAX_SIDE).contains(&i64::from(n)) => Ok(i64::from(n)),
            Some(n) => Err(Error::Background {
                path: bg.image.clone().unwrap_or_default(),
                reason: format!(
                    "its {key} of {n} pixels cannot be the canvas {key} (allowed 3..={MAX_SIDE}); set video.{key} in the scene"
                ),
            }),
            None => Ok(i64::from(fallback)),
        }
    };
    let w = pick(&width, image_size.map(|s| s.0), DEFAULT_SIZE.0, "width")?;
    let h = pick(&height, image_size.map(|s| s.1), DEFAULT_SIZE.1, "height")?;
    if w * h > MAX_AREA {
        let (key, span): (&str, Range<usize>) = match (&width, &height) {
            (_, Some((_, v))) => (&format!("video.height = {h}"), v.span.clone()),
            (Some((_, v)), None) => (&format!("video.width = {w}"), v.span.clone()),
            (None, None) => ("", 0..0),
        };
        let canvas =
            format!("the canvas {w}×{h} = {} pixels, over the limit width·height ≤ 8192·8192 = {MAX_AREA}", w * h);
        let message = format!("{key} makes {canvas}");
        if width.is_none() && height.is_none() {
            return Err(Error::Background {
                path: bg.image.clone().unwrap_or_default(),
                reason: format!("it would make {canvas}; set video.width and video.height in the scene"),
            });
        }
        return Err(doc.error(span, message));
    }
    Ok((w as u32, h as u32))
}

fn read_length(doc: &Document<'_>, video: Option<&Table<'_, '_>>, fps: u32) -> Result<(u64, u64)> {
    let start = match opt(video, "start") {
        Some(v) => {
            let k0 = frame_of(v.time()?, fps);
            if k0 > MAX_START_FRAME {
                let msg =
                    format!("starts at frame {k0} at {fps} fps: allowed a start frame of at most {MAX_START_FRAME}");
                return Err(v.error(msg));
            }
            k0
        }
        None => 0,
    };
    let frames = match (opt(video, "duration"), opt(video, "frames")) {
        (Some(d), Some(f)) => {
            let later = if d.span.start > f.span.start { d } else { f };
            return Err(later.error("conflicts: give either video.duration or video.frames, not both"));
        }
        (None, None) => {
            let message = "missing video length: give video.duration (seconds) or video.frames".to_string();
            let span = video.map_or(0..0, |t| t.span.clone());
            let hint = Some("add `duration = 4.0` under [video]".to_string());
            let diagnostic = Diagnostic::at(doc.file, doc.src, span, message).with_hint(hint);
            return Err(Error::Scene(Box::new(diagnostic)));
        }
        (Some(d), None) => {
            let n = frame_of(d.time()?, fps);
            if !(1..=MAX_FRAMES).contains(&n) {
                return Err(
                    d.error(format!("gives {n} frames at {fps} fps: allowed a duration of 1..={MAX_FRAMES} frames"))
                );
            }
            n
        }
        (None, Some(f)) => f.int(1..=MAX_FRAMES as i64)? as u64,
    };
    Ok((start, frames))
}

fn read_water(t: Option<&Table<'_, '_>>) -> Result<WaterSpec> {
    let model = match opt(t, "model") {
        Some(v) => match v.string()? {
            "classic" => Model::Classic,
            "spring" => Model::Spring,
            other => return Err(v.error(choice_message(other, &["classic", "spring"]))),
        },
        None => Model::Classic,
    };
    let (shift, refraction) = match model {
        Model::Classic => (5, 1.0),
        Model::Spring => (6, 0.1),
    };
    let damping_shift = opt(t, "damping_shift").map(|v| v.int(SHIFT)).transpose()?.unwrap_or(shift) as u32;
    let steps_per_frame = opt(t, "steps_per_frame").map(|v| v.int(1..=16)).transpose()?.unwrap_or(1) as u32;
    let refraction = opt(t, "refraction").map(|v| v.number_in(0.0, 16.0)).transpose()?.unwrap_or(refraction);
    let refraction_q8 = (refraction * 256.0 + 0.5).floor() as i64;
    Ok(WaterSpec { model, damping_shift, steps_per_frame, refraction_q8 })
}

fn read_stone(t: &Table<'_, '_>, fps: u32, width: u32, height: u32) -> Result<Stone> {
    let frame = frame_of(t.require("at", "a time in seconds")?.time()?, fps);
    let on_canvas = |key: &str, size: u32| -> Result<i64> {
        let v = t.require(key, "a pixel coordinate")?;
        let max = i64::from(size) - 1;
        match v.int(i64::MIN..=i64::MAX) {
            Ok(n) if (0..=max).contains(&n) => Ok(n),
            Ok(_) => Err(v.error(format!("is off the canvas: allowed 0..={max} (canvas {width}×{height})"))),
            Err(e) => Err(e),
        }
    };
    let x = on_canvas("x", width)?;
    let y = on_canvas("y", height)?;
    let radius = t.get("radius").map(|v| v.int(RADIUS)).transpose()?.unwrap_or(4);
    let weight = t.get("weight").map(|v| v.int(WEIGHT)).transpose()?.unwrap_or(64);
    Ok(Stone { frame, x, y, radius, weight })
}

fn read_swipe(t: &Table<'_, '_>, fps: u32) -> Result<Swipe> {
    let from = t.require("from", "a time in seconds")?;
    let until = t.require("until", "a time in seconds")?;
    let (from_s, until_s) = (from.time()?, until.time()?);
    if from_s > until_s {
        return Err(until.error(format!(
            "is before {} = {}: a swipe must end after it starts",
            from.path,
            from.text()
        )));
    }
    let path_value = t.require("path", "an array of [x, y] points")?;
    let points = path_value.array("an array of [x, y] points")?;
    if points.is_empty() {
        return Err(path_value.error("is empty: a swipe needs at least one [x, y] point"));
    }
    let path = points
        .iter()
        .map(|p| {
            let xy = p.array("an [x, y] pair of integers")?;
            if xy.len() != 2 {
                return Err(p.error("is not an [x, y] pair of integers"));
            }
            Ok([xy[0].int(COORD)?, xy[1].int(COORD)?])
        })
        .collect::<Result<_>>()?;
    let radius = t.get("radius").map(|v| v.int(RADIUS)).transpose()?.unwrap_or(2);
    let weight = t.get("weight").map(|v| v.int(WEIGHT)).transpose()?.unwrap_or(40);
    Ok(Swipe { first_frame: frame_of(from_s, fps), last_frame: frame_of(until_s, fps), path, radius, weight })
}

fn read_range(v: Option<Value<'_, '_>>, allowed: std::ops::RangeInclusive<i64>, default: [i64; 2]) -> Result<[i64; 2]> {
    let Some(v) = v else { return Ok(default) };
    if !v.is_array() {
        let n = v.int(allowed)?;
        return Ok([n, n]);
    }
    let items = v.array("an integer or a [lo, hi] range")?;
    if items.len() != 2 {
        return Err(v.error(format!(
            "is not a [lo, hi] range: expected an integer or two integers in {}..={}",
            allowed.start(),
            allowed.end()
        )));
    }
    let lo = items[0].int(allowed.clone())?;
    let hi = items[1].int(allowed)?;
    if lo > hi {
        return Err(v.error("is an empty range: lo must not exceed hi"));
    }
    Ok([lo, hi])
}

fn read_rain(t: &Table<'_, '_>, fps: u32) -> Result<Rain> {
    let drops_per_second = t.require("drops_per_second", "a rate in 0..=100000")?.number_in(0.0, 100_000.0)?;
    let radius = read_range(t.get("radius"), RADIUS, [1, 2])?;
    let weight = read_range(t.get("weight"), WEIGHT, [32, 64])?;
    let from = t.get("from").map(|v| v.time()).transpose()?.unwrap_or(0.0);
    let until = match t.get("until") {
        Some(v) => {
            let s = v.time()?;
            if s < from {
                return Err(v.error(format!("is before rain.from = {from}: rain must stop after it starts")));
            }
            Some(frame_of(s, fps))
        }
        None => None,
    };
    let seed = t.get("seed").map(|v| v.int(0..=i64::MAX)).transpose()?.unwrap_or(0) as u64;
    Ok(Rain { drops_per_second, radius, weight, first_frame: frame_of(from, fps), end_frame: until, seed })
}

#[cfg(test)]
mod tests;
