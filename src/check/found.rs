//! What a check found, whole: every scene's outcome and how the check was asked, whether its
//! scenes were checked here or merged from the reports of its shards ([`super::shard::merge`]);
//! and the references in the folder that no scene given has, treated as `--unreferenced` says.

use std::path::{Path, PathBuf};

use super::Outcome;
use super::reference_path;
use super::shard::Shard;
use crate::base::error::{Error, Result};
use crate::diff::Options;

/// What a check found, checked here or merged from shards.
pub struct Found {
    /// Every scene's outcome, in the order one check of every scene lists them.
    pub outcomes: Vec<Outcome>,
    /// How strict the comparison was.
    pub options: Options,
    /// The references' folder.
    pub refs: PathBuf,
    /// The slice checked, if one was (a merge is the whole check).
    pub shard: Option<Shard>,
    /// The scenes given, before slicing.
    pub scenes_given: usize,
    /// Which scenes were given ([`super::shard::scene_set`]).
    pub scene_set: Option<String>,
    /// Seconds the check took (a merge: its slowest shard's).
    pub seconds: f64,
    /// References no scene given has.
    pub unreferenced: Leftover,
}

/// What a check does with references whose scene was not given (`--unreferenced`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unreferenced {
    /// Says so, and passes.
    #[default]
    Warn,
    /// Says so, and the check fails.
    Reject,
    /// Deletes them.
    Delete,
}

impl Unreferenced {
    /// Every way, as the command line lists them.
    pub const ALL: [Unreferenced; 3] = [Unreferenced::Warn, Unreferenced::Reject, Unreferenced::Delete];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Unreferenced::Warn => "warn",
            Unreferenced::Reject => "reject",
            Unreferenced::Delete => "delete",
        }
    }

    /// Treats `found`, the references no scene has ([`unreferenced`]), as this says: deletes
    /// them with `delete`.
    pub fn settle(self, found: Vec<PathBuf>) -> Result<Leftover> {
        if self == Unreferenced::Delete {
            for path in &found {
                std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
            }
        }
        let references = found.iter().map(|p| crate::base::text::path(p)).collect();
        Ok(Leftover { references, how: self })
    }
}

/// The references a check found that no scene given has, and what was done with them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leftover {
    /// Their paths, as shown.
    pub references: Vec<String>,
    /// What the check did with them.
    pub how: Unreferenced,
}

impl Leftover {
    /// Whether they fail the check: found under `--unreferenced=reject`.
    pub fn fails(&self) -> bool {
        self.how == Unreferenced::Reject && !self.references.is_empty()
    }
}

/// The references in `refs` that no scene of `scenes` has: `NAME.gif` files whose scene is
/// gone (or was renamed). Sorted; none when the folder does not exist.
pub fn unreferenced(scenes: &[PathBuf], refs: &Path) -> Vec<PathBuf> {
    let wanted: std::collections::HashSet<PathBuf> = scenes.iter().map(|s| reference_path(s, refs)).collect();
    let Ok(entries) = std::fs::read_dir(refs) else { return Vec::new() };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| refs.join(e.file_name()))
        .filter(|p| p.extension().is_some_and(|x| x == "gif") && !wanted.contains(p))
        .collect();
    found.sort();
    found
}
