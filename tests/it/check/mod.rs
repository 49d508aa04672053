//! `ripple-render check`: the CI job as a new user runs it on a copy of the bundled scenes,
//! without references, blessing them, clean, and after a scene is edited; its JUnit XML, job
//! summary, JSON and report page (loaded in a real headless browser when one is installed).
//! Beside it: accepting from a report (`accept`), the ways of blessing and of treating references
//! without a scene (`modes`), scenes' names (`names`), where check's outputs may go (`outputs`),
//! and hostile shards to merge (`merge_hostile`).

mod accept;
mod merge_hostile;
mod modes;
mod names;
mod outputs;

use std::path::{Path, PathBuf};

use crate::support::{browser, bundled_copy, dump_dom, regex_value, root, scratch};
use crate::support::{ripple, ripple_with};
use crate::tools::{Tool, needs};

/// Frames each scene copy is cut to (a whole second, as the seamless loop needs).
const FRAMES: u32 = 25;

/// A folder with `scenes/NAME.toml` for every bundled scene, each `FRAMES` frames long.
fn scene_copies(name: &str) -> (PathBuf, Vec<String>) {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(root().join("scenes"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".toml")).map(str::to_string))
        .collect();
    names.sort();
    let scenes = names.iter().map(|n| format!("scenes/{}", bundled_copy(n, &dir.join("scenes"), FRAMES))).collect();
    (dir, scenes)
}

fn args<'a>(scenes: &'a [String], rest: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["check"];
    all.extend(scenes.iter().map(String::as_str));
    all.extend_from_slice(rest);
    all
}

#[test]
fn the_ci_job_from_no_references_to_an_edited_scene() {
    let (dir, scenes) = scene_copies("check-job");
    assert!(scenes.len() >= 7);

    // No references: every scene fails, and nothing is written.
    let run = ripple(&args(&scenes, &["--refs", "refs"]), &dir);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    for scene in &scenes {
        let line = format!("scene {scene} ... FAILED: no reference refs/");
        assert!(run.stdout.contains(&line), "{}", run.stdout);
    }
    assert!(
        run.stdout
            .contains(&format!("\ncheck result: FAILED. 0 same; 0 different; {} without a reference;", scenes.len()))
    );
    assert!(run.stdout.contains("(tolerance 0, max pixels 0, references in refs)"), "{}", run.stdout);
    assert!(!dir.join("refs").exists(), "a missing reference is never blessed implicitly");

    // --bless writes them, says which, and passes.
    let run = ripple(&args(&scenes, &["--refs", "refs", "--bless"]), &dir);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.matches("... blessed (new reference refs/").count(), scenes.len(), "{}", run.stdout);
    assert!(run.stdout.contains(&format!("blessed {}: refs/", scenes.len())), "{}", run.stdout);

    // References are small: each well under the scene's own GIF.
    for scene in &scenes {
        let name = Path::new(scene).file_stem().unwrap().to_str().unwrap();
        let gif = format!("{name}.gif");
        assert_eq!(ripple(&[scene, "-o", &gif, "-q"], &dir).code, 0);
        let (reference, full) = (size(&dir.join("refs").join(&gif)), size(&dir.join(&gif)));
        assert!(reference * 2 < full, "{name}: reference {reference} bytes, GIF {full}");
    }

    // Clean: all the same.
    let run = ripple(&args(&scenes, &["--refs", "refs"]), &dir);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.matches(" ... ok\n").count(), scenes.len());
    assert!(
        run.stdout.contains(&format!("check result: ok. {} same; 0 different; 0 without a reference;", scenes.len()))
    );

    // Edit a scene: move the stone that falls at 1.2 s (frame 30 of 25 fps) by two pixels…
    let pond = dir.join("scenes/pond.toml");
    let text = std::fs::read_to_string(&pond).unwrap();
    let edited = text.replacen("x = 97", "x = 99", 1);
    assert_ne!(edited, text);
    std::fs::write(&pond, edited).unwrap();
    // …in a scene long enough to show it.
    let long = |n: u32| {
        let t = std::fs::read_to_string(&pond).unwrap();
        std::fs::write(&pond, t.replace(&format!("frames = {FRAMES}"), &format!("frames = {n}"))).unwrap();
    };
    long(40);
    let scenes_now = scenes.clone();
    let summary = dir.join("summary.md");
    std::fs::write(&summary, "# earlier steps\n").unwrap();
    let run = ripple_with(
        &args(&scenes_now, &["--refs", "refs", "--report", "report", "--junit", "junit.xml"]),
        &dir,
        &[("GITHUB_STEP_SUMMARY", &summary)],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // The reference has 25 frames, the render 40: frames 25–39 are the render's alone, and
    // the stone falls at frame 30. Frames 0–24 are the same.
    assert!(
        run.stdout.contains("scene scenes/pond.toml ... FAILED: 15 of 40 frames differ, the first is frame 25"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("report: report/index.html"), "{}", run.stdout);

    // JUnit: one testcase per scene, the failure naming the first differing frame.
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(junit.starts_with("<?xml"));
    assert_eq!(junit.matches("<testcase ").count(), scenes.len());
    assert_eq!(junit.matches("<failure ").count(), 1);
    assert!(junit.contains("failures=\"1\""));
    assert!(
        junit.contains("message=\"scenes/pond.toml: 15 of 40 frames differ, the first is frame 25; the render has 40"),
        "{junit}"
    );

    // The job summary is appended to, in Markdown, without pictures.
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("# earlier steps\n### ❌ ripple-render check: 1 of 7 scenes fail"), "{md}");
    assert!(md.contains("| `scenes/pond.toml` | 15 of 40 frames differ, the first is frame 25"), "{md}");
    assert!(!md.contains("!["), "{md}");

    // Bless the change on purpose: the reference is replaced, and the next check passes.
    let run = ripple(&args(&scenes, &["--refs", "refs", "--bless"]), &dir);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("scene scenes/pond.toml ... blessed (15 of 40 frames differ"), "{}", run.stdout);
    assert_eq!(ripple(&args(&scenes, &["--refs", "refs", "-q"]), &dir).code, 0);
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).len()
}

#[test]
fn a_moved_stone_is_found_at_its_frame_and_shown_in_a_browser() {
    let (dir, scenes) = scene_copies("check-moved");
    let pond = vec![scenes.iter().find(|s| s.ends_with("pond.toml")).unwrap().clone()];
    let path = dir.join(&pond[0]);
    let text = std::fs::read_to_string(&path).unwrap().replace(&format!("frames = {FRAMES}"), "frames = 40");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(ripple(&args(&pond, &["--refs", "refs", "--bless", "-q"]), &dir).code, 0);
    std::fs::write(&path, text.replacen("x = 97", "x = 99", 1)).unwrap();
    let run = ripple(&args(&pond, &["--refs", "refs", "--json", "--report", "report"]), &dir);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["verdict"], "different");
    let scene = &json["scenes"][0];
    assert_eq!((scene["result"].as_str(), scene["first_differing_frame"].as_u64()), (Some("different"), Some(30)));
    assert_eq!(scene["differing_frames"], 10);
    assert_eq!(json["report"], "report/index.html");

    // The page stands alone: no address outside its folder, its script inline.
    let page = std::fs::read_to_string(dir.join("report/index.html")).unwrap();
    assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("<script src"), "{page}");
    assert!(page.contains("src=\"s00-f0030-a.png\"") && page.contains("src=\"s00-f0030-heat.png\""));
    if !needs("a_moved_stone_is_found_at_its_frame_and_shown_in_a_browser (in a browser)", &[Tool::Chromium]) {
        return;
    }
    let browser = browser().unwrap();
    // The script runs, every picture loads, the first differing frame is shown; a link to the
    // third picture moves the scrubber there.
    let dom = dump_dom(&browser, &dir.join("report/index.html"), "");
    assert!(dom.contains("data-ready=\"yes\""), "{dom}");
    let images = regex_value(&dom, "data-images=\"");
    let (loaded, total) = images.split_once('/').unwrap();
    assert_eq!(loaded, total, "{images}");
    assert!(total.parse::<u32>().unwrap() >= 6);
    assert!(dom.contains("<output class=\"at\">frame 30 (the first that differs)</output>"), "{dom}");
    let dom = dump_dom(&browser, &dir.join("report/index.html"), "#picture=2");
    assert!(dom.contains("<output class=\"at\">frame 32</output>"), "{dom}");
}

#[test]
fn bad_input_stops_the_check_before_any_work() {
    let (dir, scenes) = scene_copies("check-bad");
    // A broken scene: exit 2, its error, and no reference written even with --bless.
    std::fs::write(dir.join("scenes/broken.toml"), "[video]\nfps = 0\n").unwrap();
    let mut with_broken = scenes.clone();
    with_broken.push("scenes/broken.toml".into());
    let run = ripple(&args(&with_broken, &["--refs", "refs", "--bless"]), &dir);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.starts_with("error: scenes/broken.toml:2:7"), "{}", run.stderr);
    assert!(!dir.join("refs").exists());
    // Two scenes named alike would share a reference.
    std::fs::create_dir_all(dir.join("other")).unwrap();
    std::fs::copy(dir.join(&scenes[0]), dir.join("other").join(Path::new(&scenes[0]).file_name().unwrap())).unwrap();
    let other = format!("other/{}", Path::new(&scenes[0]).file_name().unwrap().to_str().unwrap());
    let run = ripple(&["check", &scenes[0], &other, "--refs", "refs"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("would share the reference refs/"), "{}", run.stderr);
    // A GIF that is not a reference is not taken for one: its scene fails, saying why (a
    // reference is the references' input, not the user's command line: see check/outputs.rs).
    std::fs::create_dir_all(dir.join("refs")).unwrap();
    let name = Path::new(&scenes[0]).file_stem().unwrap().to_str().unwrap().to_string();
    assert_eq!(ripple(&[&scenes[0], "-o", &format!("refs/{name}.gif"), "-q"], &dir).code, 0);
    let run = ripple(&["check", &scenes[0], "--refs", "refs"], &dir);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("not a ripple-render reference"), "{}", run.stdout);
}

#[test]
fn tolerance_and_max_pixels_are_in_force_and_said() {
    let (dir, scenes) = scene_copies("check-tolerance");
    let one = &scenes[1..2];
    assert_eq!(ripple(&args(one, &["--refs", "refs", "--bless", "-q"]), &dir).code, 0);
    let run = ripple(&args(one, &["--refs", "refs", "--tolerance", "3", "--max-pixels", "10"]), &dir);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("(tolerance 3, max pixels 10, references in refs)"), "{}", run.stdout);
}

/// The scene names a `check --json` reports, in its order.
fn checked(json: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(json).expect("check --json");
    value["scenes"].as_array().unwrap().iter().map(|s| s["scene"].as_str().unwrap().to_string()).collect()
}

#[test]
fn shards_cover_every_scene_once_whatever_order_the_scenes_come_in() {
    let (dir, scenes) = scene_copies("check-shards");
    let run = ripple(&args(&scenes, &["--refs", "refs", "--bless", "-q"]), &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut reversed = scenes.clone();
    reversed.reverse();
    let mut all = Vec::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let run = ripple(&args(&scenes, &["--refs", "refs", "--shard", &shard, "--json"]), &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let slice = checked(&run.stdout);
        assert!(run.stdout.contains(&format!("\"shard\": \"{k}/3\"")), "{}", run.stdout);
        // The same slice when the shell lists the scenes the other way round.
        let again = ripple(&args(&reversed, &["--refs", "refs", "--shard", &shard, "--json"]), &dir);
        assert_eq!(checked(&again.stdout), slice);
        // Slices differ by one scene at most.
        assert!(slice.len() == scenes.len() / 3 || slice.len() == scenes.len().div_ceil(3), "{slice:?}");
        all.extend(slice);
    }
    all.sort();
    assert_eq!(all, scenes, "every scene in exactly one slice");
    let run = ripple(&args(&scenes, &["--refs", "refs", "--shard", "4/3"]), &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("K/N"), "{}", run.stderr);
}

#[test]
fn merged_shard_reports_are_the_report_of_one_check() {
    let (dir, scenes) = scene_copies("check-merge");
    let run = ripple(&args(&scenes, &["--refs", "refs", "--bless", "-q"]), &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // One scene edited: it must fail in its shard and in the merge.
    let edited = dir.join(&scenes[1]);
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, text + "\n[[stone]]\nat = 0.1\nx = 10\ny = 10\nradius = 4\n").unwrap();
    let whole = ripple(&args(&scenes, &["--refs", "refs", "--report", "whole", "--junit", "whole.xml"]), &dir);
    assert_eq!(whole.code, 1, "{}", whole.stderr);
    let mut codes = Vec::new();
    for k in 1..=3 {
        let (shard, report) = (format!("{k}/3"), format!("r{k}"));
        let run = ripple(&args(&scenes, &["--refs", "refs", "--shard", &shard, "--report", &report, "-q"]), &dir);
        codes.push(run.code);
    }
    assert_eq!(codes.iter().filter(|&&c| c == 1).count(), 1, "{codes:?}: one shard holds the edited scene");
    let merged = ripple(
        &["check", "--merge-reports", "r3", "r1", "r2", "--report", "all", "--junit", "all.xml", "--json"],
        &dir,
    );
    assert_eq!(merged.code, 1, "{}", merged.stderr);
    assert_eq!(checked(&merged.stdout), scenes, "every scene, in one check's order");
    // The page, its pictures and the JUnit XML are one check's, but for the times.
    let untimed = |path: &str| without_times(&std::fs::read_to_string(dir.join(path)).unwrap());
    // (Each page's accept command names its own folder.)
    let page =
        |path: &str, folder: &str| untimed(path).replace(&format!("--accept-from {folder} "), "--accept-from DIR ");
    assert_eq!(page("all/index.html", "all"), page("whole/index.html", "whole"));
    assert!(page("all/index.html", "all").contains("--accept-from DIR "));
    assert_eq!(untimed("all.xml"), untimed("whole.xml"));
    let pictures = |d: &str| crate::support::names(&dir.join(d));
    assert_eq!(pictures("all"), pictures("whole"));
    assert!(pictures("all").iter().any(|n| n.ends_with("-heat.png")));
    for name in pictures("whole").iter().filter(|n| n.ends_with(".png")) {
        assert!(
            std::fs::read(dir.join("all").join(name)).unwrap() == std::fs::read(dir.join("whole").join(name)).unwrap()
        );
    }
    // A missing or doubled shard, or a whole check's report, is refused.
    for (given, needle) in [
        (vec!["r1", "r3"], "shard 2/3 are missing"),
        (vec!["r1", "r2", "r2", "r3"], "both shard 2/3"),
        (vec!["whole"], "not of a shard"),
        (vec!["refs"], "is not the report folder of a check"),
    ] {
        let mut all = vec!["check", "--merge-reports"];
        all.extend(given);
        let run = ripple(&all, &dir);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(needle), "{}", run.stderr);
    }
}

/// `text` with the seconds a check took left out: `time="…"` and `finished in …s`.
fn without_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let next = ["time=\"", "finished in "].iter().filter_map(|m| rest.find(m).map(|at| (at, m.len()))).min();
        let Some((at, len)) = next else { break };
        out += &rest[..at + len];
        rest = rest[at + len..].trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    }
    out + rest
}
