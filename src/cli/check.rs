//! `ripple-render check SCENE… --refs DIR`: every scene against its reference, one line each and
//! a summary, like `cargo test`; `--bless` on purpose; a report page, JUnit XML, a GitHub job
//! summary and JSON for the CI around it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ripple_render::Error;
use ripple_render::base::pool::default_threads;
use ripple_render::check::accept::How;
use ripple_render::check::shard::{self, Record, Shard};
use ripple_render::check::{self, Bless, Found, Leftover, Plan, Unreferenced};
use ripple_render::diff::Options;
use ripple_render::diff::page;
use ripple_render::output::{self, Policy, Staged};
use ripple_render::scene::Scene;

use super::check_report::{Tally, annotations, append_step_summary, json, junit_xml, page_entries, scene_line};
use super::choices;
use super::say::{print_out, tell};

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scenes (TOML) to check (with --accept-from: the scenes to accept, all when none).
    #[arg(value_name = "SCENE", required_unless_present_any = ["merge_reports", "accept_from"])]
    scenes: Vec<PathBuf>,

    /// The folder of references: NAME.gif for each NAME.toml (with --accept-from: the
    /// report's own when not given).
    #[arg(long, value_name = "DIR", required_unless_present_any = ["merge_reports", "accept_from"])]
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

    /// Accept the would-be references a check's --report folder kept (its pending/), without
    /// rendering again: of the SCENEs given, or every one it kept. Byte for byte what --bless
    /// writes; refused if a scene or its reference changed since that check.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["merge_reports", "shard", "bless", "tolerance", "max_pixels", "threads", "report",
                              "report_single_file", "junit", "json"]
    )]
    accept_from: Option<PathBuf>,

    /// Write references (the folder is made if need be), and say which: `changed` (the default)
    /// those of scenes that differ or have none, `missing` only those that have none, `all`
    /// every scene's. Never done otherwise; refused where `CI` is set unless --force.
    #[arg(long, value_name = "WHICH", num_args = 0..=1, require_equals = true, default_missing_value = "changed",
          value_parser = choices(&Bless::CHOSEN, Bless::name, |_| ""))]
    bless: Option<Bless>,

    /// Bless (or delete unreferenced references) even where the environment variable CI is set.
    #[arg(long)]
    force: bool,

    /// What to do with references in --refs whose scene was not given (gone, or renamed):
    /// `warn` (the default), `reject` (the check fails), or `delete` them. In a sharded check,
    /// shard 1 looks (every shard knows every scene given) and the merge repeats it.
    #[arg(long, value_name = "WHAT", default_value = "warn",
          value_parser = choices(&Unreferenced::ALL, Unreferenced::name, |_| ""))]
    unreferenced: Unreferenced,

    /// A pixel differs when one of its channels differs by more than N (judged on the
    /// reference's picture; 0: any change to the exact frame differs).
    #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(0..))]
    tolerance: u8,

    /// A frame passes with up to N differing pixels of the reference's picture.
    #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true,
          value_parser = super::whole::<0>)]
    max_pixels: u64,

    /// Write a report page into this folder (new, empty, or an earlier report's, which is
    /// replaced whole): index.html and its pictures, failures first.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,

    /// Write the report page as one self-contained HTML file (its pictures inside), to hand
    /// out or attach where a folder cannot go.
    #[arg(long, value_name = "FILE.html")]
    report_single_file: Option<PathBuf>,

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
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, Error> {
    if let Some(dir) = &args.accept_from {
        return accept(args, dir);
    }
    let (found, outputs) = if args.merge_reports.is_empty() { check_scenes(args)? } else { merge(args)? };
    report(args, found, outputs)
}

/// Checks the scenes (or the shard's slice of them) against their references.
fn check_scenes(args: &CheckArgs) -> Result<(Found, Outputs), Error> {
    let started = Instant::now();
    let options = Options { tolerance: args.tolerance, max_pixels: args.max_pixels, min_psnr_tenths: None };
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
        return Err(Error::usage(
            format!("--refs {} is a file, not a folder of references", refs.display()),
            Some("name the folder that holds (or will hold, with --bless) NAME.gif for each NAME.toml"),
        ));
    }
    check::distinct_references(&args.scenes, &refs)?;
    let mut inputs: Vec<&Path> = args.scenes.iter().map(PathBuf::as_path).collect();
    inputs.push(&refs);
    let outputs = stage_outputs(args, &inputs)?;
    let plan = Plan {
        options,
        bless: bless_mode(args)?,
        pictures: outputs.report.is_some() || outputs.single.is_some(),
        pending: outputs.report.as_ref().map(|s| s.path().join(check::PENDING)),
        stop: Some(&super::signals::STOP),
    };
    let threads = args.threads.map_or_else(default_threads, usize::from);
    let lines = !args.json && !args.quiet;
    if lines && let Some(shard) = args.shard {
        print_out(&format!(
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
            print_out(&scene_line(&outcome))?;
        }
        outcomes.push(outcome);
        Ok(())
    })?;
    // A signal that came as the last scene ended still ends the check, with nothing written.
    if super::signals::STOP.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    let seconds = started.elapsed().as_secs_f64();
    let (scenes_given, scene_set) = (args.scenes.len(), Some(shard::scene_set(&args.scenes)));
    let unreferenced = unreferenced(args, &refs)?;
    let found = Found { outcomes, options, refs, shard: args.shard, scenes_given, scene_set, seconds, unreferenced };
    Ok((found, outputs))
}

/// The references whose scene was not given, as `--unreferenced` says to treat them: found (by
/// shard 1 alone in a sharded check), deleted with `delete` (refused in CI unless forced, as
/// blessing is).
fn unreferenced(args: &CheckArgs, refs: &Path) -> Result<Leftover, Error> {
    if args.shard.is_some_and(|s| s.index != 1) {
        return Ok(Leftover::default());
    }
    let found = check::unreferenced(&args.scenes, refs);
    if args.unreferenced == Unreferenced::Delete && !found.is_empty() {
        not_in_ci(args, "--unreferenced=delete")?;
    }
    args.unreferenced.settle(found)
}

/// Whether the environment says this is a CI job.
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Refuses `what` (which writes references) where CI is set unless forced: a reference is
/// blessed by a person who looked at the change, and a CI job that blesses makes every check
/// pass.
fn not_in_ci(args: &CheckArgs, what: &str) -> Result<(), Error> {
    if in_ci() && !args.force {
        return Err(Error::usage(
            format!("{what} is refused where CI is set: references are blessed by a person who looked at the change"),
            Some(
                "bless locally (or accept from the report: see docs/diff-and-ci.md), or pass --force if this job means to",
            ),
        ));
    }
    Ok(())
}

/// `check --accept-from DIR [SCENE…]`: writes the would-be references the report kept.
fn accept(args: &CheckArgs, dir: &Path) -> Result<ExitCode, Error> {
    not_in_ci(args, "--accept-from")?;
    let accepted = check::accept::accept_from(dir, &args.scenes, args.refs.as_deref())?;
    if args.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for a in &accepted {
        let (verb, what) = match a.how {
            How::New => ("accepted", "written (new reference)"),
            How::Replaced => ("accepted", "replaced"),
            How::Already => ("unchanged", "is already the kept render (accepted before)"),
        };
        let (scene, reference) =
            (ripple_render::base::text::path(&a.scene), ripple_render::base::text::path(&a.reference));
        let _ = writeln!(text, "{verb} {scene}: {reference} {what}");
    }
    let count = |how: How| accepted.iter().filter(|a| a.how == how).count();
    let (new, replaced, already) = (count(How::New), count(How::Replaced), count(How::Already));
    let references = |n: usize| if n == 1 { format!("{n} reference") } else { format!("{n} references") };
    let from = dir.display();
    let _ = if accepted.is_empty() {
        writeln!(text, "nothing to accept: the report {from} kept no would-be reference (nothing failed)")
    } else if already == accepted.len() {
        writeln!(text, "\nnothing written: the {} kept in {from} are already in place", references(already))
    } else {
        let mut parts = Vec::new();
        if new > 0 {
            parts.push(format!("{new} new"));
        }
        if replaced > 0 {
            parts.push(format!("{replaced} replaced"));
        }
        if already > 0 {
            parts.push(format!("{already} already in place"));
        }
        writeln!(text, "\naccepted {} from {from}: {}", references(new + replaced), parts.join(", "))
    };
    print_out(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `--bless[=WHICH]`, refused in CI unless forced.
fn bless_mode(args: &CheckArgs) -> Result<Bless, Error> {
    let Some(bless) = args.bless else { return Ok(Bless::Never) };
    not_in_ci(args, "--bless")?;
    Ok(bless)
}

/// Merges the shards' report folders into what one check of every scene found, and says each
/// scene's line.
fn merge(args: &CheckArgs) -> Result<(Found, Outputs), Error> {
    let found = shard::merge(&args.merge_reports)?;
    let inputs: Vec<&Path> = args.merge_reports.iter().map(PathBuf::as_path).collect();
    let outputs = stage_outputs(args, &inputs)?;
    if !args.json && !args.quiet {
        for outcome in &found.outcomes {
            print_out(&scene_line(outcome))?;
        }
    }
    Ok((found, outputs))
}

/// A check's outputs, staged.
struct Outputs {
    report: Option<Staged>,
    junit: Option<Staged>,
    single: Option<Staged>,
}

/// The report folder, the JUnit file and the one-file page, checked and staged before any
/// work: none may be or lie inside an input (a scene, the references, a shard's report), nor
/// one inside another, and each must be creatable where it is named.
fn stage_outputs(args: &CheckArgs, inputs: &[&Path]) -> Result<Outputs, Error> {
    let mut outputs = Vec::new();
    outputs.extend(args.report.as_deref().map(|dir| (dir, true, "report folder")));
    outputs.extend(args.junit.as_deref().map(|file| (file, false, "JUnit file")));
    outputs.extend(args.report_single_file.as_deref().map(|file| (file, false, "one-file report")));
    output::check_distinct(&outputs, inputs)?;
    // The same, for a report folder not made yet: its path alone says a file would be in it.
    if let Some(report) = &args.report
        && let Ok(folder) = std::path::absolute(report)
    {
        let files = [(&args.junit, "JUnit file"), (&args.report_single_file, "one-file report")];
        for (file, what) in files.iter().filter_map(|(f, w)| f.as_ref().map(|f| (f, w))) {
            if std::path::absolute(file).is_ok_and(|f| f.starts_with(&folder)) {
                return Err(Error::usage(
                    format!(
                        "the {what} {} lies inside the report folder {}, which is written whole",
                        file.display(),
                        report.display()
                    ),
                    Some("give each output its own path"),
                ));
            }
        }
    }
    let file = |path: &Option<PathBuf>| {
        path.as_deref().map(|file| Staged::begin(file, Policy::File { force: true }, inputs)).transpose()
    };
    Ok(Outputs {
        report: args.report.as_deref().map(|dir| Staged::begin(dir, Policy::Report, inputs)).transpose()?,
        junit: file(&args.junit)?,
        single: file(&args.report_single_file)?,
    })
}

/// Says what was found: the page, JUnit, the job summary, JSON or lines, and the exit code.
fn report(args: &CheckArgs, mut found: Found, outputs: Outputs) -> Result<ExitCode, Error> {
    tell_unreferenced(&found.unreferenced);
    let tally = Tally::of(&found.outcomes);
    let page = write_outputs(args, &mut found, outputs, &tally)?;
    tell_ci(args, &found, &tally, page.as_deref())?;
    print_result(args, &found, &tally, page.as_deref())?;
    Ok(exit_code(&tally, &found.unreferenced))
}

/// A line on stderr for each reference no scene given has.
fn tell_unreferenced(leftover: &Leftover) {
    let what = match leftover.how {
        Unreferenced::Delete => "deleted",
        Unreferenced::Reject => "FAILED:",
        Unreferenced::Warn => "warning:",
    };
    for path in &leftover.references {
        tell(&format!("{what} {path} is the reference of no scene given (its scene is gone or renamed)"));
    }
}

/// Writes the check's files: the report folder (its record, kept would-be references and page),
/// the one-file page and JUnit XML. Returns the page's path, if a report folder was asked for.
fn write_outputs(
    args: &CheckArgs,
    found: &mut Found,
    outputs: Outputs,
    tally: &Tally,
) -> Result<Option<PathBuf>, Error> {
    let Outputs { report: staged, junit, single } = outputs;
    let page = staged.as_ref().map(|s| s.target().join("index.html"));
    if let Some(staged) = &staged {
        // The would-be references (a merge copies the shards'), and the outcomes for a merge of
        // shards: written before the entries take the pictures.
        check::keep_pending(&mut found.outcomes, &staged.path().join(check::PENDING))?;
        Record::of(found).write(staged.path())?;
    }
    if staged.is_some() || single.is_some() {
        let entries = page_entries(&mut found.outcomes, args.report.as_deref());
        let mut title = format!("ripple-render check: {}", tally.headline());
        if let Some(shard) = found.shard {
            title += &format!(" (shard {}/{})", shard.index, shard.count);
        }
        let summary = tally.summary(found.options, &found.refs, found.seconds);
        if let Some(staged) = staged {
            page::write(staged.path(), &title, &summary, tally.fails(), &entries)?;
            staged.commit()?;
        }
        if let Some(staged) = single {
            write_whole(staged, page::single(&title, &summary, tally.fails(), &entries).as_bytes())?;
        }
    }
    if let Some(staged) = junit {
        write_whole(staged, junit_xml(&found.outcomes, found.seconds).as_bytes())?;
    }
    Ok(page)
}

/// Writes `bytes` as the whole of the staged file, and puts it in place.
fn write_whole(staged: Staged, bytes: &[u8]) -> Result<(), Error> {
    let mut file = staged.file()?;
    std::io::Write::write_all(&mut file, bytes).map_err(|e| Error::io(staged.target(), e))?;
    drop(file);
    staged.commit()
}

/// In a GitHub Actions job: an annotation on each failing scene's file (on stderr beside
/// --json, whose stdout is one object), and the job summary.
fn tell_ci(args: &CheckArgs, found: &Found, tally: &Tally, page: Option<&Path>) -> Result<(), Error> {
    if std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
        let commands = annotations(&found.outcomes);
        if commands.is_empty() {
            // Nothing failed: nothing to annotate.
        } else if args.json {
            tell(commands.trim_end());
        } else {
            print_out(&commands)?;
        }
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        append_step_summary(Path::new(&summary), &found.outcomes, tally, found.options, page)?;
    }
    Ok(())
}

/// The result on stdout: one JSON object, or the summary line with the report's path and the
/// hints of what to do next.
fn print_result(args: &CheckArgs, found: &Found, tally: &Tally, page: Option<&Path>) -> Result<(), Error> {
    let refs = found.refs.as_path();
    if args.json {
        let shard = found.shard.map(|s| format!("{}/{}", s.index, s.count));
        return print_out(&json(&found.outcomes, tally, found.options, refs, page, found.seconds, shard));
    }
    if args.quiet {
        return Ok(());
    }
    let mut text = format!("\ncheck result: {}\n", tally.summary(found.options, refs, found.seconds));
    if let Some(page) = page {
        let _ = writeln!(text, "report: {}", page.display());
    }
    if tally.fails() {
        let what = if tally.different > 0 {
            Some("if the change is intended, bless it on purpose")
        } else if tally.missing > 0 {
            Some("write the missing references on purpose")
        } else {
            None
        };
        if let Some(what) = what {
            let _ = writeln!(text, "hint: {what}: ripple-render check SCENE… --refs {} --bless", refs.display());
        }
        let pending = found.outcomes.iter().any(|o| o.pending.is_some());
        if pending && let Some(dir) = &args.report {
            let _ = writeln!(
                text,
                "hint: or accept them from the report, without rendering again: ripple-render check --accept-from {} [SCENE…]",
                dir.display()
            );
        }
        if tally.unreadable > 0 {
            text.push_str("hint: a reference that cannot be used is never blessed over: restore it (`git lfs pull` for LFS pointers)\n");
        }
    }
    print_out(&text)
}

/// 1 when a scene fails or a reference no scene has fails the check (`--unreferenced=reject`),
/// else 0.
fn exit_code(tally: &Tally, leftover: &Leftover) -> ExitCode {
    ExitCode::from(u8::from(tally.fails() || leftover.fails()))
}
