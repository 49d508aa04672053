//! What a newcomer tripped on (issues #39 and #49): a pre-roll that keeps the events where they
//! are (`video.preroll`), a warning naming the events a `video.start` hides, a warning for a
//! scene with no event at all, `--max-size` units that mean what they say; a looping scene's
//! swipe shown where each pass of it happens, a video's quality, a picture's near name, and a
//! clone the README's first render leaves clean.

use std::path::Path;

use crate::support::{decode_gif, ripple, scene_dir};
use crate::tools::{Tool, needs};

/// A stone, a swipe and a damping change, early in the output.
const SCENE: &str = "[video]\nwidth = 64\nheight = 48\nfps = 25\nduration = 1.0\n[background]\npattern = \"tiles\"\n\
    [[stone]]\nat = 0.1\nx = 20\ny = 20\nradius = 4\n\
    [[swipe]]\nfrom = 0.2\nuntil = 0.6\npath = [[5, 40], [60, 10]]\n\
    [[damping]]\nat = 0.5\nshift = 3\n";

fn frames(dir: &Path, name: &str) -> Vec<Vec<u8>> {
    decode_gif(&std::fs::read(dir.join(name)).unwrap()).frames
}

#[test]
fn a_preroll_keeps_the_events_where_they_are() {
    let dir = scene_dir("newcomer-preroll", SCENE);
    let render = |out: &str, set: &[&str]| {
        let mut args = vec!["scene.toml", "-o", out, "-q"];
        args.extend(set.iter().flat_map(|s| ["--set", s]));
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 0, "{set:?}: {}", run.stderr);
        run.stderr
    };
    // The water is still through the pre-roll and every event keeps its output frame, so the
    // frames are the ones without a pre-roll, to the bit: in frame mode, and in step mode
    // where the pre-roll is whole steps (0.4 s at 60 steps a second is 24).
    render("plain.gif", &[]);
    render("preroll.gif", &["video.preroll=0.44"]);
    assert!(frames(&dir, "plain.gif") == frames(&dir, "preroll.gif"));
    render("steps.gif", &["water.steps_per_second=60"]);
    render("steps-preroll.gif", &["water.steps_per_second=60", "video.preroll=0.4"]);
    assert!(frames(&dir, "steps.gif") == frames(&dir, "steps-preroll.gif"));
    // video.start counts the events from the simulation's start: they land unseen, and the
    // warning names them and the way to keep them.
    let said = render("start.gif", &["video.start=0.44"]);
    assert!(frames(&dir, "plain.gif") != frames(&dir, "start.gif"));
    // (Times are the frames' own: 0.1 s is frame round(2.5) = 3, at 0.12 s; the damping change
    // at 0.5 s comes after the pre-roll.)
    assert!(said.contains("2 event(s) land in the pre-roll"), "{said}");
    assert!(said.contains("stone[0] at 0.12 s, swipe[0] from 0.20 s;"), "{said}");
    assert!(said.contains("video.preroll = 0.44"), "{said}");
    // Both at once is refused, at the later key.
    let run = ripple(&["scene.toml", "-o", "x.gif", "--set", "video.start=1", "--set", "video.preroll=1"], &dir);
    assert!(run.code == 2 && run.stderr.contains("give either video.start"), "{}", run.stderr);
    assert!(!dir.join("x.gif").exists());
}

#[test]
fn a_scene_with_no_event_is_warned_of() {
    let dir = scene_dir("newcomer-still", "[video]\nframes = 3\n[background]\npattern = \"tiles\"\n");
    for args in [vec!["scene.toml", "-o", "out.gif", "-q"], vec!["plan", "scene.toml"]] {
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stderr.contains("warning: the scene has no stone, swipe or rain"), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn max_size_units_say_which_they_are() {
    let dir = scene_dir("newcomer-sizes", SCENE);
    for (size, read) in [
        ("2MB", "2 MB (2,000,000 bytes)"),
        ("2M", "2 MiB (2,097,152 bytes)"),
        ("2MiB", "2 MiB (2,097,152 bytes)"),
        ("300kB", "300 kB (300,000 bytes)"),
    ] {
        let run = ripple(&["scene.toml", "-o", "out.gif", "-f", "--max-size", size], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stderr.contains(&format!("fits --max-size {read}")), "{size}: {}", run.stderr);
    }
    // A limit no rung reaches says the limit it read.
    let run = ripple(&["scene.toml", "-o", "small.gif", "--max-size", "1kB"], &dir);
    assert!(run.code == 2 && run.stderr.contains("fits --max-size 1 kB (1,000 bytes)"), "{}", run.stderr);
}

#[test]
fn a_looping_scenes_swipe_is_shown_where_each_pass_happens() {
    let run = ripple(&["plan", "scenes/loop.toml"], &crate::support::root());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let swipes: Vec<&str> = run.stdout.lines().filter(|l| l.contains("swipe[0]:")).collect();
    // Four passes (three in the pre-roll), each over its own steps; the last shows at 65..=86.
    assert_eq!(swipes.len(), 4, "{}", run.stdout);
    assert!(swipes[3].contains("(output 65..=86)"), "{}", swipes[3]);
    assert!(swipes[..3].iter().all(|l| l.contains("(output pre-roll)")), "{swipes:?}");
    let json = ripple(&["plan", "scenes/loop.toml", "--json"], &crate::support::root()).stdout;
    assert!(!json.contains("\"first_frame\":null,\"last_frame\":86"), "a marker still spans the pre-roll to 86");
}

#[test]
fn a_video_takes_a_quality_and_a_missing_picture_its_near_name() {
    let dir = scene_dir("newcomer-video", SCENE);
    std::fs::copy(crate::support::root().join("scenes/koi.png"), dir.join("koi.png")).unwrap();
    let typo = scene_dir("newcomer-typo", "[background]\nimage = \"Koi.pgn\"\n");
    std::fs::copy(crate::support::root().join("scenes/koi.png"), typo.join("koi.png")).unwrap();
    let run = ripple(&["scene.toml", "-o", "x.gif"], &typo);
    assert!(run.code == 2 && run.stderr.contains("hint: did you mean `koi.png`?"), "{}", run.stderr);
    if !needs("a_video_takes_a_quality_and_a_missing_picture_its_near_name (the video)", &[Tool::Ffmpeg]) {
        return;
    }
    let size = |args: &[&str], out: &str| {
        let run = ripple(&[&["scene.toml", "-o", out, "-q", "-f"], args].concat(), &dir);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        std::fs::metadata(dir.join(out)).unwrap().len()
    };
    for out in ["v.mp4", "v.webm"] {
        let (best, plain, low) = (size(&["--quality", "100"], out), size(&[], out), size(&["--quality", "10"], out));
        assert!(best > plain && plain > low, "{out}: {best} {plain} {low}");
    }
}

#[test]
fn the_readmes_first_render_leaves_the_clone_clean() {
    let root = crate::support::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let first = readme.lines().find(|l| l.starts_with("cargo run --release -- ")).unwrap();
    let output = first.split(" -o ").nth(1).and_then(|rest| rest.split_whitespace().next()).unwrap();
    let ignored = std::process::Command::new("git")
        .args(["check-ignore", "-q", output])
        .current_dir(&root)
        .status()
        .map(|s| s.success());
    // Outside a Git checkout (a crates.io package) there is nothing to keep clean.
    if let Some(ignored) = ignored.ok().filter(|_| root.join(".git").exists()) {
        assert!(ignored, "{output}, which the README renders first, would show in `git status`");
    }
    assert!(readme.contains("takes a few\nminutes"), "the README does not say the first build takes minutes");
}

/// The README's second command is the whole suite: CI runs exactly it, and it reaches
/// `cargo test` through the script that sets up the checks' tools and lists what did not run.
#[test]
fn the_readmes_test_command_is_what_ci_runs() {
    let root = crate::support::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let line = readme.lines().find(|l| l.ends_with("# the whole test suite")).expect("the README's test command");
    let command = line.split('#').next().unwrap().trim();
    assert_eq!(command, "make test");
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == command), ".ci/run does not run `{command}`");
    assert!(ci.lines().any(|l| l.trim() == "export CI=true"), ".ci/run does not export CI=true");
    let makefile = std::fs::read_to_string(root.join("Makefile")).unwrap();
    assert!(makefile.contains("\ttools/test $(ARGS)\n"), "{makefile}");
    let script = std::fs::read_to_string(root.join("tools/test")).unwrap();
    for step in ["npm ci --prefix web", "-r tests/requirements.txt", "cargo test \"$@\"", "RIPPLE_TEST_SKIPS"] {
        assert!(script.contains(step), "tools/test does not {step}");
    }
}
