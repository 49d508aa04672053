//! `--effort fast | default | max`: every level decodes, in decoders that are not ours, to the
//! frames the default makes; its bytes do not depend on the thread count; max is never larger
//! than the default; the file says its level, parts of a render at a level join into its whole
//! file, and `--max-size` takes `max` before it gives anything up.

use std::path::Path;
use std::process::Command;

use crate::formats::{CHECKER, LIT, TILES, decode_animation, libwebp_frames};
use crate::support::{decode_gif, names, read_png, render_rgb, ripple, scene_dir};
use crate::tools::{Tool, needs};

/// Renders `scene.toml` in `dir` into `out` at `effort`, quietly, replacing it.
fn render(dir: &Path, out: &str, effort: &str, extra: &[&str]) {
    let mut args = vec!["scene.toml", "-o", out, "-f", "-q", "--effort", effort];
    args.extend(extra);
    let run = ripple(&args, dir);
    assert_eq!(run.code, 0, "{out} at {effort}: {}", run.stderr);
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn every_level_decodes_to_the_exact_render() {
    let ffmpeg = needs("every_level_decodes_to_the_exact_render (ffmpeg's APNG)", &[Tool::Ffmpeg]);
    let libwebp = needs("every_level_decodes_to_the_exact_render (libwebp's WebP)", &[Tool::PillowWebp]);
    for (name, body) in [("checker", CHECKER), ("tiles", TILES), ("lit", LIT)] {
        let dir = scene_dir(&format!("effort-{name}"), body);
        let exact = render_rgb(body);
        for effort in ["fast", "max"] {
            // APNG, by the image crate and by ffmpeg.
            let apng = format!("{effort}.apng");
            render(&dir, &apng, effort, &[]);
            let (frames, _) = decode_animation(&dir.join(&apng));
            assert!(frames == exact, "{name}: the {effort} APNG decodes to other frames (image crate)");
            if ffmpeg {
                let raw = Command::new("ffmpeg")
                    .args(["-v", "error", "-i", &apng, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                assert!(raw.stdout == exact.concat(), "{name}: the {effort} APNG decodes to other frames (ffmpeg)");
            }
            // WebP, by libwebp (through Pillow) and by our own compositor.
            let webp = format!("{effort}.webp");
            render(&dir, &webp, effort, &[]);
            assert!(decode_animation(&dir.join(&webp)).0 == exact, "{name}: the {effort} WebP (ours)");
            if libwebp {
                let frames = libwebp_frames(&dir.join(&webp));
                assert!(frames == exact, "{name}: the {effort} WebP decodes to other frames (libwebp)");
            }
            // A PNG sequence, by the png crate.
            let folder = format!("{effort}-frames/");
            render(&dir, &folder, effort, &[]);
            let files = names(&dir.join(&folder));
            assert_eq!(files.len(), exact.len(), "{name}");
            for (file, want) in files.iter().zip(&exact) {
                let (_, _, rgb) = read_png(&dir.join(&folder).join(file));
                assert!(&rgb == want, "{name}: {effort} {file}");
            }
            // A GIF decodes to the default GIF's frames (its palette is the level's too).
            render(&dir, "default.gif", "default", &[]);
            let gif = format!("{effort}.gif");
            render(&dir, &gif, effort, &[]);
            let (ours, default) = (
                decode_gif(&std::fs::read(dir.join(&gif)).unwrap()),
                decode_gif(&std::fs::read(dir.join("default.gif")).unwrap()),
            );
            assert!(ours.frames == default.frames, "{name}: the {effort} GIF decodes to other frames");
        }
    }
}

#[test]
fn max_is_never_larger_and_every_level_is_the_same_on_any_thread_count() {
    let dir = scene_dir("effort-sizes", LIT);
    for format in ["gif", "apng", "webp"] {
        let out = |effort: &str, threads: &str| {
            let name = format!("{effort}-{threads}.{format}");
            render(&dir, &name, effort, &["--threads", threads]);
            std::fs::read(dir.join(&name)).unwrap()
        };
        for effort in ["fast", "default", "max"] {
            assert!(out(effort, "1") == out(effort, "3"), "{format} at {effort}: other bytes on 3 threads");
        }
        let (default, max) = (out("default", "1").len(), out("max", "1").len());
        assert!(max <= default, "{format}: max {max} bytes, default {default}");
    }
}

#[test]
fn the_file_says_its_level_and_parts_at_a_level_join_into_the_whole() {
    let dir = scene_dir("effort-parts", TILES);
    for format in ["gif", "apng", "webp"] {
        for effort in ["fast", "max"] {
            let whole = format!("whole-{effort}.{format}");
            render(&dir, &whole, effort, &[]);
            let bytes = std::fs::read(dir.join(&whole)).unwrap();
            let said = format!("effort={effort}");
            // WebP has no comment: only its parts carry a label.
            if format != "webp" {
                assert!(bytes.windows(said.len()).any(|w| w == said.as_bytes()), "{whole} does not say {said}");
            }
            let parts = [format!("a-{effort}.{format}"), format!("b-{effort}.{format}")];
            render(&dir, &parts[0], effort, &["--frames", "..5"]);
            render(&dir, &parts[1], effort, &["--frames", "5.."]);
            let joined = format!("joined-{effort}.{format}");
            let run = ripple(&["join", &parts[0], &parts[1], "-o", &joined, "-f"], &dir);
            assert_eq!(run.code, 0, "{}", run.stderr);
            assert!(std::fs::read(dir.join(&joined)).unwrap() == bytes, "{joined} is not {whole}");
        }
    }
    // The default says nothing of its level.
    render(&dir, "plain.gif", "default", &[]);
    let bytes = std::fs::read(dir.join("plain.gif")).unwrap();
    assert!(!bytes.windows(7).any(|w| w == b"effort="));
}

#[test]
fn max_size_takes_max_before_it_gives_anything_up() {
    let dir = scene_dir("effort-fit", LIT);
    render(&dir, "default.gif", "default", &[]);
    render(&dir, "max.gif", "max", &[]);
    let (default, max) = (size(&dir.join("default.gif")), size(&dir.join("max.gif")));
    assert!(max < default, "max {max}, default {default}");
    let budget = ((max + default) / 2).to_string();
    let run = ripple(&["scene.toml", "-o", "fit.gif", "-f", "--max-size", &budget], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains(": --effort max"), "{}", run.stderr);
    assert!(std::fs::read(dir.join("fit.gif")).unwrap() == std::fs::read(dir.join("max.gif")).unwrap());
}

#[test]
fn plan_knows_each_levels_memory() {
    let dir = scene_dir("effort-plan", LIT);
    let run = ripple(&["plan", "scene.toml", "--json"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let at = |format: &str, effort: &str| plan["memory"][format][effort].as_u64().unwrap();
    // The fast WebP keeps one way of a frame, the default four at once.
    assert!(at("webp", "fast") < at("webp", "default"));
    assert!(at("apng", "fast") < at("apng", "default"));
    let text = ripple(&["plan", "scene.toml"], &dir);
    assert!(text.stdout.contains("memory      peak on "), "{}", text.stdout);
}
