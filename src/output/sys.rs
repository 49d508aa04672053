//! The file system calls that make writes atomic: unnamed temporary files linked in, renames
//! that do not replace or that swap, temporaries named for their run and swept when it is gone.

use std::fs;
use std::path::{Path, PathBuf};

/// The part of a temporary's name that stands for its target: the target's name, or, when that
/// is too long for a temporary's name to stay within 255 bytes, its first bytes and a hash of
/// the whole.
pub(super) fn temp_stem(name: &str) -> String {
    const ROOM: usize = 255 - ".".len() - ".ripple-4294967295.tmp".len();
    if name.len() <= ROOM {
        return name.to_string();
    }
    let mut cut = ROOM - 17;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}~{:016x}", &name[..cut], xxhash_rust::xxh3::xxh3_64(name.as_bytes()))
}

/// `.STEM.ripple-PID.KIND`: the temporaries of one run, hidden, and recognisable by the sweep.
pub(super) fn temp_name(stem: &str, pid: u32, kind: &str) -> String {
    format!(".{stem}.ripple-{pid}.{kind}")
}

/// The process id in a temporary's name made for a target of this stem, and its kind (`tmp`,
/// `old`).
fn parse_temp_name<'a>(entry: &'a str, stem: &str) -> Option<(u32, &'a str)> {
    let rest = entry.strip_prefix('.')?.strip_prefix(stem)?.strip_prefix(".ripple-")?;
    let (pid, kind) = rest.split_once('.')?;
    let pid = pid.parse().ok().filter(|_| pid.bytes().all(|b| b.is_ascii_digit()))?;
    matches!(kind, "tmp" | "old").then_some((pid, kind))
}

/// The target's stem in the name of any run's temporary, `.STEM.ripple-PID.KIND`.
pub(super) fn parse_any_temp_name(entry: &str) -> Option<&str> {
    let (stem, rest) = entry.strip_prefix('.')?.rsplit_once(".ripple-")?;
    parse_temp_name(entry, stem).map(|_| stem).filter(|_| !rest.is_empty())
}

/// Removes the temporaries a killed run left for this target (named by its stem). A moved-aside
/// old output whose replacement never arrived is moved back.
pub(super) fn sweep_stale(parent: &Path, stem: &str, target: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, kind)) = parse_temp_name(&file_name, stem) else { continue };
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
pub(super) fn is_stale(pid: u32, _path: &Path) -> bool {
    use rustix::io::Errno;
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else { return true };
    // Signal 0 checks for the process; EPERM means it exists under another user.
    matches!(rustix::process::test_kill_process(pid), Err(Errno::SRCH))
}

/// Whether the run that made a temporary is gone: without a way to ask, a day without change.
#[cfg(not(unix))]
pub(super) fn is_stale(_pid: u32, path: &Path) -> bool {
    let age = fs::symlink_metadata(path).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
    age.is_some_and(|age| age > std::time::Duration::from_secs(24 * 3600))
}

/// A file with no name in `dir`, which vanishes with the process unless linked in.
#[cfg(target_os = "linux")]
pub(super) fn unnamed_file(dir: &Path) -> Option<fs::File> {
    use rustix::fs::{CWD, Mode, OFlags};
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
    // Not every file system supports O_TMPFILE; then a named temporary does the job.
    rustix::fs::openat(CWD, dir, flags, Mode::from_raw_mode(0o666)).ok().map(fs::File::from)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn unnamed_file(_dir: &Path) -> Option<fs::File> {
    None
}

/// Gives the unnamed `file` the name `target`: linked straight in when there is nothing there,
/// else linked as `temp` and renamed over the old file, which is atomic.
#[cfg(target_os = "linux")]
pub(super) fn link_unnamed(file: &fs::File, temp: &Path, target: &Path, replace: bool) -> std::io::Result<()> {
    use rustix::fs::{AtFlags, CWD};
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let link = |to: &Path| rustix::fs::linkat(CWD, proc_path.as_str(), CWD, to, AtFlags::SYMLINK_FOLLOW);
    match link(target) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::EXIST) if replace => {
            remove_any(temp);
            link(temp)?;
            fs::rename(temp, target).inspect_err(|_| remove_any(temp))
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn link_unnamed(_file: &fs::File, _temp: &Path, _target: &Path, _replace: bool) -> std::io::Result<()> {
    Err(std::io::Error::other("unnamed temporary files need Linux"))
}

/// Renames `temp` to `target` unless something is there by then (Linux: in one step; elsewhere
/// checked just before).
pub(super) fn rename_no_replace(temp: &Path, target: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags};
        match rustix::fs::renameat_with(CWD, temp, CWD, target, RenameFlags::NOREPLACE) {
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            other => return other.map_err(Into::into),
        }
    }
    if fs::symlink_metadata(target).is_ok() {
        return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
    }
    fs::rename(temp, target)
}

/// Puts the folder `temp` in the place of the existing `target` (a non-empty folder, or a file).
/// On Linux the two swap atomically, so at no moment is there no output; the old one is then
/// deleted from `temp`'s place.
pub(super) fn replace_folder(temp: &Path, target: &Path) -> std::io::Result<()> {
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
    let aside = temp.with_file_name(temp_name(&temp_stem(&name), std::process::id(), "old"));
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
pub(super) fn sync_parent(target: &Path) {
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Ok(dir) = fs::File::open(parent) {
        let _ = dir.sync_all();
    }
}

pub(super) fn remove_any(path: &Path) {
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

pub(super) fn strip_trailing_separator(path: &Path) -> PathBuf {
    path.components().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
