//! `ripple-render web SCENE -o DIR`: a folder any static host serves, where the scene plays live
//! and answers the pointer: `index.html` with the `<ripple-water>` element, its module and
//! WebAssembly (carried in this program: see docs/design.md, "The web player"), the scene and its
//! pictures, a still poster (frame 0), and a lossy WebP of the loop for a browser without
//! WebAssembly or JavaScript.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use ripple_render::base::units;
use ripple_render::encode::Effort;
use ripple_render::output::{Policy, Staged};
use ripple_render::{Error, Inputs, Scene};

use super::render;
use super::say::tell;

/// The player's module and WebAssembly, as web/ holds them.
const MODULE: &[u8] = include_bytes!("../../web/ripple-water.js");
const WASM: &[u8] = include_bytes!("../../web/ripple_water.wasm");

/// The fallback animation's lossy WebP quality: cwebp's default.
const FALLBACK_QUALITY: u8 = 75;

/// What `web` was asked.
pub struct Request<'a> {
    pub scene: &'a Path,
    pub output: &'a Path,
    pub force: bool,
    pub quiet: bool,
    pub max_memory: u64,
}

pub fn run(request: &Request<'_>) -> Result<(), Error> {
    let scene = Scene::load(request.scene)?;
    // Everything the page needs must load as the CLI loads it: checked before anything is staged.
    Inputs::for_scene_within(&scene, request.max_memory)?;
    let text = Scene::read_text(request.scene)?;
    let name = scene_name(request.scene);
    let pictures = pictures(&scene);
    let page_text = scene.with_images_renamed(&text, |path| place_of(&pictures, path).to_string_lossy().into_owned());
    check_relocated(&scene, &page_text, &name, &pictures)?;

    let inputs: Vec<&Path> = scene.input_files();
    let staged = Staged::begin(request.output, Policy::Site { force: request.force }, &inputs)?;
    let dir = staged.path().to_path_buf();
    let write = |file: &Path, bytes: &[u8]| -> Result<(), Error> {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| staged.claim(Error::io(parent, e)))?;
        }
        let mut out = std::fs::File::create(&path).map_err(|e| staged.claim(Error::io(&path, e)))?;
        out.write_all(bytes).map_err(|e| staged.claim(Error::io(&path, e)))
    };
    write(Path::new("ripple-water.js"), MODULE)?;
    write(Path::new("ripple_water.wasm"), WASM)?;
    write(Path::new(&name), page_text.as_bytes())?;
    for (from, to) in &pictures {
        let bytes = std::fs::read(from).map_err(|e| Error::io(from, e))?;
        write(to, &bytes)?;
    }
    let stem = Path::new(&name).file_stem().map_or("scene".into(), |s| s.to_string_lossy().into_owned());
    let fallback = format!("{stem}.webp");
    still_and_fallback(request, &dir, &fallback)?;
    write(Path::new("index.html"), index_html(&scene, &name, &stem, &fallback).as_bytes())?;
    let total = ripple_render::base::files::folder_bytes(&dir);
    staged.commit()?;
    if !request.quiet {
        let out = request.output.display();
        tell(&format!(
            "wrote {out}: the scene live on a page, {} in all (the player {}, the fallback {fallback} {}); \
             serve the folder from any static host, e.g. python3 -m http.server -d {out}",
            units::show(total),
            units::show(WASM.len() as u64 + MODULE.len() as u64),
            units::show(std::fs::metadata(request.output.join(&fallback)).map_or(0, |m| m.len())),
        ));
    }
    Ok(())
}

/// The scene's file name in the folder.
fn scene_name(scene: &Path) -> String {
    match scene.file_name().and_then(|n| n.to_str()) {
        Some(name) if !scene.starts_with("/dev") && !scene.starts_with("/proc") => name.to_string(),
        _ => "scene.toml".to_string(),
    }
}

/// Each picture the scene reads, and where it goes in the folder: where the scene names it,
/// when that is a plain path below the scene's folder; else by its file name (a second picture
/// of the same name prefixed with `mask-`).
fn pictures(scene: &Scene) -> Vec<(PathBuf, PathBuf)> {
    let folder = scene.file.parent().unwrap_or(Path::new(""));
    let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
    for path in scene.input_files().into_iter().skip(1) {
        let below =
            path.strip_prefix(folder).ok().filter(|p| p.components().all(|c| matches!(c, Component::Normal(_))));
        let mut place = match below {
            Some(relative) if !relative.as_os_str().is_empty() => relative.to_path_buf(),
            _ => PathBuf::from(path.file_name().unwrap_or("picture".as_ref())),
        };
        if out.iter().any(|(from, to)| to == &place && from != path) {
            place = PathBuf::from(format!("mask-{}", place.file_name().unwrap_or_default().to_string_lossy()));
        }
        if !out.iter().any(|(from, _)| from == path) {
            out.push((path.to_path_buf(), place));
        }
    }
    out
}

/// Where the picture at `path` goes.
fn place_of<'a>(pictures: &'a [(PathBuf, PathBuf)], path: &'a Path) -> &'a Path {
    pictures.iter().find(|(from, _)| from == path).map_or(path, |(_, to)| to)
}

/// The scene as the page reads it names its pictures where they are put.
fn check_relocated(scene: &Scene, text: &str, name: &str, pictures: &[(PathBuf, PathBuf)]) -> Result<(), Error> {
    let moved = Scene::from_toml_str(text, Path::new(name))?;
    let wanted: Vec<&Path> = scene.input_files().into_iter().skip(1).map(|p| place_of(pictures, p)).collect();
    let got: Vec<&Path> = moved.input_files().into_iter().skip(1).collect();
    if wanted != got {
        return Err(Error::usage(
            format!(
                "the scene's pictures could not be renamed for the page (it names {})",
                got.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
            Some("write each picture's path on one line, as a plain string"),
        ));
    }
    Ok(())
}

/// Renders the poster (frame 0, a PNG) and the fallback (a lossy WebP of the loop) into `dir`.
fn still_and_fallback(request: &Request<'_>, dir: &Path, fallback: &str) -> Result<(), Error> {
    let poster = dir.join("poster.png");
    let webp = dir.join(fallback);
    for (output, frame, quality) in [(&poster, Some(0), None), (&webp, None, Some(FALLBACK_QUALITY))] {
        render::run(&render::Request {
            scene: request.scene,
            output: Some(output),
            format: None,
            frame,
            frames: None,
            checkpoints: None,
            checkpoint_every: None,
            hashes: None,
            ground_truth: None,
            force: false,
            quiet: true,
            threads: ripple_render::base::pool::default_threads(),
            stats: false,
            max_memory: request.max_memory,
            indexed_png: false,
            overrides: &[],
            dither: false,
            max_size: None,
            effort: Effort::default(),
            quality,
            lossy: None,
        })?;
    }
    Ok(())
}

/// The page: the element, the poster until the first frame, the fallback for a browser that
/// cannot play it.
fn index_html(scene: &Scene, name: &str, stem: &str, fallback: &str) -> String {
    let (w, h) = (scene.width, scene.height);
    let attr = |s: &str| s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    let (name, stem, fallback) = (attr(name), attr(stem), attr(fallback));
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{stem}</title>
<style>
  body {{ margin: 0; min-height: 100vh; display: grid; place-items: center; background: #10161c; }}
  ripple-water {{ display: block; width: min({w}px, 100vw); }}
  ripple-water canvas, ripple-water img {{ display: block; width: 100%; height: auto; }}
</style>
<link rel="icon" href="data:,">
<script>
  // Where the module cannot load (a browser refuses modules from file://, or has no
  // WebAssembly), the loop plays as the fallback WebP.
  function rippleFallback() {{
    for (const el of document.querySelectorAll("ripple-water[fallback]")) {{
      if (el.querySelector("canvas, img[data-fallback]")) continue;
      const image = Object.assign(document.createElement("img"), {{ src: el.getAttribute("fallback"), alt: el.getAttribute("alt") || "" }});
      image.dataset.fallback = "";
      el.replaceChildren(image);
      el.dataset.showing = "fallback";
    }}
  }}
  if (typeof WebAssembly !== "object") addEventListener("DOMContentLoaded", rippleFallback);
</script>
<script type="module" src="ripple-water.js" onerror="rippleFallback()"></script>
</head>
<body>
<!-- {stem}, played live by ripple-render's web player: click for a stone, drag for a swipe.
     Without JavaScript or WebAssembly, the loop plays as a WebP instead. -->
<ripple-water scene="{name}" poster="poster.png" fallback="{fallback}" alt="{stem}: water ripples">
  <noscript><img src="{fallback}" width="{w}" height="{h}" alt="{stem}: water ripples"></noscript>
</ripple-water>
</body>
</html>
"#
    )
}
