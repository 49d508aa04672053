//! `check`: the CI job in one call. Every scene is rendered in memory and compared with its
//! reference ([`mod@reference`]) frame by frame; `--bless` writes the references of scenes that
//! differ or have none. Scenes are checked on every core, each rendered exactly as a single
//! render makes it.

pub mod reference;
pub mod shard;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::base::error::{Error, Result};
use crate::diff::Options;
use crate::diff::frames::{FrameSource, Pixels};
use crate::diff::page::{Entry, Shot, Status, Stretch};
use crate::diff::scene::{Through, open as open_scene};
use crate::encode::gif::delay_cs;
use crate::encode::manifest::frame_hash;
use crate::output::Staged;
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
    pub figures: Vec<(bool, Option<u64>)>,
    /// Pictures of the differing stretch (for a report).
    pub shots: Vec<Shot>,
    /// The pictures' size.
    pub picture_size: (u32, u32),
    /// What `--bless` did.
    pub blessed: Option<Blessed>,
    /// Seconds it took.
    pub seconds: f64,
}

impl Outcome {
    /// Whether the job should fail for this scene (before blessing).
    pub fn failed(&self) -> bool {
        self.verdict != Verdict::Same
    }

    /// The verdict in a line.
    pub fn line(&self) -> String {
        match &self.verdict {
            Verdict::Same => format!("same, {} frames", self.frames),
            Verdict::Missing => format!("no reference {}", self.reference.display()),
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
        };
        Entry {
            name: self.scene.display().to_string(),
            status,
            line: self.line(),
            labels: ("reference".into(), "new".into()),
            size: self.picture_size,
            frames: self.figures.clone(),
            shots: std::mem::take(&mut self.shots),
        }
    }
}

/// What a check does besides comparing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan {
    /// How strict the comparison is.
    pub options: Options,
    /// Write the references of scenes that differ or have none.
    pub bless: bool,
    /// Keep pictures of the differing stretch for a report.
    pub pictures: bool,
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
            return Err(Error::Output {
                message: format!(
                    "{} and {} would share the reference {}: a reference is named after its scene's file",
                    other.display(),
                    scene.display(),
                    reference.display()
                ),
                hint: Some("rename one of the scenes, or check them with separate --refs folders".into()),
            });
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
    done: &mut (dyn FnMut(Outcome) -> Result<()> + Send),
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let results: Mutex<(Vec<Option<Result<Outcome>>>, usize)> =
        Mutex::new((std::iter::repeat_with(|| None).take(scenes.len()).collect(), 0));
    let done = Mutex::new(done);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let outcome: Mutex<Result<()>> = Mutex::new(Ok(()));
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, scenes.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= scenes.len() || failed.load(Ordering::SeqCst) {
                        return;
                    }
                    let result = check_scene(&scenes[i], &reference_path(&scenes[i], refs), plan);
                    let mut guard = results.lock().unwrap_or_else(|e| e.into_inner());
                    guard.0[i] = Some(result);
                    // Hand over, in order, every outcome now known.
                    while guard.1 < scenes.len() {
                        let at = guard.1;
                        let Some(result) = guard.0[at].take() else { break };
                        guard.1 += 1;
                        let step = result.and_then(|o| (done.lock().unwrap_or_else(|e| e.into_inner()))(o));
                        if let Err(e) = step {
                            failed.store(true, Ordering::SeqCst);
                            let mut first = outcome.lock().unwrap_or_else(|e| e.into_inner());
                            if first.is_ok() {
                                *first = Err(e);
                            }
                            return;
                        }
                    }
                }
            });
        }
    });
    outcome.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Checks one scene against `reference`, blessing it if the plan says so.
pub fn check_scene(scene: &Path, reference_path: &Path, plan: Plan) -> Result<Outcome> {
    let started = Instant::now();
    let (info, mut frames) = open_scene(scene, Through::Exact)?;
    let (width, height) = (info.width, info.height);
    let mut reference = match std::fs::metadata(reference_path) {
        Ok(_) => Some(Reference::read(reference_path)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(reference_path, e)),
    };
    let same_canvas = reference.as_ref().is_none_or(|r| (r.manifest.width, r.manifest.height) == (width, height));
    let mut notes = Vec::new();
    if let Some(r) = &reference
        && !same_canvas
    {
        notes.push(format!(
            "the canvas is {width}×{height}, the reference's {}×{}",
            r.manifest.width, r.manifest.height
        ));
    }
    // The reference's picture, read in step with the render when its pixels are wanted.
    let mut pictures = match &reference {
        Some(_) if same_canvas => Some(preview_frames(reference_path)?),
        _ => None,
    };
    let picture_size = reference.as_ref().map_or((0, 0), |r| (width.div_ceil(r.scale), height.div_ceil(r.scale)));
    let mut stretch = plan.pictures.then(|| Stretch::new(picture_size, plan.options.tolerance));
    let mut recorder: Option<Recorder> = None;
    let (mut figures, mut shown, mut fps) = (Vec::new(), Vec::new(), None);
    let (mut timing_differs, mut index) = (false, 0u64);
    while let Some(frame) = frames.next_frame()? {
        let Pixels::Rgb(rgb) = &frame.pixels else { continue };
        let rate = frame.delay.map_or(1, |d| d.den);
        fps.get_or_insert(rate);
        if plan.bless {
            recorder.get_or_insert_with(|| Recorder::new(width, height, rate)).add(rgb);
        }
        let Some(r) = &mut reference else {
            index += 1;
            continue;
        };
        let theirs = r.manifest.frames.get(index as usize).copied();
        let picture = match &mut pictures {
            Some(source) => next_picture(source.as_mut())?,
            None => None,
        };
        let hash_same = theirs.is_some_and(|(hash, _)| hash == frame_hash(rgb));
        let delay_same = theirs.is_some_and(|(_, cs)| cs == delay_cs(index, rate));
        timing_differs |= theirs.is_some() && !delay_same;
        let mut differs = !(hash_same && delay_same && same_canvas);
        let mut pixels = None;
        if let Some(old) = picture.filter(|_| !hash_same || stretch.is_some()) {
            r.show(rgb, width, &mut shown);
            let counted = count_differing(&old, &shown, plan.options.tolerance);
            pixels = Some(counted);
            // Within the options on the reference's picture: a differing hash passes when the
            // options allow any difference at all, as `diff` lets a frame pass.
            let lenient = plan.options.tolerance > 0 || plan.options.max_pixels > 0;
            if !hash_same && lenient && delay_same && counted <= plan.options.max_pixels {
                differs = false;
            }
            if let Some(s) = &mut stretch {
                s.observe(index, differs, &old, &shown)?;
            }
        }
        figures.push((differs, if differs { pixels } else { Some(0) }));
        index += 1;
    }
    let rendered = index;
    let reference_frames = reference.as_ref().map(|r| r.manifest.frames.len() as u64);
    if let Some(theirs) = reference_frames {
        if theirs != rendered {
            notes.push(format!("the render has {rendered} frames, the reference {theirs}"));
            for _ in rendered..theirs {
                figures.push((true, None));
            }
        }
        if timing_differs {
            notes.push("frame delays differ".into());
        }
    }
    let verdict = match &reference {
        None => Verdict::Missing,
        Some(_) => match figures.iter().position(|f| f.0) {
            None => Verdict::Same,
            Some(first) => {
                let frames = figures.iter().filter(|f| f.0).count() as u64;
                Verdict::Different { first: first as u64, frames }
            }
        },
    };
    let blessed = match (&verdict, recorder) {
        (Verdict::Same, _) | (_, None) => None,
        (verdict, Some(recorder)) => {
            write_reference(recorder, scene, reference_path, info.provenance.map(|p| p.to_text()))?;
            Some(if *verdict == Verdict::Missing { Blessed::New } else { Blessed::Refreshed })
        }
    };
    Ok(Outcome {
        scene: scene.to_path_buf(),
        reference: reference_path.to_path_buf(),
        verdict,
        frames: rendered,
        reference_frames,
        notes,
        figures,
        shots: stretch.map(Stretch::finish).unwrap_or_default(),
        picture_size,
        blessed,
        seconds: started.elapsed().as_secs_f64(),
    })
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
    crate::diff::compare_pixels(a, b, tolerance).0
}

/// Writes a new reference beside its place and renames it there, so a reference is whole or
/// absent; its folder is made if need be.
fn write_reference(recorder: Recorder, scene: &Path, path: &Path, provenance: Option<String>) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let staged = Staged::begin(path, false, true, &[scene])?;
    let mut file = std::io::BufWriter::new(staged.file()?);
    recorder.write(&mut file, &provenance.unwrap_or_default()).map_err(|e| staged.claim(e))?;
    std::io::Write::flush(&mut file).map_err(|e| staged.claim(Error::io(staged.path(), e)))?;
    drop(file);
    staged.commit()
}
