//! Accepting a change from a check's report as insta and Playwright users do (issue #41): the
//! report keeps the would-be reference of every scene that differs or has none
//! (`pending/NAME.gif`), `check --accept-from DIR [SCENE…]` writes them without rendering again,
//! byte for byte what a local `--bless` writes; and `--report-single-file` writes the page as
//! one self-contained file.

use std::path::Path;

use crate::support::{browser, dump_dom, files_in as files, regex_value, ripple, ripple_with, scratch, small_scenes};
use crate::tools::{Tool, needs};

/// `check SCENE… REST…` run in `dir`.
fn check(dir: &Path, scenes: &[String], rest: &[&str]) -> crate::support::Run {
    let mut words: Vec<&str> = vec!["check"];
    words.extend(scenes.iter().map(String::as_str));
    words.extend(rest);
    ripple(&words, dir)
}

/// A project of three scenes with references, then s1 edited and s2's reference gone.
fn changed_project(name: &str) -> (std::path::PathBuf, Vec<String>) {
    let dir = scratch(name);
    let scenes = small_scenes(&dir, "s", 3);
    assert_eq!(check(&dir, &scenes, &["--refs", "refs", "--bless", "-q"]).code, 0);
    let edited = dir.join("s/s1.toml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 5")).unwrap();
    std::fs::remove_file(dir.join("refs/s2.gif")).unwrap();
    (dir, scenes)
}

/// Copies the folder `from` (files and folders) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().map(|e| e.unwrap()) {
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn accepting_from_a_report_writes_what_a_local_bless_writes() {
    let (dir, scenes) = changed_project("accept-same-bytes");
    let run = check(&dir, &scenes, &["--refs", "refs", "--report", "report"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("ripple-render check --accept-from report [SCENE…]"), "{}", run.stdout);
    // Only the changed and the new scene's would-be references are kept.
    let kept: Vec<String> = files(&dir, "report/pending").into_iter().map(|(n, _)| n).collect();
    assert_eq!(kept, ["s1.gif", "s2.gif"]);
    // The same project blessed locally, as the reviewer would have without the report.
    let twin = scratch("accept-same-bytes-twin");
    copy_tree(&dir, &twin);
    assert_eq!(check(&twin, &scenes, &["--refs", "refs", "--bless", "-q"]).code, 0);
    let before = files(&dir, "refs");
    let run = ripple(&["check", "--accept-from", "report"], &dir);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("accepted s/s1.toml: refs/s1.gif replaced"), "{}", run.stdout);
    assert!(run.stdout.contains("accepted s/s2.toml: refs/s2.gif written (new reference)"), "{}", run.stdout);
    assert!(run.stdout.contains("\naccepted 2 references from report: 1 new, 1 replaced\n"), "{}", run.stdout);
    let after = files(&dir, "refs");
    assert_eq!(after, files(&twin, "refs"), "accepted references differ from blessed ones");
    assert_eq!(after[0], before[0], "the unchanged scene's reference was rewritten");
    assert_eq!(check(&dir, &scenes, &["--refs", "refs", "-q"]).code, 0);
    // Accepting again changes nothing and says so.
    let run = ripple(&["check", "--accept-from", "report"], &dir);
    assert!(
        run.code == 0
            && run.stdout.contains("\nnothing written: the 2 references kept in report are already in place\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("unchanged s/s1.toml: refs/s1.gif is already the kept render"), "{}", run.stdout);
    assert!(!run.stdout.lines().any(|l| l.starts_with("accepted")), "{}", run.stdout);
    // JSON names each kept file, for scripts.
    let edited = dir.join("s/s0.toml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 4")).unwrap();
    let run = check(&dir, &scenes, &["--refs", "refs", "--report", "report", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["scenes"][0]["pending"], "report/pending/s0.gif");
    assert!(json["scenes"][1].get("pending").is_none() && dir.join("report/pending/s0.gif").is_file());
}

#[test]
fn one_scene_is_accepted_and_what_changed_since_the_check_is_refused() {
    let (dir, scenes) = changed_project("accept-refusals");
    assert_eq!(check(&dir, &scenes, &["--refs", "refs", "--report", "report", "-q"]).code, 1);
    let before = files(&dir, "refs");
    let refused = |args: &[&str], says: &str| {
        let was = files(&dir, "refs");
        let run = ripple(args, &dir);
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(files(&dir, "refs") == was, "{args:?} wrote a reference");
    };
    refused(&["check", "--accept-from", "report", "s/s0.toml"], "was the same as its reference");
    refused(&["check", "--accept-from", "report", "s/other.toml"], "is not a scene of the check");
    refused(&["check", "--accept-from", "s"], "is not the report folder of a check");
    let run = ripple_with(&["check", "--accept-from", "report"], &dir, &[("CI", Path::new("true"))]);
    assert!(run.code == 2 && run.stderr.contains("refused where CI is set"), "{}", run.stderr);
    // A scene edited since: what the report kept is not its render.
    let s1 = dir.join("s/s1.toml");
    let text = std::fs::read_to_string(&s1).unwrap();
    std::fs::write(&s1, text.replace("radius = 5", "radius = 6")).unwrap();
    refused(&["check", "--accept-from", "report"], "s/s1.toml changed since the check");
    std::fs::write(&s1, &text).unwrap();
    // A reference written since the check, which found none: not written over unseen.
    std::fs::write(dir.join("refs/s2.gif"), std::fs::read(dir.join("refs/s0.gif")).unwrap()).unwrap();
    refused(&["check", "--accept-from", "report", "s/s2.toml"], "refs/s2.gif was written since the check");
    std::fs::remove_file(dir.join("refs/s2.gif")).unwrap();
    // One scene alone, by another spelling of its path.
    let run = ripple(&["check", "--accept-from", "report", "./s/s2.toml"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let now = files(&dir, "refs");
    assert!(now.len() == 3 && now[1] == before[1], "only s2 was to be written");
}

#[test]
fn a_merged_report_keeps_every_shards_would_be_references() {
    let (dir, scenes) = changed_project("accept-merged");
    for k in 1..=2 {
        let (shard, report) = (format!("{k}/2"), format!("part{k}"));
        assert_eq!(check(&dir, &scenes, &["--refs", "refs", "--shard", &shard, "--report", &report, "-q"]).code, 1);
    }
    let run = ripple(&["check", "--merge-reports", "part1", "part2", "--report", "merged", "-q"], &dir);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let kept: Vec<String> = files(&dir, "merged/pending").into_iter().map(|(n, _)| n).collect();
    assert_eq!(kept, ["s1.gif", "s2.gif"]);
    let twin = scratch("accept-merged-twin");
    copy_tree(&dir, &twin);
    assert_eq!(check(&twin, &scenes, &["--refs", "refs", "--bless", "-q"]).code, 0);
    assert_eq!(ripple(&["check", "--accept-from", "merged", "-q"], &dir).code, 0);
    assert_eq!(files(&dir, "refs"), files(&twin, "refs"));
    // A report folder with its pending/ is an earlier report: the next check replaces it whole.
    assert_eq!(check(&dir, &scenes, &["--refs", "refs", "--report", "merged", "-q"]).code, 0);
    assert!(!dir.join("merged/pending").exists());
}

/// Standard base64 (RFC 4648), decoded: the test's own reading of a `data:` URI.
fn unbase64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let mut out = Vec::new();
    for quad in text.as_bytes().chunks(4) {
        let digits: Vec<u8> = quad.iter().filter(|&&c| c != b'=').map(|&c| value(c)).collect();
        let bits = digits.iter().enumerate().fold(0u32, |acc, (i, &d)| acc | u32::from(d) << (18 - 6 * i));
        out.extend((0..digits.len() - 1).map(|i| (bits >> (16 - 8 * i)) as u8));
    }
    out
}

#[test]
fn the_one_file_report_holds_its_pictures_and_works_alone() {
    let (dir, scenes) = changed_project("accept-single");
    let run = check(&dir, &scenes, &["--refs", "refs", "--report", "report", "--report-single-file", "one.html", "-q"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let html = std::fs::read_to_string(dir.join("one.html")).unwrap();
    assert!(!html.contains("src=\"s0"), "a picture is named, not held");
    // Its first picture is the folder's, byte for byte.
    let first = regex_value(&html, "<img class=\"a\" src=\"data:image/png;base64,");
    let name = std::fs::read_dir(dir.join("report"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-a.png"))
        .min()
        .unwrap();
    assert_eq!(unbase64(&first), std::fs::read(dir.join("report").join(name)).unwrap());
    // Inside the folder refused, and nothing written over a scene.
    let run = check(&dir, &scenes, &["--refs", "refs", "--report", "report", "--report-single-file", "report/x.html"]);
    assert!(run.code == 2 && run.stderr.contains("one inside the other"), "{}", run.stderr);
    if !needs("the_one_file_report_holds_its_pictures_and_works_alone (in a browser)", &[Tool::Chromium]) {
        return;
    }
    let browser = browser().unwrap();
    // Alone in a folder of its own, every picture loads and the scrubber shows held pictures.
    let alone = scratch("accept-single-alone");
    std::fs::copy(dir.join("one.html"), alone.join("one.html")).unwrap();
    let dom = dump_dom(&browser, &alone.join("one.html"), "#picture=1");
    assert!(dom.contains("data-ready=\"yes\""), "{dom}");
    let images = regex_value(&dom, "data-images=\"");
    let (loaded, total) = images.split_once('/').unwrap();
    assert!(loaded == total && total.parse::<u32>().unwrap() >= 6, "{images}");
    assert!(regex_value(&dom, "<img class=\"heat\" src=\"").starts_with("data:image/png;base64,"), "{dom}");
    assert!(dom.contains("data-frame=\"1\"") || dom.contains("<output class=\"at\">frame 1</output>"), "{dom}");
}
