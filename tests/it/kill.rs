//! SIGKILL at random moments (§6.3, issue #5): whatever instant a render dies, the target
//! holds either the old output or the complete new one, never a mix or a partial file, and no
//! temporary outlives the next run.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::support::{ripple, scene_dir, temporaries};

/// The old output comes from a different scene, so old and new never share bytes by accident.
const OLD: &str = "[video]\nwidth = 48\nheight = 32\nframes = 5\n[[stone]]\nat = 0\nx = 20\ny = 10\n";
/// Long enough (a few hundred ms in a test build) that kills land in every stage.
const NEW: &str = "[video]\nwidth = 160\nheight = 120\nframes = 120\n[background]\npattern = \"tiles\"\n\
                   [rain]\ndrops_per_second = 40\nseed = 9\n";

/// Every file under `path` (or `path` itself) with its bytes, by relative name.
fn snapshot(path: &Path) -> Option<BTreeMap<String, Vec<u8>>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        return Some(BTreeMap::from([(String::new(), std::fs::read(path).unwrap())]));
    }
    let files = std::fs::read_dir(path).unwrap().map(|e| {
        let e = e.unwrap();
        (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
    });
    Some(files.collect())
}

/// splitmix64: the kill times are random but the same on every run of the suite.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Kills `kills` renders of `output` at random moments and checks what each one leaves.
/// Returns how many kills left a temporary behind until the next run swept it.
fn kill_renders(name: &str, output: &str, kills: u32, seed: u64) -> u32 {
    let dir = scene_dir(name, NEW);
    std::fs::write(dir.join("old.toml"), OLD).unwrap();
    let target = dir.join(output.trim_end_matches('/'));
    let render = |scene: &str| assert_eq!(ripple(&[scene, "-o", output, "-q", "-f"], &dir).code, 0);
    // The complete new output, and how long a render takes.
    let started = Instant::now();
    render("scene.toml");
    let span = started.elapsed();
    let new = snapshot(&target).unwrap();
    render("old.toml");
    let old = snapshot(&target).unwrap();
    assert_ne!(old, new);

    let mut state = seed;
    let mut stray_kills = 0;
    for kill in 0..kills {
        // Uniform over the whole run and a little past it, so start-up, frames, the final
        // rename and the clean-up after it are all hit.
        let delay = span.mul_f64((next(&mut state) % 1300) as f64 / 1000.0);
        let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(["scene.toml", "-o", output, "-q", "-f"])
            .current_dir(&dir)
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        child.kill().unwrap();
        child.wait().unwrap();

        let now = snapshot(&target);
        let whole = now.as_ref() == Some(&old) || now.as_ref() == Some(&new);
        assert!(whole, "{name}, kill {kill} after {delay:?}: the target is neither the old nor the new output");
        let strays = temporaries(&dir);
        if !strays.is_empty() {
            stray_kills += 1;
            // A GIF is an unnamed file until its very last step, and only a complete one can
            // be left named (between its link and its rename).
            if !output.ends_with('/') {
                for stray in &strays {
                    assert_eq!(snapshot(&dir.join(stray)).unwrap()[""], new[""], "{name}, kill {kill}: {stray}");
                }
            }
        }
        // Every few kills, and after the last: a run completes and sweeps what the dead left.
        if kill % 5 == 4 || kill + 1 == kills {
            render(if kill % 10 == 4 { "old.toml" } else { "scene.toml" });
            assert!(temporaries(&dir).is_empty(), "{name}, after kill {kill}: {:?}", temporaries(&dir));
            let expected = if kill % 10 == 4 { &old } else { &new };
            assert_eq!(snapshot(&target).as_ref(), Some(expected));
        }
    }
    stray_kills
}

#[test]
fn sigkill_never_leaves_a_partial_gif() {
    let strays = kill_renders("kill-gif", "out.gif", 50, 1);
    // On Linux the GIF has no name until it is complete; a stray is possible only in the
    // microseconds between link and rename, so almost never.
    assert!(strays <= 2, "{strays} of 50 kills left a named temporary");
}

#[test]
fn sigkill_never_leaves_a_partial_png_folder() {
    kill_renders("kill-png", "frames/", 50, 2);
}
