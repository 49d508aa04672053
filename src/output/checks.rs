//! What may be written where: paths followed to the file they name, outputs that would land on
//! one file or on an input, and what an existing output may be replaced by.

use std::fs;
use std::path::{Path, PathBuf};

use super::sys::strip_trailing_separator;
use crate::base::error::{Error, Result};
use crate::base::files::file_kind;

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
pub(super) fn names_a_descriptor(path: &Path) -> bool {
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
                return Err(Error::usage(
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
                return Err(Error::usage(
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

/// Where an output goes: the target as its final links lead, its name, and the folder it is in,
/// which must exist.
pub(super) struct Place {
    /// The target with its final symbolic links followed (and `.` or `..` the folder they name).
    pub target: PathBuf,
    /// Its file name.
    pub name: String,
    /// Its folder.
    pub parent: PathBuf,
}

impl Place {
    /// Where `given` (a path without a trailing separator) goes.
    pub(super) fn of(given: &Path) -> Result<Place> {
        let mut target = follow_links(given);
        if target.file_name().is_none() {
            // `.` or `..`: the folder they name.
            target = fs::canonicalize(&target).unwrap_or(target);
        }
        let name = match target.file_name() {
            Some(n) => n.to_string_lossy().into_owned(),
            None => return Err(Error::usage(format!("{} is not a file or folder name", given.display()), None)),
        };
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(Error::usage(
                format!("cannot write {}: the folder {} does not exist", given.display(), parent.display()),
                Some("create it first, or choose another output path"),
            ));
        }
        Ok(Place { target, name, parent })
    }
}

/// Whether an existing output (`meta`, at `given`) is written in place as a stream (a
/// character device, a pipe); refused when it is neither that nor a regular file or folder, or
/// a stream where the `policy` needs a folder. `what` names the output in messages.
pub(super) fn is_stream(given: &Path, meta: &fs::Metadata, policy: Policy, what: &str) -> Result<bool> {
    let folder = !matches!(policy, Policy::File { .. });
    match stream_kind(meta) {
        None => Err(Error::usage(
            format!("the {what} {} is {}", given.display(), file_kind(meta)),
            Some("write to a regular file, a folder, a pipe or a character device such as /dev/null"),
        )),
        Some(true) if folder => {
            let needs = match policy {
                Policy::Report => "a report",
                Policy::Site { .. } => "a web page",
                Policy::Truth { .. } => "a ground truth",
                _ => "a PNG sequence",
            };
            Err(Error::usage(
                format!("the {what} {} is {}, and {needs} is a folder", given.display(), file_kind(meta)),
                Some("name a folder"),
            ))
        }
        Some(stream) => Ok(stream),
    }
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
    foreign_entry_but(dir, ours, false)
}

/// [`foreign_entry`], where `pending` also allows a `pending/` folder of GIFs (a check's
/// report keeps would-be references there).
fn foreign_entry_but(dir: &Path, ours: fn(&str) -> bool, pending: bool) -> Option<String> {
    let entries = fs::read_dir(dir).ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type();
        let is_file = kind.as_ref().is_ok_and(fs::FileType::is_file);
        // A check's report keeps would-be references in `pending/`: GIFs, nothing else.
        let is_pending = pending
            && name == REPORT_PENDING
            && kind.is_ok_and(|t| t.is_dir())
            && foreign_entry(&entry.path(), |n| n.ends_with(".gif")).is_none();
        if !(is_pending || is_file && ours(&name)) {
            return Some(if pending && name == REPORT_PENDING {
                format!("{name}/ (with more than would-be references)")
            } else {
                name
            });
        }
    }
    None
}

/// The folder of a check's report that holds would-be references.
pub const REPORT_PENDING: &str = "pending";

/// Refuses to replace an existing regular file or folder that the policy does not allow.
pub(super) fn check_replace(given: &Path, target: &Path, meta: &fs::Metadata, policy: Policy) -> Result<()> {
    let exists = |what: &str| {
        Error::usage(
            format!("the output {what} {} already exists", given.display()),
            Some("pass --force (-f) to replace it"),
        )
    };
    match policy {
        Policy::File { .. } if meta.is_dir() => Err(Error::usage(
            format!("the output {} is a folder, not a file", given.display()),
            Some("name a file, or pass --format png to write a PNG sequence into the folder"),
        )),
        Policy::File { force: false } => Err(exists("file")),
        Policy::File { force: true } => Ok(()),
        Policy::Frames { force } if meta.is_dir() => match foreign_entry(target, is_frame_name) {
            _ if !non_empty_dir(target) => Ok(()),
            _ if !force => Err(exists("folder")),
            None => Ok(()),
            Some(entry) => Err(Error::usage(
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
        Policy::Part { .. } if !meta.is_dir() => Err(Error::usage(
            format!("the output {} is a file, and a PNG sequence is a folder", given.display()),
            Some("name a folder (ending in /) for the frames"),
        )),
        Policy::Part { .. } => match foreign_entry(target, is_frame_name) {
            None => Ok(()),
            Some(entry) => Err(Error::usage(
                format!(
                    "the folder {} holds {entry}, which is not a frame of a PNG sequence: the parts of a sequence \
                     go into a folder of frame_NNNN.png files only",
                    given.display()
                ),
                Some("choose a new or empty folder for the frames"),
            )),
        },
        Policy::Site { force } => whole_folder(given, target, meta, force, Written::SITE),
        Policy::Truth { force } => whole_folder(given, target, meta, force, Written::TRUTH),
        Policy::Report if !meta.is_dir() => Err(Error::usage(
            format!("the report folder {} is a file, not a folder", given.display()),
            Some("name a new or empty folder for the report, or the folder of an earlier report"),
        )),
        Policy::Report => match foreign_entry_but(target, is_report_name, true) {
            None => Ok(()),
            Some(entry) => Err(Error::usage(
                format!(
                    "the report folder {} holds {entry}, which is not part of a report: a report folder is replaced \
                     whole",
                    given.display()
                ),
                Some("name a new or empty folder for the report, or the folder of an earlier report"),
            )),
        },
    }
}

/// A folder ripple-render writes whole (a web page, a ground truth): what it is called and the
/// files that show it wrote one.
pub(super) struct Written {
    what: &'static str,
    marks: &'static [&'static str],
}

impl Written {
    const SITE: Written = Written { what: "a web page", marks: &["index.html", "ripple_water.wasm"] };
    const TRUTH: Written = Written { what: "a ground truth", marks: &["meta.json"] };
}

/// Whether a folder written whole may take the place of `target`: a new or empty folder, or
/// with `force` one that holds `written`'s marks (an earlier one, replaced whole).
fn whole_folder(given: &Path, target: &Path, meta: &fs::Metadata, force: bool, written: Written) -> Result<()> {
    let Written { what, marks } = written;
    if !meta.is_dir() {
        return Err(Error::usage(
            format!("the output {} is a file, and {what} is written into a folder", given.display()),
            Some("name a new or empty folder"),
        ));
    }
    if !non_empty_dir(target) {
        return Ok(());
    }
    let ours = marks.iter().all(|f| target.join(f).is_file());
    if ours && force {
        return Ok(());
    }
    if ours {
        return Err(Error::usage(
            format!("the output folder {} already exists", given.display()),
            Some("pass --force (-f) to replace it"),
        ));
    }
    Err(Error::usage(
        format!(
            "the folder {} is not {what} ripple-render wrote (it has no {}): {what} goes into a new or empty folder, \
             or with --force over an earlier one, replaced whole",
            given.display(),
            marks.join(" and ")
        ),
        Some("choose a new or empty folder"),
    ))
}

/// What an output is, and so what an existing one there may be replaced by, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// A file: an existing regular file with `force` (`--force`).
    File {
        /// Whether an existing file may be replaced.
        force: bool,
    },
    /// A PNG sequence: an empty folder, or with `force` a folder of frames.
    Frames {
        /// Whether a folder of frames may be replaced.
        force: bool,
    },
    /// A report (`diff --out`, `check --report`): an empty folder, or the folder of an earlier
    /// report.
    Report,
    /// A part of a PNG sequence (`--frames`): its files join a folder of frames (or a new
    /// one) beside the other parts'; one of its own names already there only with `force`.
    Part {
        /// Whether a frame already in the folder may be replaced.
        force: bool,
    },
    /// A web page's folder (`web`): an empty folder, or with `force` the folder of an earlier
    /// page (it holds its `index.html` and `ripple_water.wasm`), replaced whole.
    Site {
        /// Whether an earlier page's folder may be replaced.
        force: bool,
    },
    /// A ground truth's folder (`--ground-truth`): an empty folder, or with `force` an earlier
    /// one (it holds its `meta.json`), replaced whole.
    Truth {
        /// Whether an earlier ground truth's folder may be replaced.
        force: bool,
    },
}

impl Policy {
    /// The output of a render in `format`: a file, or a folder of frames.
    pub fn for_format(format: super::Format, force: bool) -> Policy {
        if format.is_folder() { Policy::Frames { force } } else { Policy::File { force } }
    }
}

/// The files a report is made of: an earlier report's folder holds nothing else. Its page
/// `index.html`, whose pictures are `sNN-fNNNN-SIDE.png` (SIDE `a`, `b` or `heat`), and a diff's
/// `report.json`, panels `frame_NNNN.png`, `contact.png` and `heat.gif`; a check's record `check.json`.
pub fn is_report_name(name: &str) -> bool {
    matches!(name, "index.html" | "report.json" | "check.json" | "contact.png" | "heat.gif")
        || is_frame_name(name)
        || is_picture_name(name)
}

/// Whether `name` is a report page's picture: `s` digits `-f` digits `-` (`a`|`b`|`heat`) `.png`.
fn is_picture_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('s').and_then(|r| r.strip_suffix(".png")) else { return false };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = rest.splitn(3, '-').collect();
    matches!(parts[..], [n, f, side] if digits(n) && f.strip_prefix('f').is_some_and(digits)
        && matches!(side, "a" | "b" | "heat"))
}
