//! Scene names cannot inject (issue #39): names with HTML, Markdown, backticks, newlines and
//! control characters stay inert in `check`'s lines, job summary and JUnit XML, and a name that
//! is not UTF-8 keeps `check.json` valid (and mergeable).

use std::path::Path;

use crate::support::{ripple, scratch};

const BODY: &str = "[video]\nwidth = 32\nheight = 24\nframes = 4\n[background]\npattern = \"tiles\"\n\
    [[stone]]\nat = 0\nx = 10\ny = 12\nradius = 3\n";

/// Hostile names (as file stems).
const NAMES: [&str; 6] = [
    "<img src=x onerror=alert(1)>",
    "a`b`**bold**",
    "line\nbreak",
    "ctrl\u{7}\u{1b}[31mred\u{202e}",
    "| pipe | cell |",
    "[link](https:evil) &amp; _x_",
];

/// Whether `text` holds a control character other than a newline.
fn has_control(text: &str) -> bool {
    text.chars().any(|c| (c.is_control() && c != '\n') || c == '\u{202e}')
}

#[test]
fn hostile_names_stay_inert_in_every_output() {
    let dir = scratch("check-names");
    std::fs::create_dir_all(dir.join("s")).unwrap();
    let mut scenes: Vec<std::path::PathBuf> = NAMES.iter().map(|n| Path::new("s").join(format!("{n}.toml"))).collect();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        scenes.push(Path::new("s").join(std::ffi::OsStr::from_bytes(b"bad\xff\xfeutf8.toml")));
    }
    for scene in &scenes {
        std::fs::write(dir.join(scene), BODY).unwrap();
    }
    let args = |rest: &[&str]| {
        let mut all: Vec<std::ffi::OsString> = vec!["check".into()];
        all.extend(scenes.iter().map(|s| s.as_os_str().to_owned()));
        all.extend(rest.iter().map(|&r| r.into()));
        all
    };
    let run = |rest: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(args(rest))
            .current_dir(&dir)
            .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap();
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    assert_eq!(run(&["--refs", "refs", "--bless", "-q"]).0, 0);
    for scene in &scenes {
        std::fs::write(dir.join(scene), BODY.replace("radius = 3", "radius = 5")).unwrap();
    }
    let _ = std::fs::remove_file(dir.join("summary.md"));
    let (code, lines) = run(&["--refs", "refs", "--report", "rep", "--junit", "j.xml"]);
    assert_eq!(code, 1, "{lines}");
    // The terminal: a line a scene, nothing a terminal would obey.
    assert_eq!(lines.lines().filter(|l| l.starts_with("scene ")).count(), scenes.len(), "{lines}");
    assert!(!has_control(&lines), "{lines:?}");
    assert!(lines.contains("line\\nbreak") && lines.contains("ctrl\\u{7}\\u{1b}[31mred\\u{202e}"), "{lines}");
    // The job summary: a row a scene, each name one code span, no markup of its own.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let rows: Vec<&str> = summary.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), scenes.len(), "{summary}");
    assert!(!has_control(&summary), "{summary:?}");
    assert!(summary.contains("| ``s/a`b`**bold**.toml`` |"), "{summary}");
    assert!(summary.contains("`s/\\| pipe \\| cell \\|.toml`"), "{summary}");
    assert!(summary.contains("`s/[link](https:evil) &amp; _x_.toml`"), "{summary}");
    // The JUnit XML: no raw markup or control character from a name.
    let xml = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    assert!(!has_control(&xml) && !xml.contains("<img") && xml.contains("&lt;img src=x"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), scenes.len());
    for line in xml.lines() {
        let quotes = line.matches('"').count();
        assert!(quotes % 2 == 0, "an attribute broken open: {line}");
    }
    // check.json is JSON, whatever the names, and a shard of it merges.
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("rep/check.json")).unwrap()).unwrap();
    assert_eq!(record["scenes"].as_array().unwrap().len(), scenes.len());
    let (code, _) = run(&["--refs", "refs", "--shard", "1/1", "--report", "shard", "-q"]);
    assert_eq!(code, 1);
    let merged = ripple(&["check", "--merge-reports", "shard", "-q"], &dir);
    assert_eq!(merged.code, 1, "{}", merged.stderr);
}
