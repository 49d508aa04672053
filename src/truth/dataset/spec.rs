//! A dataset's spec (`ripple-render dataset SPEC.toml`): the ranges each sequence's scene is
//! drawn from. A key takes one value or a range `[lo, hi]` (inclusive) for numbers, one name or
//! a list of names for choices; docs/research.md lists every key and its default.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::scene::toml_reader::{Document, Table, Value};
use crate::truth::{Extras, Layout, Truth};

/// An inclusive integer range to draw from.
pub type Span = [i64; 2];

/// How many of one kind of event a sequence gets, and their drops' sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drops {
    /// How many (stones, swipes), or drops a second (rain).
    pub count: Span,
    /// Drop radius.
    pub radius: Span,
    /// Drop depth.
    pub weight: Span,
    /// A swipe's corners.
    pub points: Span,
}

/// A spec read.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The spec's text as read (what `dataset.json` records and its hash is of).
    pub text: String,
    /// The pictures' folder (resolved against the spec's folder) and their file names, sorted;
    /// none: a checker pattern.
    pub pictures: Option<(PathBuf, Vec<String>)>,
    /// The folder as the spec writes it (what the records name).
    pub pictures_as_written: Option<String>,
    /// Canvas width.
    pub width: Span,
    /// Canvas height.
    pub height: Span,
    /// Output frames.
    pub frames: Span,
    /// Frames a second.
    pub fps: u32,
    /// The train, val and test fractions.
    pub split: [f64; 3],
    /// The ground truth's layout and extras.
    pub truth: Truth,
    /// Whether the water is set up in the spirit of Tian's generator (`preset = "tian"`; not
    /// its equation, docs/research.md): a smooth random `[surface]`, wrapped edges, no damping.
    pub tian: bool,
    /// The models drawn from.
    pub models: Vec<&'static str>,
    /// R, in 1/256.
    pub refraction_q8: Span,
    /// Damping shifts.
    pub damping_shift: Span,
    /// Drop shapes.
    pub drops: Vec<&'static str>,
    /// Edge rules (one for all four edges).
    pub edges: Vec<&'static str>,
    /// Stones.
    pub stones: Drops,
    /// Swipes.
    pub swipes: Drops,
    /// Rain (`count`: drops a second).
    pub rain: Drops,
    /// Samplings.
    pub sampling: Vec<&'static str>,
    /// Smoothing passes.
    pub smooth: Span,
    /// Shading.
    pub shading: Span,
    /// Highlight.
    pub highlight: Span,
    /// Caustics.
    pub caustics: Span,
    /// The tian start's peak height.
    pub start_height: Span,
    /// The tian start's blur radius.
    pub start_blur: Span,
}

const TOP: &[&str] = &["dataset", "water", "stones", "swipes", "rain", "look", "start"];
const DATASET: &[&str] = &["pictures", "width", "height", "frames", "fps", "split", "layout", "extras", "preset"];
const WATER: &[&str] = &["model", "refraction", "damping_shift", "drop", "edges"];
const DROPS: &[&str] = &["count", "radius", "weight", "points"];
const RAIN: &[&str] = &["drops_per_second", "radius", "weight"];
const LOOK: &[&str] = &["sampling", "smooth", "shading", "highlight", "caustics"];
const START: &[&str] = &["height", "blur"];

/// Picture files a spec's folder may hold.
const PICTURE_EXTENSIONS: [&str; 3] = ["png", "jpg", "jpeg"];

impl Spec {
    /// Reads the spec at `path`.
    pub fn load(path: &Path) -> Result<Spec> {
        let bytes = std::fs::read(path).map_err(|e| Error::Input {
            path: path.to_path_buf(),
            reason: format!("cannot read this dataset spec: {}", crate::base::error::os_reason(&e)),
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::usage(format!("{} is not UTF-8 text", path.display()), Some("save it as UTF-8")))?;
        Spec::read(&text, path)
    }

    /// Reads a spec's `text`, read from `path`: its pictures are found beside it, and each is
    /// decoded once here, so that a picture no sequence could use is refused before the first
    /// sequence is written.
    pub fn read(text: &str, path: &Path) -> Result<Spec> {
        Spec::parse(text, path, None)
    }

    /// Reads the spec a dataset's record holds, with the picture files it recorded: the spec as
    /// it drew that dataset's sequences, without its folder (a merge re-draws every sequence
    /// from it to check the slices' indexes).
    pub fn recorded(text: &str, pictures: &[String]) -> Result<Spec> {
        Spec::parse(text, Path::new(super::RECORD), Some(pictures))
    }

    fn parse(text: &str, path: &Path, recorded: Option<&[String]>) -> Result<Spec> {
        let src = text.strip_prefix('\u{feff}').unwrap_or(text);
        let doc = Document { file: path, src, overrides: &[] };
        let root = doc.parse()?;
        let top = doc.table(String::new(), 0..0, root.get_ref(), TOP)?;
        let table = |name: &str, keys: &[&str]| -> Result<Option<Table<'_, '_>>> {
            top.get(name).map(|v| v.table(keys, &format!("a table, written [{name}]"))).transpose()
        };
        let (dataset, water, look) = (table("dataset", DATASET)?, table("water", WATER)?, table("look", LOOK)?);
        let (stones, swipes, rain, start) =
            (table("stones", DROPS)?, table("swipes", DROPS)?, table("rain", RAIN)?, table("start", START)?);
        let base = path.parent().unwrap_or(Path::new("."));
        let (pictures, pictures_as_written) = match get(&dataset, "pictures") {
            Some(v) => {
                let written = v.string("a folder of PNG or JPEG pictures")?.to_string();
                let folder = base.join(&written);
                let pictures = match recorded {
                    Some(names) => (folder, names.to_vec()),
                    None => usable_pictures(&v, &folder)?,
                };
                (Some(pictures), Some(written))
            }
            None => (None, None),
        };
        let preset = get(&dataset, "preset").map(|v| v.choice(&["none", "tian"])).transpose()?;
        let tian = preset == Some("tian");
        let drops = |t: &Option<Table<'_, '_>>, count: Span, points: Span| -> Result<Drops> {
            Ok(Drops {
                count: span(get(t, "count"), 0..=64, count)?,
                radius: span(get(t, "radius"), 1..=64, [2, 5])?,
                weight: span(get(t, "weight"), 1..=16384, [100, 600])?,
                points: span(get(t, "points"), 2..=16, points)?,
            })
        };
        let rain = Drops {
            count: span(get(&rain, "drops_per_second"), 0..=10_000, [0, 0])?,
            radius: span(get(&rain, "radius"), 1..=64, [1, 3])?,
            weight: span(get(&rain, "weight"), 1..=16384, [50, 300])?,
            points: [0, 0],
        };
        let spec = Spec {
            text: text.to_string(),
            pictures,
            pictures_as_written,
            width: span(get(&dataset, "width"), 8..=4096, [128, 128])?,
            height: span(get(&dataset, "height"), 8..=4096, [128, 128])?,
            frames: span(get(&dataset, "frames"), 1..=10_000, [50, 50])?,
            fps: get(&dataset, "fps").map(|v| v.int(1..=240)).transpose()?.unwrap_or(25) as u32,
            split: split(get(&dataset, "split"))?,
            truth: truth(get(&dataset, "layout"), get(&dataset, "extras"))?,
            tian,
            models: choices(get(&water, "model"), &["classic", "spring"], &["classic"])?,
            refraction_q8: refraction(get(&water, "refraction"))?,
            damping_shift: span(get(&water, "damping_shift"), 1..=15, [5, 5])?,
            drops: choices(get(&water, "drop"), &["disc", "smooth"], &["disc"])?,
            edges: choices(
                get(&water, "edges"),
                &["reflect", "absorb", "wrap"],
                &[if tian { "wrap" } else { "reflect" }],
            )?,
            stones: drops(&stones, if tian { [0, 0] } else { [1, 4] }, [2, 2])?,
            swipes: drops(&swipes, [0, 0], [2, 4])?,
            rain,
            sampling: choices(get(&look, "sampling"), &["nearest", "bilinear"], &["bilinear"])?,
            smooth: span(get(&look, "smooth"), 0..=4, [0, 0])?,
            shading: span(get(&look, "shading"), 0..=4096, [0, 0])?,
            highlight: span(get(&look, "highlight"), 0..=4096, [0, 0])?,
            caustics: span(get(&look, "caustics"), 0..=4096, [0, 0])?,
            start_height: span(get(&start, "height"), 1..=16384, [600, 600])?,
            start_blur: span(get(&start, "blur"), 1..=64, [6, 6])?,
        };
        Ok(spec)
    }
}

/// `key` of a table, if the table and the key are there.
fn get<'t, 's>(table: &Option<Table<'t, 's>>, key: &str) -> Option<Value<'t, 's>> {
    table.as_ref().and_then(|t| t.get(key))
}

/// One integer or a range `[lo, hi]` within `allowed`; `default` when absent.
fn span(value: Option<Value<'_, '_>>, allowed: RangeInclusive<i64>, default: Span) -> Result<Span> {
    let Some(v) = value else { return Ok(default) };
    if !v.is_array() {
        let n = v.int(allowed)?;
        return Ok([n, n]);
    }
    let expected = format!("an integer or a range [lo, hi] within {}..={}", allowed.start(), allowed.end());
    let items = v.array(&expected)?;
    let [lo, hi] = items.as_slice() else { return Err(v.error(format!("is not a range: expected {expected}"))) };
    let (lo, hi) = (lo.int(allowed.clone())?, hi.int(allowed)?);
    if lo > hi {
        return Err(v.error("is an empty range: lo must not exceed hi"));
    }
    Ok([lo, hi])
}

/// R in 1/256 from a refraction or a range of them, within 0..=16.
fn refraction(value: Option<Value<'_, '_>>) -> Result<Span> {
    let q8 = |r: f64| (r * 256.0 + 0.5).floor() as i64;
    let Some(v) = value else { return Ok([q8(0.4), q8(0.4)]) };
    if !v.is_array() {
        let r = q8(v.number_in(0.0, 16.0)?);
        return Ok([r, r]);
    }
    let items = v.array("a refraction or a range [lo, hi] within 0..=16")?;
    let [lo, hi] = items.as_slice() else { return Err(v.error("is not a range: expected [lo, hi] within 0..=16")) };
    let (lo, hi) = (q8(lo.number_in(0.0, 16.0)?), q8(hi.number_in(0.0, 16.0)?));
    if lo > hi {
        return Err(v.error("is an empty range: lo must not exceed hi"));
    }
    Ok([lo, hi])
}

/// One name or a list of names among `allowed`; `default` when absent.
fn choices(
    value: Option<Value<'_, '_>>,
    allowed: &[&'static str],
    default: &[&'static str],
) -> Result<Vec<&'static str>> {
    let Some(v) = value else { return Ok(default.to_vec()) };
    if !v.is_array() {
        return Ok(vec![v.choice(allowed)?]);
    }
    let items = v.array(&format!("a name or a list of names among {}", allowed.join(", ")))?;
    if items.is_empty() {
        return Err(v.error(format!("is empty: name at least one of {}", allowed.join(", "))));
    }
    items.iter().map(|item| item.choice(allowed)).collect()
}

/// The split's fractions `[train, val, test]`, each in 0..=1, summing to 1.
fn split(value: Option<Value<'_, '_>>) -> Result<[f64; 3]> {
    let Some(v) = value else { return Ok([0.8, 0.1, 0.1]) };
    let expected = "[train, val, test] fractions summing to 1";
    let items = v.array(expected)?;
    let [a, b, c] = items.as_slice() else {
        return Err(v.error(format!("is not three fractions: expected {expected}")));
    };
    let fractions = [a.number_in(0.0, 1.0)?, b.number_in(0.0, 1.0)?, c.number_in(0.0, 1.0)?];
    if (fractions.iter().sum::<f64>() - 1.0).abs() > 1e-9 {
        let sum = (fractions.iter().sum::<f64>() * 1e9).round() / 1e9;
        return Err(v.error(format!("sums to {sum}: the fractions must sum to 1")));
    }
    Ok(fractions)
}

/// The ground truth's layout and extras.
fn truth(layout: Option<Value<'_, '_>>, extras: Option<Value<'_, '_>>) -> Result<Truth> {
    let layout = match layout {
        Some(v) => Layout::from_name(v.choice(&Layout::NAMES)?).unwrap_or_default(),
        None => Layout::Ours,
    };
    let mut out = Extras::default();
    for name in choices(extras, &Extras::NAMES, &[])? {
        out.add(name);
    }
    Ok(Truth { layout, extras: out })
}

/// The PNG and JPEG files in `folder`, sorted by name, each decoded as a background is: a
/// picture that cannot be (cut short, too large, not an image) is refused, named.
fn usable_pictures(value: &Value<'_, '_>, folder: &Path) -> Result<(PathBuf, Vec<String>)> {
    let (folder, names) = pictures_in(value, folder)?;
    for name in &names {
        let path = folder.join(name);
        if let Err(reason) = crate::base::picture::decode_within(&path, crate::base::limits::DEFAULT_BUDGET) {
            return Err(
                value.error(format!("holds {name}, which cannot be a sequence's picture: {reason}; mend or remove it"))
            );
        }
    }
    Ok((folder, names))
}

/// The PNG and JPEG files in `folder`, sorted by name.
fn pictures_in(value: &Value<'_, '_>, folder: &Path) -> Result<(PathBuf, Vec<String>)> {
    let entries = std::fs::read_dir(folder).map_err(|e| {
        value.error(format!("cannot be read as a folder ({}): name a folder of PNG or JPEG pictures", e.kind()))
    })?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let lower = n.to_ascii_lowercase();
            PICTURE_EXTENSIONS.iter().any(|ext| lower.ends_with(&format!(".{ext}")))
        })
        .collect();
    if names.is_empty() {
        return Err(value.error("holds no PNG or JPEG picture: name a folder with at least one"));
    }
    names.sort();
    Ok((folder.to_path_buf(), names))
}
