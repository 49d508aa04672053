//! `serve`: a live page of a scene's render. A local web server (std only: one page, its state,
//! its frames) plays the exact frames `-o frames/` would write, shows the events on a timeline,
//! and renders again whenever the scene or a file it reads changes.
//!
//! Three threads share one [`Live`] state: the watcher polls the files' identities (length,
//! time, inode: a save by rename changes the inode), the renderer renders the scene into PNG
//! frames in memory (the PNG sequence's own encoder, [`PngSequence::handing`]), and the server
//! answers the page. A change while a render runs stops it (the render's stop flag) and starts
//! another; a scene error is kept for the page with the command line's text, and the last good
//! render stays on it.

mod http;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use ripple_render::Error;
use ripple_render::base::pool::{Pool, default_threads};
use ripple_render::encode::png::PngSequence;
use ripple_render::inspect::advice;
use ripple_render::inspect::plan::{Marker, markers};
use ripple_render::render::budget::read_scene;
use ripple_render::render::formats::stream_of;
use ripple_render::render::{Heights, Inputs, Redraw, Run, render_again};
use ripple_render::scene::Scene;

/// `ripple-render serve SCENE`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The scene file (TOML).
    #[arg(value_name = "SCENE")]
    scene: PathBuf,
    /// The port to listen on (default: a free one).
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// The address to listen on (default 127.0.0.1, this machine only). Any other lets every
    /// machine that can reach it see the render.
    #[arg(long, value_name = "ADDR")]
    bind: Option<IpAddr>,
    /// Override a scene key, as on the command line (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The memory budget for a render and the frames kept for the page (2G, 512M, …).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = super::memory_size)]
    max_memory: u64,
}

/// What the page is shown: the render (the last good one, filling as it renders) and the error
/// of the scene as it is now, if it has one. `version` counts every change, for the page's
/// long poll.
#[derive(Default)]
struct State {
    version: u64,
    render: Option<Shown>,
    error: Option<String>,
}

/// One render of the scene: its settings, its timeline and the PNG files of the frames made.
struct Shown {
    generation: u64,
    summary: Summary,
    frames: Vec<Option<Arc<Vec<u8>>>>,
    bytes: u64,
    done: bool,
}

/// A render's settings and timeline, as the page reads them.
#[derive(Clone, Serialize)]
struct Summary {
    scene: String,
    width: u32,
    height: u32,
    fps: u32,
    frames: u64,
    looping: bool,
    /// The last output frames, faded into the first (a seamless loop's crossfade).
    crossfade: Option<(u64, u64)>,
    markers: Vec<Marker>,
    warnings: Vec<String>,
    /// Drawn from the last render's heights: only the look changed.
    redrawn: bool,
}

/// The state shared by the watcher, the renderer and the server.
struct Live {
    state: Mutex<State>,
    changed: Condvar,
    budget: u64,
}

impl Live {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Changes the state and wakes the page's waiting requests.
    fn update(&self, change: impl FnOnce(&mut State)) {
        let mut state = self.lock();
        change(&mut state);
        state.version += 1;
        self.changed.notify_all();
    }

    /// Keeps frame `frame` of render `generation`, unless a newer render has replaced it or
    /// the frames kept would pass the memory budget.
    fn add_frame(&self, generation: u64, frame: u64, png: Vec<u8>) {
        self.update(|state| {
            let Some(shown) = state.render.as_mut().filter(|s| s.generation == generation) else { return };
            if shown.bytes + png.len() as u64 > self.budget {
                state.error = Some(format!(
                    "error: the frames kept for the page would take more than --max-memory {}: the page shows the \
                     first {} frames",
                    ripple_render::base::units::show(self.budget),
                    shown.frames.iter().filter(|f| f.is_some()).count()
                ));
                return;
            }
            if let Some(slot) = shown.frames.get_mut(frame as usize) {
                shown.bytes += png.len() as u64;
                *slot = Some(Arc::new(png));
            }
        });
    }
}

pub fn run(args: &ServeArgs) -> Result<(), Error> {
    // The scene must read before anything is served: a wrong path is the command line's error.
    if let Err(e) = std::fs::metadata(&args.scene) {
        return Err(Error::input(
            &args.scene,
            format!("cannot be read: {}", ripple_render::base::error::os_reason(&e)),
        ));
    }
    let ip = args.bind.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let listener = TcpListener::bind(SocketAddr::new(ip, args.port.unwrap_or(0))).map_err(|e| {
        Error::usage(
            format!("cannot listen on {ip}:{}: {}", args.port.unwrap_or(0), ripple_render::base::error::os_reason(&e)),
            Some("choose another --port, or leave it out for a free one"),
        )
    })?;
    let address = listener.local_addr().map_err(|e| Error::usage(format!("cannot listen: {e}"), None))?;
    if !ip.is_loopback() {
        super::warn(&format!(
            "serving on {ip}: every machine that can reach it can see the render (the page has no login)"
        ));
    }
    let shown_ip = if ip.is_unspecified() { IpAddr::V4(Ipv4Addr::LOCALHOST) } else { ip };
    let url = format!("http://{}/", SocketAddr::new(shown_ip, address.port()));
    super::print_out(&format!("serving {} at {url} (Ctrl-C to stop)\n", args.scene.display()))?;
    // Three quarters of the budget for the frames kept for the page; the heights kept for a
    // redraw take at most a quarter.
    let budget = args.max_memory / 4 * 3;
    let live = Arc::new(Live { state: Mutex::new(State::default()), changed: Condvar::new(), budget });
    let dirty = Arc::new(AtomicBool::new(true));
    let stop = Arc::new(AtomicBool::new(false));
    // What the first render reads, as it is before it starts: a change from here on renders
    // again, however quickly it follows.
    let inputs = inputs_of(&args.scene, &args.set, args.max_memory);
    let seen = identities(&args.scene, &inputs);
    {
        let (live, dirty, stop) = (live.clone(), dirty.clone(), stop.clone());
        let (scene, set, budget) = (args.scene.clone(), args.set.clone(), args.max_memory);
        std::thread::spawn(move || renderer(&live, &dirty, &stop, (&scene, &set, budget)));
    }
    {
        let (dirty, stop, scene) = (dirty.clone(), stop.clone(), args.scene.clone());
        let (set, budget) = (args.set.clone(), args.max_memory);
        std::thread::spawn(move || watcher(&scene, &dirty, &stop, (&set, budget), (inputs, seen)));
    }
    if args.open {
        open_in_browser(&url);
    }
    http::serve(listener, live, http::Hosts::for_address(ip, address.port()));
    Ok(())
}

/// Each file's length, modified time and inode, if it exists.
type Identities = Vec<Option<(u64, SystemTime, u64)>>;

/// The files a render of the scene reads, by identity (length, modified time, inode): any
/// change to one (an edit, a save by rename, a file made or removed) changes the list.
fn identities(scene: &Path, inputs: &[PathBuf]) -> Identities {
    std::iter::once(scene)
        .chain(inputs.iter().map(PathBuf::as_path))
        .map(|path| {
            let meta = std::fs::metadata(path).ok()?;
            #[cfg(unix)]
            let inode = std::os::unix::fs::MetadataExt::ino(&meta);
            #[cfg(not(unix))]
            let inode = 0;
            Some((meta.len(), meta.modified().ok()?, inode))
        })
        .collect()
}

/// The files a scene reads besides itself (its background, its mask), as the scene is now with
/// its `--set` overrides.
fn inputs_of(scene: &Path, set: &[String], budget: u64) -> Vec<PathBuf> {
    read_scene(scene, set, budget).map(|s| files_read(&s)).unwrap_or_default()
}

/// The files `scene` reads besides itself.
fn files_read(scene: &Scene) -> Vec<PathBuf> {
    scene.input_files().into_iter().skip(1).map(Path::to_path_buf).collect()
}

/// Polls the scene and its files ten times a second; a change marks the render dirty and stops
/// the one running.
fn watcher(
    scene: &Path,
    dirty: &AtomicBool,
    stop: &AtomicBool,
    (set, budget): (&[String], u64),
    (mut inputs, mut seen): (Vec<PathBuf>, Identities),
) {
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = identities(scene, &inputs);
        if now != seen {
            // A scene saved by an editor may be written in steps: settle a moment.
            std::thread::sleep(Duration::from_millis(30));
            inputs = inputs_of(scene, set, budget);
            seen = identities(scene, &inputs);
            stop.store(true, Ordering::SeqCst);
            dirty.store(true, Ordering::SeqCst);
        }
    }
}

/// The last render's scene, the identities of its inputs and its heights: a scene that differs
/// only in its `[look]` is drawn from them without simulating.
struct Kept {
    scene: Scene,
    inputs: Identities,
    heights: Heights,
}

/// Renders the scene whenever it is dirty, into the page's state.
fn renderer(live: &Arc<Live>, dirty: &AtomicBool, stop: &AtomicBool, (scene, set, budget): (&Path, &[String], u64)) {
    let mut generation = 0;
    let mut kept: Option<Kept> = None;
    loop {
        if !dirty.swap(false, Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        stop.store(false, Ordering::SeqCst);
        generation += 1;
        match render_into(live, generation, stop, (scene, set, budget), &mut kept) {
            Ok(()) | Err(Error::Interrupted) => {}
            Err(e) => live.update(|state| state.error = Some(super::error_text(&e))),
        }
    }
}

/// One render of the scene as it is now, frame by frame into the page's state: drawn from the
/// heights `kept` when only the look changed, else simulated (and its heights kept, within a
/// quarter of the budget).
fn render_into(
    live: &Arc<Live>,
    generation: u64,
    stop: &AtomicBool,
    (path, set, budget): (&Path, &[String], u64),
    kept: &mut Option<Kept>,
) -> Result<(), Error> {
    let scene = read_scene(path, set, budget)?;
    let inputs = Inputs::for_scene_within(&scene, budget)?;
    let identity = identities(path, &files_read(&scene));
    let reuse = kept
        .as_ref()
        .filter(|k| k.scene.same_but_look(&scene) && k.inputs[1..] == identity[1..])
        .map(|k| k.heights.clone());
    let summary = Summary {
        scene: path.display().to_string(),
        width: scene.width,
        height: scene.height,
        fps: scene.fps,
        frames: scene.frames,
        looping: scene.looping,
        crossfade: scene.seamless.crossfade.map(|o| (scene.frames - o, scene.frames - 1)),
        markers: markers(&scene),
        warnings: advice::for_scene(&scene),
        redrawn: reuse.is_some(),
    };
    live.update(|state| {
        state.error = None;
        let frames = vec![None; scene.frames as usize];
        state.render = Some(Shown { generation, summary, frames, bytes: 0, done: false });
    });
    let stream = stream_of(&scene, &inputs);
    let hand = {
        let live = live.clone();
        Arc::new(move |frame: u64, png: Vec<u8>| live.add_frame(generation, frame, png))
    };
    let encoder = PngSequence::handing(hand, &stream, inputs.background.pixels.clone());
    let pool = Pool::new(default_threads());
    let run = Run { inputs: &inputs, manifest: None, pool, stop, seam: false, checkpoints: None };
    let mut heights = None;
    let redraw = match reuse.clone() {
        Some(heights) => Redraw::From(heights),
        None => Redraw::Keep(&mut heights, budget / 4),
    };
    render_again(&scene, encoder, run, &mut |_| {}, redraw)?;
    if let Some(heights) = heights.or(reuse) {
        *kept = Some(Kept { scene: scene.clone(), inputs: identity, heights });
    }
    live.update(|state| {
        if let Some(shown) = state.render.as_mut().filter(|s| s.generation == generation) {
            shown.done = true;
        }
    });
    Ok(())
}

/// Opens `url` in the system's browser, or says how to.
fn open_in_browser(url: &str) {
    let program = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let opened = std::process::Command::new(program)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if opened.is_err() {
        super::warn(&format!("--open: cannot run {program}; open {url} yourself"));
    }
}
