//! What a check says besides its lines: the counts and the summary line ([`Tally`]), JUnit XML,
//! the GitHub job summary and the JSON object, each made from the scenes' outcomes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ripple_render::Error;
use ripple_render::base::text::{self, inert, markdown_code, markdown_text};
use ripple_render::check::{Blessed, Outcome, Verdict};
use ripple_render::diff::Options;
use ripple_render::diff::page::Entry;

/// Rows of the GitHub job summary's table at most (the summary is capped at 1 MiB).
const SUMMARY_ROWS: usize = 50;

/// The counts over every scene.
pub(super) struct Tally {
    same: usize,
    pub(super) different: usize,
    pub(super) missing: usize,
    /// Scenes whose reference cannot be used.
    pub(super) unreadable: usize,
    /// Scenes the same within the options whose exact pixels drift.
    drifting: usize,
    blessed: Vec<(PathBuf, Blessed)>,
}

impl Tally {
    pub(super) fn of(outcomes: &[Outcome]) -> Tally {
        let count = |f: fn(&Verdict) -> bool| outcomes.iter().filter(|o| f(&o.verdict)).count();
        Tally {
            same: count(|v| *v == Verdict::Same),
            different: count(|v| matches!(v, Verdict::Different { .. })),
            missing: count(|v| *v == Verdict::Missing),
            unreadable: count(|v| matches!(v, Verdict::Unreadable { .. })),
            drifting: outcomes.iter().filter(|o| o.drift.is_some() && o.verdict == Verdict::Same).count(),
            blessed: outcomes.iter().filter_map(|o| o.blessed.map(|b| (o.reference.clone(), b))).collect(),
        }
    }

    /// Whether the job fails: a scene differs or lacks a reference, and was not blessed.
    pub(super) fn fails(&self) -> bool {
        self.unreadable > 0 || self.different + self.missing > self.blessed.len()
    }

    fn total(&self) -> usize {
        self.same + self.different + self.missing + self.unreadable
    }

    /// "all 7 scenes are the same", "2 of 7 scenes fail", "2 of 7 scenes blessed".
    pub(super) fn headline(&self) -> String {
        let total = self.total();
        let scenes = if total == 1 { "scene" } else { "scenes" };
        if !self.blessed.is_empty() && self.unreadable == 0 {
            format!("{} of {total} {scenes} blessed", self.blessed.len())
        } else if self.fails() {
            format!("{} of {total} {scenes} fail", self.different + self.missing + self.unreadable - self.blessed.len())
        } else {
            format!("all {total} {scenes} are the same")
        }
    }

    /// `ok. 5 same; 1 different; 1 without a reference; …` as `cargo test` sums up.
    pub(super) fn summary(&self, options: Options, refs: &Path, seconds: f64) -> String {
        let verdict = if self.fails() { "FAILED" } else { "ok" };
        let mut text = format!(
            "{verdict}. {} same; {} different; {} without a reference",
            self.same, self.different, self.missing
        );
        if self.unreadable > 0 {
            let _ = write!(text, "; {} with a reference that cannot be used", self.unreadable);
        }
        if self.drifting > 0 {
            let _ = write!(text, "; {} of the same drifting within the options", self.drifting);
        }
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

/// Text for XML attributes and content: made [`inert`] (XML 1.0 allows no control character,
/// escaped or not), then escaped.
fn xml(text: &str) -> String {
    inert(text).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// JUnit XML: one testsuite, one testcase per scene; a scene that differs or lacks a reference
/// (and was not blessed) is a failure whose message names the first differing frame.
pub(super) fn junit_xml(outcomes: &[Outcome], seconds: f64) -> String {
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
            match o.drift.filter(|_| !o.failed()) {
                // A pass that drifts says so, where CI systems show a test's output.
                Some(_) => {
                    let _ =
                        writeln!(out, ">\n      <system-out>drift: {}</system-out>\n    </testcase>", xml(&o.line()));
                }
                None => out.push_str("/>\n"),
            }
            continue;
        }
        let (kind, message) = match &o.verdict {
            Verdict::Missing => ("missing", format!("no reference {}", o.reference.display())),
            Verdict::Unreadable { .. } => ("unreadable", o.line()),
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

/// GitHub Actions workflow commands, one `::error file=…,title=…::…` a failing scene, so that
/// each shows as an annotation on the scene file: values escaped as the runner reads them (`%`,
/// CR and LF everywhere; `:` and `,` in properties too), names made inert.
pub(super) fn annotations(outcomes: &[Outcome]) -> String {
    let data = |s: &str| s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    let property = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for o in outcomes.iter().filter(|o| o.failed() && o.blessed.is_none()) {
        let _ = writeln!(
            out,
            "::error file={},title=ripple-render check::{}",
            property(&text::path(&o.scene)),
            data(&inert(&o.line()))
        );
    }
    out
}

/// Appends a short Markdown summary to GitHub's job summary: a headline, a row per failing
/// scene, the count of the rest. No pictures: the summary is capped at 1 MiB, the report is an
/// artifact.
pub(super) fn append_step_summary(
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
            let _ = writeln!(text, "| {} | {} |", markdown_code(&text::path(&o.scene)), markdown_text(&inert(&result)));
        }
        if listed.len() > SUMMARY_ROWS {
            let _ = writeln!(text, "\n…and {} more.", listed.len() - SUMMARY_ROWS);
        }
        text.push('\n');
    }
    let _ = write!(text, "{} same (tolerance {}, max pixels {}).", tally.same, options.tolerance, options.max_pixels);
    if let Some(report) = report {
        let _ = write!(text, " Report: {} (keep it as the job's artifact).", markdown_code(&text::path(report)));
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
    pub(super) different: usize,
    missing: usize,
    unreadable: usize,
    blessed: usize,
}

#[derive(Serialize)]
struct JsonScene<'a> {
    scene: String,
    reference: String,
    result: &'static str,
    /// Why the reference cannot be used (`unreadable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<&'a str>,
    /// Frames that differ within the options, when some do.
    #[serde(skip_serializing_if = "Option::is_none")]
    drift: Option<ripple_render::check::Drift>,
    first_differing_frame: Option<u64>,
    differing_frames: u64,
    frames: u64,
    reference_frames: Option<u64>,
    notes: &'a [String],
    blessed: Option<&'static str>,
    /// The would-be reference the report keeps, for `--accept-from`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pending: Option<String>,
    seconds: f64,
}

pub(super) fn json(
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
                Verdict::Unreadable { .. } => ("unreadable", None, 0),
            };
            JsonScene {
                scene: o.scene.display().to_string(),
                reference: o.reference.display().to_string(),
                result,
                why: match &o.verdict {
                    Verdict::Unreadable { why } => Some(why.as_str()),
                    _ => None,
                },
                drift: o.drift,
                first_differing_frame: first,
                differing_frames: differing,
                frames: o.frames,
                reference_frames: o.reference_frames,
                notes: &o.notes,
                blessed: o.blessed.map(|b| if b == Blessed::New { "new" } else { "replaced" }),
                pending: o.pending.as_ref().zip(report.and_then(Path::parent)).map(|(p, dir)| {
                    dir.join(ripple_render::check::PENDING)
                        .join(p.path.file_name().unwrap_or_default())
                        .display()
                        .to_string()
                }),
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
            unreadable: tally.unreadable,
            blessed: tally.blessed.len(),
        },
        scenes,
    };
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

/// The page's entries: blessed scenes still show what changed (that is what a reviewer
/// blesses), and a scene whose would-be reference the report folder `report` keeps says how to
/// accept it.
pub(super) fn page_entries(outcomes: &mut [Outcome], report: Option<&Path>) -> Vec<Entry> {
    let mut entries: Vec<Entry> = outcomes.iter_mut().map(Outcome::entry).collect();
    for (entry, outcome) in entries.iter_mut().zip(outcomes.iter()) {
        if let Some(blessed) = outcome.blessed {
            entry.line += match blessed {
                Blessed::New => "; blessed: reference written",
                Blessed::Refreshed => "; blessed: reference replaced",
            };
        }
        if let (Some(_), Some(dir)) = (&outcome.pending, report) {
            entry.accept = Some(format!(
                "ripple-render check --accept-from {} {}",
                ripple_render::base::text::shell_path(dir),
                ripple_render::base::text::shell_path(&outcome.scene)
            ));
        }
    }
    entries
}

/// A scene's line, `scene NAME ... STATUS`.
pub(super) fn scene_line(outcome: &Outcome) -> String {
    format!("scene {} ... {}\n", ripple_render::base::text::path(&outcome.scene), status_line(outcome))
}

/// A scene's line after `scene NAME ...`.
fn status_line(o: &Outcome) -> String {
    match (&o.verdict, o.blessed) {
        (Verdict::Same, _) => match o.drift {
            Some(d) => format!(
                "ok, drifting: {} frame(s) differ within the options (at most {} pixels beyond the tolerance)",
                d.frames, d.most_pixels
            ),
            None => "ok".into(),
        },
        (Verdict::Missing, Some(_)) => format!("blessed (new reference {})", o.reference.display()),
        (Verdict::Missing, None) => {
            format!("FAILED: no reference {} (write it on purpose with --bless)", o.reference.display())
        }
        (Verdict::Different { .. }, Some(_)) => {
            format!("blessed ({}; replaced {})", o.line(), o.reference.display())
        }
        (Verdict::Different { .. }, None) => format!("FAILED: {}", o.line()),
        (Verdict::Unreadable { .. }, _) => format!("FAILED: {}", o.line()),
    }
}
