//! `ripple-render serve` (issue #40): the server answers only to its own name and serves
//! nothing but the page, its state and the render's frames (byte for byte the files `-o
//! frames/` writes); an edited scene is rendered again and an error is shown with the command
//! line's text; a client that hangs up mid-answer harms nothing; Ctrl-C ends it at once. In a
//! real headless browser (skipped with a message when none is installed) the page draws the
//! exact pixels of a frame.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{browser, read_png, ripple, scene_dir};
use crate::tools::{Tool, needs};

const SCENE: &str = "[video]\nwidth = 48\nheight = 32\nframes = 12\n[background]\npattern = \"tiles\"\n\
    [[stone]]\nat = 0.04\nx = 20\ny = 16\nradius = 4\n[[swipe]]\nfrom = 0.1\nuntil = 0.3\npath = [[4, 4], [40, 28]]\n";

/// A running `serve`, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &Path) -> Server {
    start_with(dir, &[])
}

fn start_with(dir: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["serve", "scene.toml"])
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.split("127.0.0.1:").nth(1).and_then(|r| r.split('/').next()).and_then(|p| p.parse().ok());
    Server { child, port: port.unwrap_or_else(|| panic!("no address in {line:?}")) }
}

/// A raw request; returns the status and the body.
fn request(port: u16, target: &str, host: &str) -> (u16, Vec<u8>) {
    raw(port, &format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"))
}

/// A request given whole, head and all; returns the status and the body.
fn raw(port: u16, head: &str) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let at = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let status = String::from_utf8_lossy(&bytes[9..12]).parse().unwrap();
    (status, bytes[at..].to_vec())
}

fn get(server: &Server, target: &str) -> (u16, Vec<u8>) {
    request(server.port, target, &format!("127.0.0.1:{}", server.port))
}

fn state(server: &Server) -> serde_json::Value {
    serde_json::from_slice(&get(server, "/state").1).unwrap()
}

/// Waits until the state satisfies `done`, for at most `limit`.
fn wait_for(server: &Server, limit: Duration, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let now = state(server);
        if done(&now) {
            return now;
        }
        assert!(started.elapsed() < limit, "waited {limit:?}: {now}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_server_serves_the_exact_frames_and_nothing_else() {
    let dir = scene_dir("serve-http", SCENE);
    assert_eq!(ripple(&["scene.toml", "-o", "frames/", "-q"], &dir).code, 0);
    let server = start(&dir);
    let first = wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    let generation = first["generation"].as_u64().unwrap();
    assert_eq!(first["render"]["frames"], 12);
    assert!(first["render"]["markers"].as_array().unwrap().iter().any(|m| m["kind"] == "swipe"));
    for frame in [0, 5, 11] {
        let (status, png) = get(&server, &format!("/frame/{generation}/{frame}.png"));
        assert_eq!(status, 200);
        assert!(png == std::fs::read(dir.join(format!("frames/frame_{frame:04}.png"))).unwrap(), "frame {frame}");
    }
    let (status, page) = get(&server, "/");
    assert!(status == 200 && String::from_utf8_lossy(&page).contains("<canvas"));
    // Another name for this address (DNS rebinding) is refused, whatever it asks for.
    for host in ["evil.example", &format!("evil.example:{}", server.port), "127.0.0.1:1"] {
        assert_eq!(request(server.port, "/", host).0, 421, "{host}");
        assert_eq!(request(server.port, &format!("/frame/{generation}/0.png"), host).0, 421, "{host}");
    }
    // No path reaches the disk.
    for target in [
        "/../scene.toml",
        "/scene.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/frame/1/../../scene.toml",
        "/frame/1/99.png",
        "//etc/passwd",
        &format!("http://127.0.0.1:{}/scene.toml", server.port),
    ] {
        let (status, body) = get(&server, target);
        assert_eq!(status, 404, "{target}: {}", String::from_utf8_lossy(&body));
    }
    // RFC 9112: an absolute target names the host, whatever the Host header says; an HTTP/1.1
    // request without a host, or with two, is a bad request.
    let port = server.port;
    let absolute = |target: &str, host: &str| request(port, target, host).0;
    assert_eq!(absolute(&format!("http://127.0.0.1:{port}/state"), "evil.example"), 200);
    assert_eq!(absolute(&format!("HTTP://localhost:{port}"), "evil.example"), 200);
    assert_eq!(absolute("http://evil.example/state", &format!("127.0.0.1:{port}")), 421);
    assert_eq!(absolute(&format!("http://127.0.0.1:{}/state", port ^ 1), &format!("127.0.0.1:{port}")), 421);
    let (status, body) = raw(port, "GET /state HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("names its host"));
    assert_eq!(raw(port, "GET /state HTTP/1.1\r\nHost:\r\n\r\n").0, 400);
    let twice = format!("GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    assert_eq!(raw(port, &twice).0, 400);
    assert_eq!(raw(port, &format!("GET http://127.0.0.1:{port}/state HTTP/1.1\r\n\r\n")).0, 200);
    // A client that hangs up halfway through a frame, or never finishes its request, harms
    // nothing: the next one is served.
    for _ in 0..20 {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(stream, "GET /frame/{generation}/3.png HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n", server.port).unwrap();
        let mut some = [0u8; 20];
        let _ = stream.read(&mut some);
    }
    let _half = TcpStream::connect(("127.0.0.1", server.port)).unwrap().write_all(b"GET / HT");
    assert_eq!(get(&server, &format!("/frame/{generation}/3.png")).0, 200);
}

#[test]
fn an_edited_scene_is_rendered_again_and_an_error_shown_as_the_cli_says_it() {
    let dir = scene_dir("serve-live", SCENE);
    let server = start(&dir);
    let first = wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    // Saved by renaming over it, as many editors do.
    std::fs::write(dir.join("new.toml"), SCENE.replace("radius = 4", "radius = 6")).unwrap();
    std::fs::rename(dir.join("new.toml"), dir.join("scene.toml")).unwrap();
    let again =
        wait_for(&server, Duration::from_secs(5), |s| s["generation"] != first["generation"] && s["done"] == true);
    assert!(again["error"].is_null(), "{again}");
    assert_eq!(ripple(&["scene.toml", "-o", "frames/", "-q"], &dir).code, 0);
    let generation = again["generation"].as_u64().unwrap();
    assert!(
        get(&server, &format!("/frame/{generation}/4.png")).1
            == std::fs::read(dir.join("frames/frame_0004.png")).unwrap()
    );
    // A broken scene: the command line's exact error, the last good render kept.
    std::fs::write(dir.join("scene.toml"), SCENE.replace("radius = 4", "radius = \"big\"")).unwrap();
    let broken = wait_for(&server, Duration::from_secs(5), |s| !s["error"].is_null());
    let cli = ripple(&["plan", "scene.toml"], &dir).stderr;
    assert_eq!(broken["error"].as_str().unwrap().trim_end(), cli.trim_end());
    assert_eq!(broken["generation"], again["generation"]);
    assert_eq!(get(&server, &format!("/frame/{generation}/4.png")).0, 200);
}

/// Listening on every address (`--bind 0.0.0.0`), the server answers a browser that names the
/// address it reached, which it prints for another machine; a name that is no address of this
/// machine (a DNS rebinding) is still refused.
#[test]
fn bound_to_every_address_it_answers_this_machines_addresses_and_says_one() {
    let dir = scene_dir("serve-bind-any", SCENE);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["serve", "scene.toml", "--bind", "0.0.0.0"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let (mut first, mut second) = (String::new(), String::new());
    out.read_line(&mut first).unwrap();
    out.read_line(&mut second).unwrap();
    let server = Server {
        child,
        port: first.split("127.0.0.1:").nth(1).and_then(|r| r.split('/').next()).unwrap().parse().unwrap(),
    };
    let url = second.strip_prefix("from another machine: http://").unwrap_or_else(|| panic!("{second:?}"));
    let address = url.trim().trim_end_matches('/');
    wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    // Reached on that address and named by it: answered; another name for it: refused.
    let outside = address.parse::<std::net::SocketAddr>();
    if outside.is_err() {
        // The server found no address of this machine's that another could reach.
        Tool::RouteOut.missing();
    }
    if let Ok(addr) = outside
        && needs("bound_to_every_address_it_answers_this_machines_addresses_and_says_one (outside)", &[Tool::RouteOut])
    {
        let ask = |host: &str| {
            let mut stream = TcpStream::connect(addr).unwrap();
            write!(stream, "GET /state HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
            let mut bytes = Vec::new();
            stream.read_to_end(&mut bytes).unwrap();
            String::from_utf8_lossy(&bytes[9..12]).into_owned()
        };
        assert_eq!(ask(address), "200");
        assert_eq!(ask(&format!("rebound.example:{}", server.port)), "421");
        assert_eq!(ask(&format!("{}:1", addr.ip())), "421");
    }
    assert_eq!(request(server.port, "/state", &format!("127.0.0.1:{}", server.port)).0, 200);
    assert_eq!(request(server.port, "/state", &format!("evil.example:{}", server.port)).0, 421);
}

/// A scene replaced by a named pipe while it is watched is refused unread (nobody writes the
/// pipe: reading it would hold the renderer forever), and the next save renders again.
#[test]
fn a_pipe_in_place_of_the_scene_is_refused_and_the_next_save_renders() {
    let dir = scene_dir("serve-fifo", SCENE);
    let server = start(&dir);
    let first = wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    let fifo = dir.join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::fs::rename(&fifo, dir.join("scene.toml")).unwrap();
    let refused = wait_for(&server, Duration::from_secs(5), |s| !s["error"].is_null());
    let error = refused["error"].as_str().unwrap();
    assert!(error.contains("scene.toml") && error.contains("named pipe"), "{error}");
    // The server still answers, and a save renders again.
    std::fs::write(dir.join("new.toml"), SCENE.replace("radius = 4", "radius = 5")).unwrap();
    std::fs::rename(dir.join("new.toml"), dir.join("scene.toml")).unwrap();
    let again = wait_for(&server, Duration::from_secs(10), |s| {
        s["generation"] != first["generation"] && s["done"] == true && s["error"].is_null()
    });
    assert_eq!(again["render"]["frames"], 12);
}

#[test]
fn a_change_to_the_look_alone_is_drawn_again_without_simulating() {
    let dir = scene_dir("serve-look", &format!("{SCENE}[look]\nshading = 64\n"));
    let server = start(&dir);
    let first = wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    assert_eq!(first["render"]["redrawn"], false);
    std::fs::write(dir.join("scene.toml"), format!("{SCENE}[look]\nshading = 128\nsmooth = 1\n")).unwrap();
    let look =
        wait_for(&server, Duration::from_secs(5), |s| s["generation"] != first["generation"] && s["done"] == true);
    assert_eq!(look["render"]["redrawn"], true, "{look}");
    // The frames are the render's, to the byte.
    assert_eq!(ripple(&["scene.toml", "-o", "frames/", "-q"], &dir).code, 0);
    let generation = look["generation"].as_u64().unwrap();
    for frame in 0..12 {
        let (_, png) = get(&server, &format!("/frame/{generation}/{frame}.png"));
        assert!(png == std::fs::read(dir.join(format!("frames/frame_{frame:04}.png"))).unwrap(), "frame {frame}");
    }
    // A change to the water is simulated again.
    std::fs::write(
        dir.join("scene.toml"),
        format!("{SCENE}[water]\ndamping_shift = 4\n[look]\nshading = 128\nsmooth = 1\n"),
    )
    .unwrap();
    let water =
        wait_for(&server, Duration::from_secs(5), |s| s["generation"] != look["generation"] && s["done"] == true);
    assert_eq!(water["render"]["redrawn"], false, "{water}");
}

#[test]
fn a_picture_named_by_set_is_watched_too() {
    let dir = scene_dir("serve-set", &SCENE.replace("pattern = \"tiles\"", "color = \"#203040\""));
    crate::support::write_png(&dir.join("p.png"), 48, 32, &[90; 48 * 32 * 3]);
    let server = start_with(&dir, &["--set", "background.image=p.png"]);
    let first = wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    crate::support::write_png(&dir.join("p.png"), 48, 32, &[200; 48 * 32 * 3]);
    let again =
        wait_for(&server, Duration::from_secs(5), |s| s["generation"] != first["generation"] && s["done"] == true);
    assert!(again["error"].is_null(), "{again}");
}

#[test]
fn ctrl_c_ends_the_server_at_once() {
    let dir = scene_dir("serve-signal", SCENE);
    let mut server = start(&dir);
    wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    assert!(Command::new("kill").args(["-INT", &server.child.id().to_string()]).status().unwrap().success());
    let started = Instant::now();
    let status = server.child.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(2));
}

/// FNV-1a over RGB bytes, as the page hashes what it drew.
fn fnv(rgb: &[u8]) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for &b in rgb {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

#[test]
fn the_page_draws_the_exact_pixels_of_a_frame_in_a_real_browser() {
    if !needs("the_page_draws_the_exact_pixels_of_a_frame_in_a_real_browser", &[Tool::Chromium]) {
        return;
    }
    let browser = browser().unwrap();
    let browser = browser.as_str();
    let dir = scene_dir("serve-browser", SCENE);
    assert_eq!(ripple(&["scene.toml", "-o", "frames/", "-q"], &dir).code, 0);
    let server = start(&dir);
    let done = wait_for(&server, Duration::from_secs(20), |s| s["done"] == true);
    let generation = done["generation"].as_u64().unwrap();
    let page = |fragment: &str, profile: &str| {
        let url = format!("http://127.0.0.1:{}/#{fragment}", server.port);
        let out = Command::new(browser)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=4000"])
            .arg(format!("--user-data-dir={}", dir.join(profile).display()))
            .args(["--dump-dom", &url])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // It plays: after a while the frame drawn is another than the first.
    let played = page("play&once", "profile-play");
    assert!(played.contains(&format!("data-drawn=\"{generation}/")), "{played}");
    assert!(!played.contains(&format!("data-drawn=\"{generation}/0:")), "did not play: {played}");
    // Scrubbed to a frame, it draws that frame's exact pixels.
    for frame in [0, 7] {
        let dom = page(&format!("frame={frame}&once"), &format!("profile-{frame}"));
        let (_, _, rgb) = read_png(&dir.join(format!("frames/frame_{frame:04}.png")));
        let expected = format!("data-drawn=\"{generation}/{frame}:{}\"", fnv(&rgb));
        assert!(dom.contains(&expected), "frame {frame}: no {expected} in the page: {}", &dom[..dom.len().min(400)]);
        // On screen within half a second of opening the page (the render was done).
        let first =
            dom.split("data-first-ms=\"").nth(1).and_then(|r| r.split('"').next()).and_then(|v| v.parse::<u64>().ok());
        assert!(first.is_some_and(|ms| ms < 500), "frame {frame}: first drawn at {first:?} ms");
    }
    // An edited scene appears; a broken one shows its error over the last good render.
    std::fs::write(dir.join("scene.toml"), SCENE.replace("radius = 4", "radius = 7")).unwrap();
    let edited =
        wait_for(&server, Duration::from_secs(5), |s| s["generation"] != done["generation"] && s["done"] == true);
    let dom = page("frame=3&once", "profile-edited");
    assert!(dom.contains(&format!("data-drawn=\"{}/3:", edited["generation"])), "{dom}");
    std::fs::write(dir.join("scene.toml"), SCENE.replace("radius = 4", "radius = \"big\"")).unwrap();
    wait_for(&server, Duration::from_secs(5), |s| !s["error"].is_null());
    let dom = page("frame=3&once", "profile-error");
    assert!(dom.contains("<pre id=\"error\">error: scene.toml:11:10: stone[0].radius"), "{dom}");
    assert!(dom.contains(&format!("data-drawn=\"{}/3:", edited["generation"])), "{dom}");
}
