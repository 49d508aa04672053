//! Golden tests: each bundled scene rendered and compared with committed references, a CRC32 of
//! every frame and a few key frames as PNG, for the PNG path and for the decoded GIF.
//!
//! The references were cross-checked against `bench/reference.py`, an independent numpy
//! implementation of the scene format, before they were committed. `RIPPLE_BLESS=1 cargo test` rewrites
//! them and fails that run; a failing comparison writes expected | difference | actual PNGs into
//! `tests/failures/` (ignored by git).

use std::fmt::Write as _;
use std::path::Path;

use ripple_render::{Inputs, Scene};

use crate::support::{Collector, decode_gif, read_png, root, write_png};

macro_rules! golden {
    ($name:ident, $folder:literal, keys = $keys:expr) => {
        #[test]
        fn $name() {
            check(stringify!($name), $folder, &$keys);
        }
    };
}

golden!(pond, "tests/golden/scenes", keys = [30, 99]);
golden!(rain, "tests/golden/scenes", keys = [40, 79]);
golden!(swipes, "tests/golden/scenes", keys = [35, 60]);
golden!(spring, "tests/golden/scenes", keys = [0, 99]);
// The looks of §9, with scenes of their own.
golden!(lit, "tests/golden/scenes", keys = [12, 59]);
golden!(bilinear, "tests/golden/scenes", keys = [8, 39]);
// Walls and absorbing edges (§8): waves through two gaps in a breakwater.
golden!(slit, "tests/golden/scenes", keys = [10, 49]);
// Time in seconds and a seamless loop (§10, §11): the first frame and the last, faded.
golden!(seamless_loop, "tests/golden/scenes", keys = [0, 99]);

fn check(name: &str, folder: &str, keys: &[usize]) {
    let scene = Scene::load(&root().join(folder).join(format!("{name}.toml"))).expect("scene");
    let inputs = Inputs::for_scene(&scene).expect("background");
    let background = &inputs.background;
    let (mut crcs, mut kept) = (Vec::new(), Vec::new());
    let collector = Collector { background: background.pixels.clone(), keys, crcs: &mut crcs, kept: &mut kept };
    ripple_render::render(&scene, &inputs, collector, &mut |_| {}).expect("render");
    let mut gif = Vec::new();
    ripple_render::render::formats::gif(&scene, &inputs, &mut gif, &mut |_| {}).expect("render GIF");
    let decoded = decode_gif(&gif);
    let gif_crcs: Vec<u32> = decoded.frames.iter().map(|f| crc32fast::hash(f)).collect();
    assert_eq!(gif_crcs.len(), crcs.len(), "{name}: GIF frame count");
    let palette = ripple_render::encode::palette::Palette::for_background(&background.pixels);
    if palette.exact && scene.look.is_gather() {
        // §6.1: with at most 256 colours the GIF shows exactly the nearest-pixel render.
        assert_eq!(gif_crcs, crcs, "{name}: exact-palette GIF differs from the RGB frames");
    }

    let mut table = String::new();
    for (i, (rgb, gif)) in crcs.iter().zip(&gif_crcs).enumerate() {
        writeln!(table, "{i:04} rgb={rgb:08x} gif={gif:08x}").unwrap();
    }
    let dir = root().join("tests/golden").join(name);
    let (w, h) = (scene.width as usize, scene.height as usize);
    if std::env::var_os("RIPPLE_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("frames.txt"), &table).unwrap();
        for (&k, pixels) in keys.iter().zip(&kept) {
            write_png(&dir.join(format!("frame_{k:04}.png")), w, h, pixels);
        }
        panic!("{name}: references updated in {}; re-run without RIPPLE_BLESS", dir.display());
    }

    let missing = |what: &Path| -> ! {
        panic!("{name}: missing reference {}; create it with RIPPLE_BLESS=1 cargo test", what.display())
    };
    let path = dir.join("frames.txt");
    let Ok(reference) = std::fs::read_to_string(&path) else { missing(&path) };
    let mut problems = Vec::new();
    if reference != table {
        let (expected, actual): (Vec<&str>, Vec<&str>) = (reference.lines().collect(), table.lines().collect());
        match expected.iter().zip(&actual).position(|(a, b)| a != b) {
            Some(i) => problems.push(format!(
                "frame {i} is the first to differ from frames.txt: expected `{}`, got `{}`",
                expected[i], actual[i]
            )),
            None => problems.push(format!("{} frames in frames.txt, {} rendered", expected.len(), actual.len())),
        }
    }
    for (&k, actual) in keys.iter().zip(&kept) {
        let path = dir.join(format!("frame_{k:04}.png"));
        if !path.exists() {
            missing(&path);
        }
        let (rw, rh, expected) = read_png(&path);
        assert_eq!((rw, rh), (w, h), "{name}: key frame {k} size");
        let differing = expected.chunks_exact(3).zip(actual.chunks_exact(3)).filter(|(a, b)| a != b).count();
        if differing > 0 {
            let out = write_failure(name, k, w, h, &expected, actual);
            problems.push(format!("key frame {k} differs in {differing} pixels; see {}", out.display()));
        }
    }
    assert!(problems.is_empty(), "{name}: {}", problems.join("; "));
}

/// Writes expected | difference | actual side by side and returns its path.
fn write_failure(name: &str, k: usize, w: usize, h: usize, expected: &[u8], actual: &[u8]) -> std::path::PathBuf {
    let dir = root().join("tests/failures").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut sheet = vec![0u8; w * 3 * h * 3];
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) * 3;
            let (e, a) = (&expected[i..i + 3], &actual[i..i + 3]);
            // Differences in red over a dimmed copy of the expected frame.
            let diff = if e == a { [e[0] / 4, e[1] / 4, e[2] / 4] } else { [255, 0, 0] };
            for (panel, px) in [e, &diff[..], a].into_iter().enumerate() {
                let o = (y * w * 3 + panel * w + x) * 3;
                sheet[o..o + 3].copy_from_slice(px);
            }
        }
    }
    let path = dir.join(format!("frame_{k:04}.png"));
    write_png(&path, w * 3, h, &sheet);
    path
}
