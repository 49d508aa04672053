//! `ripple-render join PART… -o OUT`: the parts of a render split by `--frames` put back
//! together into the whole render's file.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ripple_render::Error;
use ripple_render::base::units;
use ripple_render::encode::video;
use ripple_render::join;
use ripple_render::output::{self, Format, Policy, Staged};

#[derive(Debug, clap::Args)]
pub struct JoinArgs {
    /// The parts, in frame order: GIF, APNG, WebP, MP4 or WebM files rendered with
    /// --frames A..B from one scene, each starting where the one before ends.
    #[arg(value_name = "PART", required = true)]
    parts: Vec<PathBuf>,

    /// The joined file, of the parts' format (.gif, .apng, .webp, .mp4, .webm).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,

    /// Replace an existing output file.
    #[arg(short, long)]
    force: bool,

    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: &JoinArgs) -> Result<(), Error> {
    let started = Instant::now();
    if output::is_stdout(&args.output) {
        return Err(Error::usage(
            "join writes a file (a WebP and an MP4 are finished by seeking back), not standard output",
            Some("name a file with -o, then copy it where it goes"),
        ));
    }
    // A pipe or device cannot be sought in (nor waited on): refused before any part is read.
    if let Ok(meta) = std::fs::metadata(&args.output)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return Err(Error::usage(
            format!(
                "join writes a file it can seek in, and {} is {}",
                args.output.display(),
                ripple_render::base::files::file_kind(&meta)
            ),
            Some("name a regular file with -o, then copy it where it goes"),
        ));
    }
    let format = output::resolve(&args.output, None, false)?;
    match format {
        Format::PngSequence | Format::Still => {
            return Err(Error::usage(
                format!("{} names a PNG sequence, whose parts need no join", args.output.display()),
                Some("render every part into one folder (-o frames/ --frames A..B): its files are the whole sequence"),
            ));
        }
        _ => {}
    }
    let ffmpeg = if format.is_video() {
        let codec = if format == Format::Mp4 { video::Codec::H264 } else { video::Codec::Vp9 };
        Some(video::find_ffmpeg().ok_or_else(|| video::missing_ffmpeg(codec))?)
    } else {
        None
    };
    join::check_format(&args.parts, format)?;
    let parts = join::parts(&args.parts, format, ffmpeg.as_deref())?;
    join::check_parts(&parts)?;
    let inputs: Vec<&Path> = args.parts.iter().map(PathBuf::as_path).collect();
    let staged = Staged::begin(&args.output, Policy::File { force: args.force }, &inputs)?;
    let joined = join::join(&parts, format, staged.file()?, ffmpeg.as_deref()).map_err(|e| staged.claim(e))?;
    staged.commit()?;
    if !args.quiet {
        let size = std::fs::metadata(&args.output).map(|m| format!(" ({})", units::show(m.len()))).unwrap_or_default();
        let canvas = match joined.size {
            (0, 0) => String::new(),
            (w, h) => format!(", {w}×{h}"),
        };
        super::say::tell(&format!(
            "joined {} parts into {}{size}: {} frames{canvas}, in {:.2} s",
            parts.len(),
            args.output.display(),
            joined.frames,
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}
