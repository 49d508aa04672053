//! Writing outputs so they appear complete or not at all (SPEC §6.3): everything is written to a
//! temporary file or folder beside the target and renamed over it only at the end.

use std::fs;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};

mod format;
pub use format::{Format, Named, every_format, folder_named_as_file, is_stdout, resolve};

/// An output being written: an unnamed temporary file (Linux `O_TMPFILE`), or a temporary file
/// or folder beside the target, removed again unless [`Staged::commit`] moves it into place; or,
/// for a character device or a pipe, the device itself, written as a stream.
///
/// A process killed outright (SIGKILL, power loss) leaves no named file behind for a GIF or
/// manifest on Linux: the kernel drops the unnamed file. A PNG-sequence folder (or a file
/// elsewhere) can be left as `.NAME.ripple-PID.tmp`; the next run writing the same target
/// removes such leftovers of processes that no longer exist.
#[derive(Debug)]
pub struct Staged {
    /// The target as given, for messages.
    target: PathBuf,
    /// Where the output goes: the target with its final symbolic links followed.
    resolved: PathBuf,
    temp: PathBuf,
    file: Option<fs::File>,
    /// The file has no name yet (`O_TMPFILE`); commit links it in.
    unnamed: bool,
    /// The target is a device or a pipe, written in place: nothing to stage, nothing to rename.
    stream: bool,
    /// What may be replaced, checked again when the output is moved into place.
    policy: Policy,
    committed: bool,
}

/// The named temporaries of outputs in progress, so that a process that must end at once (a
/// signal during a long frame) can remove them first: see [`remove_temporaries`].
static PENDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether any output's named temporary is still on disk.
pub fn temporaries_pending() -> bool {
    !pending().is_empty()
}

/// Removes every output's named temporary now, and holds off any commit until the process ends:
/// for a process about to end by a signal without reaching its own clean-up. (Unnamed
/// temporaries vanish with the process by themselves.)
pub fn remove_temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    let mut pending = pending();
    for path in pending.drain(..) {
        remove_any(&path);
    }
    pending
}

fn usage(message: String, hint: Option<&str>) -> Error {
    Error::Output { message, hint: hint.map(str::to_string) }
}

/// True for an existing folder with something in it.
fn non_empty_dir(path: &Path) -> bool {
    fs::read_dir(path).map(|mut d| d.next().is_some()).unwrap_or(false)
}

/// `path`, then each path its final symbolic links lead to in turn (at most 40 links, as the
/// kernel allows), whether or not the last one exists.
fn hops(path: &Path) -> Vec<PathBuf> {
    let mut hops = vec![strip_trailing_separator(path)];
    while hops.len() <= 40 {
        let Some(last) = hops.last() else { break };
        let Ok(link) = fs::read_link(last) else { break };
        let next = match last.parent() {
            Some(parent) if link.is_relative() => parent.join(link),
            _ => link,
        };
        hops.push(next);
    }
    hops
}

/// `path` with its final symbolic links followed: where writing `path` puts the file.
pub fn follow_links(path: &Path) -> PathBuf {
    hops(path).pop().unwrap_or_default()
}

/// Whether `path` names one of this process's open descriptors (`/dev/stdout`, `/dev/fd/3`,
/// `/proc/self/fd/1`), directly or through links: the caller's stream, whatever it is, to be
/// written in place (a shell's `> file` has already made the file).
fn names_a_descriptor(path: &Path) -> bool {
    hops(path).iter().any(|p| {
        p.starts_with("/proc/self/fd")
            || p.starts_with("/dev/fd")
            || ["/dev/stdout", "/dev/stderr"].iter().any(|d| p == Path::new(d))
    })
}

/// Which file a path names, for telling whether two paths are one: its folder canonicalized and
/// its name (after following final links), and, if it exists, its device and inode (which also
/// catches hard links).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The canonical folder joined with the name.
    pub path: PathBuf,
    /// Device and inode of an existing file.
    pub inode: Option<(u64, u64)>,
}

impl Identity {
    /// The identity of `path` (which need not exist).
    pub fn of(path: &Path) -> Identity {
        let resolved = follow_links(path);
        let canonical = fs::canonicalize(&resolved).ok().unwrap_or_else(|| {
            let parent = resolved.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let parent = fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
            parent.join(resolved.file_name().unwrap_or_default())
        });
        Identity { path: canonical, inode: inode(&resolved) }
    }

    /// Whether the two name the same file.
    pub fn same(&self, other: &Identity) -> bool {
        self.path == other.path || (self.inode.is_some() && self.inode == other.inode)
    }

    /// Whether this lies inside the folder `other` (strictly).
    pub fn inside(&self, other: &Identity) -> bool {
        self.path != other.path && self.path.starts_with(&other.path)
    }
}

/// Whether `path` is (or leads to) a character device.
fn is_char_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

#[cfg(unix)]
fn inode(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn inode(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// Refuses, before anything is written, outputs of one run that name one file between them
/// (another spelling, a symbolic link, a hard link), an output that is one of the `inputs`,
/// and anything placed inside a folder that an output replaces. `outputs` are (path, is a
/// folder) pairs; `what` names each in messages.
pub fn check_distinct(outputs: &[(&Path, bool, &str)], inputs: &[&Path]) -> Result<()> {
    let ids: Vec<Identity> = outputs.iter().map(|(p, ..)| Identity::of(p)).collect();
    for (i, (path, folder, what)) in outputs.iter().enumerate() {
        for input in inputs {
            let input_id = Identity::of(input);
            if ids[i].same(&input_id) || (*folder && input_id.inside(&ids[i])) || ids[i].inside(&input_id) {
                let relation = if ids[i].same(&input_id) {
                    "is"
                } else if ids[i].inside(&input_id) {
                    "lies inside"
                } else {
                    "holds"
                };
                return Err(usage(
                    format!("the {what} {} {relation} an input of this run ({})", path.display(), input.display()),
                    Some("choose another output path"),
                ));
            }
        }
        for (j, (other, other_folder, other_what)) in outputs.iter().enumerate().skip(i + 1) {
            // Two streams into one character device (/dev/null) harm nothing.
            let same = ids[i].same(&ids[j]) && !is_char_device(path);
            let nested = (*folder && ids[j].inside(&ids[i])) || (*other_folder && ids[i].inside(&ids[j]));
            if same || nested {
                let relation = if same { "are the same file" } else { "are one inside the other" };
                return Err(usage(
                    format!("the {what} {} and the {other_what} {} {relation}", path.display(), other.display()),
                    Some("give each output its own path"),
                ));
            }
        }
    }
    Ok(())
}

/// Whether a file is written as a stream rather than staged and renamed: a character device
/// (`/dev/null`) or a pipe. Anything else that is not a regular file or a folder is refused.
fn stream_kind(meta: &fs::Metadata) -> Option<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_char_device() || kind.is_fifo() {
            return Some(true);
        }
        if kind.is_block_device() || kind.is_socket() {
            return None;
        }
    }
    Some(false).filter(|_| meta.is_file() || meta.is_dir())
}

/// Whether `name` is a frame of a PNG sequence: `frame_` digits `.png`.
fn is_frame_name(name: &str) -> bool {
    name.strip_prefix("frame_")
        .and_then(|n| n.strip_suffix(".png"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The first entry of a folder that is not a regular file with an `ours` name, if any: such a
/// folder is not ours to replace.
fn foreign_entry(dir: &Path, ours: fn(&str) -> bool) -> Option<String> {
    let entries = fs::read_dir(dir).ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if !(is_file && ours(&name)) {
            return Some(name);
        }
    }
    None
}

/// Refuses to replace an existing regular file or folder that the policy does not allow.
fn check_replace(given: &Path, target: &Path, meta: &fs::Metadata, policy: Policy) -> Result<()> {
    let exists = |what: &str| {
        usage(format!("the output {what} {} already exists", given.display()), Some("pass --force (-f) to replace it"))
    };
    match policy {
        Policy::File { .. } if meta.is_dir() => Err(usage(
            format!("the output {} is a folder, not a file", given.display()),
            Some("name a file, or pass --format png to write a PNG sequence into the folder"),
        )),
        Policy::File { force: false } => Err(exists("file")),
        Policy::File { force: true } => Ok(()),
        Policy::Frames { force } if meta.is_dir() => match foreign_entry(target, is_frame_name) {
            _ if !non_empty_dir(target) => Ok(()),
            _ if !force => Err(exists("folder")),
            None => Ok(()),
            Some(entry) => Err(usage(
                format!(
                    "the folder {} holds {entry}, which is not a frame of a PNG sequence: ripple-render replaces \
                     only folders of frame_NNNN.png files",
                    given.display()
                ),
                Some("choose a new or empty folder for the frames"),
            )),
        },
        Policy::Frames { force } => {
            if force {
                Ok(())
            } else {
                Err(exists("file"))
            }
        }
        Policy::Report if !meta.is_dir() => Err(usage(
            format!("--out {} is a file, not a folder", given.display()),
            Some("name a new or empty folder for the report, or the folder of an earlier report"),
        )),
        Policy::Report => match foreign_entry(target, is_report_name) {
            None => Ok(()),
            Some(entry) => Err(usage(
                format!(
                    "--out {} holds {entry}, which is not part of a diff report: a report folder is replaced whole",
                    given.display()
                ),
                Some("name a new or empty folder for the report, or the folder of an earlier report"),
            )),
        },
    }
}

/// What an existing output may be replaced by, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    /// A file: an existing regular file with `--force`.
    File { force: bool },
    /// A PNG sequence: an empty folder, or with `--force` a folder of frames.
    Frames { force: bool },
    /// A diff report: an empty folder, or the folder of an earlier report.
    Report,
}

/// The files a diff report is made of: an earlier report's folder holds nothing else.
fn is_report_name(name: &str) -> bool {
    matches!(name, "report.json" | "contact.png" | "heat.gif") || is_frame_name(name)
}

impl Staged {
    /// Checks that `target` may be written and creates the temporary file (or, with `folder`,
    /// folder) for it. An existing output is refused unless `force`; `inputs` (scene,
    /// background) never count as outputs. A symbolic link is followed: what it names is
    /// written. A character device or a pipe is opened and written as a stream.
    pub fn begin(target: &Path, folder: bool, force: bool, inputs: &[&Path]) -> Result<Staged> {
        let policy = if folder { Policy::Frames { force } } else { Policy::File { force } };
        Staged::begin_with(target, policy, inputs)
    }

    /// A folder for a diff report: new, empty, or holding an earlier report (which is replaced
    /// whole, in one step, when this one is committed). A folder with anything else in it, a
    /// file, or a folder that is, holds or lies inside an input is refused.
    pub fn begin_report(target: &Path, inputs: &[&Path]) -> Result<Staged> {
        Staged::begin_with(target, Policy::Report, inputs)
    }

    fn begin_with(target: &Path, policy: Policy, inputs: &[&Path]) -> Result<Staged> {
        let folder = !matches!(policy, Policy::File { .. });
        let what = if policy == Policy::Report { "report folder" } else { "output" };
        let given = strip_trailing_separator(target);
        if !folder && names_a_descriptor(&given) {
            return Staged::stream(&given, &given);
        }
        let mut target = follow_links(&given);
        if target.file_name().is_none() {
            // `.` or `..`: the folder they name.
            target = fs::canonicalize(&target).unwrap_or(target);
        }
        let name = match target.file_name() {
            Some(n) => n.to_string_lossy().into_owned(),
            None => return Err(usage(format!("{} is not a file or folder name", given.display()), None)),
        };
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(usage(
                format!("cannot write {}: the folder {} does not exist", given.display(), parent.display()),
                Some("create it first, or choose another output path"),
            ));
        }
        check_distinct(&[(&given, folder, what)], inputs)?;
        let existing = fs::metadata(&target).ok();
        if let Some(meta) = &existing {
            match stream_kind(meta) {
                None => {
                    let kind = crate::base::files::file_kind(meta);
                    return Err(usage(
                        format!("the {what} {} is {kind}", given.display()),
                        Some("write to a regular file, a folder, a pipe or a character device such as /dev/null"),
                    ));
                }
                Some(true) if folder => {
                    let kind = crate::base::files::file_kind(meta);
                    let needs = if policy == Policy::Report { "a report" } else { "a PNG sequence" };
                    return Err(usage(
                        format!("the {what} {} is {kind}, and {needs} is a folder", given.display()),
                        Some("name a folder"),
                    ));
                }
                Some(true) => return Staged::stream(&given, &target),
                Some(false) => {}
            }
        }
        if let Some(meta) = existing {
            check_replace(&given, &target, &meta, policy)?;
        }
        let stem = temp_stem(&name);
        sweep_stale(&parent, &stem, &target);
        let temp = parent.join(temp_name(&stem, std::process::id(), "tmp"));
        // A leftover from a crashed run with our process id would block us: clear it.
        remove_any(&temp);
        let io = |source| cannot_create(&given, &parent, source);
        let mut staged = Staged {
            target: given.clone(),
            resolved: target.clone(),
            temp,
            file: None,
            unnamed: false,
            stream: false,
            policy,
            committed: false,
        };
        let mut pending = pending();
        if folder {
            fs::create_dir(&staged.temp).map_err(io)?;
        } else if let Some(file) = unnamed_file(&parent) {
            staged.file = Some(file);
            staged.unnamed = true;
        } else {
            staged.file = Some(fs::File::create(&staged.temp).map_err(io)?);
        }
        if !staged.unnamed {
            pending.push(staged.temp.clone());
        }
        Ok(staged)
    }

    /// A device or pipe, opened for writing as it is (never replaced).
    fn stream(given: &Path, target: &Path) -> Result<Staged> {
        // A regular file behind a descriptor (`> out.gif`) starts empty; a device or pipe cannot
        // be truncated and is not.
        let regular = fs::metadata(target).is_ok_and(|m| m.is_file());
        let file = fs::OpenOptions::new().write(true).truncate(regular).open(target).map_err(|source| {
            usage(
                format!("cannot open {} for writing: {}", given.display(), crate::base::error::os_reason(&source)),
                None,
            )
        })?;
        if std::io::IsTerminal::is_terminal(&file) {
            return Err(usage(
                format!("the output {} is a terminal, which cannot show an animation", given.display()),
                Some("write to a file, or pipe the output into another program"),
            ));
        }
        Ok(Staged {
            target: given.to_path_buf(),
            resolved: target.to_path_buf(),
            temp: target.to_path_buf(),
            file: Some(file),
            unnamed: false,
            stream: true,
            policy: Policy::File { force: true },
            committed: false,
        })
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

    /// Whether the output is a stream (a pipe, a device, standard output), written in place and
    /// unable to seek.
    pub fn is_stream(&self) -> bool {
        self.stream
    }

    /// The final path, as given.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the finished output into place, replacing what was there.
    pub fn commit(mut self) -> Result<()> {
        let io = |source| Error::io(&self.target, source);
        if self.stream {
            self.committed = true;
            return Ok(());
        }
        let target = self.resolved.clone();
        // What appeared at the target while rendering (another program, another run) is judged
        // as at the start: replaced only if the policy allows.
        if let Ok(meta) = fs::metadata(&target) {
            check_replace(&self.target, &target, &meta, self.policy).map_err(|e| match e {
                Error::Output { message, hint } => {
                    Error::Output { message: format!("{message} (it appeared while rendering)"), hint }
                }
                other => other,
            })?;
        }
        let replace = !matches!(self.policy, Policy::File { force: false });
        // The temporary is renamed and forgotten in one step for anyone removing temporaries.
        let mut pending = pending();
        pending.retain(|p| *p != self.temp);
        if let Some(file) = self.file.take() {
            file.sync_all().map_err(io)?;
            if self.unnamed {
                link_unnamed(&file, &self.temp, &target, replace).map_err(io)?;
            } else if replace {
                fs::rename(&self.temp, &target).map_err(io)?;
            } else {
                rename_no_replace(&self.temp, &target).map_err(io)?;
            }
        } else if !target.exists() || fs::remove_dir(&target).is_ok() {
            // Nothing there, or an empty folder (just removed): a plain rename.
            fs::rename(&self.temp, &target).map_err(io)?;
        } else {
            // A non-empty folder or a file, and --force was given.
            replace_folder(&self.temp, &target).map_err(io)?;
        }
        self.committed = true;
        sync_parent(&target);
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed && !self.unnamed && !self.stream {
            let mut pending = pending();
            remove_any(&self.temp);
            pending.retain(|p| *p != self.temp);
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

/// The part of a temporary's name that stands for its target: the target's name, or, when that
/// is too long for a temporary's name to stay within 255 bytes, its first bytes and a hash of
/// the whole.
fn temp_stem(name: &str) -> String {
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
fn temp_name(stem: &str, pid: u32, kind: &str) -> String {
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

/// Removes the temporaries a killed run left for this target (named by its stem). A moved-aside
/// old output whose replacement never arrived is moved back.
fn sweep_stale(parent: &Path, stem: &str, target: &Path) {
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
fn link_unnamed(file: &fs::File, temp: &Path, target: &Path, replace: bool) -> std::io::Result<()> {
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
fn link_unnamed(_file: &fs::File, _temp: &Path, _target: &Path, _replace: bool) -> std::io::Result<()> {
    Err(std::io::Error::other("unnamed temporary files need Linux"))
}

/// Renames `temp` to `target` unless something is there by then (Linux: in one step; elsewhere
/// checked just before).
fn rename_no_replace(temp: &Path, target: &Path) -> std::io::Result<()> {
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
