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

/// An output being written: an unnamed temporary file (Linux `O_TMPFILE`), or a temporary file
/// or folder beside the target, removed again unless [`Staged::commit`] moves it into place.
///
/// A process killed outright (SIGKILL, power loss) leaves no named file behind for a GIF or
/// manifest on Linux: the kernel drops the unnamed file. A PNG-sequence folder (or a file
/// elsewhere) can be left as `.NAME.ripple-PID.tmp`; the next run writing the same target
/// removes such leftovers of processes that no longer exist.
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    temp: PathBuf,
    file: Option<fs::File>,
    /// The file has no name yet (`O_TMPFILE`); commit links it in.
    unnamed: bool,
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
    /// folder) for it. An existing output is refused unless `force`; `inputs` (scene,
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
        sweep_stale(&parent, &name, &target);
        let temp = parent.join(temp_name(&name, std::process::id(), "tmp"));
        // A leftover from a crashed run with our process id would block us: clear it.
        remove_any(&temp);
        let io = |source| cannot_create(&target, &parent, source);
        let mut staged = Staged { target: target.clone(), temp, file: None, unnamed: false, committed: false };
        if folder {
            fs::create_dir(&staged.temp).map_err(io)?;
        } else if let Some(file) = unnamed_file(&parent) {
            staged.file = Some(file);
            staged.unnamed = true;
        } else {
            staged.file = Some(fs::File::create(&staged.temp).map_err(io)?);
        }
        Ok(staged)
    }

    /// Where to write a PNG sequence: the temporary folder. For a file output this is the name
    /// the file would have, which may not exist; write through [`Staged::file`].
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// A handle on the temporary file, for a file output.
    pub fn file(&self) -> Result<fs::File> {
        let file = self.file.as_ref().ok_or_else(|| usage(format!("{} is a folder", self.temp.display()), None))?;
        file.try_clone().map_err(|source| Error::io(&self.target, source))
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the finished output into place, replacing what was there.
    pub fn commit(mut self) -> Result<()> {
        let io = |source| Error::io(&self.target, source);
        if let Some(file) = self.file.take() {
            file.sync_all().map_err(io)?;
            if self.unnamed {
                link_unnamed(&file, &self.temp, &self.target).map_err(io)?;
            } else {
                fs::rename(&self.temp, &self.target).map_err(io)?;
            }
        } else if !self.target.exists() || fs::remove_dir(&self.target).is_ok() {
            // Nothing there, or an empty folder (just removed): a plain rename.
            fs::rename(&self.temp, &self.target).map_err(io)?;
        } else {
            // A non-empty folder or a file, and --force was given.
            replace_folder(&self.temp, &self.target).map_err(io)?;
        }
        self.committed = true;
        sync_parent(&self.target);
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed && !self.unnamed {
            remove_any(&self.temp);
        }
    }
}

/// The output cannot even be created: a folder that refuses new files is the user's to fix
/// (exit 2); a full disk or a failing one stays an I/O error (exit 3).
fn cannot_create(target: &Path, parent: &Path, source: std::io::Error) -> Error {
    use std::io::ErrorKind::{NotFound, PermissionDenied, ReadOnlyFilesystem};
    let reason = match source.kind() {
        PermissionDenied => "permission denied".to_string(),
        ReadOnlyFilesystem => "the file system is read-only".to_string(),
        NotFound => format!("the folder {} does not accept new files", parent.display()),
        _ => return Error::io(target, source),
    };
    usage(format!("cannot create {}: {reason}", target.display()), Some("choose a folder you can write to"))
}

/// `.NAME.ripple-PID.KIND`: the temporaries of one run, hidden, and recognisable by the sweep.
fn temp_name(name: &str, pid: u32, kind: &str) -> String {
    format!(".{name}.ripple-{pid}.{kind}")
}

/// The process id in a temporary's name made for target `name`, and its kind (`tmp`, `old`).
fn parse_temp_name<'a>(entry: &'a str, name: &str) -> Option<(u32, &'a str)> {
    let rest = entry.strip_prefix('.')?.strip_prefix(name)?.strip_prefix(".ripple-")?;
    let (pid, kind) = rest.split_once('.')?;
    let pid = pid.parse().ok().filter(|_| pid.bytes().all(|b| b.is_ascii_digit()))?;
    matches!(kind, "tmp" | "old").then_some((pid, kind))
}

/// Removes the temporaries a killed run left for this target. A moved-aside old output whose
/// replacement never arrived is moved back.
fn sweep_stale(parent: &Path, name: &str, target: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, kind)) = parse_temp_name(&file_name, name) else { continue };
        if pid == std::process::id() || !is_stale(pid, &entry.path()) {
            continue;
        }
        if kind == "old" && fs::symlink_metadata(target).is_err() && fs::rename(entry.path(), target).is_ok() {
            continue;
        }
        remove_any(&entry.path());
    }
}

/// Whether the run that made a temporary is gone.
#[cfg(unix)]
fn is_stale(pid: u32, _path: &Path) -> bool {
    use rustix::io::Errno;
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else { return true };
    // Signal 0 checks for the process; EPERM means it exists under another user.
    matches!(rustix::process::test_kill_process(pid), Err(Errno::SRCH))
}

/// Whether the run that made a temporary is gone: without a way to ask, a day without change.
#[cfg(not(unix))]
fn is_stale(_pid: u32, path: &Path) -> bool {
    let age = fs::symlink_metadata(path).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
    age.is_some_and(|age| age > std::time::Duration::from_secs(24 * 3600))
}

/// A file with no name in `dir`, which vanishes with the process unless linked in.
#[cfg(target_os = "linux")]
fn unnamed_file(dir: &Path) -> Option<fs::File> {
    use rustix::fs::{CWD, Mode, OFlags};
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
    // Not every file system supports O_TMPFILE; then a named temporary does the job.
    rustix::fs::openat(CWD, dir, flags, Mode::from_raw_mode(0o666)).ok().map(fs::File::from)
}

#[cfg(not(target_os = "linux"))]
fn unnamed_file(_dir: &Path) -> Option<fs::File> {
    None
}

/// Gives the unnamed `file` the name `target`: linked straight in when there is nothing there,
/// else linked as `temp` and renamed over the old file, which is atomic.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &fs::File, temp: &Path, target: &Path) -> std::io::Result<()> {
    use rustix::fs::{AtFlags, CWD};
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let link = |to: &Path| rustix::fs::linkat(CWD, proc_path.as_str(), CWD, to, AtFlags::SYMLINK_FOLLOW);
    match link(target) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::EXIST) => {
            remove_any(temp);
            link(temp)?;
            fs::rename(temp, target).inspect_err(|_| remove_any(temp))
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &fs::File, _temp: &Path, _target: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("unnamed temporary files need Linux"))
}

/// Puts the folder `temp` in the place of the existing `target` (a non-empty folder, or a file).
/// On Linux the two swap atomically, so at no moment is there no output; the old one is then
/// deleted from `temp`'s place.
fn replace_folder(temp: &Path, target: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags};
        if rustix::fs::renameat_with(CWD, temp, CWD, target, RenameFlags::EXCHANGE).is_ok() {
            remove_any(temp);
            return Ok(());
        }
    }
    // Elsewhere: move the old one aside, the new one in, then delete the old one. A run killed
    // between the two renames leaves the old one aside, and the next run moves it back.
    let name = target.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let aside = temp.with_file_name(temp_name(&name, std::process::id(), "old"));
    remove_any(&aside);
    fs::rename(target, &aside)?;
    if let Err(e) = fs::rename(temp, target) {
        let _ = fs::rename(&aside, target);
        return Err(e);
    }
    remove_any(&aside);
    Ok(())
}

/// Makes a rename durable: the folder holding the new name is flushed too (best effort).
fn sync_parent(target: &Path) {
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Ok(dir) = fs::File::open(parent) {
        let _ = dir.sync_all();
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
    fn temporaries_are_recognised_by_target_name() {
        assert_eq!(parse_temp_name(".out.gif.ripple-42.tmp", "out.gif"), Some((42, "tmp")));
        assert_eq!(parse_temp_name(".frames.ripple-7.old", "frames"), Some((7, "old")));
        assert_eq!(parse_temp_name(".out.gif.ripple-42.tmp", "other.gif"), None);
        assert_eq!(parse_temp_name(".out.gif.ripple-+42.tmp", "out.gif"), None);
        assert_eq!(parse_temp_name(".out.gif.ripple-42.bak", "out.gif"), None);
        assert_eq!(parse_temp_name("out.gif.ripple-42.tmp", "out.gif"), None);
        assert_eq!(temp_name("a.gif", 9, "tmp"), ".a.gif.ripple-9.tmp");
    }

    #[cfg(unix)]
    #[test]
    fn a_dead_runs_leftovers_are_swept_and_a_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("ripple-render-sweep-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join(".out.ripple-1.tmp")).unwrap();
        // No process has the largest pid; ours is alive.
        let dead = dir.join(format!(".out.ripple-{}.tmp", i32::MAX));
        let alive = dir.join(temp_name("out", std::process::id(), "tmp"));
        let other = dir.join(format!(".other.ripple-{}.tmp", i32::MAX));
        for path in [&dead, &alive, &other] {
            fs::write(path, b"x").unwrap();
        }
        // An old output moved aside by a run that died before the new one arrived goes back.
        fs::write(dir.join(format!(".out.ripple-{}.old", i32::MAX)), b"old").unwrap();
        sweep_stale(&dir, "out", &dir.join("out"));
        assert!(!dead.exists());
        assert!(alive.exists() && other.exists());
        assert!(dir.join(".out.ripple-1.tmp").exists(), "pid 1 is alive");
        assert_eq!(fs::read(dir.join("out")).unwrap(), b"old");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn trailing_separators_are_dropped() {
        assert_eq!(strip_trailing_separator(Path::new("a/b/")), PathBuf::from("a/b"));
    }
}
