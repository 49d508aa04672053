//! `ripple-render new`: starter scenes that render as they are and show water, and the warnings
//! for scenes that would show nothing.

use std::path::Path;

use crate::support::{read_png, scratch};
use crate::support::{ripple, scene_dir};

/// A picture with thousands of colours, drawn here: `width`×`height`, saved as PNG at `path`.
fn picture(path: &Path, width: u32, height: u32) -> Vec<u8> {
    let pixels: Vec<u8> = (0..width * height)
        .flat_map(|i| {
            let (x, y) = (i % width, i / width);
            [(x * 255 / width) as u8, (y * 255 / height) as u8, ((x ^ y) & 0x3f) as u8 + 96]
        })
        .collect();
    image::save_buffer(path, &pixels, width, height, image::ExtendedColorType::Rgb8).unwrap();
    pixels
}

#[test]
fn a_starter_scene_renders_as_it_is_and_shows_water_for_both_models() {
    let dir = scratch("starter");
    let photo = picture(&dir.join("photo.png"), 300, 200);
    for model in ["classic", "spring"] {
        let scene = format!("{model}.toml");
        let run = ripple(&["new", "photo.png", "-o", &scene, "--model", model], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stderr.contains(&format!("wrote {scene} (300×200, {model} model)")), "{}", run.stderr);
        let text = std::fs::read_to_string(dir.join(&scene)).unwrap();
        for line in
            ["width = 300", "height = 200", "image = \"photo.png\"", "sampling = \"bilinear\"", "[[swipe]]", "[rain]"]
        {
            assert!(text.contains(line), "{model}: no {line:?} in\n{text}");
        }
        let out = format!("{model}/");
        let run = ripple(&[&scene, "-o", &out, "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(!run.stderr.contains("warning"), "{}", run.stderr);
        // The water shows: a good part of the picture is bent or lit once the stones have fallen.
        let (w, h, frame) = read_png(&dir.join(format!("{model}/frame_0040.png")));
        assert_eq!((w, h), (300, 200));
        let moved = frame.chunks_exact(3).zip(photo.chunks_exact(3)).filter(|(a, b)| a != b).count();
        assert!(moved * 100 > w * h, "{model}: only {moved} of {} pixels differ from the picture", w * h);
    }
}

#[test]
fn a_large_picture_gets_a_canvas_of_its_shape_at_most_640_wide_and_a_path_from_the_scene() {
    let dir = scratch("starter-large");
    picture(&dir.join("wide.png"), 1000, 500);
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    let run = ripple(&["new", "wide.png", "-o", "scenes/wide.toml"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(dir.join("scenes/wide.toml")).unwrap();
    assert!(text.contains("width = 640\nheight = 320\n"), "{text}");
    assert!(text.contains("image = \"../wide.png\""), "{text}");
    // Rendered from elsewhere, the picture is found from the scene's folder.
    let run = ripple(&["plan", "wide.toml"], &dir.join("scenes"));
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn new_refuses_to_replace_a_scene_and_names_a_picture_it_cannot_read() {
    let dir = scratch("starter-refusals");
    picture(&dir.join("photo.png"), 40, 30);
    std::fs::write(dir.join("mine.toml"), "# my own scene\n").unwrap();
    let run = ripple(&["new", "photo.png", "-o", "mine.toml"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("mine.toml")).unwrap(), "# my own scene\n");
    assert_eq!(ripple(&["new", "photo.png", "-o", "mine.toml", "--force"], &dir).code, 0);
    std::fs::write(dir.join("notes.png"), "not a picture").unwrap();
    let run = ripple(&["new", "notes.png", "-o", "notes.toml"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("notes.png"), "{}", run.stderr);
    assert!(!dir.join("notes.toml").exists());
}

#[test]
fn scenes_that_show_nothing_are_warned_about() {
    let late = "[video]\nwidth = 32\nheight = 24\nduration = 2.0\n[background]\npattern = \"checker\"\n\
                [[stone]]\nat = 500\nx = 16\ny = 12\n";
    let dir = scene_dir("advice-late", late);
    for args in [vec!["scene.toml", "-o", "out.gif", "-q"], vec!["plan", "scene.toml"]] {
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stderr.contains("warning: nothing touches the water before the render ends at 2.00 s (frame 50): the first event is at 500.00 s"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // A flat colour without light: bending it shows nothing.
    let flat = "[video]\nwidth = 32\nheight = 24\nframes = 5\n[background]\ncolor = \"#336699\"\n\
                [[stone]]\nat = 0\nx = 16\ny = 12\n";
    let dir = scene_dir("advice-flat", flat);
    let run = ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("warning: the background is one flat colour (#336699)"), "{}", run.stderr);
    // With light, or a pattern, the water shows: no warning.
    for extra in ["[look]\nshading = 200\n", ""] {
        let body = if extra.is_empty() {
            flat.replace("color = \"#336699\"", "pattern = \"tiles\"")
        } else {
            format!("{flat}{extra}")
        };
        let dir = scene_dir("advice-shown", &body);
        let run = ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(!run.stderr.contains("warning"), "{body}: {}", run.stderr);
    }
}
