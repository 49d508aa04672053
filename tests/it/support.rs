//! Helpers shared by the integration tests: the binary run as users run it, scratch folders and
//! scenes in them, decoding GIFs as a viewer composes them, PNG I/O.

use std::path::{Path, PathBuf};
use std::process::Command;

use ripple_render::Result;
use ripple_render::encode::Encoder;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A decoded animation: canvas size, RGB frames as a viewer shows them, delays in centiseconds.
pub struct Decoded {
    pub width: usize,
    pub height: usize,
    pub frames: Vec<Vec<u8>>,
    pub delays: Vec<u16>,
    pub loops: Option<gif::Repeat>,
}

/// Decodes a GIF, composing each frame over the previous one (disposal `Keep`/`Any`, and
/// transparent pixels left showing what was there).
pub fn decode_gif(bytes: &[u8]) -> Decoded {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(bytes).expect("GIF header");
    let (width, height) = (usize::from(decoder.width()), usize::from(decoder.height()));
    let mut canvas = vec![0u8; width * height * 4];
    let mut frames = Vec::new();
    let mut delays = Vec::new();
    while let Some(frame) = decoder.read_next_frame().expect("GIF frame") {
        let (left, top) = (usize::from(frame.left), usize::from(frame.top));
        for y in 0..usize::from(frame.height) {
            for x in 0..usize::from(frame.width) {
                let src = &frame.buffer[(y * usize::from(frame.width) + x) * 4..][..4];
                if src[3] != 0 {
                    let at = ((top + y) * width + left + x) * 4;
                    canvas[at..at + 4].copy_from_slice(src);
                }
            }
        }
        frames.push(canvas.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect());
        delays.push(frame.delay);
    }
    let loops = Some(decoder.repeat());
    Decoded { width, height, frames, delays, loops }
}

/// Reads an 8-bit RGB PNG: (width, height, pixels).
pub fn read_png(path: &Path) -> (usize, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("open PNG")));
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("PNG size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert_eq!(info.color_type, png::ColorType::Rgb, "{} is not RGB", path.display());
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width as usize, info.height as usize, buf)
}

/// Writes an 8-bit RGB PNG.
pub fn write_png(path: &Path, width: usize, height: usize, rgb: &[u8]) {
    let pixels: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    let file = std::fs::File::create(path).expect("create PNG");
    ripple_render::encode::png::write_png(std::io::BufWriter::new(file), width as u32, height as u32, &pixels, None)
        .expect("write PNG");
}

/// A fresh, empty scratch folder for one test, under this run's folder in the system's
/// temporary folder. The first call of a run removes the folders earlier runs left (a run's is
/// gigabytes: datasets, videos, a Python environment), so one run's is kept to look into after
/// a failure and the disk does not fill run after run.
pub fn scratch(name: &str) -> PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(sweep_earlier_runs);
    let dir = std::env::temp_dir().join(format!("ripple-render-tests-{}", std::process::id())).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Removes the scratch folders of test runs that have ended (their process is gone).
fn sweep_earlier_runs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("ripple-render-tests-").and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !running(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether process `pid` is running (where that cannot be told, it is taken to be).
fn running(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new("/proc").join(pid.to_string()).exists() } else { true }
}

/// Changes one channel of one pixel of an RGB PNG frame: at (x, y), channel `c`, XOR `bits`.
pub fn flip_channel(path: &Path, (x, y, c): (usize, usize, usize), bits: u8) {
    let (w, h, mut rgb) = read_png(path);
    rgb[(y * w + x) * 3 + c] ^= bits;
    write_png(path, w, h, &rgb);
}

/// The names of the entries of a folder, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Collects the RGB frames' CRCs and keeps the key frames.
pub struct Collector<'a> {
    pub background: Vec<[u8; 3]>,
    pub keys: &'a [usize],
    pub crcs: &'a mut Vec<u32>,
    pub kept: &'a mut Vec<Vec<u8>>,
}

impl Encoder for Collector<'_> {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[[u8; 3]]) -> Result<()> {
        let bytes = pixels.as_flattened();
        if self.keys.contains(&self.crcs.len()) {
            self.kept.push(bytes.to_vec());
        }
        self.crcs.push(crc32fast::hash(bytes));
        Ok(())
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        self.write_frame(rgb)
    }

    fn finish(self) -> Result<ripple_render::encode::EncodeTimes> {
        Ok(Default::default())
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}

/// Every frame of a scene given as text, in exact RGB (a look's frames as drawn).
pub fn render_rgb(src: &str) -> Vec<Vec<u8>> {
    let scene = ripple_render::Scene::from_toml_str(src, Path::new("scene.toml")).expect("scene");
    let inputs = ripple_render::Inputs::for_scene(&scene).expect("background");
    let background = &inputs.background;
    let keys: Vec<usize> = (0..scene.frames as usize).collect();
    let (mut crcs, mut kept) = (Vec::new(), Vec::new());
    let collector = Collector { background: background.pixels.clone(), keys: &keys, crcs: &mut crcs, kept: &mut kept };
    ripple_render::render(&scene, &inputs, collector, &mut |_| {}).expect("render");
    kept
}

/// A copy of a bundled scene in `dir`, `frames` frames long, its picture named by full path.
pub fn bundled_copy(name: &str, dir: &Path, frames: u32) -> String {
    let scenes = root().join("scenes");
    let text = std::fs::read_to_string(scenes.join(format!("{name}.toml"))).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("duration =") {
            out.push_str(&format!("frames = {frames}\n"));
        } else if let Some(image) = line.strip_prefix("image = \"") {
            out.push_str(&format!("image = \"{}\n", scenes.join(image).display()));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    let file = format!("{name}.toml");
    std::fs::write(dir.join(&file), out).unwrap();
    file
}

/// What a run of the binary did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn ripple(args: &[&str], cwd: &Path) -> Run {
    ripple_with(args, cwd, &[])
}

/// [`ripple`] with environment variables set (a CI job's summary file, say). The tests' own
/// `GITHUB_STEP_SUMMARY`, `CI` and `GITHUB_ACTIONS`, when they run in such a job, are never
/// handed on (they change what `check` does).
pub fn ripple_with(args: &[&str], cwd: &Path, env: &[(&str, &Path)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .output()
        .expect("run ripple-render");
    let run = Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(!run.stderr.contains("panicked") && !run.stderr.contains("RUST_BACKTRACE"), "{}", run.stderr);
    run
}

/// Writes `scene.toml` with `body` into a fresh folder and returns the folder.
pub fn scene_dir(name: &str, body: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("scene.toml"), body).unwrap();
    dir
}

/// Files in `dir` whose names mark them as our temporaries.
pub fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ripple-"))
        .collect()
}

/// A PNG whose header claims `width`×`height` grey pixels, with almost no data behind it.
pub fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(&crc.finalize().to_be_bytes());
        out
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    png.extend(chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
    png.extend(chunk(b"IEND", &[]));
    png
}

/// A scene's text without the gain tone's own keys (so that it reads under another tone).
pub fn without_gain(text: &str) -> String {
    let gain = ["sky_max", "glint", "glint_at", "glint_size", "glint_spread", "sun", "caustics_depth"];
    text.lines()
        .filter(|l| !gain.iter().any(|k| l.split('=').next().is_some_and(|key| key.trim() == *k)))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `count` small scenes `FOLDER/s0.toml`… in `dir`, each a stone at its own place on tiles;
/// returns their paths as given to `check`.
pub fn small_scenes(dir: &Path, folder: &str, count: usize) -> Vec<String> {
    std::fs::create_dir_all(dir.join(folder)).unwrap();
    (0..count)
        .map(|k| {
            let body = format!(
                "[video]\nwidth = 32\nheight = 24\nframes = 4\n[background]\npattern = \"tiles\"\n\
                 [[stone]]\nat = 0\nx = {}\ny = 12\nradius = 3\n",
                6 + 5 * k
            );
            let name = format!("{folder}/s{k}.toml");
            std::fs::write(dir.join(&name), body).unwrap();
            name
        })
        .collect()
}

/// The text after `prefix` up to the next quote.
pub fn regex_value(text: &str, prefix: &str) -> String {
    let start = text.find(prefix).unwrap_or_else(|| panic!("{prefix} in {text}")) + prefix.len();
    text[start..].split('"').next().unwrap().to_string()
}

/// A headless Chromium, if installed.
pub fn browser() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        .map(str::to_string)
}

/// The page's DOM after its scripts ran and it loaded.
pub fn dump_dom(browser: &str, page: &Path, fragment: &str) -> String {
    let url = format!("file://{}{fragment}", page.canonicalize().unwrap().display());
    // A profile of its own for each run: tests run side by side, and a browser started on a
    // profile another is using hands its page to that one and prints nothing.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let profile = scratch(&format!("browser-profile-{run}"));
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000"])
        .args(["--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .output()
        .expect("run chromium");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The files of `dir/sub` and their bytes, sorted by name (none when it does not exist).
pub fn files_in(dir: &Path, sub: &str) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(sub))
        .map(|d| {
            d.map(|e| e.unwrap())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
                .collect()
        })
        .unwrap_or_default();
    all.sort();
    all
}

/// A run's scratch folder outlives it only until the next run starts: a folder of a process
/// that has ended is removed, one of a running process (this one's) is kept.
#[cfg(target_os = "linux")]
#[test]
fn scratch_folders_of_ended_runs_are_removed() {
    let tmp = std::env::temp_dir();
    // A process that has ended: a child, waited for.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let ended = child.id();
    child.wait().unwrap();
    let stale = tmp.join(format!("ripple-render-tests-{ended}"));
    std::fs::create_dir_all(stale.join("left")).unwrap();
    let mine = scratch("support-sweep");
    sweep_earlier_runs();
    assert!(!stale.exists() || running(ended), "{} was left", stale.display());
    assert!(mine.is_dir(), "this run's own folder was removed");
}
