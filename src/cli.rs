//! The command line: arguments, messages on stderr, the progress bar and exit codes.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use ripple_render::output::{self, Format, Staged};
use ripple_render::{Background, Error, Progress, Scene};

const AFTER_HELP: &str = "\
Examples:
  ripple-render scenes/pond.toml -o pond.gif        render an animated GIF
  ripple-render scenes/rain.toml -o frames/         render frame_0000.png, … into frames/
  ripple-render plan scenes/pond.toml               show the timeline without rendering
  ripple-render plan --json scenes/pond.toml        the same as JSON

Exit codes:
  0  success
  2  bad usage or bad input (scene, background, output path)
  3  I/O or internal failure";

/// Water ripples over a still image, rendered to an animated GIF or a PNG sequence.
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

    /// Where to write: a .gif file, or a folder (ending in /) for a PNG sequence.
    #[arg(short, long, value_name = "OUT", required = true)]
    output: Option<PathBuf>,

    /// The output format, when the path does not tell.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<FormatArg>,

    /// Replace an existing output file or non-empty folder.
    #[arg(short, long)]
    force: bool,

    /// Print nothing but errors: no progress bar, no summary.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate a scene and print its resolved timeline, without rendering.
    Plan {
        /// The scene file (TOML).
        #[arg(value_name = "SCENE")]
        scene: PathBuf,
        /// Print one JSON object (settings and every event in the order applied).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    /// An animated GIF file.
    Gif,
    /// A folder of PNG files, frame_0000.png, ….
    Png,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // A panic is a bug: report it in one line, without a backtrace, and exit 3. Unwinding runs
    // the destructors that remove temporary output.
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("error: internal error: {message} (this is a bug in ripple-render; please report it)");
    }));
    let outcome = std::panic::catch_unwind(|| run(cli));
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => report(&e),
        Err(_) => ExitCode::from(3),
    }
}

fn report(e: &Error) -> ExitCode {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {e}");
    for hint in e.hints() {
        let _ = writeln!(stderr, "hint: {hint}");
    }
    ExitCode::from(if e.is_input() { 2 } else { 3 })
}

fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Some(Command::Plan { scene, json }) => plan(&scene, json),
        None => {
            // clap enforces both when there is no subcommand.
            let (Some(scene), Some(output)) = (cli.scene, cli.output) else {
                return Err(Error::Output { message: "a scene and -o OUT are required".into(), hint: None });
            };
            let format = cli.format.map(|f| match f {
                FormatArg::Gif => Format::Gif,
                FormatArg::Png => Format::PngSequence,
            });
            render(&scene, &output, format, cli.force, cli.quiet)
        }
    }
}

fn plan(path: &Path, json: bool) -> Result<(), Error> {
    let scene = Scene::load(path)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = if json {
        ripple_render::plan::write_json(&scene, &mut out)
    } else {
        ripple_render::plan::write_text(&scene, &mut out)
    };
    match written.and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Io { path: "standard output".into(), source }),
        Ok(()) => Ok(()),
    }
}

fn render(scene_path: &Path, output: &Path, format: Option<Format>, force: bool, quiet: bool) -> Result<(), Error> {
    let started = Instant::now();
    let scene = Scene::load(scene_path)?;
    let format = output::detect_format(output, format)?;
    if format == Format::Gif {
        scene.check_gif_fps()?;
    }
    let mut inputs = vec![scene_path];
    inputs.extend(scene.background.image.as_deref());
    let background = Background::for_scene(&scene)?;
    let staged = Staged::begin(output, format, force, &inputs)?;

    let bar = progress_bar(&scene, quiet);
    let mut on_progress = |p: Progress| {
        if p.simulated == scene.first_frame + 1 && scene.first_frame > 0 {
            bar.set_message("");
        }
        bar.set_position(p.simulated);
    };
    let rendered = match format {
        Format::Gif => std::fs::File::create(staged.path())
            .map_err(|source| Error::Io { path: staged.path().to_path_buf(), source })
            .and_then(|file| {
                let writer = std::io::BufWriter::with_capacity(1 << 20, file);
                ripple_render::render_gif(&scene, &background, writer, &mut on_progress)
            }),
        Format::PngSequence => ripple_render::render_png_sequence(&scene, &background, staged.path(), &mut on_progress),
    };
    bar.finish_and_clear();
    // I/O errors inside the temporary output are reported against the real target.
    rendered.map_err(|e| match e {
        Error::Io { source, .. } => Error::Io { path: staged.target().to_path_buf(), source },
        other => other,
    })?;
    let target = staged.target().to_path_buf();
    staged.commit()?;
    if !quiet {
        eprintln!(
            "wrote {}: {} frames, {}×{}, in {:.2} s",
            target.display(),
            scene.frames,
            scene.width,
            scene.height,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
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
