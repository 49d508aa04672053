//! The encoder for each output format, the staged output it writes into, and the `--max-size`
//! ladder: a fixed list of smaller versions of a GIF, APNG or WebP, tried in order until one
//! fits (a stage before the encoder: fewer colours, every other frame, half the canvas).

use std::io::{BufWriter, Seek, Write};
use std::path::Path;

use super::palette::{gif_palette, gif_palette_within};
use super::{Inputs, Progress, Run, Stats, render_with};
use crate::base::error::{Error, Result};
use crate::base::pool::default_threads;
use crate::base::units::show;
use crate::encode::fit::{self, Capped, Rung};
use crate::encode::gif::GifEncoder;
use crate::encode::palette::Palette;
use crate::encode::png::apng::Apng;
use crate::encode::png::{PngSequence, Still};
use crate::encode::reduce::Reduced;
use crate::encode::seal;
use crate::encode::video::{self, Codec, Video};
use crate::encode::webp::Webp;
use crate::encode::webp::vp8::{self, WebpLossy};
use crate::encode::{Discard, Effort, Encoder, Stream};
use crate::output::{Format, Staged, scratch_file};
use crate::scene::Scene;

/// What an animation of `scene` over `inputs` records beside its frames: the canvas, the
/// timing, the loop, and the provenance of the render (the scene and the fitted background).
pub fn stream_of(scene: &Scene, inputs: &Inputs) -> Stream {
    Stream {
        width: scene.width,
        height: scene.height,
        fps: scene.fps,
        step: 1,
        render_frames: scene.frames,
        looping: scene.looping,
        comment: inputs.provenance.to_text(),
        effort: Effort::Default,
        part: None,
        quality: None,
        lossy: None,
    }
}

/// What `out` writes of `scene`: the whole render's stream, or the part `--frames` asks for.
fn stream_for(scene: &Scene, inputs: &Inputs, out: &Output<'_>) -> Stream {
    let mut whole = stream_of(scene, inputs).at(out.effort);
    if let Some(quality) = out.quality {
        whole = whole.with_quality(quality);
    }
    if let Some(level) = out.lossy {
        whole = whole.with_lossy(level);
    }
    match &out.frames {
        Some(range) => whole.part(range.clone()),
        None => whole,
    }
}

/// The codec of a video format ([`Format::is_video`]).
fn codec(format: Format) -> Codec {
    if format == Format::Mp4 { Codec::H264 } else { Codec::Vp9 }
}

/// How a render is written: its format, the staged output, and what the formats read.
pub struct Output<'a> {
    /// The format.
    pub format: Format,
    /// Where it goes: a file, a folder (a PNG sequence) or a stream, staged.
    pub staged: &'a Staged,
    /// The `ffmpeg` program, for a video.
    pub ffmpeg: Option<&'a Path>,
    /// A still's output frame.
    pub frame: u64,
    /// PNG frames in a palette, where the frames' colours allow.
    pub indexed_png: bool,
    /// A GIF of a picture of many colours: the background dithered to the palette once.
    pub dither: bool,
    /// The most bytes a GIF, APNG or WebP may have (`--max-size`).
    pub max_size: Option<u64>,
    /// How hard the encoder works for a smaller file (`--effort`).
    pub effort: Effort,
    /// Output frames `A..B` alone (`--frames`), as the whole render makes them: a part of a
    /// render split by frame range, for `join` (a PNG sequence's part is its files).
    pub frames: Option<std::ops::Range<u64>>,
    /// A lossy WebP's quality (`--quality`).
    pub quality: Option<u8>,
    /// A lossy GIF's level (`--lossy`).
    pub lossy: Option<u8>,
}

/// What writing a render made: its stats, the rung of the size ladder it took (with
/// `--max-size`), and notes for the user (a setting that could not be honoured).
pub struct Written {
    /// Where the render's time went.
    pub stats: Stats,
    /// The rung that fitted `--max-size`.
    pub rung: Option<Rung>,
    /// What the user should know, as warnings.
    pub notes: Vec<String>,
}

/// What the command line asks of an output, beside its format, for [`check`].
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// `--frame N`: a still's output frame.
    pub frame: Option<u64>,
    /// `--max-size`.
    pub max_size: Option<u64>,
    /// `--hashes`: a manifest is written too.
    pub hashes: bool,
    /// `--frames A..B`, its open ends filled in.
    pub frames: Option<std::ops::Range<u64>>,
    /// `--quality`: a lossy WebP.
    pub quality: Option<u8>,
    /// `--lossy`: a lossy GIF.
    pub lossy: Option<u8>,
}

/// Refuses, before anything is staged, what `format` cannot make of `scene`: a GIF's frame
/// rate, a still's frame past the end, `--max-size` for another format or with a manifest, a
/// part (`--frames`) outside the render or of a still, with a manifest or a size budget, and a
/// video without ffmpeg. Returns the ffmpeg program for a video.
pub fn check(scene: &Scene, format: Option<Format>, asked: &Asked) -> Result<Option<std::path::PathBuf>> {
    let Asked { frame, max_size, hashes, .. } = *asked;
    if let Some(range) = &asked.frames {
        check_part(scene, format, asked, range)?;
    }
    // A video's quality is its codec's CRF (`encode::video::crf`).
    if let Some(quality) = asked.quality.filter(|_| !matches!(format, Some(Format::Mp4 | Format::Webm))) {
        check_lossy(format, asked, ("--quality", quality, Format::Webp))?;
        if scene.width.max(scene.height) > vp8::MAX_SIDE {
            return Err(Error::usage(
                format!(
                    "--quality={quality} writes a lossy WebP, whose frames are at most {} pixels a side (libwebp's lossy \
                     coder), and the canvas is {}×{}",
                    vp8::MAX_SIDE,
                    scene.width,
                    scene.height
                ),
                Some("leave out --quality for an exact WebP (up to 16384 a side), or render a smaller canvas"),
            ));
        }
    }
    if let Some(level) = asked.lossy {
        check_lossy(format, asked, ("--lossy", level, Format::Gif))?;
    }
    if max_size.is_some() {
        if !matches!(format, Some(Format::Gif | Format::Apng | Format::Webp)) {
            let what = format.map_or("no output", Format::name);
            return Err(Error::usage(
                format!("--max-size fits a GIF, APNG or WebP into a size, and the output is {what}"),
                Some("write a .gif, .apng or .webp, or drop --max-size (a video's size follows its quality)"),
            ));
        }
        if hashes {
            return Err(Error::usage(
                "--max-size may render the scene several times, smaller each time, and --hashes describes the \
                 render as asked",
                Some("write the manifest in a run of its own"),
            ));
        }
    }
    match format {
        Some(Format::Gif) => scene.check_gif_fps()?,
        Some(Format::Still) => {
            let frame = frame.unwrap_or(0);
            if frame >= scene.frames {
                return Err(Error::usage(
                    format!(
                        "--frame {frame} is past the end: the render has {} frames, 0..={}",
                        scene.frames,
                        scene.frames - 1
                    ),
                    Some("pick an output frame from 0 to the last"),
                ));
            }
        }
        Some(format) if format.is_video() => {
            return video::find_ffmpeg().map(Some).ok_or_else(|| video::missing_ffmpeg(codec(format)));
        }
        _ => {}
    }
    Ok(None)
}

/// Refuses a lossy output (`--quality` or `--lossy`, given as `option` at `value`) other than a
/// whole file of its format (`wanted`).
fn check_lossy(format: Option<Format>, asked: &Asked, (option, value, wanted): (&str, u8, Format)) -> Result<()> {
    if format != Some(wanted) {
        let what = format.map_or("no output", Format::name);
        let (makes, hint) = if wanted == Format::Webp {
            ("a lossy WebP (or sets a video's quality)", "write a .webp, .mp4 or .webm; for a smaller GIF, --lossy")
        } else {
            ("a lossy GIF", "write a .gif (or --format gif); for a smaller WebP, --quality")
        };
        return Err(Error::usage(format!("{option}={value} makes {makes}, and the output is {what}"), Some(hint)));
    }
    if asked.frames.is_some() {
        return Err(Error::usage(
            format!(
                "--frames renders a part for `join`, which puts exact frames back together, and {option} makes lossy ones"
            ),
            Some("render the lossy file whole, or join exact parts and make the lossy file from the scene"),
        ));
    }
    if asked.max_size.is_some() {
        return Err(Error::usage(
            format!(
                "--max-size chooses how lossy to be itself (its ladder goes lossy before it gives up frames), and {option} asks for a setting"
            ),
            Some(if wanted == Format::Webp {
                "give --max-size alone, or pick a lower --quality for a smaller file"
            } else {
                "give --max-size alone, or a higher --lossy for a smaller file"
            }),
        ));
    }
    Ok(())
}

/// Refuses a part (`--frames A..B`) the render cannot make, or `join` could not put back.
fn check_part(scene: &Scene, format: Option<Format>, asked: &Asked, range: &std::ops::Range<u64>) -> Result<()> {
    let (start, end, frames) = (range.start, range.end, scene.frames);
    if start >= end || end > frames {
        let why = if start >= frames || end > frames { "past the end" } else { "an empty range" };
        return Err(Error::usage(
            format!("--frames {start}..{end} is {why}: the render has {frames} output frames, 0..{frames}"),
            Some("give A..B with A < B <= the frame count (B is not rendered; A.. runs to the end)"),
        ));
    }
    if format == Some(Format::Still) {
        return Err(Error::usage(
            "--frames renders a part of an animation or a PNG sequence, and a still is one frame",
            Some("use --frame N for a still"),
        ));
    }
    if asked.max_size.is_some() {
        return Err(Error::usage(
            "--max-size may drop frames or shrink the canvas, and the parts of a split render must join into \
             the whole",
            Some("render the parts as asked, join them, and fit the joined file in a run of its own"),
        ));
    }
    if asked.hashes {
        return Err(Error::usage(
            "--hashes describes every frame of the render, and --frames renders a part",
            Some("write the manifest in a run of its own"),
        ));
    }
    Ok(())
}

/// Renders `scene` in `run` into `output`, through its format's encoder (or, without an output,
/// into nothing but `run`'s manifest).
pub fn write(
    scene: &Scene,
    run: Run<'_>,
    output: Option<&Output<'_>>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Written> {
    let written = write_unsealed(scene, run, output, progress)?;
    // A part ends in its seal, for `join` to check it is whole.
    if let Some((out, container)) =
        output.filter(|out| out.frames.is_some()).and_then(|out| Some((out, out.format.container()?)))
    {
        let io = |e| Error::io(out.staged.target(), e);
        seal::seal(&mut out.staged.file()?, container).map_err(io)?;
    }
    Ok(written)
}

/// [`write`] without a part's seal.
fn write_unsealed(
    scene: &Scene,
    run: Run<'_>,
    output: Option<&Output<'_>>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Written> {
    let written = |stats| Written { stats, rung: None, notes: Vec::new() };
    let Some(out) = output else {
        let discard = Discard::new(&run.inputs.background.pixels);
        // Without a manifest, nothing is drawn: the run only simulates (and writes checkpoints).
        let discard = if run.manifest.is_none() { discard.taking_none() } else { discard };
        return render_with(scene, discard, run, progress).map(written);
    };
    let inputs = run.inputs;
    let stream = stream_for(scene, inputs, out);
    let pixels = || inputs.background.pixels.clone();
    let file = || out.staged.file().map(|f| BufWriter::with_capacity(1 << 20, f));
    match out.format {
        Format::Gif | Format::Apng | Format::Webp => animated(scene, run, out, progress),
        Format::PngSequence => {
            let palette = out.indexed_png.then(|| png_palette(scene, inputs));
            match palette {
                Some(Ok(palette)) => {
                    let png = PngSequence::indexed(out.staged.path(), &stream, palette);
                    render_with(scene, png, run, progress).map(written)
                }
                refused => {
                    let png = PngSequence::new(out.staged.path(), &stream, pixels());
                    let mut done = written(render_with(scene, png, run, progress)?);
                    if let Some(Err(why)) = refused {
                        done.notes.push(format!("--indexed-png: {why}, so the frames are RGB PNGs"));
                    }
                    Ok(done)
                }
            }
        }
        Format::Still => {
            let still = Still::new(file()?, &stream, pixels(), out.frame);
            render_with(scene, still, run, progress).map(written)
        }
        Format::Mp4 | Format::Webm => {
            let codec = codec(out.format);
            let program = out.ffmpeg.ok_or_else(|| video::missing_ffmpeg(codec))?;
            let video = Video::start(program, codec, out.staged.file()?, out.staged.is_stream(), &stream, pixels())?;
            // ffmpeg takes the cores it wants; the simulation and drawing take the rest.
            render_with(scene, video, run, progress).map(written)
        }
    }
}

/// The palette of PNG frames that show `scene` exactly: the background's own colours, when
/// there are at most 256 and frames only move them; otherwise why not.
fn png_palette(scene: &Scene, inputs: &Inputs) -> std::result::Result<Palette, &'static str> {
    if !scene.look.is_gather() {
        return Err("a look makes new colours");
    }
    let palette = Palette::for_background(&inputs.background.pixels);
    if palette.exact { Ok(palette) } else { Err("the background has more than 256 colours") }
}

/// A GIF, APNG or WebP into the staged output: as asked, or the first rung of the size ladder
/// that fits `--max-size`.
fn animated(scene: &Scene, run: Run<'_>, out: &Output<'_>, progress: &mut dyn FnMut(Progress)) -> Result<Written> {
    let (bytes, stats, rung) = match out.max_size {
        Some(limit) => {
            let fitted = fit(scene, run, out, limit, progress)?;
            (fitted.bytes, fitted.stats, Some(fitted.rung))
        }
        // RIFF puts the file's size first: a WebP for a stream is made in a scratch file (not in
        // memory, where it would grow with the output, past the budget), then copied out.
        None if out.format == Format::Webp && out.staged.is_stream() => {
            let scratch = scratch_file()?;
            let writer = BufWriter::with_capacity(1 << 20, scratch.try_clone().map_err(Error::output)?);
            let stats = animate(scene, fit::AS_ASKED, writer, run, out, progress)?;
            let mut scratch = scratch;
            let mut file = BufWriter::with_capacity(1 << 20, out.staged.file()?);
            scratch.seek(std::io::SeekFrom::Start(0)).map_err(Error::output)?;
            std::io::copy(&mut scratch, &mut file).and_then(|_| file.flush()).map_err(Error::output)?;
            return Ok(Written { stats, rung: None, notes: Vec::new() });
        }
        None => {
            let file = BufWriter::with_capacity(1 << 20, out.staged.file()?);
            let stats = animate(scene, fit::AS_ASKED, file, run, out, progress)?;
            return Ok(Written { stats, rung: None, notes: Vec::new() });
        }
    };
    let mut file = BufWriter::with_capacity(1 << 20, out.staged.file()?);
    file.write_all(&bytes).and_then(|()| file.flush()).map_err(Error::output)?;
    Ok(Written { stats, rung, notes: Vec::new() })
}

/// Renders `scene` as `out`'s format (GIF, APNG or WebP) into `writer`, giving up what `rung`
/// says, in `run` (which may carry a manifest).
fn animate<W: Write + Seek>(
    scene: &Scene,
    rung: Rung,
    writer: W,
    run: Run<'_>,
    out: &Output<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats> {
    let (inputs, threads) = (run.inputs, run.pool.threads());
    let background = &inputs.background;
    let mut stream = match rung.effort {
        Some(effort) => stream_for(scene, inputs, out).at(effort),
        None => stream_for(scene, inputs, out),
    };
    if let Some(quality) = rung.quality {
        stream = stream.with_quality(quality);
    }
    if let Some(level) = rung.lossy {
        stream = stream.with_lossy(level);
    }
    if rung.as_asked() {
        return match out.format {
            Format::Gif => {
                let palette = gif_palette(scene, inputs, out.dither, threads);
                let gif = GifEncoder::new(writer, &stream, palette)?;
                render_with(scene, gif, run, progress)
            }
            Format::Apng => match png_palette(scene, inputs) {
                Ok(palette) => render_with(scene, Apng::indexed(writer, &stream, palette), run, progress),
                // Frames that only move background pixels can mark unchanged pixels with a
                // colour the background lacks.
                Err(_) if scene.look.is_gather() => {
                    let apng = Apng::keyed(writer, &stream, background.pixels.clone());
                    render_with(scene, apng, run, progress)
                }
                Err(_) => {
                    let apng = Apng::rgb(writer, &stream, background.pixels.clone());
                    render_with(scene, apng, run, progress)
                }
            },
            _ if stream.quality.is_some() => {
                render_with(scene, WebpLossy::new(writer, &stream, background.pixels.clone())?, run, progress)
            }
            _ => render_with(scene, Webp::new(writer, &stream, background.pixels.clone()), run, progress),
        };
    }
    let stream = stream.reduced(rung.step, rung.scale, &rung.describe());
    match out.format {
        Format::Gif => {
            let palette = gif_palette_within(scene, inputs, out.dither, threads, rung.entries);
            let gif = GifEncoder::new(writer, &stream, palette)?;
            if rung.step == 1 && rung.scale == 1 {
                // Fewer colours alone: frames gathered from the background's indices, as asked.
                return render_with(scene, gif, run, progress);
            }
            render_with(scene, reduced(gif, inputs, rung), run, progress)
        }
        Format::Apng => {
            render_with(scene, reduced(Apng::rgb(writer, &stream, Vec::new()), inputs, rung), run, progress)
        }
        _ if stream.quality.is_some() => {
            render_with(scene, reduced(WebpLossy::new(writer, &stream, Vec::new())?, inputs, rung), run, progress)
        }
        _ => render_with(scene, reduced(Webp::new(writer, &stream, Vec::new()), inputs, rung), run, progress),
    }
}

/// `encoder` fed the render's frames as `rung` reduces them: every other frame, half the canvas.
fn reduced<E: Encoder>(encoder: E, inputs: &Inputs, rung: Rung) -> Reduced<E> {
    let background = &inputs.background;
    Reduced::new(encoder, &background.pixels, background.width, rung.step, rung.scale)
}

/// What fitting a size budget made: the file's bytes, the render's stats, and the rung.
struct Fitted {
    bytes: Vec<u8>,
    stats: Stats,
    rung: Rung,
}

/// Climbs the ladder of `out`'s format until a rung's file is at most `limit` bytes: each
/// attempt stops as soon as it passes the budget. The last rung is finished whatever its size,
/// so that a budget nothing meets can be answered with the smallest size reached.
fn fit(
    scene: &Scene,
    run: Run<'_>,
    out: &Output<'_>,
    limit: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<Fitted> {
    let rungs: &[Rung] = match out.format {
        Format::Gif => &fit::GIF,
        Format::Webp => &fit::WEBP,
        _ => &fit::EXACT,
    };
    let (rungs, last) = fit::ladder(rungs, out.effort);
    let attempt = |rung: Rung, cap: u64, progress: &mut dyn FnMut(Progress)| {
        let mut capped = Capped::new(cap);
        let run = Run {
            inputs: run.inputs,
            manifest: None,
            pool: run.pool.clone(),
            stop: run.stop,
            seam: run.seam,
            checkpoints: None,
        };
        animate(scene, rung, &mut capped, run, out, progress).map(|stats| (capped, stats))
    };
    // A lossy WebP rung whose canvas libwebp's lossy coder cannot take is passed over.
    let fits_webp = |rung: &Rung| {
        let side = scene.width.max(scene.height).div_ceil(rung.scale);
        rung.quality.is_none() || side <= vp8::MAX_SIDE
    };
    for rung in rungs.into_iter().filter(fits_webp) {
        match attempt(rung, limit, progress) {
            Ok((capped, stats)) => return Ok(Fitted { bytes: capped.into_bytes(), stats, rung }),
            Err(e) if fit::is_over_budget(&e) => {}
            Err(e) => return Err(e),
        }
    }
    let (capped, stats) = attempt(last, u64::MAX, progress)?;
    if capped.len() <= limit {
        return Ok(Fitted { bytes: capped.into_bytes(), stats, rung: last });
    }
    Err(Error::usage(
        format!(
            "no rung of the {} size ladder fits --max-size {}: the smallest reached is {} ({})",
            out.format.name(),
            crate::base::units::show_exact(limit),
            show(capped.len()),
            last.describe()
        ),
        Some("raise --max-size, or shorten the scene or shrink its canvas"),
    ))
}

/// Renders `scene` over `inputs` as an animated GIF into `writer` (a file, or a `Vec<u8>` in
/// memory), on every core: the palette as the command line makes it, without dithering.
pub fn gif<W: Write>(scene: &Scene, inputs: &Inputs, writer: W, progress: &mut dyn FnMut(Progress)) -> Result<Stats> {
    scene.check_gif_fps()?;
    let threads = default_threads();
    let palette = gif_palette(scene, inputs, false, threads);
    let encoder = GifEncoder::new(writer, &stream_of(scene, inputs), palette)?;
    super::render(scene, inputs, encoder, progress)
}
