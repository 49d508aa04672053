//! The web player (web/): the committed WebAssembly draws every frame of every bundled scene,
//! and of PNG and JPEG pictures, as the CLI renders it, hashed from its own frame buffer in Node
//! and in headless Chromium; a person's click and drag on the element make rings where they
//! land and lines that render the same frames in the CLI; reduced motion shows the still.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{ripple, root, scratch};
use crate::tools::{Tool, needs};

/// The CLI's frame hashes (16 hex digits) for `scene`.
fn cli_hashes(scene: &Path) -> Vec<String> {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let out = scratch(&format!("web-hashes-{run}")).join("hashes.txt");
    let run = ripple(&[scene.to_str().unwrap(), "--hashes", out.to_str().unwrap()], scene.parent().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(out).unwrap();
    text.lines().filter(|l| !l.starts_with('#')).map(|l| l.split_whitespace().nth(1).unwrap().to_string()).collect()
}

/// Runs `node web/test/SCRIPT ARGS` and returns its standard output.
fn node(script: &str, args: &[&str]) -> String {
    let out = Command::new("node").arg(root().join("web/test").join(script)).args(args).output().expect("run node");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "node {script} {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// The bundled scenes, by path.
fn bundled() -> Vec<PathBuf> {
    let mut scenes: Vec<PathBuf> = std::fs::read_dir(root().join("scenes"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    scenes.sort();
    scenes
}

/// The pond with its picture as a JPEG, and as a PNG of 16 bits a channel with alpha (made
/// from the bundled picture here): both decoded in the wasm as the CLI decodes them.
fn other_pictures() -> Vec<PathBuf> {
    let dir = scratch("web-pictures");
    let lagoon = image::open(root().join("scenes/lagoon.png")).unwrap();
    lagoon.to_rgb8().save_with_format(dir.join("lagoon.jpg"), image::ImageFormat::Jpeg).unwrap();
    let mut deep = lagoon.to_rgba16();
    for (i, p) in deep.pixels_mut().enumerate() {
        p.0[3] = 65535 - (i % 3000) as u16 * 7;
    }
    deep.save(dir.join("lagoon16.png")).unwrap();
    let pond = std::fs::read_to_string(root().join("scenes/pond.toml")).unwrap();
    let mut scenes = Vec::new();
    for (name, picture) in [("jpeg.toml", "lagoon.jpg"), ("png16.toml", "lagoon16.png")] {
        std::fs::write(dir.join(name), pond.replace("lagoon.png", picture)).unwrap();
        scenes.push(dir.join(name));
    }
    scenes
}

/// Whether Node and the browser harness (playwright-core, `npm ci --prefix web`) are here.
fn harness(test: &str, with_browser: bool) -> bool {
    if with_browser { needs(test, &[Tool::Node, Tool::Chromium, Tool::Playwright]) } else { needs(test, &[Tool::Node]) }
}

#[test]
fn the_wasm_in_node_draws_every_frame_as_the_cli() {
    if !harness("the_wasm_in_node_draws_every_frame_as_the_cli", false) {
        return;
    }
    for scene in bundled().into_iter().chain(other_pictures()) {
        let hashes: Vec<String> = node("hashes.mjs", &[scene.to_str().unwrap()]).lines().map(str::to_string).collect();
        assert_eq!(hashes, cli_hashes(&scene), "{}", scene.display());
    }
}

#[test]
fn the_wasm_in_chromium_draws_every_frame_as_the_cli() {
    if !harness("the_wasm_in_chromium_draws_every_frame_as_the_cli", true) {
        return;
    }
    for scene in bundled().into_iter().chain(other_pictures()) {
        let out = node("browser.mjs", &["hashes", scene.to_str().unwrap()]);
        let hashes: Vec<String> = out.lines().map(str::to_string).collect();
        assert_eq!(hashes, cli_hashes(&scene), "{}", scene.display());
    }
}

/// A field of the JSON a browser command printed.
fn field<'a>(json: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    json.get(key).unwrap_or_else(|| panic!("{key} in {json}"))
}

#[test]
fn a_click_and_a_drag_make_rings_there_and_lines_the_cli_renders_alike() {
    if !harness("a_click_and_a_drag_make_rings_there_and_lines_the_cli_renders_alike", true) {
        return;
    }
    for name in ["pool.toml", "pond.toml"] {
        let scene = root().join("scenes").join(name);
        let out: serde_json::Value =
            serde_json::from_str(&node("browser.mjs", &["pointer", scene.to_str().unwrap()])).unwrap();
        assert_eq!(field(&out, "errors").as_array().unwrap().len(), 0, "{out}");
        // The paused element showed the next frame, and it changed at the click first.
        assert_eq!(field(&out, "frameAfterClick"), 11, "{out}");
        let around = field(&out, "around");
        assert!(field(around, "nearest").as_f64().unwrap() <= 1.0, "{name}: nothing changed at the click: {out}");
        assert!(field(around, "near").as_u64().unwrap() >= 100, "{name}: little changed at the click: {out}");
        // The lines: a stone where it clicked, and pieces of swipe along the drag.
        let lines = field(&out, "lines").as_str().unwrap();
        assert!(lines.starts_with("[[stone]]\n") && lines.contains("\nx = 120\ny = 90\n"), "{lines}");
        assert!(lines.matches("[[swipe]]").count() >= 5, "{lines}");
        // In the CLI, the scene with the lines renders what the page plays now.
        let dir = scratch(&format!("web-pointer-{name}"));
        let text = std::fs::read_to_string(&scene).unwrap();
        let text = text.replace("image = \"", &format!("image = \"{}/", root().join("scenes").display()));
        std::fs::write(dir.join(name), format!("{text}\n{lines}")).unwrap();
        let replay: Vec<String> =
            field(&out, "replay").as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect();
        assert_eq!(replay, cli_hashes(&dir.join(name)), "{name}: the page and the CLI, after the pointer");
        assert_ne!(replay, cli_hashes(&scene), "{name}: the pointer changed nothing");
    }
}

#[test]
fn with_reduced_motion_the_still_shows() {
    if !harness("with_reduced_motion_the_still_shows", true) {
        return;
    }
    let scene = root().join("scenes/pool.toml");
    let out: serde_json::Value =
        serde_json::from_str(&node("browser.mjs", &["reduced", scene.to_str().unwrap()])).unwrap();
    assert_eq!(field(&out, "showing"), "poster", "{out}");
    assert_eq!(field(&out, "still"), true, "it moved: {out}");
    assert_eq!(field(&out, "isFrame0"), true, "{out}");
    assert_eq!(field(&out, "errors").as_array().unwrap().len(), 0, "{out}");
}

#[test]
fn the_wasm_is_small() {
    // The bounds the web player keeps: at most 1 MB, and 400 KB gzipped at level 9.
    let wasm = std::fs::read(root().join("web/ripple_water.wasm")).unwrap();
    assert!(wasm.len() <= 1_000_000, "{} bytes", wasm.len());
    let mut gzip = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(9).unwrap());
    let mut out = vec![0; gzip.gzip_compress_bound(wasm.len())];
    let gz = gzip.gzip_compress(&wasm, &mut out).unwrap();
    assert!(gz <= 400_000, "{gz} bytes gzipped");
    assert_eq!(&wasm[..4], b"\0asm", "not a WebAssembly module");
}

#[test]
fn web_writes_a_folder_that_plays_the_scene_over_http_and_falls_back_from_file() {
    let dir = scratch("web-site");
    let site = dir.join("site");
    let run = ripple(&["web", root().join("scenes/pond.toml").to_str().unwrap(), "-o", site.to_str().unwrap()], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("in all") && run.stderr.contains("http.server"), "{}", run.stderr);
    let mut names: Vec<String> =
        std::fs::read_dir(&site).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let expected =
        ["index.html", "lagoon.png", "pond.toml", "pond.webp", "poster.png", "ripple-water.js", "ripple_water.wasm"];
    assert_eq!(names, expected);
    // The program carries the player web/ holds.
    for file in ["ripple-water.js", "ripple_water.wasm"] {
        assert!(
            std::fs::read(site.join(file)).unwrap() == std::fs::read(root().join("web").join(file)).unwrap(),
            "{file}"
        );
    }
    // The poster is frame 0, exactly.
    let poster = image::open(site.join("poster.png")).unwrap().to_rgb8();
    let first = &cli_hashes(&root().join("scenes/pond.toml"))[0];
    assert_eq!(&format!("{:016x}", xxhash_rust::xxh3::xxh3_64(poster.as_raw())), first);
    if !harness("web_writes_a_folder_that_plays_the_scene_over_http_and_falls_back_from_file", true) {
        return;
    }
    let out: serde_json::Value = serde_json::from_str(&node("browser.mjs", &["site", site.to_str().unwrap()])).unwrap();
    let http = field(&out, "http");
    assert_eq!(field(http, "showing"), "frame", "{out}");
    assert_eq!(field(http, "frames"), 100, "{out}");
    assert_eq!(field(http, "first").as_str().unwrap(), first, "{out}");
    assert_eq!(field(&out, "httpErrors").as_array().unwrap().len(), 0, "{out}");
    let file = field(&out, "file");
    assert_eq!(field(file, "showing"), "fallback", "{out}");
    assert_eq!(field(file, "fallbackWidth"), 360, "the fallback WebP did not load: {out}");
}

#[test]
fn web_moves_a_picture_from_outside_the_scenes_folder_in_beside_it() {
    let dir = scratch("web-outside");
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    std::fs::create_dir_all(dir.join("pictures")).unwrap();
    std::fs::copy(root().join("scenes/lagoon.png"), dir.join("pictures/lagoon.png")).unwrap();
    let text = std::fs::read_to_string(root().join("scenes/pond.toml")).unwrap();
    std::fs::write(dir.join("scenes/pond.toml"), text.replace("\"lagoon.png\"", "\"../pictures/lagoon.png\"")).unwrap();
    let run = ripple(&["web", "scenes/pond.toml", "-o", "site", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let copied = std::fs::read_to_string(dir.join("site/pond.toml")).unwrap();
    assert!(copied.contains("image = \"lagoon.png\""), "{copied}");
    assert_eq!(
        copied.replace("\"lagoon.png\"", "\"../pictures/lagoon.png\""),
        text.replace("\"lagoon.png\"", "\"../pictures/lagoon.png\"")
    );
    assert!(dir.join("site/lagoon.png").is_file());
    if harness("web_moves_a_picture_from_outside_the_scenes_folder_in_beside_it", false) {
        let hashes: Vec<String> =
            node("hashes.mjs", &[dir.join("site/pond.toml").to_str().unwrap()]).lines().map(str::to_string).collect();
        assert_eq!(hashes, cli_hashes(&root().join("scenes/pond.toml")));
    }
}

#[test]
fn web_replaces_only_an_earlier_page_and_writes_nothing_for_a_bad_scene() {
    let dir = scratch("web-refusals");
    let pond = root().join("scenes/pond.toml");
    let pond = pond.to_str().unwrap();
    // A folder of other things: refused, with or without --force, and left as it was.
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    std::fs::write(dir.join("notes/todo.txt"), "keep me").unwrap();
    for force in [false, true] {
        let mut args = vec!["web", pond, "-o", "notes"];
        if force {
            args.push("--force");
        }
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains("notes"), "{}", run.stderr);
        assert_eq!(std::fs::read_to_string(dir.join("notes/todo.txt")).unwrap(), "keep me");
        assert_eq!(std::fs::read_dir(dir.join("notes")).unwrap().count(), 1);
    }
    // An earlier page: refused without --force, replaced whole with it.
    assert_eq!(ripple(&["web", pond, "-o", "site", "-q"], &dir).code, 0);
    std::fs::write(dir.join("site/old.txt"), "from before").unwrap();
    assert_eq!(ripple(&["web", pond, "-o", "site", "-q"], &dir).code, 2);
    assert!(dir.join("site/old.txt").is_file());
    assert_eq!(ripple(&["web", pond, "-o", "site", "-q", "--force"], &dir).code, 0);
    assert!(!dir.join("site/old.txt").exists());
    // A bad scene: one error, exit 2, no folder.
    std::fs::write(dir.join("bad.toml"), "[video]\nfps = 0\n").unwrap();
    let run = ripple(&["web", "bad.toml", "-o", "bad-site"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("bad.toml:2:7") && run.stderr.contains("video.fps"), "{}", run.stderr);
    assert!(!dir.join("bad-site").exists());
    assert!(crate::support::temporaries(&dir).is_empty(), "{:?}", crate::support::temporaries(&dir));
}
