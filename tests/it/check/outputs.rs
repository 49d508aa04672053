//! `check`'s outputs are checked before the work (issue #39): a JUnit file in a missing folder,
//! onto a scene, inside the report or onto a shard's `check.json` is refused before any scene
//! is rendered; Ctrl-C ends the check by the signal and leaves no report; a reference that is
//! broken or a Git LFS pointer is reported for its scene while the summary, JUnit XML and report
//! are written for every scene.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{names, ripple, ripple_with, scratch, small_scenes, temporaries};

/// Three small scenes with references, in `s/` and `refs/`.
fn checked(name: &str) -> PathBuf {
    let dir = scratch(name);
    small_scenes(&dir, "s", 3);
    assert_eq!(ripple(&check(&["--refs", "refs", "--bless", "-q"]), &dir).code, 0);
    dir
}

fn check<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["check", "s/s0.toml", "s/s1.toml", "s/s2.toml"];
    all.extend_from_slice(rest);
    all
}

#[test]
fn a_junit_file_that_cannot_be_written_is_refused_before_any_scene() {
    let dir = checked("check-outputs-junit");
    std::fs::create_dir(dir.join("old-report")).unwrap();
    assert_eq!(ripple(&check(&["--refs", "refs", "--report", "old-report", "-q"]), &dir).code, 0);
    for (rest, needle) in [
        (vec!["--junit", "nowhere/j.xml"], "the folder nowhere does not exist"),
        (vec!["--junit", "s/s1.toml"], "is an input of this run"),
        (vec!["--report", "new-report", "--junit", "new-report/j.xml"], "lies inside the report folder"),
        (vec!["--report", "old-report", "--junit", "old-report/j.xml"], "one inside the other"),
    ] {
        let mut args = check(&["--refs", "refs"]);
        args.extend(rest.iter().copied());
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 2, "{rest:?}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{rest:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{rest:?}: work was done: {}", run.stdout);
    }
    assert!(std::fs::read_to_string(dir.join("s/s1.toml")).unwrap().starts_with("[video]"));
    assert!(!dir.join("new-report").exists());
    // A merge's JUnit file onto a shard's check.json, which is its input.
    for k in 1..=2 {
        let (shard, report) = (format!("{k}/2"), format!("r{k}"));
        assert_eq!(ripple(&check(&["--refs", "refs", "--shard", &shard, "--report", &report, "-q"]), &dir).code, 0);
    }
    let record = std::fs::read(dir.join("r1/check.json")).unwrap();
    let run = ripple(&["check", "--merge-reports", "r1", "r2", "--junit", "r1/check.json"], &dir);
    assert!(run.code == 2 && run.stderr.contains("lies inside an input"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(std::fs::read(dir.join("r1/check.json")).unwrap() == record);
}

#[test]
fn broken_and_lfs_pointer_references_are_reported_for_their_scene() {
    let dir = checked("check-outputs-broken");
    let pointer = "version https://git-lfs.github.com/spec/v1\n\
                   oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n";
    std::fs::write(dir.join("refs/s1.gif"), pointer).unwrap();
    let cut = std::fs::read(dir.join("refs/s2.gif")).unwrap();
    std::fs::write(dir.join("refs/s2.gif"), &cut[..cut.len() * 2 / 3]).unwrap();
    let summary = dir.join("summary.md");
    let args = check(&["--refs", "refs", "--report", "report", "--junit", "j.xml"]);
    let run = ripple_with(&args, &dir, &[("GITHUB_STEP_SUMMARY", &summary)]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("scene ")).collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    assert!(lines[0].ends_with("ok"), "{}", lines[0]);
    assert!(lines[1].contains("refs/s1.gif") && lines[1].contains("git lfs pull"), "{}", lines[1]);
    assert!(lines[2].contains("refs/s2.gif cannot be used"), "{}", lines[2]);
    assert!(run.stdout.contains("2 with a reference that cannot be used"), "{}", run.stdout);
    // Every output is written, for every scene.
    let xml = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 3);
    assert_eq!(xml.matches("type=\"unreadable\"").count(), 2, "{xml}");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("2 of 3 scenes fail") && summary.contains("git lfs pull"), "{summary}");
    let page = std::fs::read_to_string(dir.join("report/index.html")).unwrap();
    assert!(page.contains("reference unusable") && page.contains("git lfs pull"));
    // --bless writes nothing over them: they are the user's to restore.
    let run = ripple(&check(&["--refs", "refs", "--bless"]), &dir);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(dir.join("refs/s1.gif")).unwrap(), pointer);
    // A shard's report of them merges with the reasons kept.
    let run = ripple(&check(&["--refs", "refs", "--shard", "1/1", "--report", "r1", "-q"]), &dir);
    assert_eq!(run.code, 1);
    let merged = ripple(&["check", "--merge-reports", "r1", "--json"], &dir);
    assert_eq!(merged.code, 1, "{}", merged.stderr);
    assert!(merged.stdout.contains("\"result\": \"unreadable\"") && merged.stdout.contains("git lfs pull"));
}

#[cfg(unix)]
#[test]
fn ctrl_c_ends_the_check_by_the_signal_and_leaves_no_report() {
    let dir = scratch("check-outputs-signal");
    std::fs::create_dir_all(dir.join("s")).unwrap();
    let scene = |k: usize| {
        format!(
            "[video]\nwidth = 480\nheight = 360\nframes = 300\n[background]\npattern = \"tiles\"\n\
             [rain]\ndrops_per_second = 40\nseed = {k}\n"
        )
    };
    let scenes: Vec<String> = (0..4).map(|k| format!("s/b{k}.toml")).collect();
    for (k, s) in scenes.iter().enumerate() {
        std::fs::write(dir.join(s), scene(k)).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .arg("check")
        .args(&scenes)
        .args(["--refs", "refs", "--bless", "--report", "report", "--junit", "j.xml", "-q"])
        .env_remove("CI")
        .current_dir(&dir)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(2), "{status:?}");
    assert!(!dir.join("report").exists() && !dir.join("j.xml").exists(), "{:?}", names(&dir));
    assert!(temporaries(&dir).is_empty(), "{:?}", names(&dir));
    if dir.join("refs").exists() {
        assert!(temporaries(&dir.join("refs")).is_empty(), "{:?}", names(&dir.join("refs")));
    }
}
