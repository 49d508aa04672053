//! The page's server: HTTP/1.1 over `std::net`, one short-lived connection a request, a thread
//! each (at most [`MOST_CONNECTIONS`] at once). Four routes and nothing else: the page, its
//! state (a long poll), a frame's PNG, and an empty icon. No path reaches the disk. A request
//! whose `Host` is not the server's own name is refused (DNS rebinding: a page elsewhere whose
//! name was pointed at 127.0.0.1).

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::Live;
use ripple_render::base::threads::spawn;

/// Connections served at once; more are answered 503 and closed.
const MOST_CONNECTIONS: usize = 64;
/// The longest request head read.
const MOST_HEAD: u64 = 16 << 10;
/// How long the page's state request waits for a change before it answers anyway.
const LONG_POLL: Duration = Duration::from_secs(15);

/// The page, its style and its script: all in the binary.
const PAGE: &str = include_str!("page.html");

/// The `Host` values the server answers to: its own address and port, `localhost` when it
/// listens on a loopback address, and when it listens on every address (`0.0.0.0`, `::`), the
/// address each connection came in on, as an IP: so a browser on another machine that names
/// one of this machine's addresses is answered, and a name that is no address of it (a DNS
/// rebinding) is not.
pub(super) struct Hosts {
    names: Vec<String>,
    port: u16,
    any: bool,
}

impl Hosts {
    pub(super) fn for_address(ip: IpAddr, port: u16) -> Hosts {
        let mut names = vec![host_name(ip, port)];
        if ip.is_loopback() || ip.is_unspecified() {
            names.extend([format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}")]);
        }
        Hosts { names, port, any: ip.is_unspecified() }
    }

    /// Whether `host` (a request's `Host`) names this server, for a connection that came in on
    /// the address `local`.
    fn allow(&self, host: &str, local: Option<IpAddr>) -> bool {
        if self.names.iter().any(|name| name.eq_ignore_ascii_case(host)) {
            return true;
        }
        // Listening everywhere: the address this connection reached, as the client named it.
        let canonical = |ip: IpAddr| match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        let named = parse_host(host);
        self.any
            && named.is_some_and(|(ip, port)| port == self.port && local.is_some_and(|l| canonical(l) == canonical(ip)))
    }
}

/// `ip:port` as a `Host` header writes it (`[v6]:port`).
fn host_name(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
        IpAddr::V4(v4) => format!("{v4}:{port}"),
    }
}

/// The IP and port a `Host` header names, if it names an IP (port 80 when it gives none).
fn parse_host(host: &str) -> Option<(IpAddr, u16)> {
    if let Ok(addr) = host.parse::<std::net::SocketAddr>() {
        return Some((addr.ip(), addr.port()));
    }
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    bare.parse::<IpAddr>().ok().map(|ip| (ip, 80))
}

/// Answers requests until the process ends.
pub(super) fn serve(listener: TcpListener, live: Arc<Live>, hosts: Hosts) {
    let hosts = Arc::new(hosts);
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming().flatten() {
        if open.fetch_add(1, Ordering::SeqCst) >= MOST_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            let _ = respond(&stream, 503, "text/plain", b"too many connections\n");
            continue;
        }
        let (live, hosts, open) = (live.clone(), hosts.clone(), open.clone());
        let answering = open.clone();
        let started = spawn("serve-answer", move || {
            // A client that goes away mid-answer is its own business: its error ends only this.
            let _ = answer(&stream, &live, &hosts);
            answering.fetch_sub(1, Ordering::SeqCst);
        });
        if started.is_err() {
            // The connection is dropped unanswered: the browser tries again.
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A request's method, target (origin-form: a path and query) and the host it names.
struct Request {
    method: String,
    target: String,
    host: String,
}

/// Why a request is answered 400 (RFC 9112): no head, no host, or more than one.
const UNREADABLE: &str = "bad request\n";
const NO_HOST: &str = "an HTTP/1.1 request names its host (a Host header or an absolute URL)\n";
const HOSTS: &str = "a request has one Host header\n";

/// Reads a request head (within [`MOST_HEAD`] bytes and ten seconds). Its host is the `Host`
/// header's, or where the target is in absolute form (`http://host:port/path`) the target's,
/// whatever the header says (RFC 9112, 3.2.2).
fn read_request(stream: &TcpStream) -> Result<Request, &'static str> {
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|_| UNREADABLE)?;
    let mut reader = BufReader::new(std::io::Read::take(stream, MOST_HEAD));
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|_| UNREADABLE)?;
    let mut words = line.split_whitespace();
    let (Some(method), Some(target)) = (words.next(), words.next()) else {
        return Err(UNREADABLE);
    };
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_err(|_| UNREADABLE)? == 0 {
            return Err(UNREADABLE);
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("host")
        {
            headers.push(value.trim().to_string());
        }
    }
    if headers.len() > 1 {
        return Err(HOSTS);
    }
    let (target, host) = match absolute_form(target) {
        Some((authority, path)) => (path, authority.to_string()),
        None => (target.to_string(), headers.pop().filter(|h| !h.is_empty()).ok_or(NO_HOST)?),
    };
    Ok(Request { method: method.to_string(), target, host })
}

/// `http://authority/path?query` as (authority, `/path?query`), the path `/` when it is empty.
fn absolute_form(target: &str) -> Option<(&str, String)> {
    let scheme = target.get(..7).filter(|s| s.eq_ignore_ascii_case("http://"))?;
    let rest = &target[scheme.len()..];
    let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    Some((authority, if path.starts_with('/') { path.to_string() } else { format!("/{path}") }))
}

/// Answers one request.
fn answer(stream: &TcpStream, live: &Live, hosts: &Hosts) -> std::io::Result<()> {
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let request = match read_request(stream) {
        Ok(request) => request,
        Err(why) => return respond(stream, 400, "text/plain", why.as_bytes()),
    };
    let local = stream.local_addr().ok().map(|a| a.ip());
    if !hosts.allow(&request.host, local) {
        return respond(stream, 421, "text/plain", b"this server answers only to its own address\n");
    }
    if request.method != "GET" && request.method != "HEAD" {
        return respond(stream, 405, "text/plain", b"only GET\n");
    }
    let (path, query) = request.target.split_once('?').unwrap_or((&request.target, ""));
    let (status, kind, body): (u16, &str, Body) = match path {
        "/" => (200, "text/html; charset=utf-8", Body::Static(PAGE.as_bytes())),
        "/favicon.ico" => (204, "image/x-icon", Body::Static(b"")),
        "/state" => {
            let since = query.strip_prefix("since=").and_then(|v| v.parse::<u64>().ok());
            (200, "application/json", Body::Owned(state_after(live, since).into_bytes()))
        }
        _ => match frame_of(path).map(|(generation, frame)| png(live, generation, frame)) {
            Some(Some(png)) => (200, "image/png", Body::Frame(png)),
            Some(None) => (404, "text/plain", Body::Static(b"no such frame (yet)\n")),
            None => (404, "text/plain", Body::Static(b"not found\n")),
        },
    };
    let bytes = match &body {
        Body::Static(b) => b,
        Body::Owned(b) => b.as_slice(),
        Body::Frame(b) => b.as_slice(),
    };
    // A HEAD request gets the head alone, its length the body's.
    respond_head(stream, status, kind, bytes, request.method == "HEAD")
}

/// A response's body.
enum Body {
    Static(&'static [u8]),
    Owned(Vec<u8>),
    Frame(Arc<Vec<u8>>),
}

/// `/frame/G/N.png`: render G's frame N.
fn frame_of(path: &str) -> Option<(u64, u64)> {
    let (generation, frame) = path.strip_prefix("/frame/")?.strip_suffix(".png")?.split_once('/')?;
    let number = |s: &str| s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse().ok()).flatten();
    Some((number(generation)?, number(frame)?))
}

fn png(live: &Live, generation: u64, frame: u64) -> Option<Arc<Vec<u8>>> {
    let state = live.lock();
    let shown = state.render.as_ref().filter(|s| s.generation == generation)?;
    shown.frames.get(usize::try_from(frame).ok()?)?.clone()
}

/// The page's state as JSON, once its version is past `since` (or after [`LONG_POLL`]).
fn state_after(live: &Live, since: Option<u64>) -> String {
    let deadline = Instant::now() + LONG_POLL;
    let mut state = live.lock();
    while since.is_some_and(|v| state.version <= v) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        state = live.changed.wait_timeout(state, left).map_or_else(|e| e.into_inner().0, |(s, _)| s);
    }
    #[derive(serde::Serialize)]
    struct Json<'a> {
        version: u64,
        generation: Option<u64>,
        /// Frames made from the first on, without a gap.
        ready: usize,
        done: bool,
        render: Option<&'a super::Summary>,
        error: Option<&'a str>,
    }
    let shown = state.render.as_ref();
    let json = Json {
        version: state.version,
        generation: shown.map(|s| s.generation),
        ready: shown.map_or(0, |s| s.frames.iter().take_while(|f| f.is_some()).count()),
        done: shown.is_some_and(|s| s.done),
        render: shown.map(|s| &s.summary),
        error: state.error.as_deref(),
    };
    serde_json::to_string(&json).unwrap_or_else(|_| "{}".to_string())
}

/// Writes a whole response and closes the connection.
fn respond(stream: &TcpStream, status: u16, kind: &str, body: &[u8]) -> std::io::Result<()> {
    respond_head(stream, status, kind, body, false)
}

/// Writes a response (without its body for `head_only`) and closes the connection.
fn respond_head(mut stream: &TcpStream, status: u16, kind: &str, body: &[u8], head_only: bool) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        421 => "Misdirected Request",
        _ => "Service Unavailable",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_target_names_its_host_and_path() {
        let form = |t: &str| absolute_form(t).map(|(a, p)| (a.to_string(), p));
        let pair = |a: &str, p: &str| Some((a.to_string(), p.to_string()));
        assert_eq!(form("http://127.0.0.1:8123/state?since=3"), pair("127.0.0.1:8123", "/state?since=3"));
        assert_eq!(form("HTTP://localhost:8123"), pair("localhost:8123", "/"));
        assert_eq!(form("http://localhost:8123/"), pair("localhost:8123", "/"));
        assert_eq!(form("http://localhost:8123?since=1"), pair("localhost:8123", "/?since=1"));
        assert_eq!(form("/state"), None);
        assert_eq!(form("https://localhost:8123/"), None);
    }

    #[test]
    fn only_frame_paths_name_frames() {
        assert_eq!(frame_of("/frame/3/12.png"), Some((3, 12)));
        for path in ["/frame/3/12", "/frame/-1/2.png", "/frame/3/../x.png", "/frame/3/+2.png", "/frames/1/2.png"] {
            assert_eq!(frame_of(path), None, "{path}");
        }
    }

    #[test]
    fn hosts_are_the_servers_own_names() {
        let hosts = Hosts::for_address(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8123);
        let allow = |h: &str| hosts.allow(h, Some(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)));
        assert!(allow("127.0.0.1:8123") && allow("LOCALHOST:8123") && allow("[::1]:8123"));
        assert!(!allow("evil.example:8123") && !allow("127.0.0.1:80") && !allow("localhost"));
        // Listening everywhere: the address a connection reached, named as an IP, with the port.
        let hosts = Hosts::for_address(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), 8123);
        let lan = Some(IpAddr::V4(std::net::Ipv4Addr::new(192, 168, 1, 20)));
        assert!(hosts.allow("192.168.1.20:8123", lan) && hosts.allow("localhost:8123", lan));
        assert!(!hosts.allow("192.168.1.21:8123", lan) && !hosts.allow("192.168.1.20:80", lan));
        assert!(!hosts.allow("evil.example:8123", lan) && !hosts.allow("192.168.1.20.nip.io:8123", lan));
        let v6 = Some("fe80::1".parse().unwrap());
        assert!(Hosts::for_address("::".parse().unwrap(), 8123).allow("[fe80::1]:8123", v6));
    }
}
