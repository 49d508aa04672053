//! Seamless loops (§11) from the command line: the replayed pre-roll in `plan`, the seam
//! in the summary and `--stats`, and the errors of `[seamless]`.

use crate::support::{ripple, scene_dir};

const LOOP: &str = "[video]\nwidth = 64\nheight = 48\nframes = 10\nstart = 0.8\n[background]\npattern = \"tiles\"\n\
    [[stone]]\nat = 0.2\nx = 10\ny = 10\n\
    [[stone]]\nat = 0.84\nx = 30\ny = 20\n\
    [[stone]]\nat = 1.0\nx = 40\ny = 30\n";

/// With `repeat`, the window is frames 20..30 (K0 = 20, P = 10): the stone before it is left
/// out, and pre-roll frame u replays window frame 20 + (u − 20) mod 10.
#[test]
fn repeat_replays_the_window_through_the_pre_roll() {
    let dir = scene_dir("seamless-plan", &format!("{LOOP}[seamless]\nrepeat = true\n"));
    let run = ripple(&["plan", "--json", "scene.toml"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let frames: Vec<u64> = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("{\"frame\":"))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    // Stones at frames 21 and 25 (0.84 s, 1.0 s): replayed at 1, 5, 11, 15, then themselves.
    assert_eq!(frames, vec![1, 5, 11, 15, 21, 25], "{}", run.stdout);
    assert!(!run.stdout.contains("\"x\":10,"), "the stone before the window is left out: {}", run.stdout);
}

#[test]
fn the_seam_is_reported_in_the_summary_and_the_stats() {
    let dir = scene_dir("seamless-stats", &format!("{LOOP}[seamless]\nrepeat = true\ncrossfade = 3\n"));
    let run = ripple(&["scene.toml", "-o", "out.gif", "--stats"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats = run.stderr.lines().find(|l| l.starts_with('{')).expect("stats line");
    let seam: f64 = stats.split("\"seam\":").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    assert!(seam > 0.0 && seam.is_finite(), "{stats}");
    assert!(run.stderr.contains(&format!(", loop seam {seam:.2}× a frame's change, in")), "{}", run.stderr);
    // Two frames have no seam to speak of.
    let dir = scene_dir("seamless-two", &LOOP.replace("frames = 10", "frames = 2"));
    let run = ripple(&["scene.toml", "-o", "out.gif", "--stats"], &dir);
    assert!(run.stderr.contains("\"seam\":null") && !run.stderr.contains("seam "), "{}", run.stderr);
    // Nor do outputs that do not loop: a PNG folder, a video, a GIF that plays once.
    let dir = scene_dir("seamless-once", &format!("{LOOP}[seamless]\nrepeat = true\ncrossfade = 3\n"));
    for args in [&["-o", "frames/"][..], &["-o", "once.gif", "--set", "video.loop=false"]] {
        let run = ripple(&[&["scene.toml"][..], args, &["--stats"]].concat(), &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stderr.contains("\"seam\":") && !run.stderr.contains("seam "), "{args:?}: {}", run.stderr);
    }
}

/// Every message about a loop's pre-roll gives one figure: the crossfade's refusal and the
/// warning of a pre-roll too short for the water to forget its start (damping shift 5 at 25
/// steps a second: 10 half-lives of 1.386·32/25 s = 17.7 s, so 18 s).
#[test]
fn a_loops_pre_roll_is_one_figure_in_every_message() {
    let dir = scene_dir("seamless-figure", &format!("{LOOP}[seamless]\ncrossfade = 3\n"));
    let short = ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir);
    assert_eq!(short.code, 0, "{}", short.stderr);
    assert!(short.stderr.contains("give the loop a pre-roll of 18 s"), "{}", short.stderr);
    let none = ripple(&["scene.toml", "-o", "out.gif", "-q", "--set", "video.start=0"], &dir);
    assert!(none.code == 2 && none.stderr.contains("video.preroll = 18 "), "{}", none.stderr);
    // Written as suggested, the loop is quiet.
    let ok = ripple(&["scene.toml", "-o", "out.gif", "-q", "-f", "--set", "video.start=18"], &dir);
    assert!(ok.code == 0 && !ok.stderr.contains("pre-roll of"), "{}", ok.stderr);
}

#[test]
fn bad_seamless_keys_get_one_located_message() {
    let cases = [
        ("[seamless]\ncrossfade = 10\n", "seamless.crossfade = 10 is out of range: allowed 1..=9"),
        (
            "[seamless]\ncrossfade = 3\n",
            "seamless.crossfade = 3 fades from 3 pre-roll frames, but the render has 0: give the loop a pre-roll, \
             video.preroll = 18 (seconds",
        ),
        ("[seamless]\nrepeat = 1\n", "seamless.repeat = 1 is an integer: expected true or false"),
        ("[seamless]\nrepat = true\n", "unknown key `seamless.repat`"),
        (
            "[water]\nsteps_per_second = 42\n[seamless]\nrepeat = true\n",
            "seamless.repeat = true needs a render of whole steps: 10 frames at 25 fps are 16.8 steps at 42 steps a second; make video.frames a multiple of 25",
        ),
    ];
    for (tail, expected) in cases {
        let body = LOOP.replace("start = 0.8\n", "") + tail;
        let dir = scene_dir("seamless-errors", &body);
        let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
        assert_eq!(run.code, 2, "{tail}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{tail}: {}", run.stderr);
    }
}

/// The bundled loop plays round without a jump: its seam is at most 1.15 (the jump from the last
/// frame to the first is about an ordinary frame-to-frame change), where the pond, the same
/// events played once, jumps several times more (2.7 against the loop's 0.49 with the smooth
/// drop and the gain tone; 3 and more with the flat disc and the soft tone).
#[test]
fn the_bundled_loop_has_no_seam() {
    let root = crate::support::root();
    let seam_of = |scene: &str| -> f64 {
        let out = crate::support::scratch("bundled-loop").join("loop.gif");
        let args = [scene, "-o", out.to_str().unwrap(), "--stats", "--quiet", "--force"];
        let run = ripple(&args, &root);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let stats = run.stderr.lines().find(|l| l.starts_with('{')).expect("stats line");
        stats.split("\"seam\":").nth(1).unwrap().split(',').next().unwrap().parse().unwrap()
    };
    let seam = seam_of("scenes/loop.toml");
    assert!(seam <= 1.15, "scenes/loop.toml: seam {seam}");
    let pond = seam_of("scenes/pond.toml");
    assert!(pond > 2.0 && pond > 4.0 * seam, "scenes/pond.toml: seam {pond}, scenes/loop.toml: {seam}");
}
