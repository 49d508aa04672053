//! Reading a scene: the file within its size limit, its text as TOML with the `--set`
//! overrides spliced in, every table's keys checked, then each table read, in order, into the
//! validated [`Scene`].

use std::path::{Path, PathBuf};

use super::toml_reader::{Document, Override, Table, opt, read_all};
use super::{Scene, window_start};
use super::{ShoreSpec, background, events, look, overrides, seamless, shore, video, water};
use crate::base::error::{Diagnostic, Error, Result};
use crate::base::files::read_limited;
use crate::base::limits::MAX_SCENE_BYTES;

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
    "interaction",
    "surface",
];
const VIDEO_KEYS: &[&str] = &["width", "height", "fps", "duration", "frames", "start", "preroll", "loop"];
const BACKGROUND_KEYS: &[&str] = &["image", "fit", "color", "pattern"];
const WATER_KEYS: &[&str] = &[
    "model",
    "damping_shift",
    "undamped",
    "steps_per_frame",
    "steps_per_second",
    "speed",
    "refraction",
    "settle",
    "drop",
];
const STONE_KEYS: &[&str] = &["at", "x", "y", "radius", "weight"];
const SWIPE_KEYS: &[&str] = &["from", "until", "path", "radius", "weight", "timing"];
const RAIN_KEYS: &[&str] = &["drops_per_second", "radius", "weight", "from", "until", "seed"];
const DAMPING_KEYS: &[&str] = &["at", "shift"];
const INTERACTION_KEYS: &[&str] = &["radius", "weight"];
const SURFACE_KEYS: &[&str] = &["height", "blur", "seed"];

impl Scene {
    /// Reads and validates a scene file. Relative paths in it are relative to its folder.
    pub fn load(path: &Path) -> Result<Scene> {
        Scene::from_bytes(Scene::read_file(path)?, path)
    }

    /// The files a render of the scene reads: the scene file, then its background image and
    /// its walls' mask, where it has them (never to be written over).
    pub fn input_files(&self) -> Vec<&Path> {
        let mut files = vec![self.file.as_path()];
        files.extend(self.background.image.as_deref());
        files.extend(self.shore.mask.as_ref().map(|m| m.image.as_path()));
        files
    }

    /// A scene file's bytes, at most [`MAX_SCENE_BYTES`] of them whatever the file is (to check
    /// what parsing them takes before [`Scene::from_bytes`]).
    pub fn read_file(path: &Path) -> Result<Vec<u8>> {
        read_limited(path, MAX_SCENE_BYTES, "scene files")
            .map_err(|source| Error::SceneUnreadable { path: path.to_path_buf(), source })
    }

    /// A scene file's text as written, without a byte-order mark (what a copy of the scene
    /// records: `web`'s page, a ground truth's `meta.json`).
    pub fn read_text(path: &Path) -> Result<String> {
        let text = String::from_utf8(Scene::read_file(path)?)
            .map_err(|_| Error::usage(format!("the scene {} is not UTF-8 text", path.display()), None))?;
        Ok(match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => text,
        })
    }

    /// [`Scene::read_file`] of a regular file only: a pipe or device is refused unread (for a
    /// scene read again and again, as `serve` reads it, where a pipe would hold it forever).
    pub fn read_regular_file(path: &Path) -> Result<Vec<u8>> {
        crate::base::files::read_regular_within(path, MAX_SCENE_BYTES)
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
        let placed = Override::place(src.len(), overrides);
        let doc = Document { file, src, overrides: &placed };
        if let Some(at) = src.find('\0') {
            return Err(doc.error(at..at + 1, "the scene contains a NUL byte".into()));
        }
        let mut root = doc.parse()?;
        for o in &placed {
            overrides::apply(&doc, root.get_mut(), o)?;
        }
        let top = doc.table(String::new(), 0..0, root.get_ref(), TOP_KEYS)?;
        let tables = Tables::of(&top)?;
        let mut scene = tables.read(&doc, file)?;
        scene.source_hash = source_hash(src, overrides);
        scene.source_bytes = parsing_bytes(src.as_bytes(), overrides);
        Ok(scene)
    }
}

/// The scene's tables, each with its keys checked (in this order, so the first unknown key
/// reported is the same whatever follows it).
struct Tables<'t, 's> {
    video: Option<Table<'t, 's>>,
    background: Option<Table<'t, 's>>,
    water: Option<Table<'t, 's>>,
    look: Option<Table<'t, 's>>,
    rain: Option<Table<'t, 's>>,
    mask: Option<Table<'t, 's>>,
    edges: Option<Table<'t, 's>>,
    seamless: Option<Table<'t, 's>>,
    interaction: Option<Table<'t, 's>>,
    surface: Option<Table<'t, 's>>,
    stones: Vec<Table<'t, 's>>,
    swipes: Vec<Table<'t, 's>>,
    damping: Vec<Table<'t, 's>>,
    obstacles: Vec<Table<'t, 's>>,
}

impl<'t, 's> Tables<'t, 's> {
    fn of(top: &Table<'t, 's>) -> Result<Tables<'t, 's>> {
        let section = |key: &str, allowed: &[&str]| -> Result<Option<Table<'t, 's>>> {
            top.get(key).map(|v| v.table(allowed, &format!("a table, written [{key}]"))).transpose()
        };
        let list = |key: &str, allowed: &[&str]| -> Result<Vec<Table<'t, 's>>> {
            top.get(key).map_or(Ok(Vec::new()), |v| v.tables(allowed))
        };
        Ok(Tables {
            video: section("video", VIDEO_KEYS)?,
            background: section("background", BACKGROUND_KEYS)?,
            water: section("water", WATER_KEYS)?,
            look: section("look", look::KEYS)?,
            rain: section("rain", RAIN_KEYS)?,
            mask: section("mask", shore::MASK_KEYS)?,
            edges: section("edges", shore::EDGES_KEYS)?,
            seamless: section("seamless", seamless::KEYS)?,
            interaction: section("interaction", INTERACTION_KEYS)?,
            surface: section("surface", SURFACE_KEYS)?,
            stones: list("stone", STONE_KEYS)?,
            swipes: list("swipe", SWIPE_KEYS)?,
            damping: list("damping", DAMPING_KEYS)?,
            obstacles: list("obstacle", shore::OBSTACLE_KEYS)?,
        })
    }

    /// The scene the tables describe, read in the order that values depend on one another: the
    /// background (which may give the canvas), the video, the water (whose clock counts event
    /// times), then the looks, the events and the shore. The source's hash and size are left 0.
    fn read(&self, doc: &Document<'_>, file: &Path) -> Result<Scene> {
        let base = folder_of(file);
        let video = self.video.as_ref();
        let background = background::read_background(doc, self.background.as_ref(), base)?;
        let (width, height) = video::read_canvas(doc, video, &background).map_err(|e| background.locate(e))?;
        let fps = match opt(video, "fps") {
            Some(v) => v.int(1..=100)?,
            None => 25,
        } as u32;
        let fps_site = opt(video, "fps").map(|v| doc.diagnostic(v.span, String::new()));
        let (first_frame, frames, preroll) = video::read_length(doc, video, fps)?;
        let looping = opt(video, "loop").map(|v| v.bool()).transpose()?.unwrap_or(true);
        let water = water::read_water(self.water.as_ref(), fps)?;
        let look = self.look.as_ref().map(look::read_look).transpose()?.unwrap_or_default();

        // Event times count in frames, or in steps when the water keeps its own time.
        let rate = water.clock.per_second(fps);
        let stones = read_all(&self.stones, |t| events::read_stone(t, rate, width, height))?;
        let swipes = read_all(&self.swipes, |t| events::read_swipe(t, rate))?;
        let rain = self.rain.as_ref().map(|t| events::read_rain(t, rate)).transpose()?;
        let mut damping = read_all(&self.damping, |t| events::read_damping(t, rate))?;
        let (mut stones, mut swipes, mut rain) = (stones, swipes, rain);
        let interaction = self.interaction.as_ref().map(events::read_interaction).transpose()?.unwrap_or_default();
        let surface = self.surface.as_ref().map(water::read_surface).transpose()?;
        // Events keep their place in the output: each moves by the units before its first
        // frame (the window's start, §11).
        let event_offset = if preroll { window_start(water.clock, first_frame, fps) } else { 0 };
        if preroll {
            let u0 = event_offset;
            stones.iter_mut().for_each(|s| s.unit += u0);
            damping.iter_mut().for_each(|d| d.unit += u0);
            for swipe in &mut swipes {
                (swipe.first_unit, swipe.last_unit) = (swipe.first_unit + u0, swipe.last_unit + u0);
            }
            if let Some(rain) = &mut rain {
                rain.first_unit += u0;
                rain.end_unit = rain.end_unit.map(|u| u + u0);
            }
        }
        // How long the water remembers: the slowest damping in force at some point.
        let shift = damping.iter().map(|d| d.shift).chain([water.damping_shift]).max().unwrap_or(1);
        let settle = seamless::settle_seconds(shift, water.clock.steps_per_second(fps));
        let seamless = (self.seamless.as_ref())
            .map(|t| seamless::read_seamless(t, (first_frame, frames), water.clock, fps, settle))
            .transpose()?
            .unwrap_or_default();
        let shore = ShoreSpec {
            obstacles: read_all(&self.obstacles, shore::read_obstacle)?,
            mask: self.mask.as_ref().map(|t| shore::read_mask(doc, t, base)).transpose()?,
            edges: shore::read_edges(self.edges.as_ref())?,
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
            interaction,
            surface,
            event_offset,
            fps_site,
            source_hash: 0,
            source_bytes: 0,
        })
    }
}

/// Where a scene's relative paths start: its folder, or for a scene read from a stream
/// (`/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`: standard input, a process substitution) the
/// current folder, as for any other command-line path ("" below).
pub(crate) fn folder_of(file: &Path) -> &Path {
    if file.starts_with("/dev") || file.starts_with("/proc") {
        return Path::new("");
    }
    file.parent().unwrap_or(Path::new(""))
}

/// The most the scene parser holds per byte of scene text outside comments and strings, at
/// its peak (its token stream and tree beside the text itself): measured at up to 125 for the
/// densest text (`[1,1,1,…]`), and about 95 for lists of stones or of path points.
const PARSE_PER_BYTE: u64 = 160;

/// The most memory reading a scene takes: its text, and for each byte outside comments and
/// strings `PARSE_PER_BYTE` (160) more (a comment is skipped whole; a string becomes one value, a
/// copy at most: 2 more), and the same for each `--set` override, counted as dense text.
pub fn parsing_bytes(text: &[u8], overrides: &[String]) -> u64 {
    let (dense, strings) = weigh(text);
    let set: u64 = overrides.iter().map(|o| o.len() as u64).sum();
    (text.len() as u64 + set)
        .saturating_add(dense.saturating_add(set).saturating_mul(PARSE_PER_BYTE))
        .saturating_add(strings.saturating_mul(2))
}

/// The bytes of TOML `text` outside comments and strings, and those inside strings: a scan of
/// quotes, escapes and `#` (text that is not TOML is weighed as the parser would start to read
/// it; it fails before it grows).
fn weigh(text: &[u8]) -> (u64, u64) {
    #[derive(PartialEq)]
    enum In {
        Code,
        Comment,
        Basic,
        Literal,
        MultiBasic,
        MultiLiteral,
    }
    let (mut dense, mut strings) = (0u64, 0u64);
    let mut state = In::Code;
    let mut i = 0;
    while i < text.len() {
        let (b, next) = (text[i], &text[i..]);
        match state {
            In::Code => match b {
                b'#' => state = In::Comment,
                b'"' if next.starts_with(b"\"\"\"") => (state, i) = (In::MultiBasic, i + 2),
                b'"' => state = In::Basic,
                b'\'' if next.starts_with(b"'''") => (state, i) = (In::MultiLiteral, i + 2),
                b'\'' => state = In::Literal,
                _ => dense += 1,
            },
            In::Comment => {
                if b == b'\n' {
                    (state, dense) = (In::Code, dense + 1);
                }
            }
            In::Basic | In::Literal if b == b'\n' => (state, dense) = (In::Code, dense + 1),
            In::Basic if b == b'\\' => (strings, i) = (strings + 2, i + 1),
            In::Basic if b == b'"' => state = In::Code,
            In::Literal if b == b'\'' => state = In::Code,
            In::MultiBasic if b == b'\\' => (strings, i) = (strings + 2, i + 1),
            In::MultiBasic if next.starts_with(b"\"\"\"") => (state, i) = (In::Code, i + 2),
            In::MultiLiteral if next.starts_with(b"'''") => (state, i) = (In::Code, i + 2),
            _ => strings += 1,
        }
        i += 1;
    }
    (dense, strings)
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

/// Which of a scene's pictures: what [`Scene::with_images_renamed`] renames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picture {
    /// `[background] image`.
    Background,
    /// `[mask] image`.
    Mask,
}

impl Scene {
    /// Whether `other` is this scene, read from another text: every key the same, whatever the
    /// text's layout, comments or name (what a rewritten copy of a scene must be).
    pub fn same_scene(&self, other: &Scene) -> bool {
        let plain = |s: &Scene| {
            let mut s = s.clone();
            (s.fps_site, s.source_hash, s.source_bytes, s.background.image_site) = (None, 0, 0, None);
            s.file = PathBuf::new();
            if let Some(mask) = &mut s.shore.mask {
                mask.site = Diagnostic::default();
            }
            s
        };
        plain(self) == plain(other)
    }

    /// The scene's text `src` (what it was read from) with each image it names (background,
    /// mask) written as `rename(which, path)` instead, a TOML string in place of the one written.
    /// For a scene copied elsewhere with its pictures (`ripple-render web`).
    pub fn with_images_renamed(&self, src: &str, rename: impl Fn(Picture, &Path) -> String) -> String {
        let mut sites: Vec<(&Diagnostic, Picture, &Path)> = Vec::new();
        if let (Some(site), Some(path)) = (&self.background.image_site, &self.background.image) {
            sites.push((site, Picture::Background, path));
        }
        if let Some(mask) = &self.shore.mask {
            sites.push((&mask.site, Picture::Mask, &mask.image));
        }
        // From the end, so that earlier places keep their offsets.
        let mut places: Vec<(std::ops::Range<usize>, String)> = sites
            .into_iter()
            .filter_map(|(site, picture, path)| Some((site.byte_range(src)?, rename(picture, path))))
            .collect();
        places.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
        let mut out = src.to_string();
        for (range, name) in places {
            let quoted = format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""));
            out.replace_range(range, &quoted);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_weigh_nothing_and_strings_little() {
        // (dense bytes, string bytes)
        assert_eq!(weigh(b"a = 1\n"), (6, 0));
        assert_eq!(weigh(b"# a = [1, 2, 3]\n"), (1, 0));
        assert_eq!(weigh(b"a = 1 # x\n"), (7, 0));
        assert_eq!(weigh(b"s = \"a#b\"\n"), (5, 3));
        // An escaped quote stays inside the string.
        assert_eq!(weigh(b"s = \"a\\\"#\"\n"), (5, 4));
        // A literal string has no escapes.
        assert_eq!(weigh(b"s = 'a\\'\n"), (5, 2));
        assert_eq!(weigh(b"s = \"\"\"\nx # y\n\"\"\"\nb = 2\n"), (11, 7));
        assert_eq!(weigh(b"s = '''a''' # c\n"), (6, 1));
        // The estimate: text, dense bytes and overrides at the parser's rate, strings twice.
        assert_eq!(parsing_bytes(b"# c\na = \"xy\"\n", &["b=1".into()]), 13 + 3 + (6 + 3) * PARSE_PER_BYTE + 2 * 2);
    }
}
