//! `check --accept-from DIR`: the would-be references a check's report kept (`pending/`) are
//! written in place of the references, without rendering again. A scene's render is the same on
//! every machine, so what the report kept is byte for byte what `--bless` writes locally; the
//! report's record says which scene each belongs to, and each is accepted only while that holds:
//! the scene (and its background) and the reference it replaces are as the check read them.

use std::path::{Path, PathBuf};

use super::reference::Reference;
use super::shard::{self, SceneRecord};
use super::{Pending, reference_path};
use crate::base::error::{Error, Result};
use crate::base::limits::DEFAULT_BUDGET;
use crate::base::text::path as shown;
use crate::encode::provenance::Provenance;
use crate::output::{Policy, Staged};
use crate::render::Inputs;
use crate::render::budget::read_scene;

/// One reference accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The scene, as the check was given it.
    pub scene: PathBuf,
    /// The reference written.
    pub reference: PathBuf,
    /// What became of it.
    pub how: How,
}

/// How a reference was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// It is the scene's first.
    New,
    /// It replaced the reference the check compared with.
    Replaced,
    /// The reference already is it (accepted before): nothing written.
    Already,
}

/// Accepts the would-be references kept in the report folder `dir`: of `only` (scenes as the
/// check was given them; every scene with one when empty), into `refs` (the check's own
/// `--refs` when `None`). Everything is checked before anything is written: a scene named that
/// the report does not hold or kept nothing for, a scene or reference that changed since the
/// check, or a kept file that is not that scene's reference, refuses the whole.
pub fn accept_from(dir: &Path, only: &[PathBuf], refs: Option<&Path>) -> Result<Vec<Accepted>> {
    let (record, inside) = shard::read_record(dir)?;
    let refs = match refs {
        Some(refs) => refs.to_path_buf(),
        None => recorded_refs(&record.refs, dir)?,
    };
    let wanted: Vec<&SceneRecord> = if only.is_empty() {
        record.scenes.iter().filter(|s| s.has_pending()).collect()
    } else {
        only.iter().map(|scene| find(&record.scenes, scene, dir)).collect::<Result<_>>()?
    };
    let mut ready = Vec::new();
    for scene in wanted {
        let Some(pending) = scene.pending(dir, &inside)? else {
            return Err(Error::usage(
                format!(
                    "the report {} kept no would-be reference of {}: in that check it {}",
                    dir.display(),
                    shown(&scene.scene_path()),
                    match scene.result() {
                        "same" => "was the same as its reference",
                        "unreadable" => "had a reference that cannot be used, which is never written over",
                        _ => "was blessed",
                    }
                ),
                Some("accept only scenes that differed or had no reference (the report's failures)"),
            ));
        };
        ready.push(ready_to_accept(&scene.scene_path(), &pending, &refs)?);
    }
    let mut accepted = Vec::new();
    for (scene, bytes, reference, how) in ready {
        if how != How::Already {
            write(&reference, &bytes, &scene)?;
        }
        accepted.push(Accepted { scene, reference, how });
    }
    Ok(accepted)
}

/// The references' folder a report records, where it is one this command may write into: a
/// relative path that stays inside the working folder. A report is a downloaded file (a CI
/// job's artifact): an absolute folder, or one that climbs out, would write references anywhere.
fn recorded_refs(recorded: &str, dir: &Path) -> Result<PathBuf> {
    let path = PathBuf::from(recorded);
    let mut depth = 0usize;
    let mut inside = !recorded.is_empty();
    for part in path.components() {
        match part {
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if depth > 0 => depth -= 1,
            _ => inside = false,
        }
    }
    if inside {
        return Ok(path);
    }
    Err(Error::usage(
        format!(
            "the report {} names the references' folder {:?}, outside the working folder: a report accepts only into \
             a folder below the one it is accepted in",
            dir.display(),
            crate::base::text::inert(recorded)
        ),
        Some("name the folder to write the references into: --refs DIR"),
    ))
}

/// The record of `scene` in `scenes`: the same path as given (byte for byte, or as the record
/// shows it: bytes that are not UTF-8 as U+FFFD), or the same file.
fn find<'a>(scenes: &'a [SceneRecord], scene: &Path, dir: &Path) -> Result<&'a SceneRecord> {
    let same_file = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    scenes
        .iter()
        .find(|s| s.scene_path() == scene)
        .or_else(|| scenes.iter().find(|s| scene.to_str() == Some(s.scene())))
        .or_else(|| scenes.iter().find(|s| same_file(&s.scene_path(), scene)))
        .ok_or_else(|| {
            Error::usage(
                format!("{} is not a scene of the check whose report is {}", shown(scene), dir.display()),
                Some("name scenes as the check was given them, or none to accept every kept reference"),
            )
        })
}

/// Checks that the kept reference `pending` of `scene` may be written into `refs`: it is a
/// reference of the scene as it is now, and the reference it replaces is the one the check
/// read (or already is the kept one). Returns the scene, the bytes, where they go and how.
fn ready_to_accept(scene: &Path, pending: &Pending, refs: &Path) -> Result<(PathBuf, Vec<u8>, PathBuf, How)> {
    let kept = Reference::read(&pending.path)?;
    // What `--bless` writes, and nothing else: no larger than a reference of its canvas and
    // frames can be (read within that), and ending at its GIF trailer.
    let most = kept.most_bytes();
    let bytes = crate::base::files::read_regular_within(&pending.path, most)
        .map_err(|e| Error::input(&pending.path, format!("cannot be read: {}", crate::base::error::os_reason(&e))))?;
    if super::reference::gif_length(&bytes) != Some(bytes.len()) {
        return Err(Error::input(
            &pending.path,
            "is not what --bless writes: its bytes do not end at its GIF trailer (it was cut short, or holds more)",
        ));
    }
    let made = kept.provenance.as_deref().and_then(Provenance::parse);
    let loaded = read_scene(scene, &[], DEFAULT_BUDGET)?;
    let now = Inputs::for_scene_within(&loaded, DEFAULT_BUDGET)?.provenance;
    let again = Some("run the check again, and accept from its report (or bless locally)");
    match made {
        Some(made) if made == now => {}
        Some(made) if made.version != now.version => {
            return Err(Error::usage(
                format!(
                    "{} was kept by ripple-render {}, and this is {}: a reference is accepted by the version that made it",
                    pending.path.display(),
                    made.version,
                    now.version
                ),
                again,
            ));
        }
        _ => {
            return Err(Error::usage(
                format!(
                    "{} changed since the check whose report is {} (its text or its background): what the report kept is \
                     not its render now",
                    shown(scene),
                    pending.path.parent().and_then(Path::parent).unwrap_or(Path::new(".")).display()
                ),
                again,
            ));
        }
    }
    let reference = reference_path(scene, refs);
    let current =
        match std::fs::symlink_metadata(&reference) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            _ => Some(crate::base::files::hash_regular(&reference).map_err(|e| {
                Error::input(&reference, format!("cannot be read: {}", crate::base::error::os_reason(&e)))
            })?),
        };
    let how = match current {
        Some(hash) if hash == xxhash_rust::xxh3::xxh3_64(&bytes) => How::Already,
        Some(_) => How::Replaced,
        None => How::New,
    };
    if current != pending.replaces && how != How::Already {
        let what = match (pending.replaces, current) {
            (None, _) => "was written since the check, which found none".to_string(),
            (Some(_), None) => "is gone since the check".to_string(),
            (Some(_), Some(_)) => "changed since the check".to_string(),
        };
        return Err(Error::usage(
            format!(
                "the reference {} {what}: accepting would write over what the report did not see",
                reference.display()
            ),
            again,
        ));
    }
    Ok((scene.to_path_buf(), bytes, reference, how))
}

/// Writes `bytes` as the reference at `path` (its folder made if need be), whole or not at all.
fn write(path: &Path, bytes: &[u8], scene: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let staged = Staged::begin(path, Policy::File { force: true }, &[scene])?;
    // The file is closed at the end of the block, before it is committed.
    {
        let mut file = staged.file()?;
        std::io::Write::write_all(&mut file, bytes).map_err(|e| staged.claim(Error::io(staged.path(), e)))?;
    }
    staged.commit()
}
