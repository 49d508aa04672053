//! Impacts read as water (docs/scene-format.md, "The gain tone"; docs/guide.md): around every
//! stone of every bundled scene and of the scenes `new` writes for photos, in the frames after
//! it lands, hardly a pixel is a hard edge the picture does not have, and none sits at a flat
//! limit.

use std::path::Path;

use ripple_render::scene::starter::{Starter, scene_text};
use ripple_render::scene::{Clock, Model};
use ripple_render::{Inputs, Scene};

use crate::support::{Collector, root, scratch, without_gain};

/// The window: frames 0–10 after a stone lands, within 3 radii of it.
const FRAMES_AFTER: u64 = 10;
const RADII: i64 = 3;

fn luma(p: &[u8]) -> i32 {
    (77 * i32::from(p[0]) + 150 * i32::from(p[1]) + 29 * i32::from(p[2]) + 128) >> 8
}

/// A pixel at a flat limit: every channel within 1 of 245, or of 10, or the sky exactly.
fn flat(p: &[u8], sky: [u8; 3]) -> bool {
    p.iter().all(|&c| c.abs_diff(245) <= 1) || p.iter().all(|&c| c.abs_diff(10) <= 1) || p == sky
}

/// What one stone looks like after it lands: hard-edge pixels per frame (mean), and pixels at
/// a flat limit where the picture is not, in all.
struct Impact {
    hard_per_frame: f64,
    flat: usize,
}

/// Every stone's impact in `scene`.
fn impacts(scene: &Scene) -> Vec<Impact> {
    let inputs = Inputs::for_scene(scene).expect("background");
    let background = inputs.background.pixels.as_flattened().to_vec();
    let keys: Vec<usize> = (0..scene.frames as usize).collect();
    let (mut crcs, mut frames) = (Vec::new(), Vec::new());
    let collector =
        Collector { background: inputs.background.pixels.clone(), keys: &keys, crcs: &mut crcs, kept: &mut frames };
    ripple_render::render(scene, &inputs, collector, &mut |_| {}).expect("render");
    let (w, h) = (scene.width as i64, scene.height as i64);
    let at = |rgb: &[u8], x: i64, y: i64| luma(&rgb[3 * (y * w + x) as usize..][..3]);
    // The largest 4-neighbour luma step of a picture at (x, y).
    let step = |rgb: &[u8], x: i64, y: i64| {
        let centre = at(rgb, x, y);
        [(-1, 0), (1, 0), (0, -1), (0, 1)]
            .iter()
            .filter(|(i, j)| (0..w).contains(&(x + i)) && (0..h).contains(&(y + j)))
            .map(|(i, j)| (centre - at(rgb, x + i, y + j)).abs())
            .max()
            .unwrap_or(0)
    };
    // Where the picture is soft: no step of 12 or more in the 5×5 around.
    let soft = |x: i64, y: i64| {
        (-2..=2).all(|j| {
            (-2..=2).all(|i| {
                !(0..w).contains(&(x + i)) || !(0..h).contains(&(y + j)) || step(&background, x + i, y + j) < 12
            })
        })
    };
    scene
        .stones
        .iter()
        .map(|stone| {
            let lands = landing_frame(scene, stone.unit).saturating_sub(scene.first_frame);
            let window = lands..(lands + FRAMES_AFTER + 1).min(scene.frames);
            let reach = RADII * stone.radius;
            let (mut hard, mut flats) = (0usize, 0usize);
            for k in window.clone() {
                let frame = &frames[k as usize];
                for y in (stone.y - reach).max(0)..=(stone.y + reach).min(h - 1) {
                    for x in (stone.x - reach).max(0)..=(stone.x + reach).min(w - 1) {
                        let (dx, dy) = (x - stone.x, y - stone.y);
                        if dx * dx + dy * dy > reach * reach {
                            continue;
                        }
                        let i = 3 * (y * w + x) as usize;
                        let sky = if scene.look.reflection > 0 { scene.look.sky } else { [0, 0, 0] };
                        flats += usize::from(flat(&frame[i..i + 3], sky) && !flat(&background[i..i + 3], sky));
                        hard += usize::from(step(frame, x, y) > 48 && soft(x, y));
                    }
                }
            }
            Impact { hard_per_frame: hard as f64 / window.count().max(1) as f64, flat: flats }
        })
        .collect()
}

/// The first frame drawn after the events of `unit` (a frame, or a step in step mode).
fn landing_frame(scene: &Scene, unit: u64) -> u64 {
    match scene.water.clock {
        Clock::Frames { .. } => unit,
        clock => (0..).find(|&k| clock.steps_before_drawing(k, scene.fps) > unit).unwrap(),
    }
}

/// The stones of `scene` that do not land as water, each with its figures.
fn failures(name: &str, scene: &Scene) -> Vec<String> {
    impacts(scene)
        .iter()
        .enumerate()
        .filter(|(_, impact)| impact.hard_per_frame > 5.0 || impact.flat > 0)
        .map(|(i, impact)| {
            format!(
                "{name}: stone {i}: {:.1} hard-edge pixels a frame, {} at a flat limit",
                impact.hard_per_frame, impact.flat
            )
        })
        .collect()
}

#[test]
fn every_bundled_stone_lands_as_water() {
    let mut paths: Vec<_> = std::fs::read_dir(root().join("scenes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    let (mut stones, mut failed) = (0, Vec::new());
    for path in &paths {
        let mut text = std::fs::read_to_string(path).unwrap();
        // The pool's tiles are measured as a plain floor: its refracted grout lines are hard
        // edges by nature, not the water's.
        text = text.replace("pattern = \"tiles\"", "color = \"#4aa0c8\"");
        let scene = Scene::from_toml_str(&text, path).unwrap();
        stones += scene.stones.len();
        failed.extend(failures(&path.display().to_string(), &scene));
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(stones >= 10, "{stones} stones");
}

#[test]
fn the_old_pond_fails_the_measure() {
    // The measure can fail: pond with the flat disc and the soft tone (the look before this
    // one) has its first stone at about 245 hard-edge pixels a frame.
    let path = root().join("scenes/pond.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let old = [
        "water.drop=\"disc\"",
        "look.tone=\"soft\"",
        "look.highlight=320",
        "look.reflection=128",
        "look.shading=96",
        "look.caustics=192",
    ];
    let sets: Vec<String> = old.iter().map(|s| s.to_string()).collect();
    let scene = Scene::from_toml_str_with(&without_gain(&text), &path, &sets).unwrap();
    let first = &impacts(&scene)[0];
    assert!(first.hard_per_frame > 100.0, "{:.1}", first.hard_per_frame);
}

/// A photo-like picture: a bright sky, a dark ground with grain, a pale cup. The horizon lies
/// clear of the stones `new` places (a stone on it refracts that hard edge, as the pool's
/// water refracts its grout: hard by nature, not the water's).
fn photo(path: &Path, width: usize, height: usize) {
    let rgb: Vec<u8> = (0..width * height)
        .flat_map(|i| {
            let (x, y) = ((i % width) as f64 / width as f64, (i / width) as f64 / height as f64);
            let grain = ((i * 2_654_435_761) >> 13 & 15) as f64;
            let ground = 25.0 + 70.0 * (x * 7.0).sin().abs() + grain;
            let cup = ((x - 0.5).powi(2) + (y - 0.55).powi(2)).sqrt();
            let v = if y < 0.18 {
                240.0 - 20.0 * y
            } else if cup < 0.22 {
                235.0 - 60.0 * cup
            } else {
                ground
            };
            [v, v * 0.92 + 8.0, v * 0.8].map(|c| c.clamp(0.0, 255.0) as u8)
        })
        .collect();
    crate::support::write_png(path, width, height, &rgb);
}

#[test]
fn the_stones_of_the_scenes_new_writes_for_photos_land_as_water() {
    let dir = scratch("impacts-photos");
    let mut failed = Vec::new();
    for (size, name) in [((320u32, 200u32), "wide.png"), ((240, 320), "tall.png")] {
        photo(&dir.join(name), size.0 as usize, size.1 as usize);
        for model in Model::ALL {
            let text = scene_text(&Starter { picture: size, image: name, model });
            let scene = Scene::from_toml_str(&text, &dir.join("scene.toml")).unwrap();
            assert!(!scene.stones.is_empty());
            failed.extend(failures(&format!("{name}, {model:?}"), &scene));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
