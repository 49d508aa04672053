//! `ripple-render web SCENE -o DIR`: a folder any static host serves, where the scene plays live
//! and answers the pointer: `index.html` with the `<ripple-water>` element, its module and
//! WebAssembly (carried in this program: see docs/design.md, "The web player"), the scene and its
//! pictures, a still poster (frame 0), a lossy WebP of the loop for a browser without
//! WebAssembly or JavaScript, gzip and Brotli copies of the text and the module for hosts that
//! serve them, and a note for hosts.
//!
//! The page's browser decodes the pictures, so each is written as one it decodes to exactly the
//! pixels this program draws from: an 8-bit RGB PNG, without transparency or colour profile, of
//! the picture as decoded here (flattened over the background colour; a mask as the grey of its
//! brightness), at the canvas's size when the picture is larger.

use std::io::Write;
use std::path::{Path, PathBuf};

use ripple_render::base::picture;
use ripple_render::base::units;
use ripple_render::draw::background::flatten;
use ripple_render::encode::Effort;
use ripple_render::encode::png::smallest_rgb_png;
use ripple_render::output::{Policy, Staged};
use ripple_render::render::budget::read_scene;
use ripple_render::scene::Picture;
use ripple_render::sim::shore::mask_brightness;
use ripple_render::{Error, Inputs, Scene};

use super::render;
use super::say::tell;

/// The player's module and WebAssembly, as web/ holds them.
const MODULE: &[u8] = include_bytes!("../../web/ripple-water.js");
const WASM: &[u8] = include_bytes!("../../web/ripple_water.wasm");

/// The fallback animation's lossy WebP quality: cwebp's default.
const FALLBACK_QUALITY: u8 = 75;

/// The note for hosts, in the folder.
const HOSTING: &str = "HOSTING.txt";

/// What `web` was asked.
pub struct Request<'a> {
    pub scene: &'a Path,
    pub output: &'a Path,
    pub force: bool,
    pub quiet: bool,
    pub max_memory: u64,
    /// `--set KEY=VALUE` overrides: written into the page's scene.
    pub overrides: &'a [String],
}

/// One picture as the page fetches it.
struct PagePicture {
    which: Picture,
    name: String,
    png: Vec<u8>,
}

pub fn run(request: &Request<'_>) -> Result<(), Error> {
    let scene = read_scene(request.scene, request.overrides, request.max_memory)?;
    // Everything the page needs must load as the CLI loads it: checked before anything is staged.
    Inputs::for_scene_within(&scene, request.max_memory)?;
    let name = scene_name(request.scene);
    let stem = Path::new(&name).file_stem().map_or("scene".into(), |s| s.to_string_lossy().into_owned());
    let fallback = format!("{stem}.webp");
    let text = page_source(request, &scene, &name)?;
    let pictures = page_pictures(&scene, request.max_memory, &[name.as_str(), fallback.as_str()])?;
    let named = |which: Picture| pictures.iter().find(|p| p.which == which).map(|p| p.name.clone());
    let written = Scene::from_toml_str(&text, request.scene)?;
    let page_text =
        written.with_images_renamed(&text, |which, path| named(which).unwrap_or_else(|| path.display().to_string()));
    check_relocated(&scene, &page_text, &name, &pictures)?;

    let inputs: Vec<&Path> = scene.input_files();
    let staged = Staged::begin(request.output, Policy::Site { force: request.force }, &inputs)?;
    let dir = staged.path().to_path_buf();
    let write = |file: &str, bytes: &[u8]| -> Result<(), Error> {
        let path = dir.join(file);
        let mut out = std::fs::File::create(&path).map_err(|e| staged.claim(Error::io(&path, e)))?;
        out.write_all(bytes).map_err(|e| staged.claim(Error::io(&path, e)))
    };
    let page = index_html(&scene, &name, &stem, &fallback);
    let texts: [(&str, &[u8]); 4] = [
        ("index.html", page.as_bytes()),
        ("ripple-water.js", MODULE),
        ("ripple_water.wasm", WASM),
        (&name, page_text.as_bytes()),
    ];
    let mut fetched = 0;
    for (file, bytes) in texts {
        write(file, bytes)?;
        write(&format!("{file}.gz"), &gzip(bytes))?;
        let br = brotli(bytes).map_err(|e| staged.claim(e))?;
        fetched += br.len() as u64;
        write(&format!("{file}.br"), &br)?;
    }
    for p in &pictures {
        write(&p.name, &p.png)?;
        fetched += p.png.len() as u64;
    }
    write(HOSTING, hosting_note().as_bytes())?;
    still_and_fallback(request, &dir, &fallback)?;
    fetched += std::fs::metadata(dir.join("poster.png")).map_or(0, |m| m.len());
    let total = ripple_render::base::files::folder_bytes(&dir);
    staged.commit()?;
    if !request.quiet {
        let out = request.output.display();
        tell(&format!(
            "wrote {out}: the scene live on a page, {} in all (a visitor fetches {}, Brotli-compressed; the player {} \
             uncompressed; the fallback {fallback} {}); serve the folder from any static host, e.g. python3 -m \
             http.server -d {out} ({HOSTING} says how to serve the compressed copies)",
            units::show(total),
            units::show(fetched),
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

/// The text the page reads: the scene file's, or with `--set` overrides, the scene with them
/// written in (as TOML, its comments left out), checked to read as the same scene.
fn page_source(request: &Request<'_>, scene: &Scene, name: &str) -> Result<String, Error> {
    let text = Scene::read_text(request.scene)?;
    if request.overrides.is_empty() {
        return Ok(text);
    }
    let cannot = |why: String| {
        Error::usage(
            format!("the page's scene cannot take the --set overrides: {why}"),
            Some("write the keys into the scene file instead"),
        )
    };
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| cannot(e.message().to_string()))?;
    for o in request.overrides {
        set(&mut table, o).map_err(|why| cannot(format!("--set {o}: {why}")))?;
    }
    let body = toml::to_string(&table).map_err(|e| cannot(e.to_string()))?;
    let sets: Vec<String> = request.overrides.iter().map(|o| format!("--set {o}")).collect();
    let out = format!("# {name} with {}, as ripple-render web wrote it for this page\n\n{body}", sets.join(" "));
    let rewritten = Scene::from_toml_str(&out, request.scene)?;
    if !rewritten.same_scene(scene) {
        return Err(cannot("written into the file, they read as another scene".into()));
    }
    Ok(out)
}

/// Sets `KEY=VALUE` (a key path as `--set` takes it: `water.refraction`, `stone[0].x`) in
/// `table`: the value as TOML, or else as a string.
fn set(table: &mut toml::Table, item: &str) -> Result<(), String> {
    let (key, value) = item.split_once('=').ok_or("it is not KEY=VALUE")?;
    let value = match toml::from_str::<toml::Table>(&format!("v = {}", value.trim())) {
        Ok(mut t) => t.remove("v").ok_or("no value")?,
        Err(_) => toml::Value::String(value.trim().to_string()),
    };
    let steps: Vec<&str> = key.trim().split('.').collect();
    let mut here = table;
    for (i, step) in steps.iter().enumerate() {
        let (name, index) = match step.split_once('[') {
            Some((name, rest)) => {
                (name, Some(rest.strip_suffix(']').and_then(|n| n.parse::<usize>().ok()).ok_or("a bad index")?))
            }
            None => (*step, None),
        };
        let last = i + 1 == steps.len();
        match (index, last) {
            (None, true) => {
                here.insert(name.to_string(), value);
                return Ok(());
            }
            (None, false) => {
                let next = here.entry(name.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                here = next.as_table_mut().ok_or_else(|| format!("{name} is not a table"))?;
            }
            (Some(n), _) => {
                let items =
                    here.get_mut(name).and_then(toml::Value::as_array_mut).ok_or_else(|| format!("no [[{name}]]"))?;
                let item = items.get_mut(n).ok_or_else(|| format!("no {name}[{n}]"))?;
                if last {
                    *item = value;
                    return Ok(());
                }
                here = item.as_table_mut().ok_or_else(|| format!("{name}[{n}] is not a table"))?;
            }
        }
    }
    Ok(())
}

/// The scene's pictures as the page fetches them: each an 8-bit RGB PNG that a browser decodes
/// to exactly what this program draws from. The background is flattened over its colour; a
/// mask is the grey of its brightness (an opaque grey pixel's brightness is its grey); a
/// picture larger than the canvas is written fitted to it (a picture of the canvas's size fits
/// onto it unchanged, whatever the fit). Named after the file, as a PNG, beside `taken`.
fn page_pictures(scene: &Scene, budget: u64, taken: &[&str]) -> Result<Vec<PagePicture>, Error> {
    let canvas = (scene.width as usize, scene.height as usize);
    let mut out: Vec<PagePicture> = Vec::new();
    let color = scene.background.color;
    let pictures = [
        scene.background.image.as_deref().map(|path| (Picture::Background, path, color)),
        scene.shore.mask.as_ref().map(|mask| (Picture::Mask, mask.image.as_path(), [0; 3])),
    ];
    for (which, path, outside) in pictures.into_iter().flatten() {
        let pixel = |p: [u8; 4]| match which {
            Picture::Background => flatten(p, color),
            Picture::Mask => [mask_brightness(p) as u8; 3],
        };
        let image = picture::decode_within(path, budget).map_err(|reason| Error::input(path, reason))?;
        let (w, h) = (image.width() as usize, image.height() as usize);
        let (size, pixels): ((usize, usize), Vec<[u8; 3]>) = if w * h > canvas.0 * canvas.1 {
            (canvas, picture::fit(&image, canvas, scene.background.fit, outside, pixel))
        } else {
            ((w, h), image.pixels().map(|p| pixel(p.0)).collect())
        };
        let png = smallest_rgb_png(size.0 as u32, size.1 as u32, &pixels, "ripple-render web")?;
        let stem = path.file_stem().map_or("picture".into(), |s| s.to_string_lossy().into_owned());
        let base = if which == Picture::Mask { format!("mask-{stem}") } else { stem };
        let name = (0..)
            .map(|k| if k == 0 { format!("{base}.png") } else { format!("{base}-{k}.png") })
            .find(|n| !reserved(n) && !taken.contains(&n.as_str()) && !out.iter().any(|p| &p.name == n))
            .unwrap_or_default();
        out.push(PagePicture { which, name, png });
    }
    Ok(out)
}

/// A file name the folder uses for its own files.
fn reserved(name: &str) -> bool {
    ["index.html", "ripple-water.js", "ripple_water.wasm", "poster.png", HOSTING].contains(&name)
}

/// The scene as the page reads it names its pictures where they are put.
fn check_relocated(scene: &Scene, text: &str, name: &str, pictures: &[PagePicture]) -> Result<(), Error> {
    let moved = Scene::from_toml_str(text, Path::new(name))?;
    let wanted: Vec<PathBuf> = [
        scene.background.image.as_ref().map(|_| Picture::Background),
        scene.shore.mask.as_ref().map(|_| Picture::Mask),
    ]
    .into_iter()
    .flatten()
    .filter_map(|which| pictures.iter().find(|p| p.which == which).map(|p| PathBuf::from(&p.name)))
    .collect();
    let got: Vec<PathBuf> = moved.input_files().into_iter().skip(1).map(Path::to_path_buf).collect();
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
            overrides: request.overrides,
            dither: false,
            max_size: None,
            effort: Effort::default(),
            quality,
            lossy: None,
        })?;
    }
    Ok(())
}

/// `bytes` gzipped at libdeflate's slowest level.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut compressor = libdeflater::Compressor::new(libdeflater::CompressionLvl::best());
    let mut out = vec![0; compressor.gzip_compress_bound(bytes.len())];
    let n = compressor.gzip_compress(bytes, &mut out).unwrap_or(0);
    out.truncate(n);
    out
}

/// `bytes` Brotli-compressed at its slowest quality.
fn brotli(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let params = brotli::enc::BrotliEncoderParams { quality: 11, lgwin: 22, ..Default::default() };
    brotli::BrotliCompress(&mut &bytes[..], &mut out, &params).map_err(|e| Error::Encode(e.to_string()))?;
    Ok(out)
}

/// What a host needs to know to serve the folder well.
fn hosting_note() -> String {
    "This folder is a web page that ripple-render wrote (ripple-render web). Serve it as static files.\n\
     \n\
     - ripple_water.wasm should be served as application/wasm: the page then compiles it while it downloads.\n\
     - Beside index.html, ripple-water.js, ripple_water.wasm and the scene are copies compressed with\n\
     \x20 Brotli (.br) and gzip (.gz), for a host that serves precompressed files to browsers that accept them:\n\
     \x20   nginx:  gzip_static on; brotli_static on;   (brotli_static needs the ngx_brotli module)\n\
     \x20   Caddy:  file_server { precompressed br gzip }\n\
     \x20   Netlify, Cloudflare Pages, GitHub Pages compress by themselves: the copies are not needed there.\n\
     \x20 python3 -m http.server serves the files as they are, uncompressed (fine on one's own machine).\n\
     - The pictures and the poster are PNGs the browser decodes to exactly the pixels the CLI draws\n\
     \x20 from; they are compressed already.\n\
     - From file:// a browser refuses to load the module, and the page shows the animated WebP instead.\n"
        .to_string()
}

/// `text` for a double-quoted HTML attribute.
fn attribute(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;").replace('\'', "&#39;")
}

/// A file name of the folder as a relative URL: every byte but the unreserved ones
/// percent-encoded (`#`, `?`, `%` and the like would otherwise be read as URL syntax).
fn url(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The page: the element, the poster until the first frame, the fallback for a browser that
/// cannot play it. Every name in it is escaped for where it stands: a URL, an attribute, text.
fn index_html(scene: &Scene, name: &str, stem: &str, fallback: &str) -> String {
    let (w, h) = (scene.width, scene.height);
    let (scene_url, fallback_url) = (attribute(&url(name)), attribute(&url(fallback)));
    let title = attribute(stem);
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
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
      if (el.querySelector("img[data-fallback]")) continue;
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
<!-- A scene played live by ripple-render's web player: click for a stone, drag for a swipe.
     Without JavaScript or WebAssembly, the loop plays as a WebP instead. -->
<ripple-water scene="{scene_url}" width="{w}" height="{h}" poster="poster.png" fallback="{fallback_url}" alt="{title}: water ripples">
  <noscript><img src="{fallback_url}" width="{w}" height="{h}" alt="{title}: water ripples"></noscript>
</ripple-water>
</body>
</html>
"#
    )
}
