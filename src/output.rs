//! Writing outputs so they appear complete or not at all (SPEC §6.3): everything is written to a
//! temporary file or folder beside the target and renamed over it only at the end.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The kind of output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An animated GIF file.
    Gif,
    /// A folder of PNG files.
    PngSequence,
}

/// The output format: `explicit` if given, else from the path (`*.gif`, or a folder: a path
/// ending in `/` or an existing directory).
pub fn detect_format(path: &Path, explicit: Option<Format>) -> Result<Format> {
    if let Some(format) = explicit {
        return Ok(format);
    }
    let text = path.to_string_lossy();
    let is_gif = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gif"));
    if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) || path.is_dir() {
        Ok(Format::PngSequence)
    } else if is_gif {
        Ok(Format::Gif)
    } else {
        Err(Error::Output {
            message: format!("cannot tell the output format of {}", path.display()),
            hint: Some(
                "name a .gif file for an animated GIF, or a folder ending in / for a PNG sequence (or pass --format gif|png)"
                    .into(),
            ),
        })
    }
}

impl Format {
    /// Whether this format is written as a folder.
    pub fn is_folder(self) -> bool {
        self == Format::PngSequence
    }
}

/// An output being written: a temporary file or folder beside the target, removed again unless
/// [`Staged::commit`] renames it into place.
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    temp: PathBuf,
    folder: bool,
    committed: bool,
}

fn usage(message: String, hint: Option<&str>) -> Error {
    Error::Output { message, hint: hint.map(str::to_string) }
}

/// True for an existing folder with something in it.
fn non_empty_dir(path: &Path) -> bool {
    fs::read_dir(path).map(|mut d| d.next().is_some()).unwrap_or(false)
}

impl Staged {
    /// Checks that `target` may be written and creates the temporary file (or, with `folder`,
    /// folder) beside it. An existing output is refused unless `force`; `inputs` (scene,
    /// background) never count as outputs.
    pub fn begin(target: &Path, folder: bool, force: bool, inputs: &[&Path]) -> Result<Staged> {
        let target = strip_trailing_separator(target);
        let name = match target.file_name() {
            Some(n) => n.to_string_lossy().into_owned(),
            None => return Err(usage(format!("{} is not a file or folder name", target.display()), None)),
        };
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(usage(
                format!("cannot write {}: the folder {} does not exist", target.display(), parent.display()),
                Some("create it first, or choose another output path"),
            ));
        }
        let same_file = |a: &Path, b: &Path| match (fs::canonicalize(a), fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if let Some(input) = inputs.iter().find(|i| same_file(&target, i)) {
            return Err(usage(
                format!("the output {} is an input of this render ({})", target.display(), input.display()),
                Some("choose another output path"),
            ));
        }
        match fs::symlink_metadata(&target) {
            Ok(meta) if meta.is_dir() && !folder => {
                return Err(usage(
                    format!("the output {} is a folder, not a file", target.display()),
                    Some("name a file, or pass --format png to write a PNG sequence into the folder"),
                ));
            }
            Ok(meta) if !force && (!meta.is_dir() || non_empty_dir(&target)) => {
                let what = if meta.is_dir() { "folder" } else { "file" };
                return Err(usage(
                    format!("the output {what} {} already exists", target.display()),
                    Some("pass --force (-f) to replace it"),
                ));
            }
            _ => {}
        }
        let temp = parent.join(format!(".{name}.ripple-{}.tmp", std::process::id()));
        // A leftover from a crashed run with the same process id would block us: clear it.
        remove_any(&temp);
        let created = if folder { fs::create_dir(&temp) } else { fs::File::create(&temp).map(drop) };
        created.map_err(|source| Error::io(&target, source))?;
        Ok(Staged { target, temp, folder, committed: false })
    }

    /// Where to write: the temporary file or folder.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the finished output into place, replacing what was there.
    pub fn commit(mut self) -> Result<()> {
        let io = |source| Error::io(&self.target, source);
        if !self.folder {
            fs::File::open(&self.temp).and_then(|f| f.sync_all()).map_err(io)?;
            fs::rename(&self.temp, &self.target).map_err(io)?;
        } else if !self.target.exists() || fs::remove_dir(&self.target).is_ok() {
            // Nothing there, or an empty folder (just removed): a plain rename.
            fs::rename(&self.temp, &self.target).map_err(io)?;
        } else {
            // A non-empty folder or a file, and --force was given: move it aside, move the new
            // one in, then delete the old one.
            let name = self.target.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let aside = self.temp.with_file_name(format!(".{name}.ripple-{}.old", std::process::id()));
            remove_any(&aside);
            fs::rename(&self.target, &aside).map_err(io)?;
            if let Err(source) = fs::rename(&self.temp, &self.target) {
                let _ = fs::rename(&aside, &self.target);
                return Err(io(source));
            }
            remove_any(&aside);
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            remove_any(&self.temp);
        }
    }
}

fn remove_any(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

fn strip_trailing_separator(path: &Path) -> PathBuf {
    path.components().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_from_the_path() {
        assert_eq!(detect_format(Path::new("a/out.gif"), None).unwrap(), Format::Gif);
        assert_eq!(detect_format(Path::new("OUT.GIF"), None).unwrap(), Format::Gif);
        assert_eq!(detect_format(Path::new("frames/"), None).unwrap(), Format::PngSequence);
        assert_eq!(detect_format(Path::new("."), None).unwrap(), Format::PngSequence);
        assert!(detect_format(Path::new("out.mp4"), None).is_err());
        assert_eq!(detect_format(Path::new("out.mp4"), Some(Format::Gif)).unwrap(), Format::Gif);
    }

    #[test]
    fn trailing_separators_are_dropped() {
        assert_eq!(strip_trailing_separator(Path::new("a/b/")), PathBuf::from("a/b"));
    }
}
