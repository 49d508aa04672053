//! `check` as the snapshot tools work (issue #41): `--bless=missing|changed|all` as Playwright's
//! `--update-snapshots` says it, refused where `CI` is set unless forced, and an annotation on
//! each failing scene's file in a GitHub Actions job.

use std::path::Path;

use crate::support::{files_in, ripple, ripple_with, scratch, small_scenes};

/// The references' files and their bytes.
fn refs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_in(dir, "refs")
}

/// `check SCENE… REST…` as owned words.
fn words(scenes: &[String], rest: &[&str]) -> Vec<String> {
    let mut all = vec!["check".to_string()];
    all.extend(scenes.iter().cloned());
    all.extend(rest.iter().map(|r| r.to_string()));
    all
}

fn strs(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

#[test]
fn bless_writes_missing_changed_or_all_references_and_not_in_ci() {
    let dir = scratch("check-modes-bless");
    let scenes = small_scenes(&dir, "s", 3);
    let check = |rest: &[&str]| ripple(&strs(&words(&scenes, rest)), &dir);
    assert_eq!(check(&["--refs", "refs", "--bless", "-q"]).code, 0);
    let first = refs(&dir);
    assert_eq!(first.len(), 3);
    // s1 changes, s2's reference goes missing.
    let edited = dir.join("s/s1.toml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 5")).unwrap();
    std::fs::remove_file(dir.join("refs/s2.gif")).unwrap();
    let run = check(&["--refs", "refs", "--bless=missing"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let now = refs(&dir);
    assert_eq!(now.len(), 3);
    assert!(now[1] == first[1], "--bless=missing rewrote the changed scene's reference");
    assert!(run.stdout.contains("blessed (new reference refs/s2.gif)"), "{}", run.stdout);
    let run = check(&["--refs", "refs", "--bless"]);
    assert!(run.code == 0 && run.stdout.contains("replaced refs/s1.gif"), "{}", run.stdout);
    assert!(refs(&dir)[1] != first[1]);
    let run = check(&["--refs", "refs", "--bless=all"]);
    assert!(run.code == 0 && run.stdout.contains("blessed 3"), "{}", run.stdout);
    // Where CI is set, a person must mean it.
    let ci = Path::new("true");
    let run = ripple_with(&strs(&words(&scenes, &["--refs", "refs", "--bless"])), &dir, &[("CI", ci)]);
    assert!(run.code == 2 && run.stderr.contains("refused where CI is set"), "{}", run.stderr);
    let run = ripple_with(&strs(&words(&scenes, &["--refs", "refs", "--bless", "--force", "-q"])), &dir, &[("CI", ci)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_github_job_gets_an_annotation_on_each_failing_scene() {
    let dir = scratch("check-modes-annotations");
    let mut scenes = small_scenes(&dir, "s", 2);
    std::fs::copy(dir.join("s/s1.toml"), dir.join("s/a,b:c.toml")).unwrap();
    scenes.push("s/a,b:c.toml".to_string());
    assert_eq!(ripple(&strs(&words(&scenes, &["--refs", "refs", "--bless", "-q"])), &dir).code, 0);
    for scene in ["s/s1.toml", "s/a,b:c.toml"] {
        let path = dir.join(scene);
        std::fs::write(&path, std::fs::read_to_string(&path).unwrap().replace("radius = 3", "radius = 5")).unwrap();
    }
    let run = ripple_with(&strs(&words(&scenes, &["--refs", "refs"])), &dir, &[("GITHUB_ACTIONS", Path::new("true"))]);
    assert_eq!(run.code, 1);
    let commands: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(commands.len(), 2, "{}", run.stdout);
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("::error file=s/s1.toml,title=ripple-render check::4 of 4 frames differ")),
        "{commands:?}"
    );
    assert!(commands.iter().any(|c| c.starts_with("::error file=s/a%2Cb%3Ac.toml,title=")), "{commands:?}");
    // Outside such a job, none.
    let run = ripple(&strs(&words(&scenes, &["--refs", "refs"])), &dir);
    assert!(!run.stdout.contains("::error"), "{}", run.stdout);
}

#[test]
fn frames_that_pass_the_tolerance_but_differ_are_reported_as_drift() {
    let dir = scratch("check-modes-drift");
    let scenes = small_scenes(&dir, "s", 2);
    assert_eq!(ripple(&strs(&words(&scenes, &["--refs", "refs", "--bless", "-q"])), &dir).code, 0);
    let edited = dir.join("s/s1.toml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 4")).unwrap();
    // Strict: different. Lenient enough: same, but drifting, in every output.
    assert_eq!(ripple(&strs(&words(&scenes, &["--refs", "refs", "-q"])), &dir).code, 1);
    let lenient = ["--refs", "refs", "--max-pixels", "100000", "--junit", "j.xml"];
    let run = ripple(&strs(&words(&scenes, &lenient)), &dir);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("scene s/s0.toml ... ok\n"), "{}", run.stdout);
    assert!(
        run.stdout.contains("scene s/s1.toml ... ok, drifting: 4 frame(s) differ within the options"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("1 of the same drifting within the options"), "{}", run.stdout);
    let xml = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    assert_eq!(xml.matches("<system-out>drift: same within the options, 4 frames; 4 frames drift").count(), 1, "{xml}");
    let json = ripple(&strs(&words(&scenes, &["--refs", "refs", "--max-pixels", "100000", "--json"])), &dir).stdout;
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(value["scenes"][0]["drift"].is_null());
    assert_eq!(value["scenes"][1]["drift"]["frames"], 4, "{json}");
    assert!(value["scenes"][1]["drift"]["most_pixels"].as_u64().unwrap() > 0);
}

#[test]
fn a_reference_whose_scene_is_gone_is_reported_rejected_or_deleted() {
    let dir = scratch("check-modes-unreferenced");
    let scenes = small_scenes(&dir, "s", 3);
    assert_eq!(ripple(&strs(&words(&scenes, &["--refs", "refs", "--bless", "-q"])), &dir).code, 0);
    // s2's scene is gone: its reference is the reference of no scene given.
    let two = &scenes[..2];
    let run = ripple(&strs(&words(two, &["--refs", "refs", "-q"])), &dir);
    assert_eq!(run.code, 0);
    assert!(run.stderr.contains("warning: refs/s2.gif is the reference of no scene given"), "{}", run.stderr);
    let run = ripple(&strs(&words(two, &["--refs", "refs", "-q", "--unreferenced", "reject"])), &dir);
    assert!(run.code == 1 && run.stderr.contains("FAILED: refs/s2.gif"), "{}", run.stderr);
    // Sharded: shard 1 finds it, and the merge says it again.
    for k in 1..=2 {
        let (shard, report) = (format!("{k}/2"), format!("r{k}"));
        let args = ["--refs", "refs", "--shard", &shard, "--report", &report, "-q", "--unreferenced", "reject"];
        let run = ripple(&strs(&words(two, &args)), &dir);
        assert_eq!(run.code, if k == 1 { 1 } else { 0 }, "{k}: {}", run.stderr);
    }
    let merged = ripple(&["check", "--merge-reports", "r1", "r2", "-q"], &dir);
    assert!(merged.code == 1 && merged.stderr.contains("FAILED: refs/s2.gif"), "{}", merged.stderr);
    // Deleted on request, but not in CI unless forced.
    let ci = Path::new("true");
    let args = ["--refs", "refs", "-q", "--unreferenced", "delete"];
    let run = ripple_with(&strs(&words(two, &args)), &dir, &[("CI", ci)]);
    assert!(run.code == 2 && dir.join("refs/s2.gif").exists(), "{}", run.stderr);
    let run = ripple(&strs(&words(two, &args)), &dir);
    assert!(run.code == 0 && run.stderr.contains("deleted refs/s2.gif"), "{}", run.stderr);
    assert!(!dir.join("refs/s2.gif").exists() && dir.join("refs/s1.gif").exists());
}
