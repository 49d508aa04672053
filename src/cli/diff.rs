//! `ripple-render diff A B`: the verdict on stdout (text or JSON), pictures with `--out`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ripple_render::Error;
use ripple_render::diff::report::{self, ReportWriter};
use ripple_render::diff::{self, FrameResult, Options, Presence, Summary};

/// Differing frames listed one per line before the rest are counted.
const LISTED: usize = 20;

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The first render: a GIF, a PNG-sequence folder, a scene (.toml) or a hash manifest.
    #[arg(value_name = "A")]
    a: PathBuf,

    /// The second render, of any of the same kinds.
    #[arg(value_name = "B")]
    b: PathBuf,

    /// A pixel differs when one of its channels differs by more than N.
    #[arg(long, value_name = "N", default_value_t = 0)]
    tolerance: u8,

    /// A frame passes with up to N differing pixels.
    #[arg(long, value_name = "N", default_value_t = 0)]
    max_pixels: u64,

    /// Print one JSON object: the verdict and, per frame, differing pixels, max delta and PSNR.
    #[arg(long)]
    json: bool,

    /// Print nothing: the exit code says it (0 same, 1 different).
    #[arg(short, long)]
    quiet: bool,

    /// Write pictures of the differences here: A | heat map | B for each differing frame (the
    /// first 20), contact.png, heat.gif and report.json.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(args: &DiffArgs) -> Result<ExitCode, Error> {
    let options = Options { tolerance: args.tolerance, max_pixels: args.max_pixels };
    let mut writer: Option<ReportWriter> = None;
    let mut report_error = None;
    let summary = diff::diff(&args.a, &args.b, options, &mut |compared| {
        let Some(dir) = &args.out else { return Ok(()) };
        if writer.is_none() && report_error.is_none() {
            let size = compared.size;
            match ReportWriter::new(dir, size.0, size.1, options.tolerance) {
                Ok(w) => writer = Some(w),
                Err(e) => report_error = Some(e),
            }
        }
        match &mut writer {
            Some(w) => w.observe(compared),
            None => Ok(()),
        }
    })?;
    if let Some(e) = report_error {
        return Err(e);
    }
    let written = match (writer, &args.out) {
        (Some(w), _) => w.finish(&summary)?,
        (None, Some(dir)) => {
            // No frames had pixels to draw: still leave the report.
            std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
            let path = dir.join("report.json");
            std::fs::write(&path, report::to_json(&summary, &[]))
                .map_err(|source| Error::Io { path: path.clone(), source })?;
            vec![path]
        }
        (None, None) => Vec::new(),
    };
    if args.json {
        print!("{}", report::to_json(&summary, &[]));
    } else if !args.quiet {
        print!("{}", human(&summary, args.out.as_deref(), &written));
    }
    Ok(ExitCode::from(if summary.same() { 0 } else { 1 }))
}

fn frame_line(r: &FrameResult) -> String {
    let mut parts = Vec::new();
    match r.presence {
        Presence::OnlyA => parts.push("only in A".to_string()),
        Presence::OnlyB => parts.push("only in B".to_string()),
        Presence::Both => {}
    }
    if !r.pixels_pass {
        match (r.differing_pixels, r.hash_equal) {
            (Some(n), _) => {
                let psnr = r.psnr.map_or(String::new(), |p| format!(", PSNR {p:.1} dB"));
                let noun = if n == 1 { "pixel differs" } else { "pixels differ" };
                parts.push(format!("{n} {noun} (max delta {}{psnr})", r.max_delta.unwrap_or(0)));
            }
            (None, Some(false)) => parts.push("pixel hashes differ".to_string()),
            _ if r.presence == Presence::Both => parts.push("pixels not comparable".to_string()),
            _ => {}
        }
    }
    if r.delay_differs {
        parts.push(format!("delay {} cs in A, {} cs in B", r.delays.0.unwrap_or(0), r.delays.1.unwrap_or(0)));
    }
    format!("  frame {}: {}\n", r.frame, parts.join("; "))
}

/// The human verdict: one summary line, then one line per differing frame, then notes.
fn human(s: &Summary, out: Option<&Path>, written: &[PathBuf]) -> String {
    let settings = format!("tolerance {}, max pixels {}", s.options.tolerance, s.options.max_pixels);
    let differing: Vec<&FrameResult> = s.differing().collect();
    let mut text = if s.same() {
        format!("same: {} frames compared, {}×{} ({settings})\n", s.compared(), s.a.width, s.a.height)
    } else {
        let first = differing.first().map_or(String::new(), |r| format!(", the first is frame {}", r.frame));
        let (count, total) = (differing.len(), s.frames_a.max(s.frames_b));
        format!("different: {count} of {total} frames differ{first}; {} compared ({settings})\n", s.compared())
    };
    if s.frames_a != s.frames_b {
        text += &format!("  frame count: A has {}, B has {}\n", s.frames_a, s.frames_b);
    }
    if !s.same_canvas {
        text += &format!("  canvas: A is {}×{}, B is {}×{}\n", s.a.width, s.a.height, s.b.width, s.b.height);
    }
    for r in differing.iter().take(LISTED) {
        text += &frame_line(r);
    }
    if differing.len() > LISTED {
        text += &format!("  … and {} more differing frames\n", differing.len() - LISTED);
    }
    if s.by_hash && (s.options.tolerance > 0 || s.options.max_pixels > 0) {
        text += "note: compared by hash (a manifest side): exact, so --tolerance and --max-pixels do not apply\n";
    }
    if !s.timing_compared {
        text += "note: timing not compared (a PNG sequence has no delays)\n";
    }
    if let (Some(pa), Some(pb)) = (&s.a.provenance, &s.b.provenance) {
        if pa.version != pb.version {
            text += &format!("note: rendered by different versions: A by {}, B by {}\n", pa.version, pb.version);
        }
        if pa.scene != pb.scene {
            text += &format!("note: rendered from different scenes: A {:016x}, B {:016x}\n", pa.scene, pb.scene);
        }
    }
    if let Some(dir) = out {
        text += &format!("report: {} files in {}\n", written.len(), dir.display());
    }
    text
}
