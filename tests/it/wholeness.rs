//! `join` refuses a part that is not whole (issue #39): each part ends in a seal over its
//! bytes, so a part cut at a block boundary, missing a frame or relabelled is refused, naming
//! it; a GIF claiming a huge screen is refused from its header; a pipe as a part or as the
//! target is refused without waiting, and nothing is written.

use std::path::Path;
use std::process::Command;

use crate::support::{ripple, scene_dir};
use crate::tools::{Tool, needs};

const SCENE: &str = "[video]\nwidth = 64\nheight = 40\nfps = 30\nframes = 18\n[background]\npattern = \"tiles\"\n\
    [[stone]]\nat = 0.25\nx = 14\ny = 20\nradius = 3\n[rain]\ndrops_per_second = 30\nseed = 5\n";

/// Parts of equal length, so that their labels can be swapped in place.
const CHUNKS: [(&str, &str); 3] = [("0..10", "a"), ("10..14", "b"), ("14..", "c")];

fn render_parts(dir: &Path, ext: &str) {
    for (chunk, name) in CHUNKS {
        let run = ripple(&["scene.toml", "-o", &format!("{name}.{ext}"), "--frames", chunk, "-q"], dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
}

/// Joins `parts` into `out.EXT`; returns what the refusal said, after checking it is one.
fn refused(dir: &Path, parts: &[&str], out: &str) -> String {
    let mut args = vec!["join"];
    args.extend(parts);
    args.extend(["-o", out]);
    let run = ripple(&args, dir);
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
    assert!(!dir.join(out).exists(), "{out} was written");
    run.stderr
}

/// `bytes` with `from` replaced by `to` (of the same length) once.
fn replaced(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = bytes.windows(from.len()).position(|w| w == from).expect("found");
    [&bytes[..at], to, &bytes[at + from.len()..]].concat()
}

#[test]
fn a_relabelled_or_cut_part_is_refused_naming_it_in_every_format() {
    let mut formats = vec!["gif", "apng", "webp"];
    if needs("a_relabelled_or_cut_part_is_refused_naming_it_in_every_format (MP4, WebM)", &[Tool::Ffmpeg]) {
        formats.extend(["mp4", "webm"]);
    }
    for ext in formats {
        let dir = scene_dir(&format!("wholeness-{ext}"), SCENE);
        render_parts(&dir, ext);
        let read = |name: &str| std::fs::read(dir.join(format!("{name}.{ext}"))).unwrap();
        let (a, b, c) = (format!("a.{ext}"), format!("b.{ext}"), format!("c.{ext}"));
        let out = format!("joined.{ext}");
        // Whole, they join.
        assert_eq!(ripple(&["join", &a, &b, &c, "-o", &out, "-q"], &dir).code, 0, "{ext}");
        std::fs::remove_file(dir.join(&out)).unwrap();
        // The two later parts' labels swapped: in "order" by label, the frames would be swapped.
        let relabelled = replaced(&read("b"), b"part=10..14/18", b"part=14..18/18");
        std::fs::write(dir.join(format!("x.{ext}")), relabelled).unwrap();
        let said = refused(&dir, &[&a, &c, &format!("x.{ext}")], &out);
        assert!(said.contains(&format!("x.{ext}")) && said.contains("its seal does not match"), "{ext}: {said}");
        // Cut short anywhere, at a block boundary too: the seal is gone.
        let whole = read("c");
        for cut in [whole.len() / 2, whole.len() - 1, whole.len() - 60] {
            std::fs::write(dir.join(format!("x.{ext}")), &whole[..cut]).unwrap();
            let said = refused(&dir, &[&a, &b, &format!("x.{ext}")], &out);
            assert!(said.contains(&format!("x.{ext}")), "{ext} cut at {cut}: {said}");
        }
    }
}

#[test]
fn a_gif_part_missing_a_frame_is_refused() {
    let dir = scene_dir("wholeness-frame", SCENE);
    render_parts(&dir, "gif");
    let bytes = std::fs::read(dir.join("b.gif")).unwrap();
    // The blocks of the GIF: its frames are a graphic control extension and an image.
    let frames = gif_frames(&bytes);
    assert_eq!(frames.len(), 4);
    let (start, end) = frames[2];
    std::fs::write(dir.join("x.gif"), [&bytes[..start], &bytes[end..]].concat()).unwrap();
    let said = refused(&dir, &["a.gif", "x.gif", "c.gif"], "joined.gif");
    assert!(said.contains("x.gif") && said.contains("its seal does not match"), "{said}");
}

/// Where each frame (graphic control extension through image data) lies in a GIF.
fn gif_frames(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut at = 13 + if bytes[10] & 0x80 != 0 { 3 << ((bytes[10] & 7) + 1) } else { 0 };
    let skip_blocks = |mut at: usize| {
        while bytes[at] != 0 {
            at += 1 + usize::from(bytes[at]);
        }
        at + 1
    };
    let (mut frames, mut start) = (Vec::new(), None);
    loop {
        match bytes[at] {
            0x21 => {
                if bytes[at + 1] == 0xf9 {
                    start = Some(at);
                }
                at = skip_blocks(at + 2);
            }
            0x2c => {
                let packed = bytes[at + 9];
                at += 10 + if packed & 0x80 != 0 { 3 << ((packed & 7) + 1) } else { 0 };
                at = skip_blocks(at + 1);
                frames.push((start.take().expect("a control block"), at));
            }
            _ => return frames,
        }
    }
}

#[test]
fn a_gif_part_claiming_a_huge_screen_is_refused_from_its_header() {
    let dir = scene_dir("wholeness-screen", SCENE);
    render_parts(&dir, "gif");
    let mut bytes = std::fs::read(dir.join("b.gif")).unwrap();
    bytes[6..10].copy_from_slice(&[0xff; 4]);
    // Sealed again, as a forger would: the header alone refuses it.
    let end = bytes.len() - 1 - 39;
    let sum = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes[..end]));
    let seal_at = bytes.len() - 1 - 17;
    bytes[seal_at..seal_at + 16].copy_from_slice(sum.as_bytes());
    std::fs::write(dir.join("x.gif"), &bytes).unwrap();
    let started = std::time::Instant::now();
    let said = refused(&dir, &["a.gif", "x.gif", "c.gif"], "joined.gif");
    assert!(said.contains("x.gif") && said.contains("65535×65535"), "{said}");
    assert!(started.elapsed().as_secs() < 20, "took {:?}", started.elapsed());
}

#[cfg(unix)]
#[test]
fn a_pipe_as_a_part_or_the_target_is_refused_without_waiting() {
    let dir = scene_dir("wholeness-pipes", SCENE);
    render_parts(&dir, "gif");
    assert!(Command::new("mkfifo").arg(dir.join("pipe.gif")).status().unwrap().success());
    let said = refused(&dir, &["a.gif", "pipe.gif", "c.gif"], "joined.gif");
    assert!(said.contains("pipe.gif") && said.contains("named pipe"), "{said}");
    let run = ripple(&["join", "a.gif", "b.gif", "c.gif", "-o", "pipe.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("pipe.gif is a named pipe"), "{}", run.stderr);
    let run = ripple(&["join", "a.gif", "b.gif", "c.gif", "-o", "/dev/null"], &dir);
    assert!(run.code == 2 && run.stderr.contains("/dev/null is a character device"), "{}", run.stderr);
    // A part cannot be written to a stream: it could not be sealed.
    let run = ripple(&["scene.toml", "-o", "-", "--format", "gif", "--frames", "0..4"], &dir);
    assert!(run.code == 2 && run.stderr.contains("a stream"), "{}", run.stderr);
}
