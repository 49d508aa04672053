//! `ripple-render SCENE -o OUT [--hashes FILE]`: the render, its progress bar and summary line.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use ripple_render::encode::Discard;
use ripple_render::encode::fit::{self, Capped};
use ripple_render::encode::png::{PngSequence, Still};
use ripple_render::encode::video::{self, Codec, Video};
use ripple_render::manifest;
use ripple_render::output::{self, Format, Named, Staged};
use ripple_render::provenance::Provenance;
use ripple_render::{Background, Error, Progress, Run, Scene, Stats};
use ripple_render::{budget, units};

/// What to render, from the command line.
pub struct Request<'a> {
    pub scene: &'a Path,
    pub output: Option<&'a Path>,
    pub format: Option<Named>,
    /// `--frame N`: the output frame of a still.
    pub frame: Option<u64>,
    pub hashes: Option<&'a Path>,
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
}

pub fn run(request: &Request<'_>) -> Result<(), Error> {
    let started = Instant::now();
    let scene = super::load_scene(request.scene, request.overrides, request.max_memory)?;
    if request.output.is_none() && (request.frame.is_some() || request.format.is_some()) {
        return Err(Error::Output {
            message: "--frame and --format describe the output, and there is no -o".into(),
            hint: Some("pass -o OUT, or drop them to write only the manifest".into()),
        });
    }
    let format = request.output.map(|o| output::resolve(o, request.format, request.frame.is_some())).transpose()?;
    let ffmpeg = check_output(&scene, format, request)?;
    // Standard output is written in place, as a stream.
    let stdout = request.output.is_some_and(output::is_stdout);
    let output_path = request.output.map(|o| if stdout { Path::new("/dev/stdout") } else { o });
    let mut inputs = vec![request.scene];
    inputs.extend(scene.background.image.as_deref());
    inputs.extend(scene.shore.mask.as_ref().map(|m| m.image.as_path()));
    // Nothing large is allocated before the estimate is within the budget.
    let image = ripple_render::background::image_header_within(&scene, request.max_memory)?;
    // Outputs that would land on one file, or on an input, are refused before any work (after
    // the inputs themselves are checked, so a broken input is named as such).
    let mut outputs = Vec::new();
    if let (Some(path), Some(format)) = (output_path, format) {
        outputs.push((path, format.is_folder(), "output"));
        if let Some(named) = output::folder_named_as_file(path, format) {
            let why = if path.is_dir() { "an existing folder" } else { "a folder (it ends in /)" };
            super::warn(&format!(
                "{} is {why}, so the frames are written into it as a PNG sequence, although its name says {named}",
                path.display()
            ));
        }
    }
    outputs.extend(request.hashes.map(|h| (h, false, "manifest")));
    output::check_distinct(&outputs, &inputs)?;
    let kind = match format {
        Some(Format::Gif) => budget::Output::Gif,
        Some(Format::PngSequence | Format::Still) => budget::Output::Png,
        Some(Format::Apng) => budget::Output::Apng,
        Some(Format::Webp) => budget::Output::Webp,
        Some(Format::Mp4 | Format::Webm) => budget::Output::Video,
        None => budget::Output::Nothing,
    };
    let mut estimate = budget::Estimate::for_render(&scene, image.as_ref(), kind, request.threads);
    if let Some(limit) = request.max_size {
        // A rung's file is held in memory up to the size budget.
        estimate.fixed.push(("file within --max-size", limit));
    }
    estimate.check(request.max_memory)?;
    let background = Background::for_scene_within(&scene, request.max_memory)?;
    let advice = ripple_render::advice::for_scene(&scene).into_iter();
    let advice = advice.chain(ripple_render::advice::for_background(&scene, &background));
    advice.chain(ripple_render::advice::for_walls(&scene, &background.shore)).for_each(|w| super::warn(&w));
    let staged_output = match (output_path, format) {
        (Some(path), Some(format)) => Some(Staged::begin(path, format.is_folder(), request.force, &inputs)?),
        _ => None,
    };
    let staged_hashes = request.hashes.map(|h| Staged::begin(h, false, request.force, &inputs)).transpose()?;

    let bar = progress_bar(&scene, request.quiet);
    let mut on_progress = |p: Progress| {
        if p.simulated == scene.first_frame + 1 && scene.first_frame > 0 {
            bar.set_message("");
        }
        bar.set_position(p.simulated);
    };
    let mut fitted = None;
    let rendered = encode(
        &scene,
        &background,
        format.map(|f| (f, ffmpeg.as_deref())),
        (staged_output.as_ref(), staged_hashes.as_ref()),
        request,
        &mut fitted,
        &mut on_progress,
    );
    bar.finish_and_clear();
    // I/O errors inside a temporary file are reported against its real target.
    let stats = rendered.map_err(|e| match e {
        Error::Io { path, source } => {
            let target = [&staged_output, &staged_hashes]
                .into_iter()
                .flatten()
                .find(|s| {
                    s.path() == path || path.starts_with(s.path()) || path == Path::new(ripple_render::encode::STREAM)
                })
                .map_or(path, |s| s.target().to_path_buf());
            let target = if stdout && target == Path::new("/dev/stdout") { "standard output".into() } else { target };
            Error::Io { path: target, source }
        }
        other => other,
    })?;
    let mut written = Vec::new();
    let started_commit = Instant::now();
    for staged in [staged_output, staged_hashes].into_iter().flatten() {
        let target = staged.target().to_path_buf();
        staged.commit()?;
        // The size of what was written: a file's, or a folder's files' (a stream has none).
        let size = match std::fs::metadata(&target) {
            Ok(meta) if meta.is_file() => Some(meta.len()),
            Ok(meta) if meta.is_dir() => std::fs::read_dir(&target)
                .ok()
                .map(|entries| entries.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum()),
            _ => None,
        };
        let shown = match target.to_str() {
            Some("/dev/stdout") if stdout => "standard output".to_string(),
            _ => target.display().to_string(),
        };
        written.push(size.map_or_else(|| shown.clone(), |bytes| format!("{shown} ({})", units::show(bytes))));
    }
    let seam = stats.seam.map_or("null".to_string(), |s| format!("{s}"));
    if request.stats {
        let write = stats.write + started_commit.elapsed();
        super::tell(&format!(
            "{{\"frames\":{},\"seam\":{seam},\"simulate_s\":{:.6},\"refract_s\":{:.6},\"encode_s\":{:.6},\"write_s\":{:.6},\"total_s\":{:.6},\"threads\":{}}}",
            stats.frames,
            stats.simulate.as_secs_f64(),
            stats.refract.as_secs_f64(),
            stats.encode.as_secs_f64(),
            write.as_secs_f64(),
            started.elapsed().as_secs_f64(),
            request.threads
        ));
    }
    if !request.quiet {
        // A fitted file may have fewer frames on a smaller canvas.
        let (step, scale) = fitted.map_or((1, 1), |r| (r.step, r.scale));
        let what = match (format, request.frame) {
            (Some(Format::Still), Some(frame)) => format!("frame {frame} of {}", scene.frames),
            _ => format!("{} frames", scene.frames.div_ceil(u64::from(step))),
        };
        // A still has no seam; an animation reports one, or - when there is none to measure.
        let seam = match (format, stats.seam) {
            (Some(Format::Still), _) => String::new(),
            (_, Some(s)) => format!(", seam {s:.2}"),
            (_, None) => ", seam -".to_string(),
        };
        let (width, height) = (scene.width.div_ceil(scale), scene.height.div_ceil(scale));
        let seconds = started.elapsed().as_secs_f64();
        let fitted = match (request.max_size, fitted) {
            (Some(limit), Some(rung)) => format!("; fits --max-size {}: {}", units::show(limit), rung.describe()),
            _ => String::new(),
        };
        super::tell(&format!(
            "wrote {}: {what}, {width}×{height}{seam}, in {seconds:.2} s{fitted}",
            written.join(" and ")
        ));
    }
    Ok(())
}

/// What the output needs before anything is staged: a GIF's frame rate, a still's frame
/// within the render, ffmpeg for a video (its path is returned), and for standard output a
/// reader that is not a terminal.
fn check_output(scene: &Scene, format: Option<Format>, request: &Request<'_>) -> Result<Option<PathBuf>, Error> {
    let usage = |message: String, hint: &str| Error::Output { message, hint: Some(hint.to_string()) };
    if request.output.is_some_and(output::is_stdout) && std::io::stdout().is_terminal() {
        return Err(usage(
            "-o - writes to standard output, which is a terminal and cannot show an animation".into(),
            "pipe it into another program, or redirect it into a file (> out.gif)",
        ));
    }
    if request.max_size.is_some() {
        if !matches!(format, Some(Format::Gif | Format::Apng | Format::Webp)) {
            let what = format.map_or("no output", Format::name);
            return Err(usage(
                format!("--max-size fits a GIF, APNG or WebP into a size, and the output is {what}"),
                "write a .gif, .apng or .webp, or drop --max-size (a video's size follows its quality)",
            ));
        }
        if request.hashes.is_some() {
            return Err(usage(
                "--max-size may render the scene several times, smaller each time, and --hashes describes the \
                 render as asked"
                    .into(),
                "write the manifest in a run of its own",
            ));
        }
    }
    match format {
        Some(Format::Gif) => scene.check_gif_fps()?,
        Some(Format::Still) => {
            let frame = request.frame.unwrap_or(0);
            if frame >= scene.frames {
                return Err(usage(
                    format!(
                        "--frame {frame} is past the end: the render has {} frames, 0..={}",
                        scene.frames,
                        scene.frames - 1
                    ),
                    "pick an output frame from 0 to the last",
                ));
            }
        }
        Some(format @ (Format::Mp4 | Format::Webm)) => {
            let codec = if format == Format::Mp4 { Codec::H264 } else { Codec::Vp9 };
            return video::find_ffmpeg().map(Some).ok_or_else(|| video::missing_ffmpeg(codec));
        }
        _ => {}
    }
    Ok(None)
}

/// Renders into the staged output and/or manifest, through the encoder of `format` (with the
/// ffmpeg program, for a video).
fn encode(
    scene: &Scene,
    background: &Background,
    format: Option<(Format, Option<&Path>)>,
    (output, hashes): (Option<&Staged>, Option<&Staged>),
    request: &Request<'_>,
    fitted_rung: &mut Option<fit::Rung>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, Error> {
    let mut writer = match hashes {
        Some(staged) => {
            let size = (scene.width, scene.height, scene.fps);
            let provenance = Provenance::of(scene, background);
            Some(manifest::Writer::new(BufWriter::new(staged.file()?), staged.target(), size, &provenance)?)
        }
        None => None,
    };
    let threads = request.threads;
    let stop = &super::signals::STOP;
    let manifest = writer.as_mut().map(|w| w as &mut dyn manifest::Sink);
    // With an encoder, its threads use the cores (compression is most of the work) and the
    // simulation runs on one; without, the simulation takes them all.
    // The seam costs a pass over the heights a frame: measured only when it is shown (and not
    // for a still, which stops at its frame).
    let still = matches!(format, Some((Format::Still, _)));
    let seam = (request.stats || !request.quiet) && !still;
    let run = |threads| Run { background, manifest, threads, stop, seam };
    let (Some((format, ffmpeg)), Some(out)) = (format, output) else {
        return ripple_render::render_with(scene, Discard::new(background), run(threads), progress);
    };
    let file = || out.file().map(|f| BufWriter::with_capacity(1 << 20, f));
    let setting = super::animate::Setting { background, threads, dither: request.dither, seam };
    match format {
        Format::Gif | Format::Apng | Format::Webp => {
            let (bytes, stats) = match request.max_size {
                Some(limit) => {
                    let fitted = super::animate::fit(scene, format, limit, &setting, progress)?;
                    *fitted_rung = Some(fitted.rung);
                    (fitted.bytes, fitted.stats)
                }
                // RIFF puts the file's size first: a WebP for a stream is made in memory, then
                // written whole.
                None if format == Format::Webp && out.is_stream() => {
                    let mut held = Capped::new(u64::MAX);
                    let stats =
                        super::animate::animate(scene, (format, fit::AS_ASKED), &mut held, &setting, run(1), progress)?;
                    (held.into_bytes(), stats)
                }
                None => {
                    return super::animate::animate(
                        scene,
                        (format, fit::AS_ASKED),
                        file()?,
                        &setting,
                        run(1),
                        progress,
                    );
                }
            };
            let mut file = file()?;
            file.write_all(&bytes)
                .and_then(|()| file.flush())
                .map_err(|source| Error::Io { path: ripple_render::encode::STREAM.into(), source })?;
            Ok(stats)
        }
        Format::PngSequence => {
            if request.indexed_png {
                if let Some(png) = PngSequence::indexed(out.path(), scene, background) {
                    return ripple_render::render_with(scene, png.threads(threads), run(1), progress);
                }
                super::warn(&format!("--indexed-png: {}, so the frames are RGB PNGs", why_not_indexed(scene)));
            }
            let png = PngSequence::new(out.path(), scene, background).threads(threads);
            ripple_render::render_with(scene, png, run(1), progress)
        }
        Format::Still => {
            let still = Still::new(file()?, scene, background, request.frame.unwrap_or(0));
            ripple_render::render_with(scene, still, run(threads), progress)
        }
        Format::Mp4 | Format::Webm => {
            let codec = if format == Format::Mp4 { Codec::H264 } else { Codec::Vp9 };
            let program = ffmpeg.ok_or_else(|| video::missing_ffmpeg(codec))?;
            let video = Video::start(program, codec, out.file()?, out.is_stream(), scene, background)?;
            // ffmpeg takes the cores it wants; the simulation and drawing take the rest.
            ripple_render::render_with(scene, video, run(threads), progress)
        }
    }
}

fn why_not_indexed(scene: &Scene) -> &'static str {
    if scene.look.is_gather() { "the background has more than 256 colours" } else { "a look makes new colours" }
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
