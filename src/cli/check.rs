//! `ripple-render check SCENE… --refs DIR`: every scene against its reference, one line each and
//! a summary, like `cargo test`; `--bless` on purpose; a report page, JUnit XML, a GitHub job
//! summary and JSON for the CI around it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use serde::Serialize;

use ripple_render::Error;
use ripple_render::check::shard::{self, Shard};
use ripple_render::check::{self, Blessed, Outcome, Plan, Verdict};
use ripple_render::diff::Options;
use ripple_render::diff::page::{self, Entry};
use ripple_render::encode::workers::default_threads;
use ripple_render::output::Staged;
use ripple_render::scene::Scene;

/// Rows of the GitHub job summary's table at most (the summary is capped at 1 MiB).
const SUMMARY_ROWS: usize = 50;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scenes (TOML) to check.
    #[arg(value_name = "SCENE", required_unless_present = "merge_reports")]
    scenes: Vec<PathBuf>,

    /// The folder of references: NAME.gif for each NAME.toml.
    #[arg(long, value_name = "DIR", required_unless_present = "merge_reports")]
    refs: Option<PathBuf>,

    /// Check only the K-th of N slices of the scenes (K from 1): the scenes sorted by path,
    /// every N-th from the K-th. Every scene is in exactly one slice, the same on every machine:
    /// run N jobs (a CI matrix) and merge their --report folders with --merge-reports.
    #[arg(long, value_name = "K/N", value_parser = Shard::parse)]
    shard: Option<Shard>,

    /// Merge the report folders of the N shards of one check (each written by `check --shard
    /// K/N --report DIR`) into one verdict: the summary, exit code, --report, --junit and
    /// --json of the whole check, as one machine would have made them.
    #[arg(
        long,
        value_name = "DIR",
        num_args = 1..,
        conflicts_with_all = ["scenes", "refs", "shard", "bless", "tolerance", "max_pixels", "threads"]
    )]
    merge_reports: Vec<PathBuf>,

    /// Write the references of the scenes that differ or have none (the folder is made if need
    /// be), and say which. Never done otherwise.
    #[arg(long)]
    bless: bool,

    /// A pixel differs when one of its channels differs by more than N (judged on the
    /// reference's picture; 0: any change to the exact frame differs).
    #[arg(long, value_name = "N", default_value_t = 0)]
    tolerance: u8,

    /// A frame passes with up to N differing pixels of the reference's picture.
    #[arg(long, value_name = "N", default_value_t = 0)]
    max_pixels: u64,

    /// Write a report page into this folder (new, empty, or an earlier report's, which is
    /// replaced whole): index.html and its pictures, failures first.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,

    /// Write JUnit XML to this file: one testcase per scene.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,

    /// Print one JSON object instead of lines.
    #[arg(long)]
    json: bool,

    /// Print nothing: the exit code says it (0 all the same, 1 any differs or lacks a reference).
    #[arg(short, long)]
    quiet: bool,

    /// Check N scenes at a time (default: every core). Each scene's frames are the same for any N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
}

/// What a check found, checked here or merged from shards, and how it was asked.
struct Found {
    outcomes: Vec<Outcome>,
    options: Options,
    refs: PathBuf,
    /// The slice checked, if one was.
    shard: Option<Shard>,
    /// The scenes given, before slicing.
    scenes_given: usize,
    seconds: f64,
    /// The report folder, staged.
    staged: Option<Staged>,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, Error> {
    let found = if args.merge_reports.is_empty() { check_scenes(args)? } else { merge(args)? };
    report(args, found)
}

/// Checks the scenes (or the shard's slice of them) against their references.
fn check_scenes(args: &CheckArgs) -> Result<Found, Error> {
    let started = Instant::now();
    let options = Options { tolerance: args.tolerance, max_pixels: args.max_pixels };
    let refs = args.refs.clone().unwrap_or_default();
    let scenes = match args.shard {
        Some(shard) => shard.slice(&args.scenes),
        None => args.scenes.clone(),
    };
    // Bad input stops the check before any work: every scene read and validated, no two
    // sharing a reference, the report folder usable. (A shard reads only its own scenes, and
    // checks that no two of all the scenes share a reference, as every shard must agree.)
    for scene in &scenes {
        Scene::load(scene)?;
    }
    if std::fs::metadata(&refs).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::Output {
            message: format!("--refs {} is a file, not a folder of references", refs.display()),
            hint: Some("name the folder that holds (or will hold, with --bless) NAME.gif for each NAME.toml".into()),
        });
    }
    check::distinct_references(&args.scenes, &refs)?;
    let mut inputs: Vec<&Path> = args.scenes.iter().map(PathBuf::as_path).collect();
    inputs.push(&refs);
    let staged = args.report.as_deref().map(|dir| Staged::begin_report(dir, &inputs)).transpose()?;
    let plan = Plan { options, bless: args.bless, pictures: staged.is_some() };
    let threads = args.threads.map_or_else(default_threads, usize::from);
    let lines = !args.json && !args.quiet;
    if lines && let Some(shard) = args.shard {
        super::print_out(&format!(
            "shard {}/{}: {} of {} scenes\n",
            shard.index,
            shard.count,
            scenes.len(),
            args.scenes.len()
        ))?;
    }
    let mut outcomes = Vec::new();
    check::check_all(&scenes, &refs, plan, threads, &mut |outcome| {
        if lines {
            super::print_out(&format!("scene {} ... {}\n", outcome.scene.display(), status_line(&outcome)))?;
        }
        outcomes.push(outcome);
        Ok(())
    })?;
    let seconds = started.elapsed().as_secs_f64();
    Ok(Found { outcomes, options, refs, shard: args.shard, scenes_given: args.scenes.len(), seconds, staged })
}

/// Reads the shards' report folders, checks they are every slice of one check once, and puts
/// their outcomes together in the order one check of every scene lists them.
fn merge(args: &CheckArgs) -> Result<Found, Error> {
    let mut records = Vec::new();
    let mut outcomes = Vec::new();
    for dir in &args.merge_reports {
        let (record, found) = shard::read(dir)?;
        records.push((dir.clone(), record));
        outcomes.extend(found);
    }
    shard::check_complete(&records)?;
    outcomes.sort_by(|a, b| a.scene.as_os_str().cmp(b.scene.as_os_str()));
    let first = &records[0].1;
    let options = Options { tolerance: first.tolerance, max_pixels: first.max_pixels };
    // The shards ran side by side: the check took as long as the slowest.
    let seconds = records.iter().map(|(_, r)| r.seconds).fold(0.0, f64::max);
    let inputs: Vec<&Path> = args.merge_reports.iter().map(PathBuf::as_path).collect();
    let staged = args.report.as_deref().map(|dir| Staged::begin_report(dir, &inputs)).transpose()?;
    if !args.json && !args.quiet {
        for outcome in &outcomes {
            super::print_out(&format!("scene {} ... {}\n", outcome.scene.display(), status_line(outcome)))?;
        }
    }
    let (refs, scenes_given) = (PathBuf::from(&first.refs), first.scenes_given);
    Ok(Found { outcomes, options, refs, shard: None, scenes_given, seconds, staged })
}

/// Says what was found: the page, JUnit, the job summary, JSON or lines, and the exit code.
fn report(args: &CheckArgs, found: Found) -> Result<ExitCode, Error> {
    let Found { mut outcomes, options, refs, shard, scenes_given, seconds, staged } = found;
    let refs = refs.as_path();
    let inputs: Vec<&Path> = args.scenes.iter().map(PathBuf::as_path).chain([refs]).collect();
    let tally = Tally::of(&outcomes);
    let report_page = staged.as_ref().map(|s| s.target().join("index.html"));
    if let Some(staged) = staged {
        // The outcomes, for a merge of shards: written before the entries take the pictures.
        let record = shard::Record {
            shard,
            scenes_given,
            tolerance: options.tolerance,
            max_pixels: options.max_pixels,
            refs: refs.display().to_string(),
            seconds,
            scenes: outcomes.iter().map(shard::SceneRecord::of).collect(),
        };
        let path = staged.path().join(shard::RECORD);
        let text = serde_json::to_string_pretty(&record).unwrap_or_default() + "\n";
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
        let mut entries: Vec<Entry> = outcomes.iter_mut().map(Outcome::entry).collect();
        // Blessed scenes still show what changed: that is what a reviewer blesses.
        for (entry, outcome) in entries.iter_mut().zip(&outcomes) {
            if let Some(blessed) = outcome.blessed {
                entry.line += match blessed {
                    Blessed::New => "; blessed: reference written",
                    Blessed::Refreshed => "; blessed: reference replaced",
                };
            }
        }
        let mut title = format!("ripple-render check: {}", tally.headline());
        if let Some(shard) = shard {
            title += &format!(" (shard {}/{})", shard.index, shard.count);
        }
        page::write(staged.path(), &title, &tally.summary(options, refs, seconds), tally.fails(), &entries)?;
        staged.commit()?;
    }
    if let Some(junit) = &args.junit {
        let staged = Staged::begin(junit, false, true, &inputs)?;
        let mut file = staged.file()?;
        std::io::Write::write_all(&mut file, junit_xml(&outcomes, seconds).as_bytes())
            .map_err(|e| Error::io(junit, e))?;
        drop(file);
        staged.commit()?;
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        append_step_summary(Path::new(&summary), &outcomes, &tally, options, report_page.as_deref())?;
    }
    if args.json {
        let shard = shard.map(|s| format!("{}/{}", s.index, s.count));
        super::print_out(&json(&outcomes, &tally, options, refs, report_page.as_deref(), seconds, shard))?;
    } else if !args.quiet {
        let mut text = format!("\ncheck result: {}\n", tally.summary(options, refs, seconds));
        if let Some(page) = &report_page {
            let _ = writeln!(text, "report: {}", page.display());
        }
        if tally.fails() {
            let what = if tally.different > 0 {
                "if the change is intended, bless it on purpose"
            } else {
                "write the missing references on purpose"
            };
            let _ = writeln!(text, "hint: {what}: ripple-render check SCENE… --refs {} --bless", refs.display());
        }
        super::print_out(&text)?;
    }
    Ok(ExitCode::from(if tally.fails() { 1 } else { 0 }))
}

/// A scene's line after `scene NAME ...`.
fn status_line(o: &Outcome) -> String {
    match (&o.verdict, o.blessed) {
        (Verdict::Same, _) => "ok".into(),
        (Verdict::Missing, Some(_)) => format!("blessed (new reference {})", o.reference.display()),
        (Verdict::Missing, None) => {
            format!("FAILED: no reference {} (write it on purpose with --bless)", o.reference.display())
        }
        (Verdict::Different { .. }, Some(_)) => {
            format!("blessed ({}; replaced {})", o.line(), o.reference.display())
        }
        (Verdict::Different { .. }, None) => format!("FAILED: {}", o.line()),
    }
}

/// The counts over every scene.
struct Tally {
    same: usize,
    different: usize,
    missing: usize,
    blessed: Vec<(PathBuf, Blessed)>,
}

impl Tally {
    fn of(outcomes: &[Outcome]) -> Tally {
        let count = |f: fn(&Verdict) -> bool| outcomes.iter().filter(|o| f(&o.verdict)).count();
        Tally {
            same: count(|v| *v == Verdict::Same),
            different: count(|v| matches!(v, Verdict::Different { .. })),
            missing: count(|v| *v == Verdict::Missing),
            blessed: outcomes.iter().filter_map(|o| o.blessed.map(|b| (o.reference.clone(), b))).collect(),
        }
    }

    /// Whether the job fails: a scene differs or lacks a reference, and was not blessed.
    fn fails(&self) -> bool {
        self.different + self.missing > self.blessed.len()
    }

    fn total(&self) -> usize {
        self.same + self.different + self.missing
    }

    /// "all 7 scenes are the same", "2 of 7 scenes fail", "2 of 7 scenes blessed".
    fn headline(&self) -> String {
        let total = self.total();
        let scenes = if total == 1 { "scene" } else { "scenes" };
        if !self.blessed.is_empty() {
            format!("{} of {total} {scenes} blessed", self.blessed.len())
        } else if self.fails() {
            format!("{} of {total} {scenes} fail", self.different + self.missing)
        } else {
            format!("all {total} {scenes} are the same")
        }
    }

    /// `ok. 5 same; 1 different; 1 without a reference; …` as `cargo test` sums up.
    fn summary(&self, options: Options, refs: &Path, seconds: f64) -> String {
        let verdict = if self.fails() { "FAILED" } else { "ok" };
        let mut text = format!(
            "{verdict}. {} same; {} different; {} without a reference",
            self.same, self.different, self.missing
        );
        if !self.blessed.is_empty() {
            let names: Vec<String> = self
                .blessed
                .iter()
                .map(|(path, b)| {
                    format!("{} ({})", path.display(), if *b == Blessed::New { "new" } else { "replaced" })
                })
                .collect();
            let _ = write!(text, "; blessed {}: {}", self.blessed.len(), names.join(", "));
        }
        let _ = write!(
            text,
            "; finished in {seconds:.2}s (tolerance {}, max pixels {}, references in {})",
            options.tolerance,
            options.max_pixels,
            refs.display()
        );
        text
    }
}

/// Escapes text for XML attributes and content.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// JUnit XML: one testsuite, one testcase per scene; a scene that differs or lacks a reference
/// (and was not blessed) is a failure whose message names the first differing frame.
fn junit_xml(outcomes: &[Outcome], seconds: f64) -> String {
    let failures = outcomes.iter().filter(|o| o.failed() && o.blessed.is_none()).count();
    let tests = outcomes.len();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"ripple-render check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
         time=\"{seconds:.3}\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"ripple-render check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
         skipped=\"0\" time=\"{seconds:.3}\">"
    );
    for o in outcomes {
        let name = xml(&o.scene.display().to_string());
        let _ = write!(
            out,
            "    <testcase classname=\"ripple-render.check\" name=\"{name}\" file=\"{name}\" time=\"{:.3}\"",
            o.seconds
        );
        if !o.failed() || o.blessed.is_some() {
            out.push_str("/>\n");
            continue;
        }
        let (kind, message) = match &o.verdict {
            Verdict::Missing => ("missing", format!("no reference {}", o.reference.display())),
            _ => ("different", format!("{}: {}", o.scene.display(), o.line())),
        };
        let _ = write!(
            out,
            ">\n      <failure type=\"{kind}\" message=\"{}\">reference: {}\n{}</failure>\n    </testcase>\n",
            xml(&message),
            xml(&o.reference.display().to_string()),
            xml(&o.line())
        );
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// Appends a short Markdown summary to GitHub's job summary: a headline, a row per failing
/// scene, the count of the rest. No pictures: the summary is capped at 1 MiB, the report is an
/// artifact.
fn append_step_summary(
    path: &Path,
    outcomes: &[Outcome],
    tally: &Tally,
    options: Options,
    report: Option<&Path>,
) -> Result<(), Error> {
    let mark = if tally.fails() { "❌" } else { "✅" };
    let mut text = format!("### {mark} ripple-render check: {}\n\n", tally.headline());
    let listed: Vec<&Outcome> = outcomes.iter().filter(|o| o.failed()).collect();
    if !listed.is_empty() {
        text.push_str("| scene | result |\n|---|---|\n");
        for o in listed.iter().take(SUMMARY_ROWS) {
            let result = match o.blessed {
                Some(_) => format!("blessed: {}", o.line()),
                None => o.line(),
            };
            let cell = |s: &str| s.replace('|', "\\|");
            let _ = writeln!(text, "| `{}` | {} |", cell(&o.scene.display().to_string()), cell(&result));
        }
        if listed.len() > SUMMARY_ROWS {
            let _ = writeln!(text, "\n…and {} more.", listed.len() - SUMMARY_ROWS);
        }
        text.push('\n');
    }
    let _ = write!(text, "{} same (tolerance {}, max pixels {}).", tally.same, options.tolerance, options.max_pixels);
    if let Some(report) = report {
        let _ = write!(text, " Report: `{}` (keep it as the job's artifact).", report.display());
    }
    text.push_str("\n\n");
    let mut file = std::fs::OpenOptions::new().append(true).create(true).open(path).map_err(|e| Error::io(path, e))?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| Error::io(path, e))
}

#[derive(Serialize)]
struct JsonCheck<'a> {
    verdict: &'static str,
    /// The slice checked (`K/N`), if one was.
    shard: Option<String>,
    tolerance: u8,
    max_pixels: u64,
    refs: String,
    report: Option<String>,
    seconds: f64,
    counts: JsonCounts,
    scenes: Vec<JsonScene<'a>>,
}

#[derive(Serialize)]
struct JsonCounts {
    same: usize,
    different: usize,
    missing: usize,
    blessed: usize,
}

#[derive(Serialize)]
struct JsonScene<'a> {
    scene: String,
    reference: String,
    result: &'static str,
    first_differing_frame: Option<u64>,
    differing_frames: u64,
    frames: u64,
    reference_frames: Option<u64>,
    notes: &'a [String],
    blessed: Option<&'static str>,
    seconds: f64,
}

fn json(
    outcomes: &[Outcome],
    tally: &Tally,
    options: Options,
    refs: &Path,
    report: Option<&Path>,
    seconds: f64,
    shard: Option<String>,
) -> String {
    let scenes = outcomes
        .iter()
        .map(|o| {
            let (result, first, differing) = match &o.verdict {
                Verdict::Same => ("same", None, 0),
                Verdict::Different { first, frames } => ("different", Some(*first), *frames),
                Verdict::Missing => ("missing", None, 0),
            };
            JsonScene {
                scene: o.scene.display().to_string(),
                reference: o.reference.display().to_string(),
                result,
                first_differing_frame: first,
                differing_frames: differing,
                frames: o.frames,
                reference_frames: o.reference_frames,
                notes: &o.notes,
                blessed: o.blessed.map(|b| if b == Blessed::New { "new" } else { "replaced" }),
                seconds: o.seconds,
            }
        })
        .collect();
    let value = JsonCheck {
        verdict: if tally.fails() { "different" } else { "same" },
        shard,
        tolerance: options.tolerance,
        max_pixels: options.max_pixels,
        refs: refs.display().to_string(),
        report: report.map(|p| p.display().to_string()),
        seconds,
        counts: JsonCounts {
            same: tally.same,
            different: tally.different,
            missing: tally.missing,
            blessed: tally.blessed.len(),
        },
        scenes,
    };
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}
