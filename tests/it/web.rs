//! The web player (web/): the committed WebAssembly draws every frame of every bundled scene
//! as the CLI renders it, and through `ripple-render web`'s folder every frame of scenes over a
//! JPEG, a 16-bit PNG with alpha, a picture with transparency and a CMYK JPEG, hashed from its
//! own frame buffer in Node and in headless Chromium; a person's click and drag on the element
//! make rings where they land and lines that render the same frames in the CLI, even before
//! the player is ready; every frame is drawn on time; 10,000 pointer events, resizes and an
//! element of no size cost no error and no memory; under reduced motion only the poster is
//! fetched until the reader asks to play. `web`'s folder: its files, compressed copies, hostile
//! names, `--set`, and the outputs it refuses.

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

/// What `web/test/browser.mjs COMMAND PATH` reports, as JSON.
fn browser(command: &str, path: &Path) -> serde_json::Value {
    serde_json::from_str(&node("browser.mjs", &[command, path.to_str().unwrap()])).unwrap()
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

/// The pond over other pictures, made here from the bundled one: a JPEG, a PNG of 16 bits a
/// channel with alpha, an 8-bit PNG with transparency, a CMYK JPEG. A browser decodes these
/// otherwise than the CLI (by a level or a few), so the page gets them through the folder
/// `ripple-render web` writes (pictures it decodes exactly): each scene's site, by folder.
fn other_pictures(test: &str) -> Vec<(PathBuf, PathBuf)> {
    let dir = scratch(&format!("web-pictures-{test}"));
    let lagoon = image::open(root().join("scenes/lagoon.png")).unwrap();
    lagoon.to_rgb8().save_with_format(dir.join("lagoon.jpg"), image::ImageFormat::Jpeg).unwrap();
    let mut deep = lagoon.to_rgba16();
    for (i, p) in deep.pixels_mut().enumerate() {
        p.0[3] = 65535 - (i % 3000) as u16 * 7;
    }
    deep.save(dir.join("lagoon16.png")).unwrap();
    let mut clear = lagoon.to_rgba8();
    for (i, p) in clear.pixels_mut().enumerate() {
        p.0[3] = [0, 3, 96, 160, 254, 255][i % 6];
    }
    clear.save(dir.join("lagoon-alpha.png")).unwrap();
    let mut pictures = vec![("jpeg", "lagoon.jpg"), ("png16", "lagoon16.png"), ("alpha", "lagoon-alpha.png")];
    if crate::tools::Tool::PillowWebp.here() {
        let made = Command::new("python3")
            .args([
                "-c",
                "import sys\nfrom PIL import Image\nImage.open(sys.argv[1]).convert('CMYK').save(sys.argv[2])",
            ])
            .arg(root().join("scenes/lagoon.png"))
            .arg(dir.join("cmyk.jpg"))
            .status()
            .unwrap();
        assert!(made.success());
        pictures.push(("cmyk", "cmyk.jpg"));
    }
    // One picture both the background and the mask (koi.png: small, with transparency): the
    // page gets each as its own picture.
    std::fs::copy(root().join("scenes/koi.png"), dir.join("koi.png")).unwrap();
    pictures.push(("mask", "koi.png"));
    let pond = std::fs::read_to_string(root().join("scenes/pond.toml")).unwrap();
    pictures
        .into_iter()
        .map(|(name, picture)| {
            let scene = dir.join(format!("{name}.toml"));
            let mut text = pond.replace("lagoon.png", picture);
            if name == "mask" {
                text.push_str("\n[mask]\nimage = \"koi.png\"\nthreshold = 100\n");
            }
            std::fs::write(&scene, text).unwrap();
            let site = dir.join(format!("{name}-site"));
            let run = ripple(&["web", scene.to_str().unwrap(), "-o", site.to_str().unwrap(), "-q"], &dir);
            assert_eq!(run.code, 0, "{}", run.stderr);
            (scene, site)
        })
        .collect()
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
    for scene in bundled() {
        let hashes: Vec<String> = node("hashes.mjs", &[scene.to_str().unwrap()]).lines().map(str::to_string).collect();
        assert_eq!(hashes, cli_hashes(&scene), "{}", scene.display());
    }
    for (scene, site) in other_pictures("node") {
        let page = site.join(scene.file_name().unwrap());
        let hashes: Vec<String> = node("hashes.mjs", &[page.to_str().unwrap()]).lines().map(str::to_string).collect();
        assert_eq!(hashes, cli_hashes(&scene), "{}", scene.display());
    }
}

#[test]
fn the_wasm_in_chromium_draws_every_frame_as_the_cli() {
    if !harness("the_wasm_in_chromium_draws_every_frame_as_the_cli", true) {
        return;
    }
    // The bundled pictures are 8-bit PNGs without transparency: the browser decodes them to
    // the CLI's pixels, fetched as they are.
    for scene in bundled() {
        let out = node("browser.mjs", &["hashes", scene.to_str().unwrap()]);
        let hashes: Vec<String> = out.lines().map(str::to_string).collect();
        assert_eq!(hashes, cli_hashes(&scene), "{}", scene.display());
    }
    for (scene, site) in other_pictures("chromium") {
        let out = node("browser.mjs", &["site-hashes", site.to_str().unwrap()]);
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
        let out: serde_json::Value = browser("pointer", &scene);
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
fn a_click_and_a_drag_before_the_player_is_ready_make_their_rings() {
    if !harness("a_click_and_a_drag_before_the_player_is_ready_make_their_rings", true) {
        return;
    }
    let scene = root().join("scenes/pool.toml");
    let out: serde_json::Value = browser("early", &scene);
    assert_eq!(field(&out, "errors").as_array().unwrap().len(), 0, "{out}");
    assert_eq!(field(&out, "readyBefore"), false, "the player was ready before the click: nothing tested: {out}");
    // Both were kept, where they were made, and the paused element showed the frame after.
    assert_eq!(field(&out, "added"), 2, "{out}");
    assert_eq!(field(&out, "frame"), 1, "{out}");
    let lines = field(&out, "lines").as_str().unwrap();
    assert!(lines.contains("[[stone]]\nat = 0.04\nx = 120\ny = 90\n"), "{lines}");
    assert!(lines.contains("[[swipe]]\nfrom = 0.04\nuntil = 0.04\npath = [[40, 200], [220, 200]]\n"), "{lines}");
    // The CLI renders that frame from the scene with the lines.
    let dir = scratch("web-early");
    let text = std::fs::read_to_string(&scene).unwrap();
    let text = text.replace("image = \"", &format!("image = \"{}/", root().join("scenes").display()));
    std::fs::write(dir.join("pool.toml"), format!("{text}\n{lines}")).unwrap();
    assert_eq!(field(&out, "hash").as_str().unwrap(), cli_hashes(&dir.join("pool.toml"))[1]);
    assert_ne!(field(&out, "hash").as_str().unwrap(), cli_hashes(&scene)[1], "the pointer changed nothing");
}

#[test]
fn every_frame_is_drawn_on_time_and_a_stall_skips_or_starts_the_clock_again() {
    if !harness("every_frame_is_drawn_on_time_and_a_stall_skips_or_starts_the_clock_again", true) {
        return;
    }
    let scene = root().join("scenes/pool.toml");
    let out: serde_json::Value = browser("clock", &scene);
    assert_eq!(field(&out, "errors").as_array().unwrap().len(), 0, "{out}");
    assert_eq!(field(&out, "fps"), 25);
    // Three seconds at 25 fps: every one of the 75 frames drawn, none skipped.
    let steady = field(&out, "steady").as_array().unwrap();
    assert!((75..=76).contains(&steady.len()), "{} frames drawn in 3 s: {out}", steady.len());
    // A stall of three frames' time skips the two between (drawn late, they would lag); one
    // past a quarter second starts the clock again, from the next frame.
    assert_eq!(field(&out, "gaps"), &serde_json::json!([0, 1, 0]), "{out}");
    let short = field(&out, "short").as_array().unwrap();
    assert_eq!(short[1].as_u64().unwrap(), short[0].as_u64().unwrap() + 3, "{out}");
}

#[test]
fn ten_thousand_pointer_events_resizes_and_no_size_cost_no_error_and_no_memory() {
    if !harness("ten_thousand_pointer_events_resizes_and_no_size_cost_no_error_and_no_memory", true) {
        return;
    }
    let scene = root().join("scenes/pool.toml");
    let out: serde_json::Value = browser("storm", &scene);
    assert_eq!(field(&out, "errors").as_array().unwrap().len(), 0, "{out}");
    let rounds = field(&out, "rounds").as_array().unwrap();
    let at = |k: usize, key: &str| field(&rounds[k], key).as_u64().unwrap();
    assert!(at(0, "events") == 10_000 && at(0, "added") > 0, "{out}");
    // The second round adds what the pointer drew, within what a drag keeps (a few hundred
    // bytes a piece); the page's heap does not grow with the events.
    assert!(at(1, "module") - at(0, "module") <= 1 << 20, "the module's memory grew: {out}");
    assert!(at(1, "heap") <= at(0, "heap") + (512 << 10), "the page's heap grew: {out}");
    // At no size, events land nowhere: nothing is added, nothing thrown.
    assert_eq!(at(2, "added"), at(1, "added"), "{out}");
    assert!(at(2, "heap") <= at(0, "heap") + (512 << 10), "{out}");
}

#[test]
fn with_reduced_motion_only_the_poster_is_fetched_until_the_reader_asks_to_play() {
    if !harness("with_reduced_motion_only_the_poster_is_fetched_until_the_reader_asks_to_play", true) {
        return;
    }
    let dir = scratch("web-reduced");
    let site = dir.join("site");
    assert_eq!(
        ripple(&["web", root().join("scenes/pond.toml").to_str().unwrap(), "-o", site.to_str().unwrap(), "-q"], &dir)
            .code,
        0
    );
    let out: serde_json::Value = browser("reduced", &site);
    assert_eq!(field(&out, "errors").as_array().unwrap().len(), 0, "{out}");
    // Two seconds: one picture, the poster, and nothing fetched but the page, its module and it.
    let pictures = field(&out, "pictures");
    assert_eq!(field(pictures, "count"), 1, "{out}");
    assert_eq!(field(pictures, "showing"), "poster", "{out}");
    let still: Vec<&str> =
        field(&out, "fetchedStill").as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(still, ["/scene/index.html", "/scene/ripple-water.js", "/scene/poster.png"], "{out}");
    // A click asks to play: the player, the scene and its picture come, and it plays.
    let after: Vec<&str> =
        field(&out, "fetchedAfter").as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for file in ["/scene/ripple_water.wasm", "/scene/pond.toml", "/scene/lagoon.png"] {
        assert!(after.contains(&file), "{file} was not fetched after the click: {out}");
    }
    let played = field(&out, "afterClick");
    assert!(field(played, "later").as_u64().unwrap() > field(played, "first").as_u64().unwrap() + 5, "{out}");
}

#[test]
fn the_wasm_is_small() {
    // The bounds the web player keeps: at most 500 KB (the browser decodes the pictures, so the
    // module carries no image decoder), and 220 KB gzipped at level 9.
    let wasm = std::fs::read(root().join("web/ripple_water.wasm")).unwrap();
    assert!(wasm.len() <= 500_000, "{} bytes", wasm.len());
    let mut gzip = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(9).unwrap());
    let mut out = vec![0; gzip.gzip_compress_bound(wasm.len())];
    let gz = gzip.gzip_compress(&wasm, &mut out).unwrap();
    assert!(gz <= 220_000, "{gz} bytes gzipped");
    assert_eq!(&wasm[..4], b"\0asm", "not a WebAssembly module");
    // No image decoder is in it: none of their names.
    let text = String::from_utf8_lossy(&wasm);
    for decoder in ["zune_jpeg", "image_webp", "JpegDecoder", "PngDecoder"] {
        assert!(!text.contains(decoder), "{decoder} is in the module");
    }
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
    let expected = [
        "HOSTING.txt",
        "index.html",
        "index.html.br",
        "index.html.gz",
        "lagoon.png",
        "pond.toml",
        "pond.toml.br",
        "pond.toml.gz",
        "pond.webp",
        "poster.png",
        "ripple-water.js",
        "ripple-water.js.br",
        "ripple-water.js.gz",
        "ripple_water.wasm",
        "ripple_water.wasm.br",
        "ripple_water.wasm.gz",
    ];
    assert_eq!(names, expected);
    // The picture as the page fetches it: an 8-bit RGB PNG, the background as the CLI draws it
    // (larger than the canvas, it is written fitted to it): the hashes below show it exact.
    let page = image::open(site.join("lagoon.png")).unwrap();
    assert_eq!((page.color(), page.width(), page.height()), (image::ColorType::Rgb8, 360, 240));
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
    // The compressed copies are the files, as Node's zlib (gzip, Brotli) reads them.
    let script = "const z = require('node:zlib'), fs = require('node:fs'); for (const f of process.argv.slice(1)) {\
                  const a = fs.readFileSync(f); if (!z.gunzipSync(fs.readFileSync(f + '.gz')).equals(a) || \
                  !z.brotliDecompressSync(fs.readFileSync(f + '.br')).equals(a)) throw new Error(f); } console.log('same');";
    let files: Vec<String> = ["index.html", "pond.toml", "ripple-water.js", "ripple_water.wasm"]
        .iter()
        .map(|f| site.join(f).to_string_lossy().into_owned())
        .collect();
    let out = Command::new("node").arg("-e").arg(script).args(&files).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "same", "{}", String::from_utf8_lossy(&out.stderr));
    let out: serde_json::Value = browser("site", &site);
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

#[test]
fn web_names_with_url_and_html_syntax_and_scene_strings_with_quotes_play() {
    let dir = scratch("web-names");
    // A scene named with URL and HTML syntax, whose picture's string carries `</script>` and
    // quotes (a folder `pics<` holding `script>'"#.png`).
    let odd = "a#b?c%d--> <e>'f\"";
    std::fs::create_dir(dir.join("pics<")).unwrap();
    std::fs::copy(root().join("scenes/lagoon.png"), dir.join("pics<").join("script>'\"#.png")).unwrap();
    let text = std::fs::read_to_string(root().join("scenes/pond.toml")).unwrap();
    let text = text.replace("\"lagoon.png\"", "'''pics</script>'\"#.png'''");
    let scene = dir.join(format!("{odd}.toml"));
    std::fs::write(&scene, &text).unwrap();
    let run = ripple(&["web", scene.to_str().unwrap(), "-o", "site", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = std::fs::read_to_string(dir.join("site/index.html")).unwrap();
    // No name breaks out of its attribute or the page's comment, or reads as URL syntax.
    assert!(!page.contains("<e>") && page.matches("-->").count() == 1, "{page}");
    assert!(page.contains("scene=\"a%23b%3Fc%25d--%3E%20%3Ce%3E%27f%22.toml\""), "{page}");
    assert!(page.contains("<title>a#b?c%d--&gt; &lt;e&gt;&#39;f&quot;</title>"), "{page}");
    assert!(dir.join(format!("site/{odd}.toml")).is_file() && dir.join("site/script>'\"#.png").is_file());
    if !harness("web_names_with_url_and_html_syntax_and_scene_strings_with_quotes_play", true) {
        return;
    }
    let out: serde_json::Value = browser("site", &dir.join("site"));
    let http = field(&out, "http");
    assert_eq!(field(http, "showing"), "frame", "{out}");
    assert_eq!(field(http, "first").as_str().unwrap(), cli_hashes(&scene)[0], "{out}");
    assert_eq!(field(&out, "httpErrors").as_array().unwrap().len(), 0, "{out}");
}

#[test]
fn web_takes_set_as_every_render_command_does() {
    let dir = scratch("web-set");
    let pond = root().join("scenes/pond.toml");
    let sets = [
        "--set",
        "video.width=640",
        "--set",
        "video.height=480",
        "--set",
        "stone[0].x=300",
        "--set",
        "look.shading=300",
    ];
    let run = ripple(&[&["web", pond.to_str().unwrap(), "-o", "site", "-q"], &sets[..]].concat(), &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(dir.join("site/pond.toml")).unwrap();
    assert!(text.starts_with("# pond.toml with --set video.width=640 --set video.height=480"), "{text}");
    let page = std::fs::read_to_string(dir.join("site/index.html")).unwrap();
    assert!(page.contains("width=\"640\" height=\"480\""), "{page}");
    // The page's scene renders what the CLI renders with the same --set.
    let out = dir.join("hashes.txt");
    let run = ripple(&[&[pond.to_str().unwrap(), "--hashes", out.to_str().unwrap(), "-q"], &sets[..]].concat(), &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(out).unwrap();
    let wanted: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .collect();
    assert_eq!(cli_hashes(&dir.join("site/pond.toml")), wanted);
    // A bad override: the CLI's message, and no folder.
    let run = ripple(&["web", pond.to_str().unwrap(), "-o", "bad", "--set", "video.fps=0"], &dir);
    assert!(run.code == 2 && run.stderr.contains("video.fps = 0") && run.stderr.contains("--set"), "{}", run.stderr);
    assert!(!dir.join("bad").exists());
}

#[cfg(unix)]
#[test]
fn web_refuses_a_file_a_pipe_and_a_folder_of_other_things_and_follows_a_symlink_to_a_folder() {
    let dir = scratch("web-outputs");
    let pond = root().join("scenes/pond.toml");
    let web = |out: &str, force: bool| {
        let mut args = vec!["web", pond.to_str().unwrap(), "-o", out, "-q"];
        if force {
            args.push("-f");
        }
        ripple(&args, &dir)
    };
    std::fs::write(dir.join("file"), "mine").unwrap();
    assert!(Command::new("mkfifo").arg(dir.join("pipe")).status().unwrap().success());
    std::fs::create_dir(dir.join("notes")).unwrap();
    std::fs::write(dir.join("notes/todo.txt"), "mine").unwrap();
    for (out, says) in [
        ("file", "the output file is a file, and a web page is written into a folder"),
        ("pipe", "the output pipe is a named pipe (FIFO), and a web page is a folder"),
        ("notes", "the folder notes is not a web page ripple-render wrote"),
    ] {
        for force in [false, true] {
            let run = web(out, force);
            assert_eq!(run.code, 2, "{out}: {}", run.stderr);
            assert!(run.stderr.contains(says), "{out}: {}", run.stderr);
            assert_eq!(run.stderr.lines().count(), 2, "one error and its hint: {}", run.stderr);
        }
    }
    assert_eq!(std::fs::read_to_string(dir.join("file")).unwrap(), "mine");
    assert_eq!(std::fs::read_to_string(dir.join("notes/todo.txt")).unwrap(), "mine");
    // A symlink to an empty folder: the page is written there, the link kept.
    std::fs::create_dir(dir.join("empty")).unwrap();
    std::os::unix::fs::symlink("empty", dir.join("link")).unwrap();
    let run = web("link", false);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(dir.join("link").is_symlink() && dir.join("empty/index.html").is_file());
    assert!(crate::support::temporaries(&dir).is_empty(), "{:?}", crate::support::temporaries(&dir));
}
