//! The programs and modules outside Rust that some tests check our files with (ffmpeg, libwebp,
//! NumPy, a browser…), in one table: how to tell each is here and how to install it. A test asks
//! for what it needs with [`needs`]; when something is missing the check does not run, and that
//! is never silent. Under `CI=true` (GitHub Actions sets it, `.ci/run` exports it) a missing tool
//! fails the test, naming the tool and its install command, since a green run must mean every
//! check ran. Elsewhere the test says on stderr that it skipped and adds a line to the file named
//! by `RIPPLE_TEST_SKIPS`, which `make test` prints as one summary at the end of the suite.

use std::collections::HashMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::support::root;

/// Something a test runs that Rust does not bring.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Tool {
    Ffmpeg,
    Ffprobe,
    Chromium,
    Node,
    /// playwright-core in web/node_modules, the browser tests' driver.
    Playwright,
    Python,
    /// python3's venv module, for a fresh environment to install the package into.
    Venv,
    Numpy,
    /// Pillow with its WebP support: libwebp's own animation decoder.
    PillowWebp,
    PyYaml,
    Img2webp,
    Webpinfo,
    Parallel,
    Zsh,
    Fish,
    Curl,
    /// zip or 7z, for the Windows archive.
    Zip,
    Shellcheck,
    /// A tmpfs mounted by the test (root), for a real full disk.
    Tmpfs,
    /// An address of this machine's that another machine could reach (`serve --bind 0.0.0.0`).
    RouteOut,
}

impl Tool {
    /// What a person reads: the tool's name and how to install it.
    fn describe(self) -> (&'static str, &'static str) {
        match self {
            Tool::Ffmpeg => ("ffmpeg", "apt-get install ffmpeg"),
            Tool::Ffprobe => ("ffprobe", "apt-get install ffmpeg"),
            Tool::Chromium => ("chromium", "apt-get install chromium"),
            Tool::Node => ("node", "apt-get install nodejs npm"),
            Tool::Playwright => ("playwright-core in web/node_modules", "npm ci --prefix web, which make test runs"),
            Tool::Python => ("python3", "apt-get install python3"),
            Tool::Venv => ("python3 -m venv", "apt-get install python3-venv"),
            Tool::Numpy => ("NumPy for python3", "python3 -m pip install numpy, which make test runs in a venv"),
            Tool::PillowWebp => {
                ("Pillow with WebP for python3", "python3 -m pip install pillow, which make test runs in a venv")
            }
            Tool::PyYaml => ("PyYAML for python3", "python3 -m pip install pyyaml, which make test runs in a venv"),
            Tool::Img2webp => ("img2webp", "apt-get install webp"),
            Tool::Webpinfo => ("webpinfo", "apt-get install webp"),
            Tool::Parallel => ("GNU parallel", "apt-get install parallel"),
            Tool::Zsh => ("zsh", "apt-get install zsh"),
            Tool::Fish => ("fish", "apt-get install fish"),
            Tool::Curl => ("curl", "apt-get install curl"),
            Tool::Zip => ("zip", "apt-get install zip"),
            Tool::Shellcheck => ("shellcheck", "apt-get install shellcheck"),
            Tool::Tmpfs => ("mounting a tmpfs", "run the suite as root, as .ci/run does"),
            Tool::RouteOut => ("a network address other than loopback", "run the suite on a machine with a network"),
        }
    }

    /// Whether it is here, asked once per run of the suite.
    pub fn here(self) -> bool {
        if let Some(&here) = seen().lock().unwrap().get(&self) {
            return here;
        }
        let here = self.look();
        seen().lock().unwrap().insert(self, here);
        here
    }

    /// Records that a test found it missing in its own way (for what only the test can see).
    pub fn missing(self) {
        seen().lock().unwrap().insert(self, false);
    }

    fn look(self) -> bool {
        // The suite's own test of this module pretends tools are missing (by their names here).
        let pretend = std::env::var("RIPPLE_TEST_PRETEND_MISSING").unwrap_or_default();
        if pretend.split(',').any(|name| name == format!("{self:?}")) {
            return false;
        }
        let runs = |program: &str, args: &[&str]| {
            Command::new(program)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let python = |code: &str| runs("python3", &["-c", code]);
        match self {
            Tool::Ffmpeg => runs("ffmpeg", &["-version"]),
            Tool::Ffprobe => runs("ffprobe", &["-version"]),
            Tool::Chromium => crate::support::browser().is_some(),
            Tool::Node => runs("node", &["--version"]),
            Tool::Playwright => root().join("web/node_modules/playwright-core/package.json").is_file(),
            Tool::Python => python("pass"),
            Tool::Venv => python("import venv, ensurepip"),
            Tool::Numpy => python("import numpy"),
            Tool::PillowWebp => python("from PIL import features; assert features.check('webp')"),
            Tool::PyYaml => python("import yaml"),
            Tool::Img2webp => runs("img2webp", &["-version"]),
            Tool::Webpinfo => runs("webpinfo", &["-version"]),
            Tool::Parallel => runs("parallel", &["--version"]),
            Tool::Zsh => runs("zsh", &["-fc", "true"]),
            Tool::Fish => runs("fish", &["--version"]),
            Tool::Curl => runs("curl", &["--version"]),
            Tool::Zip => runs("zip", &["-v"]) || runs("7z", &["i"]),
            Tool::Shellcheck => runs("shellcheck", &["--version"]),
            Tool::Tmpfs => tmpfs_mounts(),
            Tool::RouteOut => true,
        }
    }
}

/// What [`Tool::here`] found, by tool.
fn seen() -> &'static Mutex<HashMap<Tool, bool>> {
    static SEEN: OnceLock<Mutex<HashMap<Tool, bool>>> = OnceLock::new();
    SEEN.get_or_init(Default::default)
}

/// Whether this process may mount a tmpfs (and unmount it again): tried once on a folder of its own.
fn tmpfs_mounts() -> bool {
    let dir = crate::support::scratch("tools-tmpfs");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        let _ = Command::new("umount").arg(&dir).status();
    }
    mounted
}

/// Whether this run is a CI job's, where a check that cannot run is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Whether every tool `check` needs is here. When one is not: under CI this panics, naming the
/// tools and how to install them; elsewhere it says so on stderr (uncaptured, so `cargo test`
/// shows it), records it for `make test`'s summary and returns false, and the caller returns
/// without its check. `check` names what did not run: a test's name, or a part of one.
#[track_caller]
pub fn needs(check: &str, tools: &[Tool]) -> bool {
    let missing: Vec<(&str, &str)> = tools.iter().filter(|t| !t.here()).map(|t| t.describe()).collect();
    if missing.is_empty() {
        return true;
    }
    let what = missing.iter().map(|(name, install)| format!("{name} ({install})")).collect::<Vec<_>>().join("; ");
    assert!(!in_ci(), "{check} cannot run under CI=true: missing {what}");
    let line = format!("skipped {check}: missing {what}");
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Some(path) = std::env::var_os("RIPPLE_TEST_SKIPS") {
        // One write of one line, appended: lines from tests side by side never interleave.
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path);
        let _ = file.and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
    }
    false
}

/// A check whose tool is missing fails under CI, naming the tool and its install command, and
/// elsewhere passes, says so and is recorded for the summary: the suite runs one of its own
/// tests again with ffmpeg pretended away.
#[test]
fn a_missing_tool_fails_under_ci_and_is_listed_elsewhere() {
    let dir = crate::support::scratch("tools-missing");
    let skips = dir.join("skips.txt");
    let again = |ci: &str| {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "formats::apng_decodes_the_same_through_ffmpeg", "--nocapture"])
            .env("RIPPLE_TEST_PRETEND_MISSING", "Node,Ffmpeg")
            .env("RIPPLE_TEST_SKIPS", &skips)
            .env("CI", ci)
            .output()
            .unwrap()
    };
    let run = again("true");
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{said}");
    assert!(
        said.contains(
            "apng_decodes_the_same_through_ffmpeg cannot run under CI=true: missing ffmpeg (apt-get install ffmpeg)"
        ),
        "{said}"
    );
    assert!(!skips.exists(), "a failure is not a skip");
    let run = again("");
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    let line = "skipped apng_decodes_the_same_through_ffmpeg: missing ffmpeg (apt-get install ffmpeg)\n";
    assert!(said.contains(line), "{said}");
    assert_eq!(std::fs::read_to_string(&skips).unwrap(), line);
}
