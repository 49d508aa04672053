//! A render split by frame range (`--frames A..B`) and put back together (`join`): the parts of
//! every format make the whole render's frames, delays and loop; a PNG sequence's parts make its
//! files byte for byte; bad ranges and bad sets of parts are refused, saying which.

use std::path::Path;
use std::process::Command;

use crate::support::{decode_gif, names};
use crate::support::{ripple, scene_dir};
use crate::tools::{Tool, needs};

/// Looped (§11, with a crossfade), lit, walled, timed in seconds, at 30 fps (delays of 3 and 4
/// cs, durations of 33 and 34 ms: a part that starts at an odd frame must keep the pattern).
const SCENE: &str = "[video]\nwidth = 64\nheight = 40\nfps = 30\nduration = 0.6\nstart = 0.2\n\
    [background]\npattern = \"tiles\"\n[water]\nrefraction = 0.08\n\
    [look]\nsampling = \"bilinear\"\nshading = 96\nhighlight = 320\nsmooth = 1\ntone = \"soft\"\n\
    [seamless]\nrepeat = true\ncrossfade = 4\n\
    [[obstacle]]\nshape = \"rect\"\nx = 30\ny = 0\nwidth = 3\nheight = 16\n\
    [[stone]]\nat = 0.25\nx = 14\ny = 20\nradius = 3\n[[stone]]\nat = 0.5\nx = 50\ny = 30\nradius = 2\n\
    [rain]\ndrops_per_second = 30\nseed = 5\n";

/// Uneven chunks of the scene's 18 frames, the last with an open end.
const CHUNKS: [&str; 4] = ["0..1", "1..8", "8..13", "13.."];

fn ok(dir: &Path, args: &[&str]) -> String {
    let run = ripple(args, dir);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run.stderr
}

fn refused(dir: &Path, args: &[&str], needles: &[&str]) {
    let run = ripple(args, dir);
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    for needle in needles {
        assert!(run.stderr.contains(needle), "{args:?}: no {needle:?} in {}", run.stderr);
    }
    assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
}

/// Renders the scene whole as `whole.EXT` and in `CHUNKS` as `part-K.EXT`; returns the parts.
fn render_parts(dir: &Path, ext: &str) -> Vec<String> {
    ok(dir, &["scene.toml", "-o", &format!("whole.{ext}")]);
    let parts: Vec<String> = (0..CHUNKS.len()).map(|k| format!("part-{k}.{ext}")).collect();
    for (chunk, part) in CHUNKS.iter().zip(&parts) {
        ok(dir, &["scene.toml", "-o", part, "--frames", chunk, "-q"]);
    }
    parts
}

fn join(dir: &Path, parts: &[String], out: &str) -> String {
    let mut args = vec!["join"];
    args.extend(parts.iter().map(String::as_str));
    args.extend(["-o", out]);
    ok(dir, &args)
}

#[test]
fn joined_parts_are_the_whole_render_in_every_animated_format() {
    // The GIF is compared frame by frame in `a_joined_gif_keeps_every_delay_and_the_loop` (a
    // `diff` of two lit GIFs matches their palettes, which takes a minute in a debug build).
    for ext in ["gif", "apng", "webp"] {
        let dir = scene_dir(&format!("parts-{ext}"), SCENE);
        let parts = render_parts(&dir, ext);
        let said = join(&dir, &parts, &format!("joined.{ext}"));
        assert!(said.contains("joined 4 parts") && said.contains("18 frames"), "{said}");
        // Frames as a viewer composes them, delays (each format's own) and frame count.
        if ext != "gif" {
            let run = ripple(&["diff", &format!("whole.{ext}"), &format!("joined.{ext}")], &dir);
            assert_eq!(run.code, 0, "{ext}: {}{}", run.stdout, run.stderr);
        }
        // The joined file says what the whole render says of itself (its provenance).
        let comment = |name: &str| {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let at = bytes.windows(14).position(|w| w == b"ripple-render ").unwrap();
            bytes[at..at + 40].to_vec()
        };
        if ext != "webp" {
            assert_eq!(comment(&format!("whole.{ext}")), comment(&format!("joined.{ext}")), "{ext}");
        }
        // Each later part's first frame is encoded again as the whole render has it: the joined
        // file is the whole render's.
        let bytes = |name: &str| std::fs::read(dir.join(name)).unwrap();
        assert!(bytes(&format!("whole.{ext}")) == bytes(&format!("joined.{ext}")), "{ext}");
    }
}

#[test]
fn a_joined_gif_keeps_every_delay_and_the_loop() {
    let dir = scene_dir("parts-gif-delays", SCENE);
    let parts = render_parts(&dir, "gif");
    join(&dir, &parts, "joined.gif");
    let whole = decode_gif(&std::fs::read(dir.join("whole.gif")).unwrap());
    let joined = decode_gif(&std::fs::read(dir.join("joined.gif")).unwrap());
    assert_eq!(joined.frames.len(), 18);
    // Each later part's whole first frame is encoded again as the difference the whole render
    // has there: the joined GIF is the whole render's file.
    assert!(std::fs::read(dir.join("joined.gif")).unwrap() == std::fs::read(dir.join("whole.gif")).unwrap());
    assert_eq!(joined.delays, whole.delays);
    // 30 fps: 3, 3, 4 centiseconds over and over (§6.1), whichever part a frame came from.
    assert_eq!(joined.delays.iter().map(|&d| u32::from(d)).sum::<u32>(), 60);
    assert_eq!(joined.frames, whole.frames);
    assert_eq!(joined.loops, whole.loops);
    assert_eq!(whole.loops, Some(gif::Repeat::Infinite));
}

#[test]
fn a_png_sequence_rendered_in_parts_is_the_whole_sequence_byte_for_byte() {
    let dir = scene_dir("parts-png", SCENE);
    ok(&dir, &["scene.toml", "-o", "whole/"]);
    // Parts in any order, into one folder that the first of them makes.
    for chunk in ["8..13", "13..", "0..1", "1..8"] {
        ok(&dir, &["scene.toml", "-o", "parts/", "--frames", chunk, "-q"]);
    }
    assert_eq!(names(&dir.join("parts")), names(&dir.join("whole")));
    for name in names(&dir.join("whole")) {
        let (a, b) = (std::fs::read(dir.join("whole").join(&name)), std::fs::read(dir.join("parts").join(&name)));
        assert!(a.unwrap() == b.unwrap(), "{name} differs");
    }
    // A part that overlaps frames already there is refused, and they are left as they were.
    refused(&dir, &["scene.toml", "-o", "parts/", "--frames", "12..14"], &["frame_0012.png", "--force"]);
    assert_eq!(names(&dir.join("parts")).len(), 18);
}

#[test]
fn joined_video_parts_have_every_frame_and_the_whole_duration() {
    if !needs("joined_video_parts_have_every_frame_and_the_whole_duration", &[Tool::Ffmpeg]) {
        return;
    }
    for ext in ["mp4", "webm"] {
        let dir = scene_dir(&format!("parts-{ext}"), SCENE);
        let parts = render_parts(&dir, ext);
        join(&dir, &parts, &format!("joined.{ext}"));
        // Frames decoded by ffmpeg: as many as the whole render's, each shown for 1/30 s. (The
        // pixels are the codec's, lossy, and each part starts a new group of pictures.)
        let frames = |name: &str| {
            let out = Command::new("ffmpeg")
                .args(["-v", "error", "-i", name, "-f", "framemd5", "-"])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| l.split(',').nth(1).unwrap().trim().to_string())
                .collect::<Vec<_>>()
        };
        let (whole, joined) = (frames(&format!("whole.{ext}")), frames(&format!("joined.{ext}")));
        assert_eq!(joined.len(), 18, "{ext}");
        assert_eq!(joined, whole, "{ext}: presentation times");
    }
}

#[test]
fn bad_sets_of_parts_are_refused_saying_which() {
    let dir = scene_dir("parts-refused", SCENE);
    let parts = render_parts(&dir, "gif");
    let p = |k: usize| parts[k].as_str();
    refused(&dir, &["join", p(0), p(1), p(3), "-o", "j.gif"], &["frames 8..13 are in no part", "part-1.gif"]);
    refused(&dir, &["join", p(0), p(2), p(1), p(3), "-o", "j.gif"], &["out of order", "part-0.gif part-1.gif"]);
    refused(&dir, &["join", p(1), p(2), p(3), "-o", "j.gif"], &["frames 0..1 are in no part"]);
    refused(&dir, &["join", p(0), p(1), p(2), "-o", "j.gif"], &["frames 13..18 are in no part"]);
    refused(&dir, &["join", p(0), p(1), p(1), p(2), p(3), "-o", "j.gif"], &["frames 1..8 are in both"]);
    refused(&dir, &["join", "whole.gif", "-o", "j.gif"], &["whole.gif is a whole render"]);
    // Another scene's part: the same frames of a scene that differs in one key.
    ok(&dir, &["scene.toml", "-o", "other.gif", "--frames", "8..13", "--set", "rain.seed=6", "-q"]);
    refused(&dir, &["join", p(0), p(1), "other.gif", p(3), "-o", "j.gif"], &["different renders", "other.gif"]);
    ok(&dir, &["scene.toml", "-o", "part.apng", "--frames", "1..8", "-q"]);
    refused(&dir, &["join", p(0), "part.apng", "-o", "j.gif"], &["part.apng", "is APNG and the output is GIF"]);
    refused(&dir, &["join", p(0), p(1), "-o", "frames/"], &["need no join"]);
    // A part cut short (a copy that did not finish) is named, and nothing is written.
    let bytes = std::fs::read(dir.join(p(3))).unwrap();
    std::fs::write(dir.join("cut.gif"), &bytes[..bytes.len() - 40]).unwrap();
    refused(&dir, &["join", p(0), p(1), p(2), "cut.gif", "-o", "j.gif"], &["cut.gif", "cut short"]);
    assert!(!dir.join("j.gif").exists());
}

#[test]
fn ranges_outside_the_render_or_with_other_options_are_refused() {
    let dir = scene_dir("parts-ranges", SCENE);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "10..19"], &["--frames 10..19 is past the end", "18"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "5..5"], &["empty range"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "18.."], &["--frames 18..18 is past the end"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "40.."], &["--frames 40..18 is past the end"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "x"], &["A..B"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "0/3"], &["K runs from 1 to N"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "1/20"], &["18 output frames, fewer than 20 chunks"]);
    refused(&dir, &["scene.toml", "-o", "a.png", "--frame", "3", "--frames", "0..4"], &["--frame"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "0..4", "--max-size", "1M"], &["--max-size"]);
    refused(&dir, &["scene.toml", "-o", "a.gif", "--frames", "0..4", "--hashes", "h.txt"], &["--hashes"]);
    assert!(names(&dir).iter().all(|n| n == "scene.toml"), "{:?}", names(&dir));
}

#[test]
fn parts_started_from_checkpoints_are_the_whole_render() {
    let dir = scene_dir("parts-checkpoints", SCENE);
    ok(&dir, &["scene.toml", "-o", "whole.gif"]);
    // A run that only simulates writes a checkpoint at every 5th output frame.
    let said = ok(&dir, &["scene.toml", "--checkpoints", "ck", "--checkpoint-every", "5"]);
    assert!(said.contains("wrote 3 checkpoints into ck"), "{said}");
    assert_eq!(
        names(&dir.join("ck")),
        ["frame_000005.checkpoint", "frame_000010.checkpoint", "frame_000015.checkpoint"]
    );
    let mut parts = Vec::new();
    for (k, (chunk, from)) in [("0..7", None), ("7..12", Some(5)), ("12..", Some(10))].into_iter().enumerate() {
        let part = format!("part-{k}.gif");
        let said = ok(&dir, &["scene.toml", "-o", &part, "--frames", chunk, "--checkpoints", "ck"]);
        let note = from.map(|f| format!("(from the checkpoint at frame {f})"));
        assert_eq!(note.as_ref().is_some_and(|n| said.contains(n)), from.is_some(), "{chunk}: {said}");
        parts.push(part);
    }
    join(&dir, &parts, "joined.gif");
    assert!(std::fs::read(dir.join("joined.gif")).unwrap() == std::fs::read(dir.join("whole.gif")).unwrap());

    // Another scene's checkpoints are passed over (the part simulates from the start) …
    let said =
        ok(&dir, &["scene.toml", "-o", "other.gif", "--frames", "12..", "--checkpoints", "ck", "--set", "rain.seed=9"]);
    assert!(!said.contains("from the checkpoint"), "{said}");
    // … and one of this scene that is cut short is passed over, saying so: the part starts from
    // the one before (the damaged kinds are in checkpoints.rs).
    let path = dir.join("ck/frame_000010.checkpoint");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let said = ok(&dir, &["scene.toml", "-o", "cut.gif", "--frames", "12..", "--checkpoints", "ck"]);
    assert!(
        said.contains("frame_000010.checkpoint: it is damaged") && said.contains("(from the checkpoint at frame 5)")
    );
}

#[test]
fn chunks_k_of_n_split_the_frames_evenly_and_join_into_the_whole() {
    let dir = scene_dir("parts-chunks", SCENE);
    ok(&dir, &["scene.toml", "-o", "whole.gif"]);
    let mut parts = Vec::new();
    // 18 frames in 4 chunks: ⌊k·18/4⌋ gives 0..4, 4..9, 9..13, 13..18.
    for (k, expected) in
        ["frames 0..4 of 18", "frames 4..9 of 18", "frames 9..13 of 18", "frames 13..18 of 18"].iter().enumerate()
    {
        let part = format!("{:02}.gif", k + 1);
        let said = ok(&dir, &["scene.toml", "-o", &part, "--frames", &format!("{}/4", k + 1)]);
        assert!(said.contains(expected), "{said}");
        parts.push(part);
    }
    join(&dir, &parts, "joined.gif");
    let whole = decode_gif(&std::fs::read(dir.join("whole.gif")).unwrap());
    let joined = decode_gif(&std::fs::read(dir.join("joined.gif")).unwrap());
    assert!(joined.frames == whole.frames && joined.delays == whole.delays);
}

#[test]
fn a_part_runs_ahead_on_several_threads_to_the_same_frames() {
    // A million cells: the water steps in bands on a pool while the part runs ahead.
    let body = "[video]\nwidth = 1024\nheight = 1024\nframes = 4\n[background]\npattern = \"tiles\"\n\
                [[stone]]\nat = 0\nx = 500\ny = 500\nradius = 9\n[[stone]]\nat = 0.04\nx = 20\ny = 1000\n";
    let dir = scene_dir("parts-threads", body);
    ok(&dir, &["scene.toml", "-o", "one/", "--frames", "3..", "--threads", "1", "-q"]);
    ok(&dir, &["scene.toml", "-o", "two/", "--frames", "3..", "--threads", "2", "-q"]);
    ok(&dir, &["scene.toml", "-o", "whole/", "--threads", "1", "-q"]);
    let frame = |d: &str| std::fs::read(dir.join(d).join("frame_0003.png")).unwrap();
    assert!(frame("one") == frame("two") && frame("two") == frame("whole"));
}
