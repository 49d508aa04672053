//! `serve`: a live page of a scene's render. A local web server (std only: one page, its state,
//! its frames) plays the exact frames `-o frames/` would write, shows the events on a timeline,
//! and renders again whenever the scene or a file it reads changes.
//!
//! Three threads share one [`Live`] state, as typst's watch loop does: the renderer renders the
//! scene into PNG frames in memory (the PNG sequence's own encoder, [`PngSequence::handing`])
//! and hands the watcher the files that render read ([`Watch`]); the watcher looks at their
//! identities (length, time, inode: a save by rename changes the inode) and, at a change, stops
//! the render running (its stop flag) and tells the renderer, which waits on that channel; the
//! server answers the page. A scene error is kept for the page with the command line's text, and
//! the last good render stays on it.

mod http;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use ripple_render::Error;
use ripple_render::base::pool::{Pool, default_threads};
use ripple_render::base::threads::spawn;
use ripple_render::encode::png::PngSequence;
use ripple_render::inspect::advice;
use ripple_render::inspect::plan::{Marker, markers};
use ripple_render::render::budget::read_scene_bytes;
use ripple_render::render::formats::stream_of;
use ripple_render::render::{Heights, Inputs, Redraw, Run, render_again};
use ripple_render::scene::Scene;

use super::say::{error_text, print_out, warn};

/// `ripple-render serve SCENE`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The scene file (TOML).
    #[arg(value_name = "SCENE")]
    scene: PathBuf,
    /// The port to listen on (default: a free one).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u16).range(0..))]
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
    #[arg(long, value_name = "SIZE", default_value = "1G", allow_negative_numbers = true,
          value_parser = super::memory_size)]
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
        warn(&format!("serving on {ip}: every machine that can reach it can see the render (the page has no login)"));
    }
    let shown_ip = if ip.is_unspecified() { IpAddr::V4(Ipv4Addr::LOCALHOST) } else { ip };
    let url = format!("http://{}/", SocketAddr::new(shown_ip, address.port()));
    print_out(&format!("serving {} at {url} (Ctrl-C to stop)\n", args.scene.display()))?;
    if ip.is_unspecified() {
        // Listening everywhere: an address of this machine another one can open.
        match outward_address(ip) {
            Some(lan) => {
                print_out(&format!("from another machine: http://{}/\n", SocketAddr::new(lan, address.port())))?
            }
            None => print_out(&format!("from another machine: http://THIS-MACHINE'S-ADDRESS:{}/\n", address.port()))?,
        }
    }
    // Three quarters of the budget for the frames kept for the page; the heights kept for a
    // redraw take at most a quarter.
    let live = Arc::new(Live {
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
        budget: args.max_memory / 4 * 3,
    });
    let source = Source { scene: args.scene.clone(), set: args.set.clone(), budget: args.max_memory };
    let stop = Arc::new(AtomicBool::new(false));
    let (changes, changed) = mpsc::channel();
    let (watches, watched) = mpsc::channel();
    {
        let (live, stop) = (live.clone(), stop.clone());
        spawn("serve-render", move || renderer(&live, &source, &stop, &changed, &watches))?;
    }
    spawn("serve-watch", move || watcher(&watched, &stop, &changes))?;
    if args.open {
        open_in_browser(&url);
    }
    http::serve(listener, live, http::Hosts::for_address(ip, address.port()));
    Ok(())
}

/// The address this machine reaches other machines from (of the family of `any`, or IPv4): the
/// local end of a UDP socket aimed at a documentation address, which sends nothing. `None` with
/// no route out.
fn outward_address(any: IpAddr) -> Option<IpAddr> {
    let through = |bind: &str, to: &str| {
        let socket = std::net::UdpSocket::bind(bind).ok()?;
        socket.connect(to).ok()?;
        socket.local_addr().ok().map(|a| a.ip()).filter(|ip| !ip.is_unspecified() && !ip.is_loopback())
    };
    let v6 = any.is_ipv6().then(|| through("[::]:0", "[2001:db8::1]:9")).flatten();
    v6.or_else(|| through("0.0.0.0:0", "192.0.2.1:9"))
}

/// What `serve` renders: the scene file with its `--set` overrides, within its memory budget.
struct Source {
    scene: PathBuf,
    set: Vec<String>,
    budget: u64,
}

impl Source {
    /// The scene as it is now. It must be a regular file: a pipe or device put in its place is
    /// refused unread (the watcher sees the next save).
    fn read(&self) -> Result<Scene, Error> {
        read_scene_bytes(Scene::read_regular_file(&self.scene)?, &self.scene, &self.set, self.budget)
    }
}

/// A file's length, modified time and inode, if it exists: any change to the file (an edit, a
/// save by rename, the file made or removed) changes it.
type Identity = Option<(u64, SystemTime, u64)>;

/// The identity of the file at `path` now.
fn identity(path: &Path) -> Identity {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.len(), meta.modified().ok()?, inode))
}

/// The files a render read (the scene first), and their identities as they were just before it
/// read them: a change from then on shows, however quickly it follows.
#[derive(Clone, PartialEq)]
struct Watch {
    files: Vec<PathBuf>,
    seen: Vec<Identity>,
}

impl Watch {
    /// Whether a file changed since it was seen; if one did, they are seen as they are now.
    fn changed(&mut self) -> bool {
        let now: Vec<Identity> = self.files.iter().map(|f| identity(f)).collect();
        if now == self.seen {
            return false;
        }
        // A scene saved by an editor may be written in steps: settle a moment.
        std::thread::sleep(Duration::from_millis(30));
        self.seen = self.files.iter().map(|f| identity(f)).collect();
        true
    }
}

/// How often the watcher looks at the files.
const POLL: Duration = Duration::from_millis(100);

/// Watches the files the last render read (handed over by the renderer, nothing parsed here):
/// a change stops the render running and tells the renderer to start again.
fn watcher(watched: &mpsc::Receiver<Watch>, stop: &AtomicBool, changes: &mpsc::Sender<()>) {
    let Ok(mut watch) = watched.recv() else { return };
    loop {
        match watched.recv_timeout(POLL) {
            Ok(next) => watch = next,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        if watch.changed() {
            stop.store(true, Ordering::SeqCst);
            if changes.send(()).is_err() {
                return;
            }
        }
    }
}

/// The last render's scene, the identities of its inputs and its heights: a scene that differs
/// only in its `[look]` is drawn from them without simulating.
struct Kept {
    scene: Scene,
    watch: Watch,
    heights: Heights,
}

/// Renders the scene, then again each time the watcher says a file changed, into the page's
/// state; hands the watcher the files each render read.
fn renderer(
    live: &Arc<Live>,
    source: &Source,
    stop: &AtomicBool,
    changed: &mpsc::Receiver<()>,
    watches: &mpsc::Sender<Watch>,
) {
    let mut generation = 0;
    let mut kept: Option<Kept> = None;
    loop {
        stop.store(false, Ordering::SeqCst);
        generation += 1;
        match render_into(live, generation, stop, source, watches, &mut kept) {
            Ok(()) | Err(Error::Interrupted) => {}
            Err(e) => live.update(|state| state.error = Some(error_text(&e))),
        }
        // Wait to be told; changes that came meanwhile are one render.
        if changed.recv().is_err() {
            return;
        }
        while changed.try_recv().is_ok() {}
    }
}

/// One render of the scene as it is now, frame by frame into the page's state: drawn from the
/// heights `kept` when only the look changed, else simulated (and its heights kept, within a
/// quarter of the budget). The watcher is handed the files it read before they are read.
fn render_into(
    live: &Arc<Live>,
    generation: u64,
    stop: &AtomicBool,
    source: &Source,
    watches: &mpsc::Sender<Watch>,
    kept: &mut Option<Kept>,
) -> Result<(), Error> {
    let scene_seen = identity(&source.scene);
    let scene = match source.read() {
        Ok(scene) => scene,
        Err(e) => {
            let _ = watches.send(Watch { files: vec![source.scene.clone()], seen: vec![scene_seen] });
            return Err(e);
        }
    };
    let read = scene.input_files().into_iter().skip(1).map(Path::to_path_buf);
    let files: Vec<PathBuf> = std::iter::once(source.scene.clone()).chain(read).collect();
    let seen = std::iter::once(scene_seen).chain(files[1..].iter().map(|f| identity(f))).collect();
    let watch = Watch { files, seen };
    let _ = watches.send(watch.clone());
    let inputs = Inputs::for_scene_within(&scene, source.budget)?;
    let reuse = kept
        .as_ref()
        .filter(|k| {
            k.scene.same_but_look(&scene)
                && k.watch.files[1..] == watch.files[1..]
                && k.watch.seen[1..] == watch.seen[1..]
        })
        .map(|k| k.heights.clone());
    let summary = Summary {
        scene: source.scene.display().to_string(),
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
        None => Redraw::Keep(&mut heights, source.budget / 4),
    };
    render_again(&scene, encoder, run, &mut |_| {}, redraw)?;
    if let Some(heights) = heights.or(reuse) {
        *kept = Some(Kept { scene: scene.clone(), watch, heights });
    }
    live.update(|state| {
        if let Some(shown) = state.render.as_mut().filter(|s| s.generation == generation) {
            shown.done = true;
        }
    });
    Ok(())
}

/// Opens `url` in the system's browser, or says how to: `open` on macOS, `start` (a command
/// of `cmd`, its empty first argument the window's title) on Windows, `xdg-open` elsewhere.
fn open_in_browser(url: &str) {
    let (program, before): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("cmd", &["/C", "start", ""])
    } else {
        ("xdg-open", &[])
    };
    let opened = std::process::Command::new(program)
        .args(before)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if opened.is_err() {
        warn(&format!("--open: cannot run {program}; open {url} yourself"));
    }
}
