//! Writing outputs so they appear complete or not at all (§6.3): everything is written to a
//! temporary file or folder beside the target and renamed over it only at the end.

mod checks;
mod format;
mod sys;

pub use checks::{Identity, Policy, REPORT_PENDING, check_distinct, follow_links, is_report_name};
pub use format::{Format, Named, every_format, folder_named_as_file, is_stdout, resolve};

use std::fs;
use std::path::{Path, PathBuf};

use checks::{Place, check_replace, is_stream, names_a_descriptor};
use sys::{
    is_stale, link_unnamed, parse_any_temp_name, remove_any, rename_no_replace, replace_folder,
    strip_trailing_separator, sweep_stale, sync_parent, temp_name, temp_stem, unnamed_file,
};

use crate::base::error::{Error, Result, Target, os_reason};

/// Where this process's standard output can be opened by name.
pub const STDOUT: &str = "/dev/stdout";

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
    /// The stream is this process's standard output (`-o -`), named so in messages.
    stdout: bool,
}

/// The named temporaries of outputs in progress, so that a process that must end at once (a
/// signal during a long frame) can remove them first: see [`remove_temporaries`].
static PENDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A scratch file for an output that must be finished before it is streamed (a WebP puts its
/// size first): in the temporary folder, with no name (Linux), or named and unlinked at once, so
/// it is gone when the process is, however it ends. It holds what would otherwise be held in
/// memory.
pub fn scratch_file() -> Result<fs::File> {
    let dir = std::env::temp_dir();
    if let Some(file) = unnamed_file(&dir) {
        return Ok(file);
    }
    let path = dir.join(format!(".ripple-render-scratch-{}-{:x}", std::process::id(), scratch_number()));
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|source| Error::io(&path, source))?;
    remove_any(&path);
    Ok(file)
}

/// A number no other scratch file of this process has had.
fn scratch_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Removes from `dir` the temporaries that runs which no longer exist left for any target
/// whose name `is_target` accepts (a folder of checkpoints, swept once before writing any).
pub fn sweep_dead_runs(dir: &Path, is_target: impl Fn(&str) -> bool) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut stems: Vec<String> = entries
        .flatten()
        .filter_map(|e| parse_any_temp_name(&e.file_name().to_string_lossy()).map(str::to_string))
        .filter(|stem| is_target(stem))
        .collect();
    stems.dedup();
    for stem in stems {
        sweep_stale(dir, &stem, &dir.join(&stem));
    }
}

/// Whether the process `pid`, which left the file `path`, no longer exists.
pub fn left_by_dead_run(pid: u32, path: &Path) -> bool {
    pid != std::process::id() && is_stale(pid, path)
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

impl Staged {
    /// Checks that `target` may be written and creates the temporary file or folder for it: a
    /// file, a folder of frames or a report's folder, as `policy` says, which also says what an
    /// existing output there may be replaced by. `inputs` (scene, background) never count as
    /// outputs. A symbolic link is followed: what it names is written. A character device or a
    /// pipe is opened and written as a stream (a file's policy only).
    ///
    /// A report's folder is new, empty, or holds an earlier report (which is replaced whole, in
    /// one step, when this one is committed); a folder with anything else in it, a file, or a
    /// folder that is, holds or lies inside an input is refused.
    pub fn begin(target: &Path, policy: Policy, inputs: &[&Path]) -> Result<Staged> {
        let folder = !matches!(policy, Policy::File { .. });
        let what = if policy == Policy::Report { "report folder" } else { "output" };
        let given = strip_trailing_separator(target);
        if !folder && names_a_descriptor(&given) {
            return Staged::stream(&given, &given);
        }
        let place = Place::of(&given)?;
        check_distinct(&[(&given, folder, what)], inputs)?;
        if let Ok(meta) = fs::metadata(&place.target) {
            if is_stream(&given, &meta, policy, what)? {
                return Staged::stream(&given, &place.target);
            }
            check_replace(&given, &place.target, &meta, policy)?;
        }
        Staged::create(given, place, policy)
    }

    /// A part of a PNG sequence (`--frames`) into the folder `target`, which may hold other
    /// parts' frames (or not exist yet): its frames `names` are made in a temporary folder of
    /// their own and moved in beside them on commit. One of `names` already in the folder is
    /// refused unless `force` (two parts overlap).
    pub fn begin_part(target: &Path, names: &[String], force: bool, inputs: &[&Path]) -> Result<Staged> {
        let given = strip_trailing_separator(target);
        let place = Place::of(&given)?;
        check_distinct(&[(&given, true, "output")], inputs)?;
        let policy = Policy::Part { force };
        if let Ok(meta) = fs::metadata(&place.target) {
            if is_stream(&given, &meta, policy, "output")? {
                return Err(Error::usage(format!("the output {} is not a folder", given.display()), None));
            }
            check_replace(&given, &place.target, &meta, policy)?;
            if !force {
                check_no_overlap(&given, &place.target, names.iter().map(String::as_str))?;
            }
        }
        // Parts of one sequence may be rendered at once, on this machine or (into a shared
        // folder) on others: each part's temporary is its own, named for its first frame.
        let part = names.first().map_or("part", |n| n.trim_end_matches(".png"));
        let place = Place { name: format!("{}.{part}", place.name), ..place };
        Staged::create(given, place, policy)
    }

    /// This process's standard output, written in place as a stream (`-o -`).
    pub fn stdout() -> Result<Staged> {
        let mut staged = Staged::stream(Path::new(STDOUT), Path::new(STDOUT))?;
        staged.stdout = true;
        Ok(staged)
    }

    /// What the output is called in messages: its path as given, or standard output.
    pub fn name(&self) -> Target {
        if self.stdout { Target::Stdout } else { Target::Path(self.target.clone()) }
    }

    /// `e` named for this output when it is an I/O error within it: in its temporary file or
    /// folder (a frame of a PNG sequence), which the user never sees.
    pub fn claim(&self, e: Error) -> Error {
        match e {
            Error::Io { target: Target::Path(path), source } if path == self.temp || path.starts_with(&self.temp) => {
                Error::Io { target: self.name(), source }
            }
            other => other,
        }
    }

    /// The temporary file or folder for `given`, which will be at `place`: a leftover of a dead
    /// run for the same target swept first, an unnamed file where the system makes one.
    fn create(given: PathBuf, place: Place, policy: Policy) -> Result<Staged> {
        let Place { target, name, parent } = place;
        let stem = temp_stem(&name);
        sweep_stale(&parent, &stem, &target);
        let temp = parent.join(temp_name(&stem, std::process::id(), "tmp"));
        // A leftover from a crashed run with our process id would block us: clear it.
        remove_any(&temp);
        let io = |source| cannot_create(&given, &parent, source);
        let mut staged = Staged {
            target: given.clone(),
            resolved: target,
            temp,
            file: None,
            unnamed: false,
            stream: false,
            policy,
            committed: false,
            stdout: false,
        };
        let mut pending = pending();
        if !matches!(policy, Policy::File { .. }) {
            fs::create_dir(&staged.temp).map_err(io)?;
        } else if let Some(file) = unnamed_file(&parent) {
            staged.file = Some(file);
            staged.unnamed = true;
        } else {
            // Readable too: a part is read back to be sealed (see [`seal`]).
            let file = fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&staged.temp);
            staged.file = Some(file.map_err(io)?);
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
            Error::usage(format!("cannot open {} for writing: {}", given.display(), os_reason(&source)), None)
        })?;
        if std::io::IsTerminal::is_terminal(&file) {
            return Err(Error::usage(
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
            stdout: false,
        })
    }

    /// Where to write a PNG sequence: the temporary folder. For a file output this is the name
    /// the file would have, which may not exist; write through [`Staged::file`].
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// A handle on the temporary file, for a file output.
    pub fn file(&self) -> Result<fs::File> {
        let file =
            self.file.as_ref().ok_or_else(|| Error::usage(format!("{} is a folder", self.temp.display()), None))?;
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
                Error::Usage { message, hint } => {
                    Error::Usage { message: format!("{message} (it appeared while rendering)"), hint }
                }
                other => other,
            })?;
        }
        if let Policy::Part { force } = self.policy {
            return self.commit_part(force);
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

impl Staged {
    /// Moves a part's frames into the folder beside the other parts' (made if need be): none
    /// is moved if one of them is already there without `force`.
    fn commit_part(mut self, force: bool) -> Result<()> {
        let io = |source| Error::io(&self.target, source);
        let mut names: Vec<std::ffi::OsString> =
            fs::read_dir(&self.temp).map_err(io)?.flatten().map(|e| e.file_name()).collect();
        names.sort();
        fs::create_dir_all(&self.resolved).map_err(io)?;
        if !force {
            let shown: Vec<String> = names.iter().map(|n| n.to_string_lossy().into_owned()).collect();
            check_no_overlap(&self.target, &self.resolved, shown.iter().map(String::as_str)).map_err(|e| match e {
                Error::Usage { message, hint } => {
                    Error::Usage { message: format!("{message} (it appeared while rendering)"), hint }
                }
                other => other,
            })?;
        }
        let mut pending = pending();
        for name in &names {
            fs::rename(self.temp.join(name), self.resolved.join(name)).map_err(io)?;
        }
        pending.retain(|p| *p != self.temp);
        let _ = fs::remove_dir(&self.temp);
        self.committed = true;
        // The folder that now names the frames, and its own folder (it may have been made here).
        if let Some(name) = names.first() {
            sync_parent(&self.resolved.join(name));
        }
        sync_parent(&self.resolved);
        Ok(())
    }
}

/// Refuses a part whose frame `names` are already in the folder `target` (given as `given`):
/// two parts of the sequence overlap.
fn check_no_overlap<'a>(given: &Path, target: &Path, mut names: impl Iterator<Item = &'a str>) -> Result<()> {
    match names.find(|name| target.join(name).exists()) {
        None => Ok(()),
        Some(name) => Err(Error::usage(
            format!(
                "{} already holds {name}, a frame of this part: another part of the sequence has rendered it",
                given.display()
            ),
            Some("check the parts' --frames ranges (A..B renders A to B-1), or pass --force to replace those frames"),
        )),
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
    Error::usage(format!("cannot create {}: {reason}", target.display()), Some("choose a folder you can write to"))
}
