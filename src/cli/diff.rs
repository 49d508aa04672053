//! `ripple-render diff A B`: the verdict on stdout (text or JSON), pictures with `--out`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ripple_render::Error;
use ripple_render::decode::frames::{Delay, Info, Kind};
use ripple_render::diff::json::{self, Contents};
use ripple_render::diff::page::{self, Entry, FrameFigure, PAGE_WIDTH, Status, Stretch};
use ripple_render::diff::report::ReportWriter;
use ripple_render::diff::{self, FrameResult, Options, Presence, Summary};
use ripple_render::encode::manifest::PixelKind;
use ripple_render::output::{Policy, Staged};

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
    #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(0..))]
    tolerance: u8,

    /// A frame passes with up to N differing pixels.
    #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true,
          value_parser = super::whole::<0>)]
    max_pixels: u64,

    /// A frame also passes when its PSNR is at least DB (to a tenth): for a lossy file
    /// (--quality, --lossy) against its scene, or a video against its render.
    #[arg(long, value_name = "DB", value_parser = min_psnr)]
    min_psnr: Option<u32>,

    /// Print one JSON object: the verdict and, per frame, differing pixels, max delta and PSNR.
    #[arg(long)]
    json: bool,

    /// Print nothing: the exit code says it (0 same, 1 different).
    #[arg(short, long)]
    quiet: bool,

    /// Write a report into this folder (new, empty, or an earlier report's, which is replaced
    /// whole): index.html, the page `check --report` writes, for this pair; A | heat map | B for
    /// the first 20 differing frames, contact.png (at most 40 frames), heat.gif (the differing
    /// stretch) and report.json.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// `--min-psnr DB`: decibels from 0 to 100, kept in tenths.
fn min_psnr(text: &str) -> std::result::Result<u32, String> {
    match text.trim().parse::<f64>() {
        Ok(db) if (0.0..=100.0).contains(&db) => Ok((db * 10.0).round() as u32),
        _ => Err("expected decibels from 0 to 100, such as 30 or 32.5".into()),
    }
}

pub fn run(args: &DiffArgs) -> Result<ExitCode, Error> {
    let options = Options { tolerance: args.tolerance, max_pixels: args.max_pixels, min_psnr_tenths: args.min_psnr };
    // The report folder is checked and staged before any work: it may not be, hold or lie
    // inside an input, and it is replaced whole when the report is complete.
    let staged = args.out.as_deref().map(|dir| Staged::begin(dir, Policy::Report, &[&args.a, &args.b])).transpose()?;
    let names = (args.a.display().to_string(), args.b.display().to_string());
    let mut writer: Option<ReportWriter> = None;
    let mut stretch: Option<Stretch> = None;
    // A signal stops the diff between frames, as it stops a render: then no report is written.
    let interrupted = || super::signals::STOP.load(std::sync::atomic::Ordering::Relaxed);
    let summary = diff::diff(&args.a, &args.b, options, &mut |compared| {
        if interrupted() {
            return Err(Error::Interrupted);
        }
        let Some(staged) = &staged else { return Ok(()) };
        let w = writer.get_or_insert_with(|| {
            ReportWriter::new(staged.path(), staged.target(), names.clone(), compared.size, options.tolerance)
        });
        if let (Some(a), Some(b)) = (compared.a, compared.b) {
            let s = stretch.get_or_insert_with(|| Stretch::new(compared.size, options.tolerance).shrunk_to(PAGE_WIDTH));
            let differs = compared.result.differs() && compared.result.presence == Presence::Both;
            s.observe(compared.result.frame, differs, a, b)?;
        }
        w.observe(compared)
    })?;
    let contents = match (writer, &staged) {
        (Some(w), _) => Some(w.finish(&summary)?),
        (None, Some(staged)) => {
            // No frames had pixels to draw: the report is its JSON alone.
            json::write_json(staged.path(), &summary, Some(&Contents::default()))?;
            Some(Contents { files: vec![staged.target().join("report.json")], ..Contents::default() })
        }
        (None, None) => None,
    };
    if let Some(staged) = staged {
        let entry = Entry {
            name: format!("{} and {}", names.0, names.1),
            status: if summary.same() { Status::Same } else { Status::Different },
            line: {
                let text = human(&summary, None, None);
                let details: Vec<&str> = text.lines().skip(1).map(str::trim).filter(|l| !l.is_empty()).collect();
                if details.is_empty() {
                    text.lines().next().unwrap_or_default().to_string()
                } else {
                    details.join("; ")
                }
            },
            labels: (format!("A: {}", names.0), format!("B: {}", names.1)),
            size: stretch.as_ref().map_or((summary.a.width, summary.a.height), Stretch::size),
            frames: summary
                .results
                .iter()
                .map(|r| FrameFigure { differs: r.differs(), pixels: r.differing_pixels })
                .collect(),
            shots: stretch.map(Stretch::finish).unwrap_or_default(),
            accept: None,
        };
        let title = format!("ripple-render diff: {}", if summary.same() { "the same" } else { "different" });
        let verdict = human(&summary, None, None).lines().next().unwrap_or_default().to_string();
        page::write(staged.path(), &title, &verdict, !summary.same(), &[entry])?;
        // Finished, or interrupted: a report appears only for a diff that finished.
        if interrupted() {
            return Err(Error::Interrupted);
        }
        staged.commit()?;
    }
    if args.json {
        super::say::print_out(&json::to_json(&summary, contents.as_ref()))?;
    } else if !args.quiet {
        super::say::print_out(&human(&summary, args.out.as_deref(), contents.as_ref()))?;
    }
    Ok(ExitCode::from(if summary.same() { 0 } else { 1 }))
}

/// What a differing frame's line says, without its number: frames that say the same, one after
/// another, share one line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Finding {
    /// Present on one side only, or missing from a sequence (named).
    Presence(String),
    /// Pixels differ, counted.
    Pixels,
    /// Hashes differ.
    Hashes,
    /// The canvases differ, so pixels were not compared.
    NotComparable,
}

/// A frame's delays in A and B, where known.
type Delays = (Option<Delay>, Option<Delay>);

/// The findings of one frame: what is wrong with it, and its delays if they differ.
fn findings(r: &FrameResult) -> (Option<Finding>, Option<Delays>) {
    let presence = match &r.presence {
        Presence::OnlyA => Some("only in A".to_string()),
        Presence::OnlyB => Some("only in B".to_string()),
        Presence::MissingInA(name) => Some(format!("missing from A (no {name})")),
        Presence::MissingInB(name) => Some(format!("missing from B (no {name})")),
        Presence::Both => None,
    };
    let finding = match (presence, r.pixels_pass, r.differing_pixels, r.hash_equal) {
        (Some(text), ..) => Some(Finding::Presence(text)),
        (None, true, ..) => None,
        (None, false, Some(_), _) => Some(Finding::Pixels),
        (None, false, None, Some(false)) => Some(Finding::Hashes),
        (None, false, ..) => Some(Finding::NotComparable),
    };
    (finding, r.delay_differs.then_some(r.delays))
}

/// `a`, or `a to b` when they differ.
fn span<T: PartialEq + std::fmt::Display>(a: T, b: T) -> String {
    if a == b { a.to_string() } else { format!("{a} to {b}") }
}

/// One line for a run of frames with the same findings.
fn run_line(run: &[&FrameResult]) -> String {
    let (first, last) = (run[0], run[run.len() - 1]);
    let frames = if run.len() == 1 {
        format!("frame {}", first.frame)
    } else {
        format!("frames {}–{}", first.frame, last.frame)
    };
    let (finding, delays) = findings(first);
    let mut parts = Vec::new();
    match finding {
        Some(Finding::Presence(text)) => parts.push(text),
        Some(Finding::Pixels) => {
            let counts = run.iter().filter_map(|r| r.differing_pixels);
            let (fewest, most) = counts.fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
            let max_delta = run.iter().filter_map(|r| r.max_delta).max().unwrap_or(0);
            let psnrs: Vec<f64> = run.iter().filter_map(|r| r.psnr).collect();
            let psnr = match psnrs.iter().copied().reduce(f64::min).zip(psnrs.iter().copied().reduce(f64::max)) {
                Some((lo, hi)) if (hi - lo).abs() < 0.05 => format!(", PSNR {lo:.1} dB"),
                Some((lo, hi)) => format!(", PSNR {lo:.1} to {hi:.1} dB"),
                None => String::new(),
            };
            let noun = if most == 1 { "pixel differs" } else { "pixels differ" };
            parts.push(format!("{} {noun} (max delta {max_delta}{psnr})", span(fewest, most)));
        }
        Some(Finding::Hashes) => parts.push("pixel hashes differ".to_string()),
        Some(Finding::NotComparable) => parts.push("pixels not comparable".to_string()),
        None => {}
    }
    if let Some((a, b)) = delays {
        let shown = |d: Option<Delay>| d.map_or_else(|| "none".to_string(), |d| d.to_string());
        parts.push(format!("delay {} in A, {} in B", shown(a), shown(b)));
    }
    format!("  {frames}: {}\n", parts.join("; "))
}

/// The differing frames in runs: consecutive frames whose findings are alike.
fn runs<'a>(differing: &[&'a FrameResult]) -> Vec<Vec<&'a FrameResult>> {
    let mut runs: Vec<Vec<&FrameResult>> = Vec::new();
    for &r in differing {
        match runs.last_mut() {
            Some(run) if run[run.len() - 1].frame + 1 == r.frame && findings(run[0]) == findings(r) => run.push(r),
            _ => runs.push(vec![r]),
        }
    }
    runs
}

/// How a side is named in the summary: its path, as given.
fn name(info: &Info) -> String {
    info.path.display().to_string()
}

/// The human verdict: one summary line naming A and B, then one line per run of alike
/// differing frames, then notes that explain.
fn human(s: &Summary, out: Option<&Path>, contents: Option<&Contents>) -> String {
    let mut settings = format!("tolerance {}, max pixels {}", s.options.tolerance, s.options.max_pixels);
    if let Some(least) = s.options.min_psnr_tenths {
        settings += &format!(", min PSNR {}.{} dB", least / 10, least % 10);
    }
    let sides = format!("{} (A) and {} (B)", name(&s.a), name(&s.b));
    let differing: Vec<&FrameResult> = s.differing().collect();
    let mut text = if s.same() {
        format!("same: {sides}: {} frames compared, {}×{} ({settings})\n", s.compared(), s.a.width, s.a.height)
    } else {
        let first = differing.first().map_or(String::new(), |r| format!(", the first is frame {}", r.frame));
        let (count, total) = (differing.len(), s.frames_a.max(s.frames_b));
        format!("different: {sides}: {count} of {total} frames differ{first}; {} compared ({settings})\n", s.compared())
    };
    if s.frames_a != s.frames_b {
        text += &format!("  frame count: A has {}, B has {}\n", s.frames_a, s.frames_b);
    }
    if !s.same_canvas {
        text += &format!("  canvas: A is {}×{}, B is {}×{}\n", s.a.width, s.a.height, s.b.width, s.b.height);
    }
    let runs = runs(&differing);
    for run in runs.iter().take(LISTED) {
        text += &run_line(run);
    }
    if runs.len() > LISTED {
        let rest: usize = runs[LISTED..].iter().map(Vec::len).sum();
        text += &format!("  … and {rest} more differing frames in {} more stretches\n", runs.len() - LISTED);
    }
    text += &colour_note(s);
    if s.by_hash && (s.options.tolerance > 0 || s.options.max_pixels > 0) {
        text += "note: compared by hash (a manifest side): exact, so --tolerance and --max-pixels do not apply\n";
    }
    if !s.timing_compared {
        let untimed = if s.a.kind.timing_error().is_none() { s.a.kind } else { s.b.kind };
        text += &format!("note: timing not compared (a {} has no delays)\n", untimed.name());
    }
    if let (Some(pa), Some(pb)) = (&s.a.provenance, &s.b.provenance) {
        if pa.version != pb.version {
            text += &format!("note: rendered by different versions: A by {}, B by {}\n", pa.version, pb.version);
        }
        if pa.scene != pb.scene {
            text += &format!("note: rendered from different scenes: A {:016x}, B {:016x}\n", pa.scene, pb.scene);
        }
    }
    if let (Some(dir), Some(contents)) = (out, contents) {
        let page = dir.join("index.html");
        let files = contents.files.len();
        let plural = if files == 1 { "" } else { "s" };
        text += &format!("report: {} (open it in a browser), and {files} panel file{plural}", page.display());
        let mut left_out = Vec::new();
        if contents.drawable > contents.sheet.len() as u64 {
            left_out.push(format!(
                "contact.png shows {} of {} differing frames",
                contents.sheet.len(),
                contents.drawable
            ));
        }
        if contents.drawable > contents.panels.len() as u64 && !contents.panels.is_empty() {
            left_out.push(format!("panels for the first {}", contents.panels.len()));
        }
        if let Some(h) = &contents.heat {
            let shrink = if h.shrink > 1 { format!(", at 1/{} size", h.shrink) } else { String::new() };
            let covered = h.last - h.first + 1;
            if covered > h.frames as u64 || h.shrink > 1 {
                left_out.push(format!("heat.gif shows {} of frames {}–{}{shrink}", h.frames, h.first, h.last));
            }
        }
        if !left_out.is_empty() {
            text += &format!(" ({})", left_out.join("; "));
        }
        text.push('\n');
    }
    text
}

/// Why a side that shows a GIF's palette colours and one that shows the exact render differ,
/// when they do: the palette, not the render.
fn colour_note(s: &Summary) -> String {
    if s.same() || s.a.colours == s.b.colours {
        return String::new();
    }
    let (gif, exact) = if s.a.colours == PixelKind::Gif { ("A", "B") } else { ("B", "A") };
    let describe = |info: &Info| match (info.kind, info.colours) {
        (Kind::Manifest, PixelKind::Gif) => {
            "hashes the colours a GIF showed (pixels: gif, as manifests written \
             beside a GIF by earlier versions do)"
        }
        (Kind::Manifest, PixelKind::Rgb) => "hashes the exact render (pixels: rgb)",
        (Kind::Gif, _) => "is a GIF",
        (Kind::Scene, PixelKind::Gif) => "is a scene shown through its GIF's palette",
        (Kind::Scene, PixelKind::Rgb) => "is a scene, rendered exactly",
        (Kind::Apng, _) => "is an APNG of the exact render",
        (Kind::Webp, _) => "is a WebP of the exact render",
        (Kind::Png, _) => "is a PNG of the exact render",
        (Kind::PngSequence, _) => "is a PNG sequence of the exact render",
    };
    let (gif_info, exact_info) = if gif == "A" { (&s.a, &s.b) } else { (&s.b, &s.a) };
    let mut note = format!("note: {gif} {}, {exact} {}", describe(gif_info), describe(exact_info));
    if s.by_hash {
        note += ": where the background has more than 256 colours, a GIF's colours are quantized, so no frame \
                 can match by hash. ";
        note += if gif_info.kind == Kind::Manifest && exact_info.kind == Kind::Manifest {
            "Render the reference again with this version (re-bless it): manifests now hash the exact render \
             whatever else is written\n"
        } else {
            "Compare manifests with manifests (--hashes writes one beside any output), or the GIF with its scene\n"
        };
        return note;
    }
    match s.exact_colours {
        Some(colours) if colours > 256 => {
            let max_delta = s.results.iter().filter_map(|r| r.max_delta).max().unwrap_or(0);
            note += &format!(
                ": {exact}'s first frame has more than 256 colours, which a GIF can only show through its palette, \
                 so the pixels differ by the palette's error (max delta {max_delta}). Pass --tolerance {max_delta} \
                 to compare within it, or compare the GIF with its scene, which diff shows through the same \
                 palette\n"
            );
            note
        }
        _ => String::new(),
    }
}
