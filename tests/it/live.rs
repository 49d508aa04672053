//! The live player (`ripple_render::live`, what the web page runs): its frames are the CLI's,
//! for every bundled scene, with the pictures handed over as bytes; what a pointer adds comes
//! out as lines that make the CLI render the frames played.

use std::path::Path;

use ripple_render::base::picture::Given;
use ripple_render::live::Live;

use crate::support::{ripple, root, scratch};

const BUDGET: u64 = 1 << 30;

/// The frame hashes of a `--hashes` manifest.
fn manifest_hashes(text: &str) -> Vec<u64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| u64::from_str_radix(l.split_whitespace().nth(1).unwrap(), 16).unwrap())
        .collect()
}

/// The CLI's frame hashes for the scene `name` in `dir`.
fn cli_hashes(dir: &Path, name: &str) -> Vec<u64> {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let out = scratch(&format!("live-hashes-{run}")).join("hashes.txt");
    let run = ripple(&[name, "--hashes", out.to_str().unwrap()], dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    manifest_hashes(&std::fs::read_to_string(out).unwrap())
}

/// The bundled scene `name` opened live, its images handed over as bytes (the files are not
/// read by the player: it is opened under another folder's name).
fn open_bundled(name: &str) -> (String, Live) {
    let text = std::fs::read_to_string(root().join("scenes").join(name)).unwrap();
    let mut given = Given::none();
    for file in Live::files(&text, Path::new(name)).unwrap() {
        let bytes = std::fs::read(root().join("scenes").join(&file)).unwrap();
        given.add(&file, bytes);
    }
    let live = Live::open(&text, Path::new(name), &given, BUDGET).unwrap();
    (text, live)
}

/// `count` frames of `live` from where it is, hashed.
fn play(live: &mut Live, count: usize) -> Vec<u64> {
    let mut hashes = Vec::new();
    for i in 0..count {
        if i > 0 {
            live.advance();
        }
        live.draw();
        hashes.push(live.hash());
    }
    hashes
}

#[test]
fn every_bundled_scene_plays_live_as_the_cli_renders_it() {
    let scenes = root().join("scenes");
    let mut names: Vec<String> = std::fs::read_dir(&scenes)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    for name in names {
        let (_, mut live) = open_bundled(&name);
        let expected = cli_hashes(&scenes, &name);
        let frames = live.scene().frames as usize;
        assert_eq!(play(&mut live, frames), expected, "{name}");
        // It loops: the first frame again, then a seek back and forth.
        assert_eq!(live.advance(), 0);
        live.draw();
        assert_eq!(live.hash(), expected[0], "{name} looped");
        for frame in [frames as u64 / 2, 3, frames as u64 - 1] {
            assert_eq!(live.seek(frame), frame);
            live.draw();
            assert_eq!(live.hash(), expected[frame as usize], "{name} at {frame}");
        }
    }
}

/// Plays `name` live with a click at frame 10 and a drag over frames 20–29, and checks that
/// the lines exported render, in the CLI, the frames played from the click on (all of them,
/// for a scene whose pre-roll does not replay its events) and on the next loop (all of them).
fn pointer_lines_render_the_frames_played(name: &str, first_pass_exact: bool) {
    let (text, mut live) = open_bundled(name);
    let frames = live.scene().frames as usize;
    let mut played = play(&mut live, 10);
    live.press(120, 90);
    live.drag_start(40, 200);
    for i in 10..frames {
        live.advance();
        if (20..30).contains(&i) {
            // 13 pixels a frame: a fast finger.
            live.drag_to(40 + 13 * (i as i64 - 19), 200 - (i as i64 - 19));
        }
        if i == 30 {
            live.drag_end();
        }
        live.draw();
        played.push(live.hash());
    }
    let lines = live.export();
    assert_eq!(lines.matches("[[stone]]").count(), 1, "{lines}");
    assert!(lines.matches("[[swipe]]").count() >= 10, "{lines}");
    let next_loop = play(&mut live, frames + 1)[1..].to_vec();

    let dir = scratch(&format!("live-lines-{name}"));
    let mut scene = String::new();
    for line in text.lines() {
        match line.strip_prefix("image = \"") {
            Some(image) => scene += &format!("image = \"{}\n", root().join("scenes").join(image).display()),
            None => scene += &format!("{line}\n"),
        }
    }
    std::fs::write(dir.join(name), format!("{scene}\n{lines}")).unwrap();
    let cli = cli_hashes(&dir, name);
    let original = cli_hashes(&root().join("scenes"), name);
    assert_eq!(next_loop, cli, "{name}: the loop after the lines were added");
    assert_eq!(played[..10], original[..10], "{name}: the frames before the pointer");
    if first_pass_exact {
        assert_eq!(played, cli, "{name}: the frames played as the pointer added them");
    }
    assert_ne!(played[10..], original[10..], "{name}: the pointer changed nothing");
}

#[test]
fn what_the_pointer_adds_comes_out_as_lines_the_cli_renders_alike() {
    // Frame clock (pool), step clock (pond), and a seamless loop whose pre-roll replays what
    // the lines add (loop): its first pass differs from the CLI's from the click on.
    pointer_lines_render_the_frames_played("pool.toml", true);
    pointer_lines_render_the_frames_played("pond.toml", true);
    pointer_lines_render_the_frames_played("loop.toml", false);
}
