//! The command line: arguments, messages on stderr, the progress bar and exit codes.

mod check;
mod check_report;
mod dataset;
mod diff;
mod join;
mod new;
mod plan;
mod render;
mod say;
mod serve;
mod signals;
mod web;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use ripple_render::Error;
use ripple_render::base::error::Target;
use ripple_render::encode::Effort;
use ripple_render::inspect::plan::Detail;
use ripple_render::output::Named;
use ripple_render::scene::Model;
use say::{error_text, print_out, tell};

const AFTER_HELP: &str = "\
Examples:
  ripple-render scenes/pond.toml -o pond.gif        render an animated GIF
  ripple-render scenes/rain.toml -o frames/         render frame_0000.png, … into frames/
  ripple-render scenes/pond.toml -o pond.mp4        an H.264 video (needs ffmpeg); also .webm
  ripple-render scenes/pond.toml -o pond.webp       an animated lossless WebP; also .apng
  ripple-render scenes/pond.toml -o still.png --frame 40   one still PNG of frame 40
  ripple-render scenes/pond.toml -o - --format gif | …     the GIF on standard output
  ripple-render scenes/pond.toml --hashes pond.txt  write only a hash manifest of the frames
  ripple-render plan scenes/pond.toml               show the timeline without rendering
  ripple-render diff new.gif refs/pond.gif          compare two renders
  ripple-render check scenes/*.toml --refs refs     check every scene against its reference
  ripple-render scenes/pond.toml -o a.gif --frames 0..50   render a part of the frames …
  ripple-render join a.gif b.gif -o pond.gif        … and put the parts together

Exit codes:
  0  success (diff, check: the same)
  1  diff, check: different (check: or a scene has no reference)
  2  bad usage or bad input (scene, background, output path, unreadable render)
  3  I/O or internal failure";

/// Water ripples over a still image, rendered to an animated GIF, APNG or WebP, a video, a
/// still or a PNG sequence.
///
/// Reads a TOML scene (stones, swipes, rain, damping changes), steps an integer water
/// simulation and refracts the background through it. The same scene always gives the same
/// bytes.
#[derive(Debug, Parser)]
#[command(
    name = "ripple-render",
    version,
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// The scene file (TOML) to render.
    #[arg(value_name = "SCENE", required = true)]
    scene: Option<PathBuf>,

    /// Where to write: a .gif, .apng, .webp, .mp4 or .webm file; a .png still (with --frame);
    /// a folder (ending in /) for a PNG sequence; or - for standard output (with --format).
    #[arg(short, long, value_name = "OUT", required_unless_present_any = ["hashes", "checkpoint_every", "ground_truth"])]
    output: Option<PathBuf>,

    /// Also write a hash manifest: one line per frame with a hash of its pixels (for `diff`).
    /// Without -o, only the manifest is written.
    #[arg(long, value_name = "FILE")]
    hashes: Option<PathBuf>,

    /// Also write the scene's ground truth into the folder DIR, for research: per frame the
    /// heights, the backward warp, the slopes and the frame; the clean picture and meta.json
    /// (docs/research.md). Without -o, only the ground truth is written.
    #[arg(long, value_name = "DIR")]
    ground_truth: Option<PathBuf>,

    /// The ground truth's file layout: ours, or fsrn (FSRN's depth/, warp/ as H×2W, RGB/).
    #[arg(long, value_name = "LAYOUT", requires = "ground_truth", default_value = "ours",
          value_parser = clap::builder::PossibleValuesParser::new(ripple_render::truth::Layout::NAMES))]
    ground_truth_layout: String,

    /// Extra ground-truth files, comma-separated: npz (sequence.npz, the frames' arrays stacked),
    /// flo (Middlebury optical flow), kitti (KITTI 16-bit flow PNGs with their valid mask).
    #[arg(long, value_name = "LIST", requires = "ground_truth", value_delimiter = ',',
          value_parser = clap::builder::PossibleValuesParser::new(ripple_render::truth::Extras::NAMES))]
    ground_truth_extras: Vec<String>,

    /// The output format, for standard output or a path that does not tell; it must agree with a
    /// path that does.
    #[arg(long, value_name = "FORMAT", value_parser = format_parser())]
    format: Option<Named>,

    /// Write one still PNG of output frame N (from 0), to -o NAME.png.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = whole::<0>)]
    frame: Option<u64>,

    /// Render output frames A to B-1 alone (from 0; A.. runs to the end), or with K/N the K-th
    /// of N near-equal chunks (K from 1), exactly as the whole render makes them: one part of a
    /// render split over processes or machines. Parts of a GIF, APNG, WebP or video are put
    /// together with `join`; a PNG sequence's parts are written into one folder
    /// (docs/distributed.md).
    #[arg(long, value_name = "A..B|K/N", value_parser = frame_span, conflicts_with = "frame")]
    frames: Option<render::Span>,

    /// A folder of checkpoints of the simulation: --frames A..B starts from the nearest one at
    /// or before A (of this scene and build; others are passed over) instead of simulating every
    /// frame before A. Written with --checkpoint-every.
    #[arg(long, value_name = "DIR")]
    checkpoints: Option<PathBuf>,

    /// Write a checkpoint into --checkpoints DIR at the start of every K-th output frame (made
    /// if need be). Without -o, the scene is only simulated (no frame is drawn): a quick first
    /// job before the parts of a long render.
    #[arg(long, value_name = "K", requires = "checkpoints", allow_negative_numbers = true,
          value_parser = whole::<1>)]
    checkpoint_every: Option<u64>,

    /// Replace an existing output file or non-empty folder.
    #[arg(short, long)]
    force: bool,

    /// Print nothing but errors and warnings: no progress bar, no summary.
    #[arg(short, long)]
    quiet: bool,

    /// Work on N threads, the drawing and the encoding together (default: every core). The output
    /// is the same for any N.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,

    /// Refuse, before allocating, a render estimated to need more memory than SIZE (512M, 2G,
    /// …); the background image may take a quarter of it to decode.
    #[arg(long, value_name = "SIZE", default_value = "1G", allow_negative_numbers = true, value_parser = memory_size)]
    max_memory: u64,

    /// Write PNG frames with a palette (8-bit indexed) when the background has at most 256
    /// colours: the same pixels, smaller files, faster. The default is 8-bit RGB (docs/cli.md, Outputs).
    #[arg(long)]
    indexed_png: bool,

    /// After the render, print one JSON line to stderr: frames and the seconds spent in each
    /// stage (simulate_s, refract_s, encode_s, write_s, total_s).
    #[arg(long)]
    stats: bool,

    /// Override a scene key, validated like the file (repeatable): --set water.refraction=0.4
    /// --set 'stone[0].x=10'. A value that is not TOML is taken as a string (--set water.model=spring).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,

    /// Fit a GIF, APNG or WebP into SIZE bytes (2M = 2MiB = 2,097,152; 2MB = 2,000,000; 500K,
    /// 500kB, …): a fixed ladder of smaller
    /// versions (fewer GIF colours, then every other or third frame, then half the canvas) is
    /// tried best first and the first that fits is written; none fits: exit 2 with the smallest
    /// reached.
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true, value_parser = memory_size)]
    max_size: Option<u64>,

    /// GIF of a picture with more than 256 colours: dither the background to the palette
    /// (Floyd–Steinberg, once), so skies and gradients do not band and calm water does not
    /// shimmer. A little larger; no effect (and a warning says so) with a [look] or another
    /// format.
    #[arg(long)]
    dither: bool,

    /// How hard a GIF, APNG, WebP or PNG encoder works for a smaller file: the frames are the same
    /// at every level, only the size and the time differ (docs/cli.md, Effort).
    #[arg(long, value_name = "LEVEL", default_value = "default", value_parser = choices(&Effort::ALL, Effort::name, effort_help))]
    effort: Effort,

    /// Write a lossy WebP at quality Q (1–100, libwebp's scale; 75 when Q is left out): a file
    /// for a web page, several times smaller than the exact one, whose frames are no longer the
    /// render's exact pixels. With .mp4 or .webm, the video's quality (75: the codec's own
    /// default CRF; without it, CRF 16 and 24).
    #[arg(long, value_name = "Q", num_args = 0..=1, require_equals = true, default_missing_value = "75",
          allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(1..=100))]
    quality: Option<u8>,

    /// Write a lossy GIF at level N (1–200; 20 when N is left out): a pixel keeps the colour
    /// already shown while that is near the render's (each channel within N/4), so a
    /// chat-sized GIF keeps every frame and the whole canvas; the first frame is exact. Only
    /// with a .gif output.
    #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "20",
          allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(1..=200))]
    lossy: Option<u8>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compare two renders frame by frame: exit 0 if the same, 1 if different.
    ///
    /// Each side is a GIF, an APNG, a WebP, a PNG, a PNG-sequence folder, a scene file
    /// (rendered in memory) or a hash manifest. Compared: frame count, canvas size, per-frame
    /// delays (when both sides have them, allowing each format's rounding) and pixels, as a
    /// viewer sees them.
    Diff(diff::DiffArgs),
    /// Render every scene and compare it with its reference in --refs DIR: exit 0 if all are
    /// the same, 1 if any differs or lacks a reference.
    ///
    /// A reference (DIR/NAME.gif for NAME.toml) is a small GIF of the render carrying the hashes
    /// of its exact frames; `--bless` writes or replaces the references of the scenes that
    /// differ or have none, and `--accept-from REPORT` writes those a CI job's report kept
    /// (byte for byte the same); nothing else ever does. One line per scene and a summary; a
    /// report page (--report, or one file with --report-single-file), JUnit XML (--junit), JSON
    /// (--json), and a Markdown summary appended to $GITHUB_STEP_SUMMARY when it is set.
    Check(check::CheckArgs),
    /// Put the parts of a render split with --frames A..B back together: GIF, APNG and WebP
    /// parts chunk by chunk, MP4 and WebM through ffmpeg without re-encoding.
    ///
    /// The parts must be of one scene and format, given in frame order, without gaps or
    /// overlaps; a joined GIF, APNG or WebP is the whole render's file, byte for byte.
    /// (A PNG sequence needs no join: render every part into one folder.)
    Join(join::JoinArgs),
    /// Validate a scene and print its resolved timeline, without rendering.
    ///
    /// Several scenes are validated in turn (their plans one after another); the first that
    /// does not read stops with its error.
    Plan {
        /// The scene files (TOML).
        #[arg(value_name = "SCENE", required = true, num_args = 1..)]
        scenes: Vec<PathBuf>,
        /// Print nothing but errors and warnings: validate only (a pre-commit hook).
        #[arg(short, long, conflicts_with_all = ["json", "events", "walls"])]
        quiet: bool,
        /// Print one JSON object (settings and every event in the order applied).
        #[arg(long)]
        json: bool,
        /// List every event on its own line (by default a swipe or the rain is one line).
        #[arg(long, conflicts_with = "json")]
        events: bool,
        /// Refuse a timeline estimated to need more memory than SIZE (its swipe paths).
        #[arg(long, value_name = "SIZE", default_value = "1G", allow_negative_numbers = true, value_parser = memory_size)]
        max_memory: u64,
        /// Override a scene key, validated like the file (repeatable): --set video.fps=50.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also write the background as a PNG with the wall cells (obstacles, mask) tinted.
        #[arg(long, value_name = "PNG")]
        walls: Option<PathBuf>,
    },
    /// Show a scene's render on a live page in the browser, rendered again whenever the scene
    /// or a file it reads is saved.
    ///
    /// Serves one page on this machine (127.0.0.1, a free port unless --port): it plays the
    /// exact frames `-o frames/` writes, with a scrubber, the events on a timeline, the
    /// coordinates under the pointer, and a [[stone]] or [[swipe]] snippet for a click or a
    /// drag. Runs until Ctrl-C.
    Serve(serve::ServeArgs),
    /// Print a shell's completion script for ripple-render on standard output.
    ///
    /// bash: `ripple-render completions bash > ~/.local/share/bash-completion/completions/ripple-render`;
    /// zsh: into a folder on `$fpath` as `_ripple-render`; fish:
    /// `~/.config/fish/completions/ripple-render.fish`.
    Completions {
        /// The shell.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on standard output: `ripple-render man > ripple-render.1`.
    Man,
    /// Make a dataset for research: N sequences drawn from a spec's ranges with a seed, each
    /// with its ground truth (docs/research.md).
    ///
    /// Into DIR: dataset.json (the spec, seed and count), SPLIT/NNNNNN/ per sequence (train,
    /// val or test), index.json and index.csv. The same spec, seed and count give the same
    /// bytes on any machine and thread count. Run again into the same folder, it keeps the
    /// sequences already whole (their sums verified) and writes the rest. --shard K/N writes
    /// one slice (its index index.K-of-N.json); --merge then writes the whole index.
    Dataset {
        /// The spec (TOML).
        #[arg(value_name = "SPEC", required_unless_present = "merge")]
        spec: Option<PathBuf>,
        /// Sequences in the dataset.
        #[arg(long, value_name = "N", required_unless_present = "merge", value_parser = whole::<1>)]
        count: Option<u64>,
        /// The seed every sequence is drawn from.
        #[arg(long, value_name = "S", default_value_t = 0, value_parser = whole::<0>)]
        seed: u64,
        /// The dataset's folder: new, empty, or the same dataset's (to finish it).
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// Write only the K-th of N near-equal slices (K from 1), for many machines or jobs.
        #[arg(long, value_name = "K/N", value_parser = shard_of, conflicts_with = "merge")]
        shard: Option<(u64, u64)>,
        /// Merge the slices' indexes in DIR into index.json and index.csv.
        #[arg(long, conflicts_with_all = ["spec", "count"])]
        merge: bool,
        /// Sequences written side by side (default: every core).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
        /// Print nothing but errors.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Write a web page where the scene plays live and answers the pointer.
    ///
    /// Into the folder DIR: index.html with the <ripple-water> element, the player
    /// (ripple-water.js and ripple_water.wasm, which this program carries: no toolchain is
    /// needed), the scene and its pictures, a still poster (frame 0) and a lossy WebP of the
    /// loop for a browser without WebAssembly or JavaScript. The page plays the very frames the
    /// CLI renders, in real time; a click drops a stone and a drag draws a swipe. Serve the
    /// folder from any static host (browsers refuse to fetch the scene from file://, and show
    /// the WebP there instead).
    Web {
        /// The scene (TOML).
        #[arg(value_name = "SCENE")]
        scene: PathBuf,
        /// The folder to write: new or empty, or with --force an earlier page's.
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// Replace the folder of an earlier page.
        #[arg(short, long)]
        force: bool,
        /// Print nothing but errors and warnings.
        #[arg(short, long)]
        quiet: bool,
        /// Refuse a scene estimated to need more memory than SIZE to render (the poster and
        /// fallback).
        #[arg(long, value_name = "SIZE", default_value = "1G", allow_negative_numbers = true, value_parser = memory_size)]
        max_memory: u64,
        /// Override a scene key, validated like the file (repeatable): --set video.width=640.
        /// The page's scene is written with them.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Write a starter scene for a picture: the canvas from its size (at most 640 pixels a
    /// side), stones, a swipe and light rain scaled to it, and a smooth, lit look.
    New {
        /// The picture (PNG, JPEG, GIF, BMP or WebP).
        #[arg(value_name = "PICTURE")]
        picture: PathBuf,
        /// Where to write the scene (TOML). The picture is named relative to its folder.
        #[arg(short, long, value_name = "SCENE")]
        output: PathBuf,
        /// The water model.
        #[arg(long, default_value = "classic", value_parser = choices(&Model::ALL, Model::name, Model::help))]
        model: Model,
        /// Replace an existing scene file.
        #[arg(short, long)]
        force: bool,
    },
}

/// `--frames A..B`, `A..`, `..B` or `K/N`.
fn frame_span(text: &str) -> Result<render::Span, String> {
    let expected =
        || "expected A..B (output frames A to B-1, from 0), A.., ..B, or K/N (the K-th of N chunks)".to_string();
    if let Some((k, n)) = text.split_once('/') {
        let (index, count) = (k.trim().parse::<u64>(), n.trim().parse::<u64>());
        return match (index, count) {
            (Ok(index), Ok(count)) if (1..=count).contains(&index) => Ok(render::Span::Chunk { index, count }),
            _ => Err(format!("{}; in K/N, K runs from 1 to N", expected())),
        };
    }
    let (start, end) = text.split_once("..").ok_or_else(expected)?;
    let number = |s: &str| match s.trim() {
        "" => Ok(None),
        s => s.parse::<u64>().map(Some).map_err(|_| expected()),
    };
    Ok(render::Span::Range { start: number(start)?, end: number(end)? })
}

/// `--shard K/N`: K from 1 to N.
fn shard_of(text: &str) -> Result<(u64, u64), String> {
    let expected = || "expected K/N, the K-th of N slices, K from 1 to N".to_string();
    let (k, n) = text.split_once('/').ok_or_else(expected)?;
    match (k.trim().parse::<u64>(), n.trim().parse::<u64>()) {
        (Ok(k), Ok(n)) if (1..=n).contains(&k) => Ok((k, n)),
        _ => Err(expected()),
    }
}

fn memory_size(text: &str) -> Result<u64, String> {
    ripple_render::base::units::parse_size(text).ok_or_else(|| {
        "expected a size of at least one byte, such as 512M, 2G or 1.5GiB (binary: K, M, G, T, KiB…), or 2MB \
         (decimal: kB, MB, GB, TB)"
            .to_string()
    })
}

/// A whole number of at least `MIN`, for a flag that counts (`--frame`, `--max-pixels`, …): a
/// negative one, or one past `u64`, is refused with the range.
fn whole<const MIN: u64>(text: &str) -> Result<u64, String> {
    match text.trim().parse::<i128>() {
        Ok(n) if n >= i128::from(MIN) && n <= i128::from(u64::MAX) => Ok(n as u64),
        _ => Err(format!("expected a whole number from {MIN} up")),
    }
}

/// The command line's words with `--quality 75` and `--lossy 80` read as `--quality=75` and
/// `--lossy=80`, as people type a flag's value (and as cwebp and gifsicle take theirs): a word
/// after either that reads as a number is its value. Either flag alone keeps its default (before
/// another flag, the scene, or at the end).
fn joined_values(words: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let numeric = |w: &str| w.chars().any(|c| c.is_ascii_digit()) && w.chars().all(|c| "0123456789.-+".contains(c));
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    let mut words = words.into_iter().peekable();
    while let Some(word) = words.next() {
        if word == "--" {
            out.push(word);
            out.extend(words);
            break;
        }
        let takes = word == "--quality" || word == "--lossy";
        match words.peek().and_then(|next| next.to_str()).filter(|next| takes && numeric(next)) {
            Some(value) => {
                let mut joined = word;
                joined.push(format!("={value}"));
                out.push(joined);
                words.next();
            }
            None => out.push(word),
        }
    }
    out
}

/// The completion script for `shell`, made from the command line's definition. clap_complete's
/// bash script names its `case` arms for a subcommand `ripple__subcmd__render__…` where the
/// variable it matches holds `ripple__render__subcmd__…` (the hyphen in the program's name is
/// read as a subcommand separator in one place and not the other): the arms are named as the
/// variable is, so `serve --po<TAB>` completes.
fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command(), "ripple-render", &mut out);
    let script = String::from_utf8_lossy(&out).into_owned();
    match shell {
        clap_complete::Shell::Bash => script.replace("ripple__subcmd__render__", "ripple__render__"),
        _ => script,
    }
}

/// The manual page: one page with every subcommand's synopsis, description and options (in
/// place of the list that names a page for each), so that one file installs all of it.
fn man_page() -> Result<String, Error> {
    let io = |source| Error::Io { target: Target::Stdout, source };
    let roff = |render: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| -> Result<String, Error> {
        let mut out = Vec::new();
        render(&mut out).map_err(io)?;
        // Each piece starts with the same two lines that define `Aq`; the page keeps the first.
        let text = String::from_utf8_lossy(&out).into_owned();
        Ok(text
            .lines()
            .filter(|l| !l.starts_with(".ie \\n(.g") && !l.starts_with(".el .ds Aq"))
            .map(|l| format!("{l}\n"))
            .collect())
    };
    let cmd = command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = String::from(".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n");
    page += &roff(&|w| man.render_title(w))?;
    page += &roff(&|w| man.render_name_section(w))?;
    page += &roff(&|w| man.render_synopsis_section(w))?;
    page += &roff(&|w| man.render_description_section(w))?;
    page += &roff(&|w| man.render_options_section(w))?;
    page += ".SH COMMANDS\nEach subcommand's synopsis, description and options follow; `ripple-render COMMAND --help` says the same.\n";
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let name = format!("ripple-render {}", sub.get_name());
        let sub = sub.clone().bin_name(name.clone());
        let man = clap_mangen::Man::new(sub);
        page += &format!(".SS \"{}\"\n", name.replace('-', "\\-"));
        for section in [
            roff(&|w| man.render_synopsis_section(w))?,
            roff(&|w| man.render_description_section(w))?,
            roff(&|w| man.render_options_section(w))?,
        ] {
            // The subcommand's sections become paragraphs under its heading.
            for line in section.lines() {
                if line.starts_with(".SH ") {
                    page += ".PP\n";
                } else {
                    page += line;
                    page += "\n";
                }
            }
        }
    }
    page += &roff(&|w| man.render_extra_section(w))?;
    page += &roff(&|w| man.render_version_section(w))?;
    Ok(page)
}

/// `--format`'s values: the library's formats as `--format` names them, each with its help.
fn format_parser() -> impl TypedValueParser<Value = Named> {
    let values = Named::ALL.map(|named| PossibleValue::new(named.flag()).help(named.help()));
    PossibleValuesParser::new(values).map(|flag| Named::from_flag(&flag).unwrap_or(Named::Gif))
}

/// A flag's values, the library's own choices (`Effort`, `Bless`, …): each by its `name`, with its
/// `help` where that is not empty, in the order of `all`.
fn choices<T: Copy + Send + Sync + 'static>(
    all: &[T],
    name: fn(T) -> &'static str,
    help: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    let all = all.to_vec();
    let values = all.iter().map(|&value| match help(value) {
        "" => PossibleValue::new(name(value)),
        text => PossibleValue::new(name(value)).help(text),
    });
    let values: Vec<PossibleValue> = values.collect();
    // The parser offers only these names, so one of them is found.
    PossibleValuesParser::new(values).map(move |text| all.iter().copied().find(|&v| name(v) == text).unwrap_or(all[0]))
}

/// `--effort`'s help for each level.
fn effort_help(effort: Effort) -> &'static str {
    match effort {
        Effort::Fast => "quickest: at most a few times the GIF's time, a file a little larger",
        Effort::Default => "the knee of speed against size",
        Effort::Max => "smallest file, however long it takes",
    }
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let words = joined_values(std::env::args_os());
    let cli = match command().try_get_matches_from(words).and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout: a reader that stopped early is fine, a
            // stdout that cannot be written is not.
            if let Err(source) = e.print()
                && !e.use_stderr()
                && source.kind() != std::io::ErrorKind::BrokenPipe
            {
                return report(&Error::Io { target: Target::Stdout, source });
            }
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // Signals are honoured from here on, whatever the run is doing (reading a pipe included).
    signals::watch();
    // A panic is a bug: report it in one line, without a backtrace, and exit 3. Unwinding runs
    // the destructors that remove temporary output.
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tell(&format!("error: internal error: {message} (this is a bug in ripple-render; please report it)"));
    }));
    let outcome = std::panic::catch_unwind(|| run(cli));
    match outcome {
        Ok(Ok(code)) => code,
        // Interrupted: the temporary output is gone; end the way the signal would have.
        Ok(Err(Error::Interrupted)) => signals::die_by_pending_signal(),
        Ok(Err(e)) => report(&e),
        Err(_) => ExitCode::from(3),
    }
}

fn report(e: &Error) -> ExitCode {
    tell(&error_text(e));
    ExitCode::from(if e.is_input() { 2 } else { 3 })
}

/// The command line's definition, with the version as this build and machine give it.
fn command() -> clap::Command {
    let commit = env!("RIPPLE_RENDER_COMMIT");
    let version = format!("{} ({commit}, {})", env!("CARGO_PKG_VERSION"), ripple_render::base::simd::path());
    // clap keeps a version for the process's life.
    Cli::command().version(&*Box::leak(version.into_boxed_str()))
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Some(Command::Completions { shell }) => print_out(&completions(shell)).map(|()| ExitCode::SUCCESS),
        Some(Command::Man) => print_out(&man_page()?).map(|()| ExitCode::SUCCESS),
        Some(Command::Plan { scenes, quiet, json, events, max_memory, set, walls }) => {
            if walls.is_some() && scenes.len() > 1 {
                return Err(Error::usage("--walls writes one scene's picture: give one scene", None));
            }
            let detail = if events { Detail::Events } else { Detail::Summary };
            for scene in &scenes {
                plan::run(scene, &set, (json, quiet), detail, max_memory, walls.as_deref())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Diff(args)) => diff::run(&args),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Join(args)) => join::run(&args).map(|()| ExitCode::SUCCESS),
        Some(Command::Serve(args)) => serve::run(&args).map(|()| ExitCode::SUCCESS),
        Some(Command::Dataset { spec, count, seed, output, shard, merge, threads, quiet }) => {
            let threads = threads.map_or_else(ripple_render::base::pool::default_threads, usize::from);
            let request =
                dataset::Request { spec: spec.as_deref(), count, seed, output: &output, shard, merge, threads, quiet };
            dataset::run(&request).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::Web { scene, output, force, quiet, max_memory, set }) => {
            let request = web::Request { scene: &scene, output: &output, force, quiet, max_memory, overrides: &set };
            web::run(&request).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::New { picture, output, model, force }) => {
            new::run(&picture, &output, model, force).map(|()| ExitCode::SUCCESS)
        }
        None => {
            // clap enforces a scene and -o or --hashes when there is no subcommand.
            let Some(scene) = cli.scene else {
                return Err(Error::usage("a scene is required", None));
            };
            let request = render::Request {
                scene: &scene,
                output: cli.output.as_deref(),
                format: cli.format,
                frame: cli.frame,
                frames: cli.frames,
                checkpoints: cli.checkpoints.as_deref(),
                checkpoint_every: cli.checkpoint_every,
                hashes: cli.hashes.as_deref(),
                ground_truth: cli
                    .ground_truth
                    .as_deref()
                    .map(|dir| (dir, truth_of(&cli.ground_truth_layout, &cli.ground_truth_extras))),
                force: cli.force,
                quiet: cli.quiet,
                threads: cli.threads.map_or_else(ripple_render::base::pool::default_threads, usize::from),
                stats: cli.stats,
                max_memory: cli.max_memory,
                indexed_png: cli.indexed_png,
                overrides: &cli.set,
                dither: cli.dither,
                max_size: cli.max_size,
                effort: cli.effort,
                quality: cli.quality,
                lossy: cli.lossy,
            };
            render::run(&request).map(|()| ExitCode::SUCCESS)
        }
    }
}

/// `--ground-truth-layout` and `--ground-truth-extras`, which clap has checked.
fn truth_of(layout: &str, extras: &[String]) -> ripple_render::truth::Truth {
    let mut truth = ripple_render::truth::Truth {
        layout: ripple_render::truth::Layout::from_name(layout).unwrap_or_default(),
        ..Default::default()
    };
    for extra in extras {
        truth.extras.add(extra);
    }
    truth
}
