//! `ripple-render SCENE -o OUT [--hashes FILE]`: the render, its progress bar and summary line.

use std::io::{BufWriter, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use serde::Serialize;

use ripple_render::base::json;
use ripple_render::base::picture::ImageHeader;
use ripple_render::base::pool::Pool;
use ripple_render::base::units;
use ripple_render::draw::background::image_header_within;
use ripple_render::encode::Effort;
use ripple_render::encode::manifest::{self, Sink};
use ripple_render::encode::png::frame_name;
use ripple_render::inspect::advice;
use ripple_render::output::{self, Format, Named, Policy, Staged};
use ripple_render::render::budget::{Estimate, read_scene};
use ripple_render::render::checkpoints::Checkpoints;
use ripple_render::render::formats::{self, Output, Written, stream_of};
use ripple_render::render::{Inputs, Progress, Run};
use ripple_render::truth::{self, Truth};
use ripple_render::{Error, Scene};

use super::say::{hint, tell, warn};

/// What to render, from the command line.
pub struct Request<'a> {
    pub scene: &'a Path,
    pub output: Option<&'a Path>,
    pub format: Option<Named>,
    /// `--frame N`: the output frame of a still.
    pub frame: Option<u64>,
    /// `--frames A..B`: a part of the render.
    pub frames: Option<Span>,
    /// `--checkpoints DIR`.
    pub checkpoints: Option<&'a Path>,
    /// `--checkpoint-every K`.
    pub checkpoint_every: Option<u64>,
    pub hashes: Option<&'a Path>,
    /// `--ground-truth DIR` and what it holds.
    pub ground_truth: Option<(&'a Path, Truth)>,
    pub force: bool,
    pub quiet: bool,
    pub threads: usize,
    pub stats: bool,
    pub max_memory: u64,
    pub indexed_png: bool,
    pub overrides: &'a [String],
    pub dither: bool,
    /// `--max-size`: the most bytes a GIF, APNG or WebP may have.
    pub max_size: Option<u64>,
    /// `--effort`: how hard the encoder works for a smaller file.
    pub effort: Effort,
    /// `--quality`: a lossy WebP's quality.
    pub quality: Option<u8>,
    /// `--lossy`: a lossy GIF's level.
    pub lossy: Option<u8>,
}

/// `--frames` as given: `A..B` with either end open (the first frame, the end), or `K/N`, the
/// K-th of N chunks of as near equal length as whole frames allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    Range { start: Option<u64>, end: Option<u64> },
    Chunk { index: u64, count: u64 },
}

impl Span {
    /// The output frames meant, in a render of `frames`: chunk K of N is frames
    /// `⌊(K−1)·F/N⌋ .. ⌊K·F/N⌋`, so the N chunks cover every frame once.
    fn within(self, frames: u64) -> std::ops::Range<u64> {
        match self {
            Span::Range { start, end } => start.unwrap_or(0)..end.unwrap_or(frames),
            Span::Chunk { index, count } => {
                let at = |k: u64| (u128::from(k) * u128::from(frames) / u128::from(count)) as u64;
                at(index - 1)..at(index)
            }
        }
    }

    /// Whether it starts after frame 0 (and so may start from a checkpoint).
    fn starts_late(self) -> bool {
        match self {
            Span::Range { start, .. } => start.unwrap_or(0) > 0,
            Span::Chunk { index, .. } => index > 1,
        }
    }
}

/// A request resolved: the scene read, the format known and possible, the inputs within the
/// memory budget, and the outputs staged.
struct Job {
    scene: Scene,
    format: Option<Format>,
    /// The ffmpeg program, for a video.
    ffmpeg: Option<PathBuf>,
    inputs: Inputs,
    output: Option<Staged>,
    hashes: Option<Staged>,
    /// `--ground-truth`'s folder, and what goes in it.
    truth: Option<(Staged, Truth)>,
    /// The scene's text, for the ground truth's `meta.json` (with the overrides after it).
    text: String,
    /// `--frames`, resolved.
    frames: Option<std::ops::Range<u64>>,
    checkpoints: Option<Checkpoints>,
}

pub fn run(request: &Request<'_>) -> Result<(), Error> {
    let started = Instant::now();
    let mut job = resolve(request)?;
    let written = if job.renders() {
        let bar = progress_bar(&job.scene, request.quiet);
        let rendered = render(&job, request, &bar);
        bar.finish_and_clear();
        let written = rendered.map_err(|e| job.retarget(e))?;
        written.notes.iter().chain(&written.stats.resumed.passed_over).for_each(|note| warn(note));
        Some(written)
    } else {
        None
    };
    if let Some((staged, truth)) = &job.truth {
        let stop = &super::signals::STOP;
        truth::write(&job.scene, &job.text, &job.inputs, staged.path(), *truth, request.threads, stop)
            .map_err(|e| staged.claim(e))?;
    }
    let started_commit = Instant::now();
    let files = job.commit()?;
    if !request.quiet && written.is_none() {
        let seconds = started.elapsed().as_secs_f64();
        let scene = &job.scene;
        tell(&format!(
            "wrote {}: the ground truth of {} frames, {}×{}, in {seconds:.2} s",
            files.join(" and "),
            scene.frames,
            scene.width,
            scene.height
        ));
    }
    let Some(written) = written else { return Ok(()) };
    if request.stats {
        tell(&stats_line(&written, started_commit, started, request.threads));
    }
    if !request.quiet {
        tell(&summary(&job, request, &written, &files, started));
    }
    // Suggestions last, after what was made (none with --quiet).
    if !request.quiet {
        advice::hints(&job.scene).iter().for_each(|h| hint(h));
    }
    Ok(())
}

/// Reads the scene and checks everything the render needs before anything large is allocated:
/// the output's format, what it can make of the scene, the paths, the memory estimate; then
/// decodes the inputs and stages the outputs.
fn resolve(request: &Request<'_>) -> Result<Job, Error> {
    let scene = read_scene(request.scene, request.overrides, request.max_memory)?;
    let (format, frames) = refuse_request(request, &scene)?;
    let asked = formats::Asked {
        frame: request.frame,
        max_size: request.max_size,
        hashes: request.hashes.is_some(),
        frames: frames.clone(),
        quality: request.quality,
        lossy: request.lossy,
    };
    let ffmpeg = formats::check(&scene, format, &asked)?;
    // Standard output is written in place, as a stream.
    let stdout = request.output.is_some_and(output::is_stdout);
    let output_path = request.output.map(|o| if stdout { Path::new(output::STDOUT) } else { o });
    let mut inputs = vec![request.scene];
    inputs.extend(scene.input_files().into_iter().skip(1));
    // Nothing large is allocated before the estimate is within the budget.
    let image = image_header_within(&scene, request.max_memory)?;
    check_paths(request, output_path.zip(format), &inputs)?;
    within_budget(request, &scene, image.as_ref(), format)?;
    let decoded = Inputs::for_scene_within(&scene, request.max_memory)?;
    let output = stage(request, &scene, output_path.zip(format), frames.as_ref(), &inputs)?;
    let hashes =
        request.hashes.map(|h| Staged::begin(h, Policy::File { force: request.force }, &inputs)).transpose()?;
    let truth = match request.ground_truth {
        Some((dir, truth)) => Some((Staged::begin(dir, Policy::Truth { force: request.force }, &inputs)?, truth)),
        None => None,
    };
    warn_of(request, &scene, &decoded, image.as_ref(), format);
    let checkpoints = match request.checkpoints {
        Some(dir) => Some(checkpoints(dir, request, &decoded)?),
        None => None,
    };
    let text = match truth {
        Some(_) => scene_text(request)?,
        None => String::new(),
    };
    Ok(Job { scene, format, ffmpeg, inputs: decoded, output, hashes, truth, text, frames, checkpoints })
}

/// The scene's text as `meta.json` records it: the file, then each `--set` on a line of its own
/// after a comment that says so (the text the scene was read from, overrides applied last).
fn scene_text(request: &Request<'_>) -> Result<String, Error> {
    Ok(ripple_render::truth::recorded_text(Scene::read_text(request.scene)?, request.overrides))
}

/// Refuses what the request itself makes impossible (options of an output without one, an
/// animation to a terminal, an empty chunk); the output's format and the frames meant.
fn refuse_request(
    request: &Request<'_>,
    scene: &Scene,
) -> Result<(Option<Format>, Option<std::ops::Range<u64>>), Error> {
    if request.output.is_none() && (request.frame.is_some() || request.format.is_some()) {
        return Err(Error::usage(
            "--frame and --format describe the output, and there is no -o",
            Some("pass -o OUT, or drop them to write only the manifest"),
        ));
    }
    let format = request.output.map(|o| output::resolve(o, request.format, request.frame.is_some())).transpose()?;
    if request.output.is_some_and(output::is_stdout) && std::io::stdout().is_terminal() {
        return Err(Error::usage(
            "-o - writes to standard output, which is a terminal and cannot show an animation",
            Some("pipe it into another program, or redirect it into a file (> out.gif)"),
        ));
    }
    if request.ground_truth.is_some() && request.frames.is_some() {
        return Err(Error::usage(
            "--ground-truth covers every frame of the scene, and --frames renders a part of it",
            Some("write the ground truth in a run of its own, without --frames"),
        ));
    }
    let frames = request.frames.map(|span| span.within(scene.frames));
    if let (Some(Span::Chunk { index, count }), Some(range)) = (request.frames, &frames)
        && range.is_empty()
    {
        return Err(Error::usage(
            format!(
                "--frames {index}/{count} is empty: the render has {} output frames, fewer than {count} chunks",
                scene.frames
            ),
            Some(&format!("split it into at most {} chunks", scene.frames)),
        ));
    }
    Ok((format, frames))
}

/// Refuses outputs that would land on one file, or on an input, before any work (after the
/// inputs themselves are checked, so a broken input is named as such); warns of a folder
/// named as a file.
fn check_paths(request: &Request<'_>, output: Option<(&Path, Format)>, inputs: &[&Path]) -> Result<(), Error> {
    let mut outputs = Vec::new();
    if let Some((path, format)) = output {
        outputs.push((path, format.is_folder(), "output"));
        if let Some(named) = output::folder_named_as_file(path, format) {
            let why = if path.is_dir() { "an existing folder" } else { "a folder (it ends in /)" };
            warn(&format!(
                "{} is {why}, so the frames are written into it as a PNG sequence, although its name says {named}",
                path.display()
            ));
        }
    }
    outputs.extend(request.hashes.map(|h| (h, false, "manifest")));
    outputs.extend(request.ground_truth.map(|(dir, _)| (dir, true, "ground truth")));
    output::check_distinct(&outputs, inputs)
}

/// Whether the render measures the seam: only when it is shown (not with `--quiet`, unless
/// `--stats`), and only for a whole animation.
fn measures_seam(request: &Request<'_>, format: Option<Format>) -> bool {
    (request.stats || !request.quiet) && format != Some(Format::Still) && request.frames.is_none()
}

/// Refuses a render whose memory estimate passes `--max-memory`.
fn within_budget(
    request: &Request<'_>,
    scene: &Scene,
    image: Option<&ImageHeader>,
    format: Option<Format>,
) -> Result<(), Error> {
    let mut estimate = Estimate::for_render(scene, image, (format, request.effort), request.threads);
    if !measures_seam(request, format) {
        estimate = estimate.without_seam();
    }
    if request.hashes.is_none() {
        estimate = estimate.without_manifest();
    }
    if request.ground_truth.is_some() {
        estimate = estimate.beside("ground truth", truth::bytes_for(scene));
    }
    // A rung's file is held in memory up to the size budget.
    let estimate = match request.max_size {
        Some(limit) => estimate.holding_file(limit),
        None => estimate,
    };
    estimate.check(request.max_memory)
}

/// Stages the output (standard output in place; a part of a PNG sequence beside the other
/// parts' frames), refusing a sealed part to a stream.
fn stage(
    request: &Request<'_>,
    scene: &Scene,
    output: Option<(&Path, Format)>,
    frames: Option<&std::ops::Range<u64>>,
    inputs: &[&Path],
) -> Result<Option<Staged>, Error> {
    let Some((path, format)) = output else { return Ok(None) };
    let staged = if request.output.is_some_and(output::is_stdout) {
        Staged::stdout()?
    } else if let (Format::PngSequence, Some(part)) = (format, frames) {
        let names: Vec<String> = part.clone().map(|i| frame_name(i, scene.frames)).collect();
        Staged::begin_part(path, &names, request.force, inputs)?
    } else {
        Staged::begin(path, Policy::for_format(format, request.force), inputs)?
    };
    if frames.is_some() && staged.is_stream() && format.container().is_some() {
        return Err(Error::usage(
            format!("a part (--frames) cannot be written to {}, a stream", staged.target().display()),
            Some("a part ends in a seal written when it is finished, which needs a file: write it to a file and join"),
        ));
    }
    Ok(Some(staged))
}

/// Warns of what the scene, its inputs or the options do that the user may not mean; only for
/// a render that goes ahead (a refused one gets its one error alone).
fn warn_of(
    request: &Request<'_>,
    scene: &Scene,
    decoded: &Inputs,
    image: Option<&ImageHeader>,
    format: Option<Format>,
) {
    let warnings =
        advice::for_scene(scene).into_iter().chain(advice::for_background(scene, &decoded.background, image));
    warnings.chain(advice::for_shore(scene, &decoded.shore)).for_each(|w| warn(&w));
    if let Some(why) = request.dither.then(|| dither_ignored(scene, format)).flatten() {
        warn(&format!("--dither is ignored: {why}"));
    }
}

/// The checkpoints in `dir`: made if they are to be written, and a warning when they would not
/// be used at all.
fn checkpoints(dir: &Path, request: &Request<'_>, inputs: &Inputs) -> Result<Checkpoints, Error> {
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::usage(
            format!("--checkpoints {} is a file, not a folder", dir.display()),
            Some("name a folder for the checkpoints (it is made if need be)"),
        ));
    }
    let checkpoints = Checkpoints::new(dir, request.checkpoint_every, inputs);
    if request.checkpoint_every.is_some() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        checkpoints.sweep();
    } else if !request.frames.is_some_and(Span::starts_late) {
        warn(&format!(
            "--checkpoints {} is read only by a part that starts after frame 0 (--frames A..B), and written only \
             with --checkpoint-every",
            dir.display()
        ));
    }
    Ok(checkpoints)
}

/// Why `--dither` does nothing for `scene` written as `format`, if it does nothing: it dithers
/// a GIF's background once, and frames that draw new colours (a look) or another format have
/// no such background.
fn dither_ignored(scene: &Scene, format: Option<Format>) -> Option<&'static str> {
    if format != Some(Format::Gif) {
        return Some("it dithers a GIF's background, and the output is not a GIF");
    }
    (!scene.look.is_gather()).then_some(
        "the scene's [look] draws new colours every frame, each mapped to its nearest palette colour (a dither \
         of each frame would shimmer where the water is still)",
    )
}

/// Renders the job into its staged output and/or manifest, showing progress on `bar`.
fn render(job: &Job, request: &Request<'_>, bar: &ProgressBar) -> Result<Written, Error> {
    let scene = &job.scene;
    let mut writer = match &job.hashes {
        Some(staged) => {
            let stream = stream_of(scene, &job.inputs);
            Some(manifest::Writer::new(BufWriter::new(staged.file()?), staged.target(), &stream)?)
        }
        None => None,
    };
    // The seam costs a pass over the heights a frame: measured only when it is shown (and not
    // for a still, which stops at its frame).
    let seam = measures_seam(request, job.format);
    let manifest = writer.as_mut().map(|w| w as &mut dyn Sink);
    let checkpoints = job.checkpoints.as_ref();
    let stop = &super::signals::STOP;
    let pool = Pool::new(request.threads);
    let run = Run { inputs: &job.inputs, manifest, pool, stop, seam, checkpoints };
    let output = match (&job.output, job.format) {
        (Some(staged), Some(format)) => Some(Output {
            format,
            staged,
            ffmpeg: job.ffmpeg.as_deref(),
            frame: request.frame.unwrap_or(0),
            indexed_png: request.indexed_png,
            dither: request.dither,
            max_size: request.max_size,
            effort: request.effort,
            frames: job.frames.clone(),
            quality: request.quality,
            lossy: request.lossy,
        }),
        _ => None,
    };
    let mut on_progress = |p: Progress| {
        if p.simulated == scene.first_frame + 1 && scene.first_frame > 0 {
            bar.set_message("");
        }
        bar.set_position(p.simulated);
    };
    formats::write(scene, run, output.as_ref(), &mut on_progress)
}

impl Job {
    /// An I/O error reported against what the user named: the encoder's output, or the
    /// output or manifest whose temporary it was in.
    fn retarget(&self, e: Error) -> Error {
        let e = match &self.output {
            Some(output) => e.writing(output.name()),
            None => e,
        };
        let truth = self.truth.as_ref().map(|(staged, _)| staged);
        [self.output.as_ref(), self.hashes.as_ref(), truth].into_iter().flatten().fold(e, |e, staged| staged.claim(e))
    }

    /// Whether anything but the ground truth is asked: an output, a manifest, checkpoints.
    fn renders(&self) -> bool {
        self.output.is_some() || self.hashes.is_some() || self.checkpoints.is_some() || self.truth.is_none()
    }

    /// Moves the outputs into place; says what was written: each path (or standard output) and
    /// the size of a file, or of a folder's files.
    fn commit(&mut self) -> Result<Vec<String>, Error> {
        let mut written = Vec::new();
        let truth = self.truth.take().map(|(staged, _)| staged);
        for staged in [self.output.take(), self.hashes.take(), truth].into_iter().flatten() {
            let (target, name) = (staged.target().to_path_buf(), staged.name());
            staged.commit()?;
            let size = match std::fs::metadata(&target) {
                Ok(meta) if meta.is_file() => Some(meta.len()),
                Ok(meta) if meta.is_dir() => Some(ripple_render::base::files::folder_bytes(&target)),
                _ => None,
            };
            written.push(size.map_or_else(|| name.to_string(), |bytes| format!("{name} ({})", units::show(bytes))));
        }
        Ok(written)
    }
}

/// The `--stats` line: frames, the seam and the seconds spent in each stage.
#[derive(Serialize)]
struct StatsLine {
    frames: u64,
    seam: Option<f64>,
    simulate_s: f64,
    refract_s: f64,
    encode_s: f64,
    write_s: f64,
    total_s: f64,
    threads: usize,
}

fn stats_line(written: &Written, started_commit: Instant, started: Instant, threads: usize) -> String {
    let stats = &written.stats;
    // Microseconds are as fine as a stage's time is worth reading.
    let seconds = |d: std::time::Duration| (d.as_secs_f64() * 1e6).round() / 1e6;
    json::to_line(&StatsLine {
        frames: stats.frames,
        seam: stats.seam,
        simulate_s: seconds(stats.simulate),
        refract_s: seconds(stats.refract),
        encode_s: seconds(stats.encode),
        write_s: seconds(stats.write + started_commit.elapsed()),
        total_s: seconds(started.elapsed()),
        threads,
    })
}

/// "wrote pond.gif (1.2 MiB): 100 frames, 360×240, loop seam 4.96× a frame's change, in 0.31 s".
fn summary(job: &Job, request: &Request<'_>, written: &Written, files: &[String], started: Instant) -> String {
    let scene = &job.scene;
    // A fitted file may have fewer frames on a smaller canvas.
    let (step, scale) = written.rung.map_or((1, 1), |r| (r.step, r.scale));
    let what = match (job.format, request.frame, &job.frames) {
        (Some(Format::Still), Some(frame), _) => format!("frame {frame} of {}", scene.frames),
        (_, _, Some(part)) => {
            let from =
                written.stats.resumed.from.map_or_else(String::new, |f| format!(" (from the checkpoint at frame {f})"));
            format!("frames {}..{} of {}{from}", part.start, part.end, scene.frames)
        }
        _ => format!("{} frames", scene.frames.div_ceil(u64::from(step))),
    };
    // The seam matters only where the output loops (an animated file that repeats), and only
    // with three frames or more to measure it by.
    let loops = matches!(job.format, Some(Format::Gif | Format::Apng | Format::Webp)) && scene.looping;
    let seam = match written.stats.seam {
        Some(s) if loops => format!(", loop seam {s:.2}× a frame's change"),
        _ => String::new(),
    };
    let (width, height) = (scene.width.div_ceil(scale), scene.height.div_ceil(scale));
    let seconds = started.elapsed().as_secs_f64();
    let fitted = match (request.max_size, written.rung) {
        (Some(limit), Some(rung)) => format!("; fits --max-size {}: {}", units::show_exact(limit), rung.describe()),
        _ => String::new(),
    };
    if files.is_empty() {
        // A run that only simulates, writing checkpoints.
        let dir = request.checkpoints.map_or_else(String::new, |d| d.display().to_string());
        let count = request.checkpoint_every.map_or(0, |k| (scene.frames - 1) / k);
        return format!("simulated {} frames; wrote {count} checkpoints into {dir}, in {seconds:.2} s", scene.frames);
    }
    format!("wrote {}: {what}, {width}×{height}{seam}, in {seconds:.2} s{fitted}", files.join(" and "))
}

fn progress_bar(scene: &Scene, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(scene.end_frame()), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{spinner} {msg}[{bar:32}] {pos}/{len} frames  {fps} frames/s  {elapsed} elapsed, {eta} left",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .with_key("fps", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
        let _ = write!(w, "{:.0}", state.per_sec());
    })
    .progress_chars("=> ");
    bar.set_style(style);
    if scene.first_frame > 0 {
        bar.set_message("pre-roll ");
    }
    bar
}
