//! `check`: the CI job in one call. Every scene is rendered in memory and compared with its
//! reference ([`mod@reference`]) frame by frame; `--bless` writes the references of scenes that
//! differ or have none. Scenes are checked on every core, each rendered exactly as a single
//! render makes it.

pub mod accept;
mod found;
pub mod reference;
pub mod shard;

pub use found::{Found, Leftover, Unreferenced, unreferenced};

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::base::error::{Error, Result};
use crate::base::pool::Ordered;
use crate::decode::frames::{FrameSource, Pixels};
use crate::diff::Options;
use crate::diff::page::{Entry, FrameFigure, Shot, Status, Stretch};
use crate::diff::scene::{Through, open as open_scene};
use crate::encode::gif::delay_cs;
use crate::encode::manifest::frame_hash;
use crate::output::{Policy, Staged};
use reference::{Recorder, Reference, preview_frames};

/// How one scene came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every frame is the same as its reference's.
    Same,
    /// Some frames differ: the first, and how many.
    Different {
        /// The first differing frame.
        first: u64,
        /// How many frames differ (frames on one side only included).
        frames: u64,
    },
    /// The reference file does not exist.
    Missing,
    /// The reference exists but cannot be used (damaged, not a reference, a Git LFS pointer):
    /// why, in words. Never blessed over: it may be the user's to restore.
    Unreadable {
        /// Why, with what to do.
        why: String,
    },
}

/// Which references `--bless` writes, as Playwright's `--update-snapshots` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bless {
    /// None: the check only compares.
    #[default]
    Never,
    /// Those of scenes without a reference.
    Missing,
    /// Those of scenes that differ or have none.
    Changed,
    /// Every scene's, the same ones rewritten too.
    All,
}

impl Bless {
    /// The levels `--bless=WHICH` names, fewest references first.
    pub const CHOSEN: [Bless; 3] = [Bless::Missing, Bless::Changed, Bless::All];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Bless::Never => "never",
            Bless::Missing => "missing",
            Bless::Changed => "changed",
            Bless::All => "all",
        }
    }

    /// Whether a scene that came out as `verdict` gets its reference written. A reference that
    /// cannot be used is never written over: it may be the user's to restore.
    fn writes(self, verdict: &Verdict) -> bool {
        match (self, verdict) {
            (Bless::Never, _) | (_, Verdict::Unreadable { .. }) => false,
            (Bless::All, _) => true,
            (Bless::Changed, Verdict::Different { .. }) | (Bless::Missing | Bless::Changed, Verdict::Missing) => true,
            _ => false,
        }
    }
}

/// What `--bless` did for a scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blessed {
    /// Wrote its first reference.
    New,
    /// Replaced a reference it differed from.
    Refreshed,
}

/// One scene's check.
pub struct Outcome {
    /// The scene, as given.
    pub scene: PathBuf,
    /// Its reference.
    pub reference: PathBuf,
    /// How it came out (before any blessing).
    pub verdict: Verdict,
    /// Frames in the render.
    pub frames: u64,
    /// Frames in the reference, if there is one.
    pub reference_frames: Option<u64>,
    /// Why frames differ, beyond their pixels (canvas, frame count, timing), if they do.
    pub notes: Vec<String>,
    /// Per frame: whether it differs, and its differing pixels in the reference's picture.
    pub figures: Vec<FrameFigure>,
    /// Pictures of the differing stretch (for a report).
    pub shots: Vec<Shot>,
    /// The pictures' size.
    pub picture_size: (u32, u32),
    /// What `--bless` did.
    pub blessed: Option<Blessed>,
    /// Seconds it took.
    pub seconds: f64,
    /// Drift: frames whose exact pixels differ from the reference's but pass `--tolerance`
    /// and `--max-pixels`, and the most differing pixels among them. Never called "same".
    pub drift: Option<Drift>,
    /// The would-be reference kept for a report, for a scene that differs or has none and was
    /// not blessed: `check --accept-from` writes it in place of the reference.
    pub pending: Option<Pending>,
}

/// A would-be reference kept in a report folder (`pending/NAME.gif`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// Where it is now: in the report folder being written, or a shard's being merged.
    pub path: PathBuf,
    /// The XXH3-64 of the reference it would replace, as the check read it (`None`: there was
    /// none), so that a reference changed since is never written over unseen.
    pub replaces: Option<u64>,
}

/// The folder of a report that holds the would-be references.
pub use crate::output::REPORT_PENDING as PENDING;

/// Frames that differ within the options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Drift {
    /// How many frames.
    pub frames: u64,
    /// The most differing pixels (beyond the tolerance) in one of them.
    pub most_pixels: u64,
}

impl Outcome {
    /// Whether the job should fail for this scene (before blessing).
    pub fn failed(&self) -> bool {
        self.verdict != Verdict::Same
    }

    /// The verdict in a line.
    pub fn line(&self) -> String {
        match &self.verdict {
            Verdict::Same => match self.drift {
                Some(d) => format!(
                    "same within the options, {} frames; {} drift (exact pixels differ, at most {} beyond the tolerance)",
                    self.frames,
                    if d.frames == 1 { "1 frame".to_string() } else { format!("{} frames", d.frames) },
                    d.most_pixels
                ),
                None => format!("same, {} frames", self.frames),
            },
            Verdict::Missing => format!("no reference {}", self.reference.display()),
            Verdict::Unreadable { why } => format!("the reference {} cannot be used: {why}", self.reference.display()),
            Verdict::Different { first, frames } => {
                let total = self.frames.max(self.reference_frames.unwrap_or(0));
                let mut line = format!("{frames} of {total} frames differ, the first is frame {first}");
                for note in &self.notes {
                    line += &format!("; {note}");
                }
                line
            }
        }
    }

    /// The page's entry for this scene.
    pub fn entry(&mut self) -> Entry {
        let status = match self.verdict {
            Verdict::Same => Status::Same,
            Verdict::Different { .. } => Status::Different,
            Verdict::Missing => Status::Missing,
            Verdict::Unreadable { .. } => Status::Unreadable,
        };
        Entry {
            name: self.scene.display().to_string(),
            status,
            line: self.line(),
            labels: ("reference".into(), "new".into()),
            size: self.picture_size,
            frames: self.figures.clone(),
            shots: std::mem::take(&mut self.shots),
            accept: None,
        }
    }
}

/// What a check does besides comparing.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// How strict the comparison is.
    pub options: Options,
    /// Which references to write.
    pub bless: Bless,
    /// Keep pictures of the differing stretch for a report.
    pub pictures: bool,
    /// Keep the would-be reference of every scene that differs or has none (and is not
    /// blessed) in this folder, as the reference's file name.
    pub pending: Option<PathBuf>,
    /// Once set, the check stops with [`Error::Interrupted`] before the next frame of any
    /// scene (a signal's flag).
    pub stop: Option<&'static std::sync::atomic::AtomicBool>,
}

/// The reference of `scene` in `refs`: the scene's file name with `.gif` for `.toml`.
pub fn reference_path(scene: &Path, refs: &Path) -> PathBuf {
    let stem = scene.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    refs.join(format!("{stem}.gif"))
}

/// Refuses two scenes that would share a reference (the same file name in two folders).
pub fn distinct_references(scenes: &[PathBuf], refs: &Path) -> Result<()> {
    let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
    for scene in scenes {
        let reference = reference_path(scene, refs);
        if let Some((_, other)) = seen.iter().find(|(r, _)| *r == reference) {
            return Err(Error::usage(
                format!(
                    "{} and {} would share the reference {}: a reference is named after its scene's file",
                    other.display(),
                    scene.display(),
                    reference.display()
                ),
                Some("rename one of the scenes, or check them with separate --refs folders"),
            ));
        }
        seen.push((reference, scene));
    }
    Ok(())
}

/// Checks every scene on `threads` threads, calling `done` with each outcome in the scenes'
/// order as soon as it and those before it are known. The first error (a scene or reference
/// that cannot be read, a reference that cannot be written) stops the check.
pub fn check_all(
    scenes: &[PathBuf],
    refs: &Path,
    plan: Plan,
    threads: usize,
    done: &mut dyn FnMut(Outcome) -> Result<()>,
) -> Result<()> {
    let refs = refs.to_path_buf();
    let threads = threads.clamp(1, scenes.len().max(1));
    let mut pool =
        Ordered::new(threads, move |scene: PathBuf| check_scene(&scene, &reference_path(&scene, &refs), &plan));
    for scene in scenes {
        pool.submit(scene.clone(), done)?;
    }
    pool.finish(done)
}

/// Checks one scene against `reference`, blessing it or keeping its would-be reference if the
/// plan says so.
pub fn check_scene(scene: &Path, reference_path: &Path, plan: &Plan) -> Result<Outcome> {
    let started = Instant::now();
    let (info, mut frames) = open_scene(scene, Through::Exact)?;
    let (width, height) = (info.width, info.height);
    let (mut against, mut unreadable) = match Against::open(reference_path, (width, height), plan) {
        Ok(against) => (against, None),
        Err(e) => (None, Some(unusable(reference_path, &e))),
    };
    let mut recorder: Option<Recorder> = None;
    let mut rendered = 0u64;
    while let Some(frame) = frames.next_frame()? {
        if plan.stop.is_some_and(|stop| stop.load(std::sync::atomic::Ordering::Relaxed)) {
            return Err(Error::Interrupted);
        }
        let Pixels::Rgb(rgb) = &frame.pixels else { continue };
        let rate = frame.delay.map_or(1, |d| d.den);
        if plan.bless != Bless::Never || plan.pending.is_some() {
            recorder.get_or_insert_with(|| Recorder::new(width, height, rate)).add(rgb);
        }
        if let Some(against) = &mut against
            && let Err(e) = against.compare(rendered, rgb, rate)
        {
            // The reference broke off part way: the scene is reported, the render goes on (it
            // may be blessed).
            unreadable = Some(unusable(reference_path, &e));
        }
        if unreadable.is_some() {
            against = None;
        }
        rendered += 1;
    }
    let compared = against.map(|a| a.finish(rendered));
    let verdict = match unreadable {
        Some(why) => Verdict::Unreadable { why },
        None => verdict_of(compared.as_ref().map(|c| c.figures.as_slice())),
    };
    let provenance = info.provenance.map(|p| p.to_text());
    let (recorder, kept) = match recorder {
        Some(r) if plan.bless.writes(&verdict) => (Some(r), None),
        // What `--bless` would have written, kept for `--accept-from`.
        Some(r) if Bless::Changed.writes(&verdict) => (None, Some(r)),
        _ => (None, None),
    };
    let blessed = bless(recorder, &verdict, scene, reference_path, provenance.clone())?;
    let pending = match (kept, &plan.pending) {
        (Some(recorder), Some(folder)) => {
            let path = folder.join(reference_path.file_name().unwrap_or_default());
            write_reference(recorder, scene, &path, provenance)?;
            // The reference it may later replace, as it is (this check wrote nothing there).
            let replaces = match verdict {
                Verdict::Missing => None,
                _ => crate::base::files::hash_regular(reference_path).ok(),
            };
            Some(Pending { path, replaces })
        }
        _ => None,
    };
    let compared = compared.unwrap_or_default();
    let verdict_is_same = verdict == Verdict::Same;
    Ok(Outcome {
        scene: scene.to_path_buf(),
        reference: reference_path.to_path_buf(),
        verdict,
        frames: rendered,
        reference_frames: compared.reference_frames,
        notes: compared.notes,
        figures: compared.figures,
        shots: compared.shots,
        picture_size: compared.picture_size,
        blessed,
        seconds: started.elapsed().as_secs_f64(),
        drift: Some(compared.drift).filter(|d| d.frames > 0 && verdict_is_same),
        pending,
    })
}

/// A reference read in step with a render of its scene: its hashes, and its picture (where the
/// canvas is the render's) to count differing pixels in and to take pictures of.
struct Against {
    reference: Reference,
    /// Whether the render's canvas is the reference's.
    same_canvas: bool,
    /// The reference's picture, frame by frame, when its pixels can be compared.
    pictures: Option<Box<dyn FrameSource>>,
    /// Pictures of the differing stretch, for a report.
    stretch: Option<Stretch>,
    options: Options,
    width: u32,
    /// A render's frame as the reference's picture shows it (scratch).
    shown: Vec<u8>,
    figures: Vec<FrameFigure>,
    notes: Vec<String>,
    timing_differs: bool,
    picture_size: (u32, u32),
    drift: Drift,
}

/// What comparing a render with its reference found.
#[derive(Default)]
struct Compared {
    figures: Vec<FrameFigure>,
    notes: Vec<String>,
    reference_frames: Option<u64>,
    shots: Vec<Shot>,
    picture_size: (u32, u32),
    drift: Drift,
}

impl Against {
    /// The reference at `path` to compare a render of `width`×`height` with; `None` when there
    /// is none.
    fn open(path: &Path, (width, height): (u32, u32), plan: &Plan) -> Result<Option<Against>> {
        let reference = match std::fs::metadata(path) {
            // A pipe or device is never opened: it could hold the check forever.
            Ok(meta) if !meta.is_file() => {
                return Err(Error::input(path, format!("it is {}", crate::base::files::file_kind(&meta))));
            }
            Ok(_) => Reference::read(path)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        let (theirs_w, theirs_h) = (reference.manifest.width, reference.manifest.height);
        let same_canvas = (theirs_w, theirs_h) == (width, height);
        let mut notes = Vec::new();
        if !same_canvas {
            notes.push(format!("the canvas is {width}×{height}, the reference's {theirs_w}×{theirs_h}"));
        }
        // The reference's picture, read in step with the render when its pixels are wanted.
        let pictures = if same_canvas { Some(preview_frames(path)?) } else { None };
        let picture_size = (width.div_ceil(reference.scale), height.div_ceil(reference.scale));
        let stretch = plan.pictures.then(|| Stretch::new(picture_size, plan.options.tolerance));
        Ok(Some(Against {
            reference,
            same_canvas,
            pictures,
            stretch,
            options: plan.options,
            width,
            shown: Vec::new(),
            figures: Vec::new(),
            notes,
            timing_differs: false,
            picture_size,
            drift: Drift::default(),
        }))
    }

    /// Compares the render's frame `index` (its exact RGB bytes, at `rate` frames a second).
    fn compare(&mut self, index: u64, rgb: &[u8], rate: u32) -> Result<()> {
        let theirs = self.reference.manifest.frames.get(index as usize).copied();
        let picture = match &mut self.pictures {
            Some(source) => next_picture(source.as_mut())?,
            None => None,
        };
        let hash_same = theirs.is_some_and(|(hash, _)| hash == frame_hash(rgb));
        let delay_same = theirs.is_some_and(|(_, cs)| cs == delay_cs(index, rate));
        self.timing_differs |= theirs.is_some() && !delay_same;
        let mut differs = !(hash_same && delay_same && self.same_canvas);
        let mut pixels = None;
        if let Some(old) = picture.filter(|_| !hash_same || self.stretch.is_some()) {
            self.reference.show(rgb, self.width, &mut self.shown);
            let counted = count_differing(&old, &self.shown, self.options.tolerance);
            pixels = Some(counted);
            // Within the options on the reference's picture: a differing hash passes when the
            // options allow any difference at all, as `diff` lets a frame pass.
            let lenient = self.options.tolerance > 0 || self.options.max_pixels > 0;
            if !hash_same && lenient && delay_same && counted <= self.options.max_pixels {
                differs = false;
                self.drift.frames += 1;
                self.drift.most_pixels = self.drift.most_pixels.max(counted);
            }
            if let Some(s) = &mut self.stretch {
                s.observe(index, differs, &old, &self.shown)?;
            }
        }
        self.figures.push(FrameFigure { differs, pixels: if differs { pixels } else { Some(0) } });
        Ok(())
    }

    /// What was found, after a render of `rendered` frames: frames only the reference has
    /// count as differing.
    fn finish(mut self, rendered: u64) -> Compared {
        let theirs = self.reference.manifest.frames.len() as u64;
        if theirs != rendered {
            self.notes.push(format!("the render has {rendered} frames, the reference {theirs}"));
            for _ in rendered..theirs {
                self.figures.push(FrameFigure { differs: true, pixels: None });
            }
        }
        if self.timing_differs {
            self.notes.push("frame delays differ".into());
        }
        Compared {
            figures: self.figures,
            notes: self.notes,
            reference_frames: Some(theirs),
            shots: self.stretch.map(Stretch::finish).unwrap_or_default(),
            picture_size: self.picture_size,
            drift: self.drift,
        }
    }
}

/// The verdict on a scene whose frames compared as `figures` with its reference (`None`: it
/// has none).
fn verdict_of(figures: Option<&[FrameFigure]>) -> Verdict {
    let Some(figures) = figures else { return Verdict::Missing };
    match figures.iter().position(|f| f.differs) {
        None => Verdict::Same,
        Some(first) => {
            let frames = figures.iter().filter(|f| f.differs).count() as u64;
            Verdict::Different { first: first as u64, frames }
        }
    }
}

/// Writes the reference `recorder` holds (a blessing check's render of `scene`) where the
/// `verdict` says it is wanted: a new one, or one in place of a reference that differs.
fn bless(
    recorder: Option<Recorder>,
    verdict: &Verdict,
    scene: &Path,
    path: &Path,
    provenance: Option<String>,
) -> Result<Option<Blessed>> {
    match (verdict, recorder) {
        (_, None) => Ok(None),
        (verdict, Some(recorder)) => {
            write_reference(recorder, scene, path, provenance)?;
            Ok(Some(if *verdict == Verdict::Missing { Blessed::New } else { Blessed::Refreshed }))
        }
    }
}

/// Puts the would-be references of `outcomes` into `folder` (a report's `pending/` being
/// written), copying those that lie elsewhere (in a shard's report being merged), each read
/// whole within the size a reference of its frames can have.
pub fn keep_pending(outcomes: &mut [Outcome], folder: &Path) -> Result<()> {
    for outcome in outcomes {
        let Some(pending) = &mut outcome.pending else { continue };
        if pending.path.parent() == Some(folder) {
            continue;
        }
        let name = pending.path.file_name().unwrap_or_default();
        let to = folder.join(name);
        // A picture of at most PREVIEW_SIDE² pixels a frame, LZW at most 12 bits a pixel, and
        // the manifest's line a frame.
        let side = u64::from(reference::PREVIEW_SIDE);
        let limit =
            outcome.frames.max(outcome.reference_frames.unwrap_or(0)) * (side * side * 3 / 2 + 1024) + (1 << 20);
        let bytes = crate::base::files::read_regular_within(&pending.path, limit).map_err(|e| {
            Error::input(&pending.path, format!("cannot be read: {}", crate::base::error::os_reason(&e)))
        })?;
        std::fs::create_dir_all(folder).map_err(|e| Error::io(folder, e))?;
        std::fs::write(&to, bytes).map_err(|e| Error::io(&to, e))?;
        pending.path = to;
    }
    Ok(())
}

/// Why the reference at `path` cannot be used, from the error reading it gave, and what to do:
/// a Git LFS pointer (the repository was cloned without `git lfs pull`) is named as one.
fn unusable(path: &Path, e: &Error) -> String {
    let mut head = [0u8; 64];
    // Opened without waiting: a pipe or device under a reference's name is never read.
    let read = crate::base::files::open_regular(path)
        .and_then(|(mut f, _)| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    if head[..read].starts_with(b"version https://git-lfs.github.com/spec/") {
        return "it is a Git LFS pointer, not the picture: run `git lfs pull` (or check out with LFS)".into();
    }
    let text = e.to_string();
    let shown = path.display().to_string();
    let why = text.strip_prefix(&shown).map_or(text.as_str(), |t| t.trim_start_matches([':', ' ']));
    format!("{why} (restore it, or delete it and write it again with --bless)")
}

/// The next frame of a reference's picture, in RGB.
fn next_picture(source: &mut dyn FrameSource) -> Result<Option<Vec<u8>>> {
    Ok(match source.next_frame()? {
        Some(frame) => match frame.pixels {
            Pixels::Rgb(rgb) => Some(rgb),
            _ => None,
        },
        None => None,
    })
}

/// Pixels of `a` and `b` (RGB bytes) whose largest channel difference exceeds `tolerance`.
fn count_differing(a: &[u8], b: &[u8], tolerance: u8) -> u64 {
    if a.len() != b.len() {
        return (a.len().max(b.len()) / 3) as u64;
    }
    crate::diff::compare_pixels(a, b, tolerance).differing
}

/// Writes a new reference beside its place and renames it there, so a reference is whole or
/// absent; its folder is made if need be.
fn write_reference(recorder: Recorder, scene: &Path, path: &Path, provenance: Option<String>) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let staged = Staged::begin(path, Policy::File { force: true }, &[scene])?;
    let mut file = std::io::BufWriter::new(staged.file()?);
    recorder.write(&mut file, &provenance.unwrap_or_default()).map_err(|e| staged.claim(e))?;
    std::io::Write::flush(&mut file).map_err(|e| staged.claim(Error::io(staged.path(), e)))?;
    drop(file);
    staged.commit()
}
