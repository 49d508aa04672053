//! A check split over machines: `--shard K/N` checks the K-th of N slices of the scenes (every
//! scene in exactly one, the same slices on every machine), and each slice's report folder
//! carries its outcomes as `check.json`, from which `--merge-reports` makes one report of all.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Blessed, Outcome, Verdict};
use crate::base::error::{Error, Result};
use crate::diff::page::{FrameFigure, Shot, picture_name};

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
        let mut sorted: Vec<&PathBuf> = scenes.iter().collect();
        sorted.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        sorted.dedup();
        sorted.into_iter().skip(self.index - 1).step_by(self.count).cloned().collect()
    }
}

/// A check's report, as `check.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The slice this check was, if it was one.
    pub shard: Option<Shard>,
    /// The scenes given, before slicing.
    pub scenes_given: usize,
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
}

/// One scene's outcome, without its pictures (they are the folder's files).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SceneRecord {
    scene: PathBuf,
    reference: PathBuf,
    /// `same`, `different` or `missing`.
    result: String,
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
}

impl SceneRecord {
    /// The record of `outcome`.
    pub fn of(outcome: &Outcome) -> SceneRecord {
        let (result, first, differing) = match outcome.verdict {
            Verdict::Same => ("same", None, 0),
            Verdict::Different { first, frames } => ("different", Some(first), frames),
            Verdict::Missing => ("missing", None, 0),
        };
        SceneRecord {
            scene: outcome.scene.clone(),
            reference: outcome.reference.clone(),
            result: result.into(),
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
        }
    }

    /// The outcome again, its pictures read from the report folder `dir`, where it was the
    /// page's `n`-th entry.
    fn outcome(self, dir: &Path, n: usize) -> Result<Outcome> {
        let bad = |reason: String| Error::input(dir.join(RECORD), reason);
        let verdict = match (self.result.as_str(), self.first_differing_frame) {
            ("same", _) => Verdict::Same,
            ("missing", _) => Verdict::Missing,
            ("different", Some(first)) => Verdict::Different { first, frames: self.differing_frames },
            (other, _) => return Err(bad(format!("scene {} has an unknown result {other:?}", self.scene.display()))),
        };
        let mut shots = Vec::new();
        for frame in self.shots {
            let read = |side: &str| {
                let path = dir.join(picture_name(n, frame, side));
                std::fs::read(&path).map_err(|e| Error::io(&path, e))
            };
            shots.push(Shot { frame, a: read("a")?, b: read("b")?, heat: read("heat")? });
        }
        let blessed = match self.blessed.as_deref() {
            Some("new") => Some(Blessed::New),
            Some(_) => Some(Blessed::Refreshed),
            None => None,
        };
        Ok(Outcome {
            scene: self.scene,
            reference: self.reference,
            verdict,
            frames: self.frames,
            reference_frames: self.reference_frames,
            notes: self.notes,
            figures: self.figures,
            shots,
            picture_size: self.picture_size,
            blessed,
            seconds: self.seconds,
        })
    }
}

/// Reads a shard's report folder: its record and every outcome with its pictures.
pub fn read(dir: &Path) -> Result<(Record, Vec<Outcome>)> {
    let path = dir.join(RECORD);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let why = crate::base::error::os_reason(&e);
        Error::input(
            dir,
            format!("is not the report folder of a check ({RECORD}: {why}); write each shard's with --report DIR"),
        )
    })?;
    let mut record: Record =
        serde_json::from_str(&text).map_err(|e| Error::input(&path, format!("cannot be read: {e}")))?;
    // The page numbers each entry's pictures by its place in the check's order.
    let scenes = std::mem::take(&mut record.scenes);
    let outcomes = scenes.into_iter().enumerate().map(|(n, s)| s.outcome(dir, n)).collect::<Result<Vec<_>>>()?;
    Ok((record, outcomes))
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
    let mut seen: Vec<Option<&Path>> = vec![None; count];
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
        if let Some(other) = seen[shard.index - 1].replace(dir) {
            return Err(Error::usage(
                format!("{} and {} are both shard {}/{count}", other.display(), dir.display(), shard.index),
                Some("give each shard's report once"),
            ));
        }
    }
    let missing: Vec<String> =
        seen.iter().enumerate().filter(|(_, s)| s.is_none()).map(|(k, _)| format!("{}/{count}", k + 1)).collect();
    if !missing.is_empty() {
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
