//! `check --merge-reports` trusts nothing in a shard's folder (issue #39): shards of other scene
//! sets are refused; `check.json` and the pictures are read within a size limit, never through a
//! link out of the folder, never from a pipe or device; a crafted shard number is an error
//! naming the file; a report of `--shard 1/1000000000` merges (or is refused) in bounded memory.

use std::path::{Path, PathBuf};

use crate::support::{ripple, scratch, small_scenes};

/// Four small scenes `s0`..`s3`, references for them, and `s1` then edited so it differs.
fn checked_folder(name: &str) -> PathBuf {
    let dir = scratch(name);
    small_scenes(&dir, "scenes", 4);
    let run = ripple(&check(&["--refs", "refs", "--bless", "-q"]), &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let edited = dir.join("scenes/s1.toml");
    let text = std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 5");
    std::fs::write(edited, text).unwrap();
    dir
}

fn check<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["check", "scenes/s0.toml", "scenes/s1.toml", "scenes/s2.toml", "scenes/s3.toml"];
    all.extend_from_slice(rest);
    all
}

/// Writes the reports of shards 1/2 and 2/2 into `r1` and `r2`.
fn shards(dir: &Path) {
    for k in 1..=2 {
        let (shard, report) = (format!("{k}/2"), format!("r{k}"));
        let run = ripple(&check(&["--refs", "refs", "--shard", &shard, "--report", &report, "-q"]), dir);
        assert!(run.code <= 1, "{}", run.stderr);
    }
}

/// Merges `given`; checks it is refused with one error naming `needles`, and writes nothing.
fn refused(dir: &Path, given: &[&str], needles: &[&str]) {
    let mut all = vec!["check", "--merge-reports"];
    all.extend_from_slice(given);
    all.extend(["--report", "merged", "--junit", "merged.xml"]);
    let run = ripple(&all, dir);
    assert_eq!(run.code, 2, "{given:?}: {}", run.stderr);
    assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
    assert!(!run.stderr.contains("internal error"), "{}", run.stderr);
    for needle in needles {
        assert!(run.stderr.contains(needle), "{given:?}: no {needle:?} in {}", run.stderr);
    }
    assert!(!dir.join("merged").exists() && !dir.join("merged.xml").exists());
}

/// The report's `check.json` rewritten by `edit`.
fn edit_record(dir: &Path, report: &str, edit: impl Fn(&mut serde_json::Value)) {
    let path = dir.join(report).join("check.json");
    let mut record: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut record);
    std::fs::write(path, serde_json::to_vec(&record).unwrap()).unwrap();
}

/// The shard whose report holds pictures (the edited scene's), and one of them.
fn a_picture(dir: &Path) -> (String, PathBuf) {
    for report in ["r1", "r2"] {
        let found = std::fs::read_dir(dir.join(report))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "png"));
        if let Some(picture) = found {
            return (report.to_string(), picture);
        }
    }
    panic!("no pictures in either shard's report");
}

#[test]
fn shards_of_other_scene_sets_or_numbers_that_are_no_slice_are_refused() {
    let dir = checked_folder("merge-sets");
    shards(&dir);
    assert_eq!(ripple(&["check", "--merge-reports", "r1", "r2", "-q"], &dir).code, 1);
    // Shard 2/2 of another set of four scenes.
    std::fs::copy(dir.join("scenes/s3.toml"), dir.join("scenes/s4.toml")).unwrap();
    let other = ["check", "scenes/s0.toml", "scenes/s1.toml", "scenes/s2.toml", "scenes/s4.toml"];
    let run =
        ripple(&[&other[..], &["--refs", "refs", "--bless", "--shard", "2/2", "--report", "o2", "-q"]].concat(), &dir);
    assert!(run.code <= 1, "{}", run.stderr);
    refused(&dir, &["r1", "o2"], &["r1 and o2 are not slices of one check", "other scenes"]);
    // Shard numbers that name no slice, and a report from an older version without a scene set.
    for (index, count) in [(0, 2), (3, 2), (1, 0)] {
        let _ = std::fs::remove_dir_all(dir.join("x1"));
        copy_dir(&dir.join("r1"), &dir.join("x1"));
        edit_record(&dir, "x1", |r| r["shard"] = serde_json::json!({"index": index, "count": count}));
        refused(&dir, &["x1", "r2"], &["x1/check.json", &format!("shard {index}/{count}")]);
    }
    let _ = std::fs::remove_dir_all(dir.join("x1"));
    copy_dir(&dir.join("r1"), &dir.join("x1"));
    edit_record(&dir, "x1", |r| {
        r.as_object_mut().unwrap().remove("scene_set");
    });
    refused(&dir, &["x1", "r2"], &["older version"]);
}

#[test]
fn a_shard_of_a_billion_merges_in_bounded_memory() {
    let dir = checked_folder("merge-billion");
    let run = ripple(&check(&["--refs", "refs", "--shard", "1/1000000000", "--report", "r1", "-q"]), &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    refused(&dir, &["r1"], &["shard 2/1000000000", "999999994 more are missing"]);
    // A crafted count as large as a number can be.
    edit_record(&dir, "r1", |r| r["shard"]["count"] = serde_json::json!(u64::MAX));
    refused(&dir, &["r1"], &["are missing"]);
}

#[cfg(unix)]
#[test]
fn files_out_of_the_folder_pipes_and_huge_files_are_never_read() {
    let dir = checked_folder("merge-files");
    shards(&dir);
    let (report, picture) = a_picture(&dir);
    let other = if report == "r1" { "r2" } else { "r1" };
    // The spoilt copy of the report with pictures, given in its shard's place.
    let given: Vec<&str> = if report == "r1" { vec!["x", other] } else { vec![other, "x"] };
    std::fs::copy(&picture, dir.join("outside.png")).unwrap();
    std::fs::copy(dir.join(&report).join("check.json"), dir.join("outside.json")).unwrap();
    let name = picture.file_name().unwrap().to_owned();
    type Spoil = fn(&Path, &Path);
    // The would-be reference the report keeps for the edited scene.
    let kept = std::fs::read_dir(dir.join(&report).join("pending")).unwrap().next().unwrap().unwrap().file_name();
    let cases: [(&str, Spoil, &str); 8] = [
        ("a picture", |d, p| link(&d.join("outside.png"), p), "leads out of the report folder"),
        ("a picture", |_, p| mkfifo(p), "named pipe"),
        ("a picture", |_, p| std::fs::File::create(p).unwrap().set_len(1 << 30).unwrap(), "more than"),
        ("check.json", |d, p| link(&d.join("outside.json"), p), "leads out of the report folder"),
        ("check.json", |_, p| mkfifo(p), "named pipe"),
        ("kept", |d, p| link(&d.join("outside.png"), p), "leads out of the report folder"),
        ("kept", |_, p| mkfifo(p), "named pipe"),
        ("kept", |_, p| std::fs::File::create(p).unwrap().set_len(1 << 30).unwrap(), "more than"),
    ];
    for (what, spoil, needle) in cases {
        let _ = std::fs::remove_dir_all(dir.join("x"));
        copy_dir(&dir.join(&report), &dir.join("x"));
        let spoilt = match what {
            "check.json" => dir.join("x/check.json"),
            "kept" => dir.join("x/pending").join(&kept),
            _ => dir.join("x").join(&name),
        };
        std::fs::remove_file(&spoilt).unwrap();
        spoil(&dir, &spoilt);
        let started = std::time::Instant::now();
        refused(&dir, &given, &[needle]);
        assert!(started.elapsed().as_secs() < 20, "{what}: took {:?}", started.elapsed());
    }
    // A kept file's name in the record that leads elsewhere.
    let _ = std::fs::remove_dir_all(dir.join("x"));
    copy_dir(&dir.join(&report), &dir.join("x"));
    edit_record(&dir, "x", |r| {
        for scene in r["scenes"].as_array_mut().unwrap() {
            if scene.get("pending").is_some() {
                scene["pending"] = serde_json::json!("../../outside.gif");
            }
        }
    });
    refused(&dir, &given, &["no reference's file name"]);
    // A check.json past the limit is refused by its length.
    let _ = std::fs::remove_dir_all(dir.join("x"));
    copy_dir(&dir.join(&report), &dir.join("x"));
    std::fs::File::options().append(true).open(dir.join("x/check.json")).unwrap().set_len(300 << 20).unwrap();
    refused(&dir, &given, &["check.json", "more than"]);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

#[cfg(unix)]
fn mkfifo(at: &Path) {
    assert!(std::process::Command::new("mkfifo").arg(at).status().unwrap().success());
}
