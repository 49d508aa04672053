//! `ripple-render diff`: verdicts, exit codes, reports and manifests, as CI would use them.

use std::path::Path;

use crate::support::{bundled_copy, flip_channel, names, read_png, root, write_png};
use crate::support::{ripple, scene_dir};

/// 24×16, 7 frames at 30 fps, one stone: small and fast, with a one-colour (exact) palette.
const SCENE: &str =
    "[video]\nwidth = 24\nheight = 16\nfps = 30\nframes = 7\n[[stone]]\nat = 0\nx = 12\ny = 8\nweight = 300\n";

fn render(dir: &Path, args: &[&str]) {
    let mut all = vec!["scene.toml"];
    all.extend_from_slice(args);
    all.push("-q");
    let run = ripple(&all, dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn identical_renders_are_the_same() {
    let dir = scene_dir("diff-same", SCENE);
    render(&dir, &["-o", "a.gif"]);
    render(&dir, &["-o", "b.gif"]);
    let run = ripple(&["diff", "a.gif", "b.gif"], &dir);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "same: a.gif (A) and b.gif (B): 7 frames compared, 24×16 (tolerance 0, max pixels 0)\n")
    );
    // A scene is rendered in memory; it has timing, so delays are compared too.
    assert_eq!(ripple(&["diff", "scene.toml", "a.gif"], &dir).code, 0);
}

#[test]
fn a_gif_and_the_png_folder_of_the_same_render_are_the_same() {
    let dir = scene_dir("diff-gif-png", SCENE);
    render(&dir, &["-o", "a.gif"]);
    render(&dir, &["-o", "frames/"]);
    let run = ripple(&["diff", "a.gif", "frames"], &dir);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("note: timing not compared (a PNG sequence has no delays)"), "{}", run.stdout);
    // Also for a many-coloured scene, whose GIF palette is quantized: the scene side is shown
    // through the same palette.
    let pond = root().join("tests/golden/scenes/pond.toml");
    let pond = pond.to_str().unwrap();
    let run = ripple(&[pond, "-o", "pond.gif", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ripple(&["diff", pond, "pond.gif", "-q"], &dir).code, 0);
}

#[test]
fn one_changed_pixel_is_found_and_named() {
    let dir = scene_dir("diff-pixel", SCENE);
    render(&dir, &["-o", "a/"]);
    render(&dir, &["-o", "b/"]);
    let frame = dir.join("b/frame_0004.png");
    flip_channel(&frame, (5, 3, 0), 0x10); // 16 levels of red at (5, 3)

    let run = ripple(&["diff", "a", "b"], &dir);
    assert_eq!(run.code, 1);
    let mut lines = run.stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "different: a (A) and b (B): 1 of 7 frames differ, the first is frame 4; 7 compared (tolerance 0, max pixels 0)"
        )
    );
    let line = lines.next().unwrap();
    assert!(line.starts_with("  frame 4: 1 pixel differs (max delta 16, PSNR "), "{line}");

    // Within tolerance, or with one pixel allowed: the same.
    assert_eq!(ripple(&["diff", "a", "b", "--tolerance", "16"], &dir).code, 0);
    assert_eq!(ripple(&["diff", "a", "b", "--tolerance", "15"], &dir).code, 1);
    assert_eq!(ripple(&["diff", "a", "b", "--max-pixels", "1"], &dir).code, 0);

    // --quiet prints nothing; --json is one object with every frame.
    let run = ripple(&["diff", "a", "b", "--quiet"], &dir);
    assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (1, "", ""));
    let run = ripple(&["diff", "a", "b", "--json"], &dir);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!((json["same"].as_bool(), json["first_differing_frame"].as_u64()), (Some(false), Some(4)));
    let frames = json["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 7);
    assert_eq!(frames[4]["differing_pixels"], 1);
    assert_eq!(frames[4]["max_delta"], 16);
    // One channel off by 16 of 24·16·3 samples: 10·log10(255²·1152 / 256).
    let expected = 10.0 * (255.0f64 * 255.0 * 1152.0 / 256.0).log10();
    assert!((frames[4]["psnr"].as_f64().unwrap() - expected).abs() < 1e-3);
    assert!(frames[3]["psnr"].is_null());

    // --out: a panel for the frame, a contact sheet, a heat-map GIF and the report.
    let run = ripple(&["diff", "a", "b", "--out", "report"], &dir);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.ends_with("report: report/index.html (open it in a browser), and 4 panel files\n"),
        "{}",
        run.stdout
    );
    // The page: frame 4 as A | heat | B, and the plot's one bar.
    let page = std::fs::read_to_string(dir.join("report/index.html")).unwrap();
    assert!(page.contains("src=\"s00-f0004-heat.png\""), "{page}");
    assert_eq!(page.matches("<rect class=\"bar\"").count(), 1);
    assert!(dir.join("report/s00-f0004-a.png").exists() && dir.join("report/s00-f0004-b.png").exists());
    // A 24-pixel-wide render is enlarged to be seen: three panels side by side, at least 160
    // pixels each, under a title and the names.
    let (pw, ph, _) = read_png(&dir.join("report/frame_0004.png"));
    assert!(pw >= 3 * 160 && ph > 16 * 7, "{pw}×{ph}");
    assert!(dir.join("report/contact.png").exists() && dir.join("report/heat.gif").exists());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report/report.json")).unwrap()).unwrap();
    assert_eq!(report["contact_sheet"], serde_json::json!([4]));
    // One changed pixel is a small change: its panel has a zoomed crop around (5, 3).
    let zoom = &report["panels"][0]["zoom"];
    assert_eq!(report["panels"][0]["frame"], 4);
    let [x0, y0, x1, y1] = [0, 1, 2, 3].map(|i| zoom[i].as_u64().unwrap());
    assert!(x0 <= 5 && 5 <= x1 && y0 <= 3 && 3 <= y1 && x1 - x0 < 24, "{zoom}");
}

/// The frames of a decoded report picture, as RGB rows, to look for its labels.
fn ink_rows(path: &Path) -> Vec<usize> {
    let (w, h, rgb) = read_png(path);
    // The labels' colour on the report's dark ground.
    (0..h).filter(|y| rgb[y * w * 3..(y + 1) * w * 3].chunks_exact(3).any(|p| p == [235, 235, 235])).collect()
}

#[test]
fn report_pictures_are_labelled() {
    let dir = scene_dir("report-labels", SCENE);
    render(&dir, &["-o", "a/"]);
    render(&dir, &["-o", "b/"]);
    for i in 2..5 {
        let frame = dir.join(format!("b/frame_{i:04}.png"));
        flip_channel(&frame, (12, 8, 1), 0x80);
    }
    assert_eq!(ripple(&["diff", "a", "b", "--out", "report", "-q"], &dir).code, 1);
    // Text on the panel: the title row, the names row above the pictures, the legend below.
    let rows = ink_rows(&dir.join("report/frame_0002.png"));
    assert!(rows.iter().any(|&y| y < 12), "a title: {rows:?}");
    assert!(rows.iter().any(|&y| (12..24).contains(&y)), "names over the panels: {rows:?}");
    // The contact sheet numbers each heat map.
    let (_, sh, _) = read_png(&dir.join("report/contact.png"));
    assert!(ink_rows(&dir.join("report/contact.png")).iter().any(|&y| y > 20 && y < sh - 24));
    let heat = crate::support::decode_gif(&std::fs::read(dir.join("report/heat.gif")).unwrap());
    assert_eq!(heat.frames.len(), 3, "the differing stretch, frames 2–4");
}

#[test]
fn a_report_folder_holds_exactly_one_report() {
    let dir = scene_dir("report-fresh", SCENE);
    render(&dir, &["-o", "a/"]);
    render(&dir, &["-o", "b/"]);
    let frame = dir.join("b/frame_0003.png");
    flip_channel(&frame, (0, 0, 0), 0x40);
    assert_eq!(ripple(&["diff", "a", "b", "--out", "report", "-q"], &dir).code, 1);
    assert!(dir.join("report/frame_0003.png").exists());
    // The next run's report replaces the last one whole: a "same" report leaves no panels behind.
    let run = ripple(&["diff", "a", "a", "--out", "report"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(names(&dir.join("report")), ["index.html", "report.json"]);
    assert!(crate::support::temporaries(&dir).is_empty());
    // A folder with anything else in it is not a report's to replace.
    std::fs::write(dir.join("report/notes.txt"), b"mine").unwrap();
    let run = ripple(&["diff", "a", "b", "--out", "report"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: the report folder report holds notes.txt, which is not part of a report"));
    assert_eq!(std::fs::read(dir.join("report/notes.txt")).unwrap(), b"mine");
    // A file is not a folder.
    let run = ripple(&["diff", "a", "b", "--out", "scene.toml"], &dir);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with("error: the report folder scene.toml is a file, not a folder\nhint: "),
        "{}",
        run.stderr
    );
}

#[test]
fn a_report_never_lands_on_an_input() {
    let dir = scene_dir("report-inputs", SCENE);
    render(&dir, &["-o", "a/"]);
    render(&dir, &["-o", "b/"]);
    render(&dir, &["-o", "c.gif"]);
    let before: Vec<Vec<u8>> =
        (0..7).map(|i| std::fs::read(dir.join(format!("b/frame_{i:04}.png"))).unwrap()).collect();
    for (args, says) in [
        (vec!["a", "b", "--out", "b"], "is an input"),
        (vec!["a", "b", "--out", "b/report"], "lies inside an input"),
        (vec!["a", "b", "--out", "."], "holds an input"),
        (vec!["c.gif", "b", "--out", "c.gif"], "is an input"),
        (vec!["scene.toml", "a", "--out", "scene.toml"], "is an input"),
    ] {
        let mut all = vec!["diff"];
        all.extend(&args);
        let run = ripple(&all, &dir);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    let after: Vec<Vec<u8>> = (0..7).map(|i| std::fs::read(dir.join(format!("b/frame_{i:04}.png"))).unwrap()).collect();
    assert_eq!(before, after, "B's frames untouched");
    assert!(!dir.join("b/report").exists());
}

#[test]
fn reports_on_long_renders_stay_small() {
    // 400 frames, every one different (rain with another seed).
    let body = "[video]\nwidth = 64\nheight = 48\nfps = 25\nframes = 400\n[background]\npattern = \"tiles\"\n[rain]\ndrops_per_second = 50\nseed = 1\n";
    let dir = scene_dir("report-long", body);
    render(&dir, &["-o", "a.gif"]);
    std::fs::write(dir.join("scene.toml"), body.replace("seed = 1", "seed = 2")).unwrap();
    render(&dir, &["-o", "b.gif"]);
    let run = ripple(&["diff", "a.gif", "b.gif", "--out", "report"], &dir);
    assert_eq!(run.code, 1);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report/report.json")).unwrap()).unwrap();
    let differing = report["differing_frames"].as_u64().unwrap();
    assert!(differing > 300, "{differing}");
    let sheet = report["contact_sheet"].as_array().unwrap();
    assert_eq!(sheet.len(), 40);
    assert_eq!(report["contact_sheet_left_out"].as_u64().unwrap() + 40, differing);
    assert_eq!(report["panels"].as_array().unwrap().len(), 20);
    // The sheet's frames span the render, not just its start.
    assert!(sheet.last().unwrap().as_u64().unwrap() > 300, "{sheet:?}");
    let heat = crate::support::decode_gif(&std::fs::read(dir.join("report/heat.gif")).unwrap());
    assert!((60..=120).contains(&heat.frames.len()), "{}", heat.frames.len());
    assert_eq!(report["heat_gif"]["frames"].as_u64(), Some(heat.frames.len() as u64));
    // It plays as long as the stretch it stands for, about 16 s at 25 fps.
    let total: u32 = heat.delays.iter().map(|&d| u32::from(d)).sum();
    assert!((1400..=1700).contains(&total), "{total} cs");
    // The summary says what the pictures leave out.
    assert!(run.stdout.contains("contact.png shows 40 of "), "{}", run.stdout);
    assert!(run.stdout.contains("heat.gif shows "), "{}", run.stdout);
}

#[test]
fn a_missing_frame_is_a_difference() {
    let dir = scene_dir("diff-missing", SCENE);
    render(&dir, &["-o", "a/"]);
    render(&dir, &["-o", "b/"]);
    std::fs::remove_file(dir.join("b/frame_0006.png")).unwrap();
    let run = ripple(&["diff", "a", "b"], &dir);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("  frame count: A has 7, B has 6\n"), "{}", run.stdout);
    assert!(run.stdout.contains("  frame 6: only in A\n"), "{}", run.stdout);
}

#[test]
fn the_same_frames_with_other_delays_differ() {
    // No events: every frame is the plain background, so only the timing differs.
    let dir = scene_dir("diff-delays", "[video]\nwidth = 8\nheight = 8\nfps = 25\nframes = 3\n");
    render(&dir, &["-o", "a.gif"]);
    std::fs::write(dir.join("scene.toml"), "[video]\nwidth = 8\nheight = 8\nfps = 20\nframes = 3\n").unwrap();
    render(&dir, &["-o", "b.gif"]);
    let run = ripple(&["diff", "a.gif", "b.gif"], &dir);
    assert_eq!(run.code, 1);
    // Three frames alike: one line.
    assert!(run.stdout.contains("  frames 0–2: delay 4 cs in A, 5 cs in B\n"), "{}", run.stdout);
    // The scenes differ, and the renders say so.
    assert!(run.stdout.contains("note: rendered from different scenes"), "{}", run.stdout);
    // Without timing on one side, the pixels alone decide.
    render(&dir, &["-o", "b/"]);
    assert_eq!(ripple(&["diff", "a.gif", "b"], &dir).code, 0);
}

#[test]
fn unreadable_inputs_are_usage_errors() {
    let dir = scene_dir("diff-bad", SCENE);
    render(&dir, &["-o", "a.gif"]);
    std::fs::write(dir.join("broken.gif"), b"GIF89a\x10\x00").unwrap();
    let run = ripple(&["diff", "a.gif", "broken.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: broken.gif: cannot decode it"), "{}", run.stderr);
    std::fs::write(dir.join("notes.txt"), b"hello").unwrap();
    let run = ripple(&["diff", "notes.txt", "a.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("not a GIF, APNG, PNG, WebP, a PNG-sequence folder, a .toml scene or a hash manifest"),
        "{}",
        run.stderr
    );
    let run = ripple(&["diff", "nothing.gif", "a.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: nothing.gif: cannot read it"), "{}", run.stderr);
    // A truncated GIF: the frames up to the cut decode, then the error.
    let bytes = std::fs::read(dir.join("a.gif")).unwrap();
    std::fs::write(dir.join("cut.gif"), &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(ripple(&["diff", "a.gif", "cut.gif"], &dir).code, 2);
    std::fs::create_dir(dir.join("empty")).unwrap();
    assert_eq!(ripple(&["diff", "a.gif", "empty"], &dir).code, 2);
}

#[test]
fn manifests_stand_in_for_renders() {
    let dir = scene_dir("diff-manifest", SCENE);
    render(&dir, &["-o", "a.gif", "--hashes", "a.txt"]);
    render(&dir, &["--hashes", "only.txt"]);
    render(&dir, &["-o", "frames/", "--hashes", "frames.txt"]);
    for (x, y) in [
        ("a.txt", "a.gif"),
        ("a.gif", "a.txt"),
        ("only.txt", "frames"),
        ("scene.toml", "a.txt"),
        ("frames.txt", "only.txt"),
    ] {
        let run = ripple(&["diff", x, y], &dir);
        assert_eq!(run.code, 0, "{x} vs {y}: {}", run.stdout);
    }
    // A changed pixel changes the hash; the manifest cannot say by how much.
    let frame = dir.join("frames/frame_0002.png");
    flip_channel(&frame, (0, 0, 0), 1);
    let run = ripple(&["diff", "only.txt", "frames", "--tolerance", "5"], &dir);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("  frame 2: pixel hashes differ\n"), "{}", run.stdout);
    assert!(run.stdout.contains("--tolerance and --max-pixels do not apply"), "{}", run.stdout);
    // A manifest is written whole or not at all, and never over an existing one without --force.
    let run = ripple(&["scene.toml", "--hashes", "only.txt"], &dir);
    assert_eq!(run.code, 2);
    let text = std::fs::read_to_string(dir.join("only.txt")).unwrap();
    assert!(
        text.starts_with(
            "# ripple-render frame hashes v1\n# canvas: 24x16\n# pixels: rgb\n# provenance: ripple-render "
        )
    );
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 7);
}

/// A many-coloured scene (more than 256 colours: its GIF palette is quantized), small and short.
const PHOTO: &str = "[video]\nwidth = 48\nheight = 32\nfps = 25\nframes = 6\n[background]\npattern = \"tiles\"\n\
                     [[stone]]\nat = 0\nx = 24\ny = 16\nweight = 400\n";

#[test]
fn one_scene_gives_one_manifest_whatever_else_is_written() {
    let dir = scene_dir("manifest-agree", PHOTO);
    render(&dir, &["--hashes", "alone.txt"]);
    render(&dir, &["-o", "x.gif", "--hashes", "gif.txt"]);
    render(&dir, &["-o", "frames/", "--hashes", "png.txt"]);
    let alone = std::fs::read(dir.join("alone.txt")).unwrap();
    assert_eq!(std::fs::read(dir.join("gif.txt")).unwrap(), alone, "beside a GIF");
    assert_eq!(std::fs::read(dir.join("png.txt")).unwrap(), alone, "beside a PNG sequence");
    assert!(String::from_utf8(alone).unwrap().contains("\n# pixels: rgb\n"));
    // Each hashes the exact frames: the PNG files.
    assert_eq!(ripple(&["diff", "gif.txt", "frames"], &dir).code, 0);
    assert_eq!(ripple(&["diff", "scene.toml", "gif.txt"], &dir).code, 0);
}

#[test]
fn sides_of_different_kinds_say_why_they_differ() {
    let dir = scene_dir("diff-kinds", PHOTO);
    render(&dir, &["-o", "x.gif", "--hashes", "new.txt"]);
    render(&dir, &["-o", "frames/"]);
    // A manifest as earlier versions wrote it beside a GIF: the GIF's colours.
    let run = ripple(&["diff", "x.gif", "frames", "--json"], &dir);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["a"]["pixels"], "gif");
    assert_eq!(json["b"]["pixels"], "rgb");
    let new = std::fs::read_to_string(dir.join("new.txt")).unwrap();
    let gif = crate::support::decode_gif(&std::fs::read(dir.join("x.gif")).unwrap());
    let mut old = new.lines().take(4).collect::<Vec<_>>().join("\n").replace("# pixels: rgb", "# pixels: gif");
    for (i, frame) in gif.frames.iter().enumerate() {
        let hash = ripple_render::encode::manifest::frame_hash(frame);
        old += &format!("\n{i:04} {hash:016x} {}", gif.delays[i]);
    }
    std::fs::write(dir.join("old.txt"), old + "\n").unwrap();
    assert_eq!(ripple(&["diff", "old.txt", "x.gif"], &dir).code, 0, "an old manifest still matches its GIF");
    let run = ripple(&["diff", "old.txt", "new.txt"], &dir);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("  frames 0–5: pixel hashes differ\n"), "{}", run.stdout);
    // Manifests have no pixels to draw: the report is its JSON alone, counted as one file.
    let run = ripple(&["diff", "old.txt", "new.txt", "--out", "hash-report"], &dir);
    assert!(run.stdout.ends_with("and 1 panel file\n"), "{}", run.stdout);
    assert!(
        run.stdout.contains("note: A hashes the colours a GIF showed (pixels: gif") && run.stdout.contains("re-bless"),
        "{}",
        run.stdout
    );
    let run = ripple(&["diff", "x.gif", "new.txt"], &dir);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("note: A is a GIF, B hashes the exact render (pixels: rgb)"), "{}", run.stdout);
    // Two sides of the same kind that differ get no such note.
    let run = ripple(&["diff", "old.txt", "frames"], &dir);
    assert!(run.stdout.contains("note: A hashes the colours a GIF showed"), "{}", run.stdout);
    std::fs::write(dir.join("scene.toml"), PHOTO.replace("weight = 400", "weight = 300")).unwrap();
    render(&dir, &["--hashes", "other.txt"]);
    let run = ripple(&["diff", "new.txt", "other.txt"], &dir);
    assert_eq!(run.code, 1);
    assert!(!run.stdout.contains("note: A"), "{}", run.stdout);
}

#[test]
fn a_gif_against_exact_frames_suggests_the_tolerance_its_palette_needs() {
    let dir = scene_dir("diff-palette", PHOTO);
    render(&dir, &["-o", "x.gif"]);
    render(&dir, &["-o", "frames/"]);
    let run = ripple(&["diff", "x.gif", "frames"], &dir);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("  frames 0–5: "), "alike frames share a line: {}", run.stdout);
    let note = run.stdout.lines().find(|l| l.starts_with("note: A is a GIF")).expect(&run.stdout);
    assert!(note.contains("more than 256 colours"), "{note}");
    assert!(note.contains("B is a PNG sequence of the exact render"), "{note}");
    // Each exact kind is named for what it is.
    render(&dir, &["-o", "x.webp"]);
    render(&dir, &["-o", "x.apng"]);
    for (file, kind) in [("x.webp", "a WebP"), ("x.apng", "an APNG")] {
        let run = ripple(&["diff", "x.gif", file], &dir);
        assert_eq!(run.code, 1, "{}", run.stdout);
        assert!(run.stdout.contains(&format!("B is {kind} of the exact render")), "{}", run.stdout);
    }
    let tolerance = note.split("--tolerance ").nth(1).and_then(|t| t.split(' ').next()).expect(note);
    // The suggested tolerance is the palette's error, so it is enough.
    let run = ripple(&["diff", "x.gif", "frames", "--tolerance", tolerance], &dir);
    assert_eq!(run.code, 0, "{}", run.stdout);
    // A one-colour scene's GIF is exact: a difference there is real, and no palette is blamed.
    let dir = scene_dir("diff-palette-exact", SCENE);
    render(&dir, &["-o", "x.gif"]);
    render(&dir, &["-o", "frames/"]);
    let frame = dir.join("frames/frame_0003.png");
    flip_channel(&frame, (0, 0, 0), 0x40);
    let run = ripple(&["diff", "x.gif", "frames"], &dir);
    assert_eq!(run.code, 1);
    assert!(!run.stdout.contains("--tolerance"), "{}", run.stdout);
}

#[test]
fn a_gap_in_a_png_sequence_is_a_missing_frame() {
    let dir = scene_dir("diff-gap", SCENE);
    render(&dir, &["-o", "a/"]);
    render(&dir, &["-o", "b/"]);
    std::fs::remove_file(dir.join("b/frame_0001.png")).unwrap();
    let run = ripple(&["diff", "a", "b"], &dir);
    assert_eq!(run.code, 1);
    // Not "frames 1–5 differ" from shifted frames: frame 1 is missing, the rest are the same.
    assert_eq!(run.stdout.lines().nth(1), Some("  frame 1: missing from B (no frame_0001.png)"), "{}", run.stdout);
    assert_eq!(run.stdout.lines().filter(|l| l.starts_with("  frame")).count(), 1, "{}", run.stdout);
    // Two files for one frame: which is it?
    std::fs::copy(dir.join("a/frame_0002.png"), dir.join("a/frame_2.png")).unwrap();
    let run = ripple(&["diff", "a", "b"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("holds two files for frame 2: frame_0002.png and frame_2.png"), "{}", run.stderr);
}

#[test]
fn gif_frames_are_composed_as_a_viewer_shows_them() {
    // Frame 0 fills a 4×3 canvas; frame 1 is a 2×2 patch at (1, 1) whose first pixel is
    // transparent (the old pixel shows through); frame 2 restores to the previous state.
    let dir = scene_dir("diff-compose", SCENE);
    let palette = [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255];
    let mut bytes = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut bytes, 4, 3, &palette).unwrap();
        let full = gif::Frame { width: 4, height: 3, buffer: vec![1; 12].into(), ..gif::Frame::default() };
        encoder.write_frame(&full).unwrap();
        let patch = gif::Frame {
            left: 1,
            top: 1,
            width: 2,
            height: 2,
            transparent: Some(3),
            dispose: gif::DisposalMethod::Previous,
            buffer: vec![3, 2, 2, 2].into(),
            ..gif::Frame::default()
        };
        encoder.write_frame(&patch).unwrap();
        let empty = gif::Frame {
            left: 0,
            top: 0,
            width: 1,
            height: 1,
            transparent: Some(3),
            buffer: vec![3].into(),
            ..gif::Frame::default()
        };
        encoder.write_frame(&empty).unwrap();
    }
    std::fs::write(dir.join("composed.gif"), &bytes).unwrap();
    let red = [255u8, 0, 0];
    let green = [0u8, 255, 0];
    let mut second: Vec<[u8; 3]> = vec![red; 12];
    for i in [6, 9, 10] {
        second[i] = green;
    }
    std::fs::create_dir(dir.join("expected")).unwrap();
    for (i, frame) in [vec![red; 12], second, vec![red; 12]].iter().enumerate() {
        write_png(&dir.join(format!("expected/frame_{i:04}.png")), 4, 3, frame.as_flattened());
    }
    let run = ripple(&["diff", "composed.gif", "expected"], &dir);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn a_gif_matches_its_scene_through_its_own_palette() {
    // Every bundled scene has a look, so its GIF's palette is chosen, not the background's: the
    // scene is shown through that palette, mapped as the encoder maps, and matches exactly.
    let dir = scene_dir("diff-gif-scene", SCENE);
    let mut names: Vec<String> = std::fs::read_dir(root().join("scenes"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".toml")).map(str::to_string))
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    for name in &names {
        let scene = bundled_copy(name, &dir, 25);
        let gif = format!("{name}.gif");
        let run = ripple(&[&scene, "-o", &gif, "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let run = ripple(&["diff", &gif, &scene], &dir);
        assert_eq!(run.code, 0, "{name}: {}", run.stdout);
        // The GIF's colours are not the exact render's: against exact frames it differs.
        assert_eq!(ripple(&[&scene, "-o", &format!("{name}/"), "-q"], &dir).code, 0);
        assert_eq!(ripple(&["diff", &gif, &format!("{name}/"), "-q"], &dir).code, 1, "{name}");
    }
    // And a scene `new` writes for a many-coloured photo.
    let photo: Vec<u8> =
        (0..96 * 64).flat_map(|i| [(i * 7 % 256) as u8, (i / 96 * 4) as u8, (i * 13 % 251) as u8]).collect();
    write_png(&dir.join("photo.png"), 96, 64, &photo);
    let run = ripple(&["new", "photo.png", "-o", "fresh.toml"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(dir.join("fresh.toml")).unwrap();
    let short: String = text
        .lines()
        .map(|l| if l.starts_with("duration =") { "frames = 10\n".into() } else { format!("{l}\n") })
        .collect();
    assert_ne!(short, text, "new's scene should say how long it lasts");
    std::fs::write(dir.join("fresh.toml"), short).unwrap();
    assert_eq!(ripple(&["fresh.toml", "-o", "fresh.gif", "-q"], &dir).code, 0);
    let run = ripple(&["diff", "fresh.gif", "fresh.toml"], &dir);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

/// The first differing frame and the differing frames `diff --json` reports.
fn differing_frames(dir: &Path, a: &str, b: &str) -> Vec<u64> {
    let run = ripple(&["diff", a, b, "--json"], dir);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let frames = report["frames"].as_array().unwrap();
    frames.iter().filter(|f| f["differs"] == true).map(|f| f["frame"].as_u64().unwrap()).collect()
}

#[test]
fn gifs_of_scenes_that_differ_from_a_frame_on_differ_from_that_frame() {
    // Moving a stone that falls at 1.2 s (frame 30) re-makes a look's palette, so every
    // frame's colours move a little; diff sees past that to the frames the exact formats name.
    let dir = scene_dir("diff-moved-stone", SCENE);
    let scene = bundled_copy("pond", &dir, 40);
    for (out, set) in [("a", "stone[1].x=97"), ("b", "stone[1].x=99")] {
        for ext in ["gif", "apng"] {
            let run = ripple(&[&scene, "-o", &format!("{out}.{ext}"), "-q", "--set", set], &dir);
            assert_eq!(run.code, 0, "{}", run.stderr);
        }
    }
    let palette = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        ripple_render::decode::gif::Head::read(&bytes[..]).palette
    };
    assert_ne!(palette("a.gif"), palette("b.gif"), "the palettes should differ, or this test shows nothing");
    let exact = differing_frames(&dir, "a.apng", "b.apng");
    assert_eq!(exact.first(), Some(&30));
    let gif = differing_frames(&dir, "a.gif", "b.gif");
    assert_eq!(gif.first(), Some(&30), "{gif:?}");
    // Every frame the GIFs call different truly is.
    assert!(gif.iter().all(|f| exact.contains(f)), "{gif:?} vs {exact:?}");
}

#[test]
fn an_interrupted_diff_writes_no_report() {
    // Two APNGs that differ, 640×480 × 50 frames: half a second of diff, which a signal
    // interrupts mid-way; it would finish within the grace a signal allows (0.8 s), so it must
    // stop by itself (a scene side stops with the render it runs; files must stop too).
    let long = "[background]\npattern = \"tiles\"\n[video]\nwidth = 640\nheight = 480\nfps = 25\nframes = 50\n\
                [rain]\ndrops_per_second = 30\n";
    let dir = scene_dir("diff-interrupted", long);
    render(&dir, &["-o", "a.apng"]);
    std::fs::write(dir.join("scene.toml"), format!("{long}[[stone]]\nat = 0.1\nx = 100\ny = 100\n")).unwrap();
    render(&dir, &["-o", "b.apng"]);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["diff", "a.apng", "b.apng", "--out", "report", "-q"])
        .current_dir(&dir)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = child.wait().unwrap();
    // Interrupted while comparing: it ends as the signal would, and no report appears.
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(2), "{status:?}");
    assert!(!dir.join("report").exists(), "an interrupted diff wrote its report");
    let left: Vec<String> = names(&dir).into_iter().filter(|n| n.starts_with('.')).collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
}
