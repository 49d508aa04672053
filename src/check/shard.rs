//! A check split over machines: `--shard K/N` checks the K-th of N slices of the scenes (every
//! scene in exactly one, the same slices on every machine), and each slice's report folder
//! carries its outcomes as `check.json`, from which `--merge-reports` makes one report of all.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Blessed, Found, Leftover, Outcome, PENDING, Pending, Unreferenced, Verdict};
use crate::base::error::{Error, Result, os_reason};
use crate::base::files::{file_kind, read_regular_within};
use crate::base::limits::MAX_AREA;
use crate::base::text::inert;
use crate::diff::Options;
use crate::diff::page::{FrameFigure, SHOTS, Shot, picture_name};

/// The file in a report folder that holds its outcomes, for a merge.
pub const RECORD: &str = "check.json";

/// One of N slices: `index` from 1 to `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which slice, from 1.
    pub index: usize,
    /// How many slices.
    pub count: usize,
}

impl Shard {
    /// Reads `K/N` with 1 <= K <= N.
    pub fn parse(text: &str) -> std::result::Result<Shard, String> {
        let expected = "expected K/N, the K-th of N slices (1 <= K <= N), such as 2/4";
        let (k, n) = text.split_once('/').ok_or(expected)?;
        let (index, count) = (k.trim().parse::<usize>(), n.trim().parse::<usize>());
        match (index, count) {
            (Ok(index), Ok(count)) if (1..=count).contains(&index) => Ok(Shard { index, count }),
            _ => Err(expected.into()),
        }
    }

    /// This slice of `scenes`: the scenes sorted by their path as given, every `count`-th from
    /// the `index`-th on. Slices differ by at most one scene, every scene is in exactly one,
    /// and the order the shell or the CI lists them in does not matter.
    pub fn slice(self, scenes: &[PathBuf]) -> Vec<PathBuf> {
        sorted(scenes).into_iter().skip(self.index - 1).step_by(self.count).cloned().collect()
    }
}

/// `scenes` sorted by path as given, each once.
fn sorted(scenes: &[PathBuf]) -> Vec<&PathBuf> {
    let mut sorted: Vec<&PathBuf> = scenes.iter().collect();
    sorted.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    sorted.dedup();
    sorted
}

/// The set of scenes a check was given, as 16 hex digits: the XXH3-64 of their paths as given,
/// sorted, each once, each ended by a zero byte. Every shard of one check has the same.
pub fn scene_set(scenes: &[PathBuf]) -> String {
    let mut hash = xxhash_rust::xxh3::Xxh3::new();
    for scene in sorted(scenes) {
        hash.update(scene.as_os_str().as_encoded_bytes());
        hash.update(&[0]);
    }
    format!("{:016x}", hash.digest())
}

/// The most bytes a shard's `check.json` may hold.
const RECORD_LIMIT: u64 = 256 << 20;

/// Reads the file `name` in the report folder `dir` (whose canonical path is `inside`) within
/// `limit` bytes: a regular file, in the folder, not reached through a link that leads out of
/// it.
fn read_in(dir: &Path, inside: &Path, name: &str, limit: u64) -> Result<Vec<u8>> {
    let path = dir.join(name);
    let bad = |why: String| Error::input(&path, why);
    let real = std::fs::canonicalize(&path).map_err(|e| bad(format!("cannot be read: {}", os_reason(&e))))?;
    if !real.starts_with(inside) {
        return Err(bad(format!("leads out of the report folder {} (to {})", dir.display(), real.display())));
    }
    read_regular_within(&path, limit).map_err(|e| bad(format!("cannot be read: {}", os_reason(&e))))
}

/// A check's report, as `check.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The slice this check was, if it was one.
    pub shard: Option<Shard>,
    /// The scenes given, before slicing.
    pub scenes_given: usize,
    /// Which scenes were given (see [`scene_set`]), so that only slices of one set merge.
    /// Reports of versions before it have none, and do not merge.
    #[serde(default)]
    pub scene_set: Option<String>,
    /// The tolerance and pixel allowance.
    pub tolerance: u8,
    /// Differing pixels a frame may have.
    pub max_pixels: u64,
    /// The references' folder.
    pub refs: String,
    /// Seconds the check took.
    pub seconds: f64,
    /// Each scene's outcome.
    pub scenes: Vec<SceneRecord>,
    /// References no scene given has (found by shard 1 of a sharded check).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreferenced: Vec<String>,
    /// Whether they fail the check (`--unreferenced=reject`).
    #[serde(default)]
    pub unreferenced_fail: bool,
    /// Whether shard 1 deleted them (`--unreferenced=delete`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unreferenced_deleted: bool,
}

impl Record {
    /// The record of what a check found.
    pub fn of(found: &Found) -> Record {
        Record {
            shard: found.shard,
            scenes_given: found.scenes_given,
            scene_set: found.scene_set.clone(),
            tolerance: found.options.tolerance,
            max_pixels: found.options.max_pixels,
            refs: found.refs.display().to_string(),
            seconds: found.seconds,
            scenes: found.outcomes.iter().map(SceneRecord::of).collect(),
            unreferenced: found.unreferenced.references.clone(),
            unreferenced_fail: found.unreferenced.how == Unreferenced::Reject,
            unreferenced_deleted: found.unreferenced.how == Unreferenced::Delete,
        }
    }

    /// Writes the record into the report folder `dir`, as [`RECORD`].
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(RECORD);
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::io(&path, e.into()))? + "\n";
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
    }

    /// What shard 1 found of references no scene has (every other shard leaves it to shard 1).
    fn leftover(&self) -> Leftover {
        let how = if self.unreferenced_deleted {
            Unreferenced::Delete
        } else if self.unreferenced_fail {
            Unreferenced::Reject
        } else {
            Unreferenced::Warn
        };
        Leftover { references: self.unreferenced.clone(), how }
    }
}

/// One scene's outcome, without its pictures (they are the folder's files).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SceneRecord {
    /// The paths as given, as UTF-8 (other bytes as U+FFFD), so that the record is JSON.
    scene: String,
    /// The scene's path byte for byte, in hex, where it is not UTF-8 (and `scene` not the name
    /// of the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scene_bytes: Option<String>,
    reference: String,
    /// `same`, `different`, `missing` or `unreadable`.
    result: String,
    /// Why the reference cannot be used (`unreadable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why: Option<String>,
    first_differing_frame: Option<u64>,
    differing_frames: u64,
    frames: u64,
    reference_frames: Option<u64>,
    notes: Vec<String>,
    figures: Vec<FrameFigure>,
    /// The frames pictured in the report.
    shots: Vec<u64>,
    picture_size: (u32, u32),
    blessed: Option<String>,
    seconds: f64,
    /// Frames within the options whose exact pixels differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    drift: Option<super::Drift>,
    /// The would-be reference's file name in the folder's `pending/`, if one was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending: Option<String>,
    /// The XXH3-64 (16 hex digits) of the reference it would replace, as the check read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replaces: Option<String>,
}

impl SceneRecord {
    /// The record of `outcome`.
    pub fn of(outcome: &Outcome) -> SceneRecord {
        let (result, first, differing) = match outcome.verdict {
            Verdict::Same => ("same", None, 0),
            Verdict::Different { first, frames } => ("different", Some(first), frames),
            Verdict::Missing => ("missing", None, 0),
            Verdict::Unreadable { .. } => ("unreadable", None, 0),
        };
        let bytes = outcome.scene.as_os_str().as_encoded_bytes();
        SceneRecord {
            scene: outcome.scene.to_string_lossy().into_owned(),
            scene_bytes: outcome.scene.to_str().is_none().then(|| bytes.iter().map(|b| format!("{b:02x}")).collect()),
            reference: outcome.reference.to_string_lossy().into_owned(),
            result: result.into(),
            why: match &outcome.verdict {
                Verdict::Unreadable { why } => Some(why.clone()),
                _ => None,
            },
            first_differing_frame: first,
            differing_frames: differing,
            frames: outcome.frames,
            reference_frames: outcome.reference_frames,
            notes: outcome.notes.clone(),
            figures: outcome.figures.clone(),
            shots: outcome.shots.iter().map(|s| s.frame).collect(),
            picture_size: outcome.picture_size,
            blessed: outcome.blessed.map(|b| if b == Blessed::New { "new" } else { "replaced" }.into()),
            seconds: outcome.seconds,
            drift: outcome.drift,
            pending: outcome
                .pending
                .as_ref()
                .map(|p| p.path.file_name().unwrap_or_default().to_string_lossy().into_owned()),
            replaces: outcome.pending.as_ref().and_then(|p| p.replaces).map(|h| format!("{h:016x}")),
        }
    }

    /// The scene, as given to the check, as text (bytes that are not UTF-8 as U+FFFD).
    pub fn scene(&self) -> &str {
        &self.scene
    }

    /// The scene's path as given to the check, byte for byte: the file.
    pub fn scene_path(&self) -> PathBuf {
        #[cfg(unix)]
        if let Some(hex) = &self.scene_bytes {
            use std::os::unix::ffi::OsStringExt;
            let byte = |i: usize| hex.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok());
            let bytes: Option<Vec<u8>> = (0..hex.len()).step_by(2).map(byte).collect();
            if let Some(bytes) = bytes.filter(|b| !b.is_empty() && !b.contains(&0)) {
                return PathBuf::from(std::ffi::OsString::from_vec(bytes));
            }
        }
        PathBuf::from(&self.scene)
    }

    /// How it came out: `same`, `different`, `missing` or `unreadable`.
    pub fn result(&self) -> &str {
        &self.result
    }

    /// Whether the report kept its would-be reference.
    pub fn has_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Its would-be reference, where a report folder `dir` (whose canonical path is `inside`)
    /// keeps one: a file of `pending/` named as a reference is, inside the folder.
    pub fn pending(&self, dir: &Path, inside: &Path) -> Result<Option<Pending>> {
        let Some(name) = &self.pending else { return Ok(None) };
        let bad = |why: String| Error::input(dir.join(RECORD), why);
        let plain = Path::new(name).file_name().is_some_and(|n| n == name.as_str()) && name.ends_with(".gif");
        if !plain {
            return Err(bad(format!(
                "names the would-be reference {:?}, which is no reference's file name",
                inert(name)
            )));
        }
        let replaces = match &self.replaces {
            None => None,
            Some(hex) => Some(u64::from_str_radix(hex, 16).map_err(|_| bad(format!("names a hash {:?}", inert(hex))))?),
        };
        let path = dir.join(PENDING).join(name);
        let real = std::fs::canonicalize(&path)
            .map_err(|e| Error::input(&path, format!("cannot be read: {}", os_reason(&e))))?;
        if !real.starts_with(inside) {
            return Err(Error::input(&path, format!("leads out of the report folder {}", dir.display())));
        }
        Ok(Some(Pending { path, replaces }))
    }

    /// The outcome again, its pictures read from the report folder `dir`, where it was the
    /// page's `n`-th entry.
    fn outcome(self, dir: &Path, inside: &Path, n: usize) -> Result<Outcome> {
        let bad = |reason: String| Error::input(dir.join(RECORD), reason);
        let (width, height) = self.picture_size;
        if self.shots.len() > SHOTS || i64::from(width) * i64::from(height) > MAX_AREA {
            return Err(bad(format!(
                "scene {} lists {} pictures of {width}×{height}: a check keeps at most {SHOTS} of at most {MAX_AREA} \
                 pixels",
                crate::base::text::inert(&self.scene),
                self.shots.len()
            )));
        }
        // A picture is a PNG of that size: its RGB bytes stored, a filter byte a row, and room
        // for its chunks.
        let most = u64::from(width) * u64::from(height) * 3 * 101 / 100 + u64::from(height) + 4096;
        let verdict = match (self.result.as_str(), self.first_differing_frame) {
            ("same", _) => Verdict::Same,
            ("missing", _) => Verdict::Missing,
            ("unreadable", _) => Verdict::Unreadable { why: self.why.clone().unwrap_or_default() },
            ("different", Some(first)) => Verdict::Different { first, frames: self.differing_frames },
            (other, _) => {
                return Err(bad(format!(
                    "scene {} has an unknown result {other:?}",
                    crate::base::text::inert(&self.scene)
                )));
            }
        };
        let pending = self.pending(dir, inside)?;
        let scene = self.scene_path();
        let mut shots = Vec::new();
        for frame in self.shots {
            let read = |side: &str| read_in(dir, inside, &picture_name(n, frame, side), most);
            shots.push(Shot { frame, a: read("a")?, b: read("b")?, heat: read("heat")? });
        }
        let blessed = match self.blessed.as_deref() {
            Some("new") => Some(Blessed::New),
            Some(_) => Some(Blessed::Refreshed),
            None => None,
        };
        Ok(Outcome {
            scene,
            reference: PathBuf::from(self.reference),
            verdict,
            frames: self.frames,
            reference_frames: self.reference_frames,
            notes: self.notes,
            figures: self.figures,
            shots,
            picture_size: self.picture_size,
            blessed,
            seconds: self.seconds,
            drift: self.drift,
            pending,
        })
    }
}

/// Reads a report folder's record (`check.json`) alone; also returns the folder's canonical
/// path, within which its files are read.
pub fn read_record(dir: &Path) -> Result<(Record, PathBuf)> {
    let path = dir.join(RECORD);
    let not_a_report = |why: String| {
        Error::input(
            dir,
            format!("is not the report folder of a check ({RECORD}: {why}); a check writes one with --report DIR"),
        )
    };
    let inside = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => std::fs::canonicalize(dir).map_err(|e| not_a_report(os_reason(&e)))?,
        Ok(meta) => return Err(not_a_report(format!("the folder is {}", file_kind(&meta)))),
        Err(e) => return Err(not_a_report(os_reason(&e))),
    };
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(not_a_report("there is none".into()));
    }
    let text = read_in(dir, &inside, RECORD, RECORD_LIMIT)?;
    let record: Record =
        serde_json::from_slice(&text).map_err(|e| Error::input(&path, format!("cannot be read: {e}")))?;
    if let Some(shard) = record.shard
        && !(1..=shard.count).contains(&shard.index)
    {
        return Err(Error::input(
            &path,
            format!("names shard {}/{}, which is no slice (K/N runs from 1/N to N/N)", shard.index, shard.count),
        ));
    }
    if record.scenes.len() > record.scenes_given {
        return Err(Error::input(
            &path,
            format!("lists {} scenes of a check given {}", record.scenes.len(), record.scenes_given),
        ));
    }
    Ok((record, inside))
}

/// Reads a shard's report folder: its record and every outcome with its pictures.
pub fn read(dir: &Path) -> Result<(Record, Vec<Outcome>)> {
    let (mut record, inside) = read_record(dir)?;
    // The page numbers each entry's pictures by its place in the check's order.
    let scenes = std::mem::take(&mut record.scenes);
    let outcomes =
        scenes.into_iter().enumerate().map(|(n, s)| s.outcome(dir, &inside, n)).collect::<Result<Vec<_>>>()?;
    Ok((record, outcomes))
}

/// Reads the shards' report folders `dirs`, checks they are every slice of one check once, and
/// puts their outcomes together as one check of every scene lists them.
pub fn merge(dirs: &[PathBuf]) -> Result<Found> {
    let mut records = Vec::new();
    let mut outcomes = Vec::new();
    for dir in dirs {
        let (record, found) = read(dir)?;
        records.push((dir.clone(), record));
        outcomes.extend(found);
    }
    check_complete(&records)?;
    outcomes.sort_by(|a, b| a.scene.as_os_str().cmp(b.scene.as_os_str()));
    if let Some(twice) = outcomes.windows(2).find(|w| w[0].scene == w[1].scene) {
        return Err(Error::usage(
            format!("scene {} is in two shards' reports: they are not slices of one check", twice[0].scene.display()),
            Some("give the report folder of every shard of one check, each once"),
        ));
    }
    let Some((_, first)) = records.first() else {
        return Err(Error::usage("no report folder to merge", Some("give the report folder of every shard")));
    };
    let unreferenced = records
        .iter()
        .find(|(_, r)| r.shard.is_some_and(|s| s.index == 1))
        .map(|(_, r)| r.leftover())
        .unwrap_or_default();
    Ok(Found {
        outcomes,
        options: Options { tolerance: first.tolerance, max_pixels: first.max_pixels, min_psnr_tenths: None },
        refs: PathBuf::from(&first.refs),
        shard: None,
        scenes_given: first.scenes_given,
        scene_set: first.scene_set.clone(),
        // The shards ran side by side: the check took as long as the slowest.
        seconds: records.iter().map(|(_, r)| r.seconds).fold(0.0, f64::max),
        unreferenced,
    })
}

/// Checks that `records` (each with its folder) are the N slices of one check, each once.
pub fn check_complete(records: &[(PathBuf, Record)]) -> Result<()> {
    let Some((first_dir, first)) = records.first() else { return Ok(()) };
    let shard_of = |dir: &Path, record: &Record| {
        record.shard.ok_or_else(|| {
            Error::usage(
                format!("{} is the report of a whole check, not of a shard", dir.display()),
                Some("merge the report folders of `check --shard K/N --report DIR` runs"),
            )
        })
    };
    let count = shard_of(first_dir, first)?.count;
    let mut seen: std::collections::BTreeMap<usize, &Path> = std::collections::BTreeMap::new();
    for (dir, record) in records {
        let shard = shard_of(dir, record)?;
        if shard.count != count || record.scenes_given != first.scenes_given {
            return Err(Error::usage(
                format!(
                    "{} is shard {}/{} of {} scenes and {} is shard {}/{} of {}: they are not slices of one check",
                    first_dir.display(),
                    first.shard.map_or(0, |s| s.index),
                    count,
                    first.scenes_given,
                    dir.display(),
                    shard.index,
                    shard.count,
                    record.scenes_given
                ),
                Some("run every shard with the same scenes and the same N"),
            ));
        }
        if (record.tolerance, record.max_pixels, &record.refs) != (first.tolerance, first.max_pixels, &first.refs) {
            return Err(Error::usage(
                format!(
                    "{} and {} were checked with other options (tolerance, max pixels or --refs)",
                    first_dir.display(),
                    dir.display()
                ),
                Some("run every shard with the same options"),
            ));
        }
        if record.scene_set.is_none() || record.scene_set != first.scene_set {
            let why = if record.scene_set.is_none() || first.scene_set.is_none() {
                "one was written by an older version, which does not record its scenes"
            } else {
                "they were given other scenes"
            };
            return Err(Error::usage(
                format!("{} and {} are not slices of one check: {why}", first_dir.display(), dir.display()),
                Some("run every shard with the same scenes (and this version), then merge"),
            ));
        }
        if let Some(other) = seen.insert(shard.index, dir) {
            return Err(Error::usage(
                format!("{} and {} are both shard {}/{count}", other.display(), dir.display(), shard.index),
                Some("give each shard's report once"),
            ));
        }
    }
    if seen.len() < count {
        // The first few missing, however many shards there are.
        const SHOWN: usize = 5;
        let mut missing: Vec<String> =
            (1..=count).filter(|k| !seen.contains_key(k)).take(SHOWN).map(|k| format!("{k}/{count}")).collect();
        if count - seen.len() > SHOWN {
            missing.push(format!("{} more", count - seen.len() - SHOWN));
        }
        return Err(Error::usage(
            format!("the reports of shard {} are missing: the merge would not cover every scene", missing.join(", ")),
            Some("give the report folder of every shard"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scene_is_in_exactly_one_slice_whatever_the_order_given() {
        let scenes: Vec<PathBuf> = (0..11).map(|i| PathBuf::from(format!("s/{i:02}.toml"))).collect();
        let mut reversed = scenes.clone();
        reversed.reverse();
        let mut all = Vec::new();
        for index in 1..=4 {
            let shard = Shard { index, count: 4 };
            let slice = shard.slice(&scenes);
            assert_eq!(slice, shard.slice(&reversed));
            assert!((2..=3).contains(&slice.len()), "{slice:?}");
            all.extend(slice);
        }
        all.sort();
        assert_eq!(all, scenes);
    }

    #[test]
    fn shards_parse_from_one() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "-1/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
