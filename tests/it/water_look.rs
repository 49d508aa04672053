//! The water look (docs/scene-format.md, "The water look"): nothing burns on the bundled scenes
//! or on the scenes `new` writes for photos, the new keys change the picture, and the advice for
//! a scene that would show no water, or speckles instead of rings.

use std::path::Path;

use ripple_render::scene::Model;
use ripple_render::scene::starter::{Starter, scene_text};
use ripple_render::{Inputs, Scene};

use crate::support::{Collector, root, scratch, without_gain, write_png};
use crate::support::{ripple, scene_dir};

/// The measure: a pixel is burnt when all its channels are ≤ 5 or all ≥ 250.
fn burnt(p: &[u8]) -> bool {
    p.iter().all(|&c| c <= 5) || p.iter().all(|&c| c >= 250)
}

/// Every frame of `scene` in exact RGB, and its fitted background.
fn frames(scene: &Scene) -> (Vec<Vec<u8>>, Vec<u8>) {
    let inputs = Inputs::for_scene(scene).expect("background");
    let background = inputs.background.pixels.clone();
    let keys: Vec<usize> = (0..scene.frames as usize).collect();
    let (mut crcs, mut kept) = (Vec::new(), Vec::new());
    let collector = Collector { background: background.clone(), keys: &keys, crcs: &mut crcs, kept: &mut kept };
    ripple_render::render(scene, &inputs, collector, &mut |_| {}).expect("render");
    (kept, background.as_flattened().to_vec())
}

/// The largest share of a frame's pixels newly burnt: burnt in the frame where the fitted
/// picture is not (stricter than comparing counts: a white patch moved sideways counts).
fn worst_burn(scene: &Scene) -> f64 {
    let (frames, background) = frames(scene);
    let was: Vec<bool> = background.chunks_exact(3).map(burnt).collect();
    let pixels = was.len() as f64;
    frames
        .iter()
        .map(|f| f.chunks_exact(3).zip(&was).filter(|(p, was)| burnt(p) && !**was).count() as f64 / pixels)
        .fold(0.0, f64::max)
}

fn load(path: &Path, overrides: &[&str]) -> Scene {
    let text = std::fs::read_to_string(path).unwrap();
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scene::from_toml_str_with(&text, path, &overrides).unwrap()
}

#[test]
fn no_bundled_scene_burns_and_the_old_look_did() {
    let mut names: Vec<_> = std::fs::read_dir(root().join("scenes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    for path in &names {
        let worst = worst_burn(&load(path, &[]));
        assert!(worst <= 0.005, "{}: {:.2}% of a frame burnt", path.display(), worst * 100.0);
    }
    // The measure can fail: slit.toml with §9's clamped light (the lit look's shading and
    // highlight) and unsmoothed heights burns 7.8% of a frame (the figure).
    let slit = root().join("scenes/slit.toml");
    let text = without_gain(&std::fs::read_to_string(&slit).unwrap());
    let old = ["look.tone=\"clamp\"", "look.smooth=0", "look.shading=96", "look.highlight=280", "look.caustics=0"];
    let old: Vec<String> = old.iter().map(|s| s.to_string()).chain(["look.reflection=0".to_string()]).collect();
    let old = Scene::from_toml_str_with(&text, &slit, &old).unwrap();
    assert!(worst_burn(&old) > 0.05);
}

/// A photo-like picture with a sky near white, deep shadows and fine texture.
fn photo(path: &Path, width: usize, height: usize) {
    let rgb: Vec<u8> = (0..width * height)
        .flat_map(|i| {
            let (x, y) = ((i % width) as f64 / width as f64, (i / width) as f64 / height as f64);
            let grain = ((i * 2_654_435_761) >> 13 & 15) as f64;
            let sky = 248.0 - 30.0 * y;
            let ground = 20.0 + 90.0 * (x * 9.0).sin().abs() * (1.0 - y) + grain;
            let v = if y < 0.35 { sky } else { ground };
            [v, v * 0.9 + 10.0 * x, v * 0.7 + 40.0 * y].map(|c| c.clamp(0.0, 255.0) as u8)
        })
        .collect();
    write_png(path, width, height, &rgb);
}

#[test]
fn the_scenes_new_writes_for_photos_do_not_burn() {
    let dir = scratch("water-look-photos");
    photo(&dir.join("photo.png"), 320, 200);
    for model in Model::ALL {
        let text = scene_text(&Starter { picture: (320, 200), image: "photo.png", model });
        let scene = Scene::from_toml_str(&text, &dir.join("scene.toml")).unwrap();
        let worst = worst_burn(&scene);
        assert!(worst <= 0.005, "{model:?}: {:.2}% of a frame burnt", worst * 100.0);
    }
}

#[test]
fn caustics_and_the_sky_change_the_picture() {
    let pond = root().join("scenes/pond.toml");
    let plain = ["look.caustics=0", "look.reflection=0", "look.glint=0"];
    let base = frames(&load(&pond, &plain)).0;
    let mirror = ["look.caustics=0", "look.reflection=4096", "look.glint=0"];
    // Caustics, a stronger reflection, a glint, and another sky than the mirror's.
    for (sets, against) in [
        (vec![plain[1], plain[2], "look.caustics=512"], &base),
        (vec![plain[0], plain[2], "look.reflection=4096"], &base),
        (vec![plain[0], plain[1], "look.glint=256"], &base),
        (vec![mirror[0], mirror[1], mirror[2], "look.sky=\"#ff0000\""], &frames(&load(&pond, &mirror)).0),
    ] {
        let set = sets[sets.len() - 1];
        let changed = frames(&load(&pond, &sets)).0;
        assert!(changed[40] != against[40], "{set} changes nothing");
        // Calm water is the background whatever the terms: the first frame, before any stone.
        assert!(changed[0] == base[0], "{set} changes calm water");
    }
}

#[test]
fn a_scene_without_a_background_is_told_its_canvas_is_black() {
    let bare = "[video]\nwidth = 32\nheight = 24\nframes = 3\n[[stone]]\nat = 0\nx = 16\ny = 12\n";
    let dir = scene_dir("water-look-black", bare);
    for args in [vec!["scene.toml", "-o", "out.gif", "-q"], vec!["plan", "scene.toml"]] {
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stderr.contains("warning: the scene has no background, so the canvas is black: set [background]"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // A colour chosen, even black, is a choice.
    let dir = scene_dir("water-look-chosen", &format!("{bare}[background]\ncolor = \"#000000\"\n"));
    let run = ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
}

#[test]
fn a_picture_under_the_default_look_gets_one_hint() {
    let scene = "[video]\nframes = 3\n[background]\nimage = \"p.png\"\n[[stone]]\nat = 0\nx = 16\ny = 12\n";
    let dir = scene_dir("water-look-hint", scene);
    photo(&dir.join("p.png"), 40, 30);
    // With --quiet a render prints no hint at all.
    let quiet = ripple(&["scene.toml", "-o", "out.gif", "-q", "-f"], &dir);
    assert!(quiet.code == 0 && !quiet.stderr.contains("hint:"), "{}", quiet.stderr);
    for args in [vec!["scene.toml", "-o", "out.gif", "-f"], vec!["plan", "scene.toml"]] {
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let hints: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("hint: ")).collect();
        assert_eq!(hints.len(), 1, "{args:?}: {}", run.stderr);
        assert!(hints[0].contains("refraction = 0.04") && hints[0].contains("tone = \"gain\""), "{}", hints[0]);
        // The values it names render without a hint.
        let tuned = "--set=water.refraction=0.05";
        let run = ripple(&[&args[..], &[tuned]].concat(), &dir);
        assert!(!run.stderr.contains("hint:"), "{}", run.stderr);
    }
}
