//! Checkpoints under hostile conditions (issue #39): a checkpoint that is damaged, cut short,
//! foreign, of an older version or not a file at all is passed over with a note, and the part's
//! frames are still the whole render's; one whose damping or clock was changed and its checksum
//! made to match is refused, naming it; signals and dead runs leave no temporaries behind.

use std::path::Path;
use std::process::Command;

use crate::support::{names, ripple, scene_dir, temporaries};

/// Rain and a stone, with a damping change between the checkpoints at frames 5 and 10.
const SCENE: &str = "[video]\nwidth = 48\nheight = 32\nfps = 20\nframes = 18\n[background]\npattern = \"tiles\"\n\
    [[stone]]\nat = 0.1\nx = 14\ny = 20\nradius = 3\n[rain]\ndrops_per_second = 30\nseed = 5\n\
    [[damping]]\nat = 0.3\nshift = 3\n";

/// Where the state starts in a checkpoint: after the first line, the identity line and the frame.
fn state_start(bytes: &[u8]) -> usize {
    let first = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    first + bytes[first..].iter().position(|&b| b == b'\n').unwrap() + 1 + 8
}

/// `bytes` with its checksum made to match again, as a forger would.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = bytes.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
    bytes
}

/// Renders frames 12.. into `part/` from the checkpoints in `ck`; returns what the run said.
fn part(dir: &Path) -> crate::support::Run {
    let _ = std::fs::remove_dir_all(dir.join("part"));
    ripple(&["scene.toml", "-o", "part/", "--frames", "12..", "--checkpoints", "ck"], dir)
}

/// Whether the part's frames are the whole render's.
fn part_is_whole(dir: &Path) -> bool {
    names(&dir.join("part"))
        .iter()
        .all(|n| std::fs::read(dir.join("part").join(n)).unwrap() == std::fs::read(dir.join("whole").join(n)).unwrap())
}

#[test]
fn a_checkpoint_that_does_not_hold_is_passed_over_and_the_frames_stay_right() {
    let dir = scene_dir("checkpoints-passed-over", SCENE);
    assert_eq!(ripple(&["scene.toml", "-o", "whole/", "-q"], &dir).code, 0);
    assert_eq!(ripple(&["scene.toml", "--checkpoints", "ck", "--checkpoint-every", "5", "-q"], &dir).code, 0);
    let path = dir.join("ck/frame_000010.checkpoint");
    let good = std::fs::read(&path).unwrap();
    let start = state_start(&good);
    let with = |at: usize, bit: u8| {
        let mut bytes = good.clone();
        bytes[at] ^= bit;
        bytes
    };
    let mut old_version = good.clone();
    old_version.splice(..b"ripple-render checkpoint 2\n".len(), b"ripple-render checkpoint\n".iter().copied());
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("a flipped bit in the water", with(good.len() - 100, 4), "its checksum does not match"),
        ("a changed damping shift", with(start + 24, 1), "its checksum does not match"),
        ("a changed clock", with(start, 1), "its checksum does not match"),
        ("a file cut short", good[..good.len() / 2].to_vec(), "where this render's state takes"),
        ("a picture under the name", crate::support::png_claiming(4, 4), "it is not a checkpoint"),
        ("an older version's", old_version, "another version of ripple-render"),
    ];
    for (what, bytes, why) in cases {
        std::fs::write(&path, bytes).unwrap();
        let run = part(&dir);
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("passed over the checkpoint ck/frame_000010.checkpoint: {why}"))
                || run.stderr.contains(why),
            "{what}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("frame_000010.checkpoint"), "{what}: {}", run.stderr);
        assert!(run.stderr.contains("(from the checkpoint at frame 5)"), "{what}: {}", run.stderr);
        assert!(part_is_whole(&dir), "{what}: the part's frames are not the whole render's");
    }
    // Another build's (its build= hash differs; sealed again so only that differs).
    let text = String::from_utf8_lossy(&good[..start]).into_owned();
    let at = text.find(" build=").expect("a build") + " build=".len();
    let mut other_build = good.clone();
    other_build[at] = if good[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(&path, resealed(other_build)).unwrap();
    let run = part(&dir);
    assert!(run.stderr.contains("frame_000010.checkpoint: it belongs to another render"), "{}", run.stderr);
    assert!(run.stderr.contains("(from the checkpoint at frame 5)") && part_is_whole(&dir), "{}", run.stderr);
    // Untouched, it is used, and says nothing.
    std::fs::write(&path, &good).unwrap();
    let run = part(&dir);
    assert!(
        run.stderr.contains("(from the checkpoint at frame 10)") && !run.stderr.contains("warning"),
        "{}",
        run.stderr
    );
    assert!(part_is_whole(&dir));
}

#[cfg(unix)]
#[test]
fn a_pipe_or_a_folder_under_a_checkpoints_name_is_passed_over_without_waiting() {
    let dir = scene_dir("checkpoints-pipe", SCENE);
    assert_eq!(ripple(&["scene.toml", "-o", "whole/", "-q"], &dir).code, 0);
    assert_eq!(ripple(&["scene.toml", "--checkpoints", "ck", "--checkpoint-every", "5", "-q"], &dir).code, 0);
    std::fs::remove_file(dir.join("ck/frame_000010.checkpoint")).unwrap();
    assert!(Command::new("mkfifo").arg(dir.join("ck/frame_000010.checkpoint")).status().unwrap().success());
    std::fs::create_dir(dir.join("ck/frame_000011.checkpoint")).unwrap();
    let run = part(&dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("named pipe") && run.stderr.contains("a folder"), "{}", run.stderr);
    assert!(run.stderr.contains("(from the checkpoint at frame 5)"), "{}", run.stderr);
    assert!(part_is_whole(&dir));
    // Writing checkpoints over a pipe is refused, naming it, rather than waiting for a reader.
    let run = ripple(&["scene.toml", "--checkpoints", "ck", "--checkpoint-every", "10", "-q"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("ck/frame_000010.checkpoint: it is a named pipe"), "{}", run.stderr);
}

#[test]
fn a_forged_checkpoint_whose_checksum_matches_is_refused_naming_it() {
    let dir = scene_dir("checkpoints-forged", SCENE);
    assert_eq!(ripple(&["scene.toml", "--checkpoints", "ck", "--checkpoint-every", "5", "-q"], &dir).code, 0);
    let path = dir.join("ck/frame_000010.checkpoint");
    let good = std::fs::read(&path).unwrap();
    let start = state_start(&good);
    for (at, why) in [(start + 24, "damping shift"), (start, "clock"), (start + 16, "clock")] {
        let mut bytes = good.clone();
        bytes[at] ^= 1;
        std::fs::write(&path, resealed(bytes)).unwrap();
        let run = part(&dir);
        assert_eq!(run.code, 2, "{why}: {}", run.stderr);
        assert!(run.stderr.contains("frame_000010.checkpoint") && run.stderr.contains(why), "{}", run.stderr);
        assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
        assert!(!dir.join("part").exists());
    }
}

#[cfg(unix)]
#[test]
fn a_dead_runs_temporaries_are_cleared_and_a_live_ones_kept() {
    let dir = scene_dir("checkpoints-temporaries", SCENE);
    std::fs::create_dir(dir.join("ck")).unwrap();
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let live = std::process::id();
    let left = [
        format!(".frame_000005.checkpoint.ripple-{dead}.tmp"),
        format!(".frame_000007.checkpoint.{dead}.tmp"),
        format!(".frame_000005.checkpoint.ripple-{live}.tmp"),
        format!(".frame_000007.checkpoint.{live}.tmp"),
        format!(".notes.txt.ripple-{dead}.tmp"),
    ];
    for name in &left {
        std::fs::write(dir.join("ck").join(name), b"half").unwrap();
    }
    let run = ripple(&["scene.toml", "--checkpoints", "ck", "--checkpoint-every", "9", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut kept = names(&dir.join("ck"));
    kept.sort();
    let mut expected = vec![left[2].clone(), left[3].clone(), left[4].clone(), "frame_000009.checkpoint".to_string()];
    expected.sort();
    assert_eq!(kept, expected);
}

#[cfg(unix)]
#[test]
fn a_signal_while_checkpoints_are_written_leaves_no_temporary() {
    // Large enough that checkpoints are written for a good while.
    let body = "[video]\nwidth = 640\nheight = 480\nframes = 400\n[background]\npattern = \"tiles\"\n\
                [rain]\ndrops_per_second = 50\nseed = 2\n";
    let dir = scene_dir("checkpoints-signal", body);
    for delay_ms in [150, 400] {
        let _ = std::fs::remove_dir_all(dir.join("ck"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(["scene.toml", "--checkpoints", "ck", "--checkpoint-every", "1", "-q"])
            .current_dir(&dir)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
        let status = child.wait().unwrap();
        assert!(std::os::unix::process::ExitStatusExt::signal(&status) == Some(2), "{status:?}");
        assert!(temporaries(&dir.join("ck")).is_empty(), "{:?}", names(&dir.join("ck")));
        let written = names(&dir.join("ck"));
        assert!(written.iter().all(|n| n.ends_with(".checkpoint")), "{written:?}");
        // Stopped while writing them, not before the first or after the last.
        assert!(!written.is_empty() && written.len() < 399, "{} checkpoints", written.len());
    }
}
