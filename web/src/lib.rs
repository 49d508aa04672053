//! The web player's WebAssembly interface: a scene played live ([`ripple_render::live::Live`])
//! behind plain functions of numbers and pointers, which `ripple-water.js` calls. No
//! wasm-bindgen: the module imports nothing, and its few exports are listed here.
//!
//! Bytes cross by the module's memory: the page asks [`rw_alloc`] for room, writes into it and
//! hands over the pointer and length, which the call reads and frees. Pictures cross decoded
//! ([`rw_give_pixels`]): the page's browser decodes them, so the module carries no decoder. Text comes back through
//! one message buffer ([`rw_message`], [`rw_message_len`]): a scene's files, an error, the
//! exported lines. A session is a pointer from [`rw_new`], freed by [`rw_free_session`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use ripple_render::base::picture::Given;
use ripple_render::live::Live;

/// The most memory a scene's images may take to decode (a quarter of it, as in the CLI's
/// budget): the module's memory is at most 4 GiB, and a page's far less.
const BUDGET: u64 = 1 << 30;

thread_local! {
    /// The text the last call left for the page.
    static MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
}

fn say(text: String) {
    MESSAGE.with(|m| *m.borrow_mut() = text);
}

/// A scene on its way to being played: its text, the images handed over, then the player.
pub struct Session {
    name: PathBuf,
    text: String,
    given: Given,
    live: Option<Live>,
}

/// Takes the `len` bytes at `ptr` that [`rw_alloc`] gave, freeing them.
///
/// # Safety
/// `ptr` must come from `rw_alloc(len)`, not yet taken or freed.
unsafe fn take(ptr: *mut u8, len: usize) -> Vec<u8> {
    if len == 0 {
        return Vec::new();
    }
    // SAFETY: rw_alloc made this allocation as a Vec of this length and capacity.
    unsafe { Vec::from_raw_parts(ptr, len, len) }
}

/// Takes the `len` bytes at `ptr` as text (invalid UTF-8 replaced).
///
/// # Safety
/// As for [`take`].
unsafe fn take_text(ptr: *mut u8, len: usize) -> String {
    // SAFETY: the caller's promise is take's.
    let bytes = unsafe { take(ptr, len) };
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The session behind `session`.
///
/// # Safety
/// `session` must come from [`rw_new`], not yet freed.
unsafe fn session<'a>(session: *mut Session) -> &'a mut Session {
    // SAFETY: rw_new boxed it and only rw_free_session frees it.
    unsafe { &mut *session }
}

/// The player of `session`, once opened.
///
/// # Safety
/// As for [`session`].
unsafe fn live<'a>(s: *mut Session) -> Option<&'a mut Live> {
    // SAFETY: the caller's promise is session's.
    unsafe { session(s) }.live.as_mut()
}

/// Room for `len` bytes, for the page to write into and hand to a call that takes them.
#[unsafe(no_mangle)]
pub extern "C" fn rw_alloc(len: usize) -> *mut u8 {
    let mut room = std::mem::ManuallyDrop::new(vec![0u8; len]);
    room.as_mut_ptr()
}

/// The message the last call left (UTF-8), [`rw_message_len`] bytes.
#[unsafe(no_mangle)]
pub extern "C" fn rw_message() -> *const u8 {
    MESSAGE.with(|m| m.borrow().as_ptr())
}

/// The length of [`rw_message`].
#[unsafe(no_mangle)]
pub extern "C" fn rw_message_len() -> usize {
    MESSAGE.with(|m| m.borrow().len())
}

/// Reads the scene `text` named `name` (both taken): a session, and as the message the images
/// it reads, one path a line, as the scene names them; or null, and the error as the message.
///
/// # Safety
/// Both pointers as for [`take`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_new(name: *mut u8, name_len: usize, text: *mut u8, text_len: usize) -> *mut Session {
    // SAFETY: the caller's promise.
    let (name, text) = unsafe { (PathBuf::from(take_text(name, name_len)), take_text(text, text_len)) };
    match Live::files(&text, &name) {
        Ok(files) => {
            let lines: Vec<String> = files.iter().map(|f| f.to_string_lossy().into_owned()).collect();
            say(lines.join("\n"));
            Box::into_raw(Box::new(Session { name, text, given: Given::none(), live: None }))
        }
        Err(e) => {
            say(e.to_string());
            std::ptr::null_mut()
        }
    }
}

/// Hands over the image at `path` (as the scene names it), decoded by the page: `width` ×
/// `height` pixels of upright, unpremultiplied 8-bit RGBA, `len` = 4·width·height bytes; both
/// taken. 1, or 0 and the error as the message.
///
/// # Safety
/// `s` as for [`session`], the pointers as for [`take`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_give_pixels(
    s: *mut Session,
    path: *mut u8,
    path_len: usize,
    width: u32,
    height: u32,
    rgba: *mut u8,
    len: usize,
) -> u32 {
    // SAFETY: the caller's promise.
    let (s, path, rgba) = unsafe { (session(s), take_text(path, path_len), take(rgba, len)) };
    let _ = len;
    match s.given.add_rgba(Path::new(&path), (width, height), rgba) {
        Ok(()) => 1,
        Err(why) => {
            say(format!("{path}: {why}"));
            0
        }
    }
}

/// Decodes the images and simulates the first frame: 1, or 0 and the error as the message.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_open(s: *mut Session) -> u32 {
    // SAFETY: the caller's promise.
    let s = unsafe { session(s) };
    match Live::open(&s.text, &s.name, &s.given, BUDGET) {
        Ok(live) => {
            s.live = Some(live);
            s.given = Given::none();
            1
        }
        Err(e) => {
            say(e.to_string());
            0
        }
    }
}

/// Frees the session.
///
/// # Safety
/// `s` as for [`session`]; it is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_free_session(s: *mut Session) {
    if !s.is_null() {
        // SAFETY: rw_new boxed it.
        drop(unsafe { Box::from_raw(s) });
    }
}

/// The scene's size, rate and length, once opened: `what` 0 width, 1 height, 2 fps, 3 frames,
/// 4 the frame simulated last, 5 the stones and swipe pieces the pointer added.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_get(s: *mut Session, what: u32) -> u32 {
    // SAFETY: the caller's promise.
    let Some(live) = (unsafe { live(s) }) else { return 0 };
    let scene = live.scene();
    let n = match what {
        0 => u64::from(scene.width),
        1 => u64::from(scene.height),
        2 => u64::from(scene.fps),
        3 => scene.frames,
        4 => live.frame(),
        5 => live.added() as u64,
        _ => 0,
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Simulates the next frame (the first after the last) and returns its number.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_advance(s: *mut Session) -> u32 {
    // SAFETY: the caller's promise.
    unsafe { live(s) }.map_or(0, |l| l.advance() as u32)
}

/// Simulates up to frame `frame` and returns the frame reached.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_seek(s: *mut Session, frame: u32) -> u32 {
    // SAFETY: the caller's promise.
    unsafe { live(s) }.map_or(0, |l| l.seek(u64::from(frame)) as u32)
}

/// Draws the frame simulated last: a pointer to its RGBA pixels, width × height × 4 bytes,
/// valid until the next call.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_draw(s: *mut Session) -> *const u8 {
    // SAFETY: the caller's promise.
    unsafe { live(s) }.map_or(std::ptr::null(), |l| l.draw().as_ptr())
}

/// The XXH3-64 of the last frame drawn's RGB bytes: what `ripple-render --hashes` writes.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_hash(s: *mut Session) -> u64 {
    // SAFETY: the caller's promise.
    unsafe { live(s) }.map_or(0, |l| l.hash())
}

/// The pointer, in canvas pixels: `what` 0 a click (a stone; 1 if added), 1 a drag starts,
/// 2 it moves, 3 it ends, 4 forget what was added.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_pointer(s: *mut Session, what: u32, x: i32, y: i32) -> u32 {
    // SAFETY: the caller's promise.
    let Some(live) = (unsafe { live(s) }) else { return 0 };
    let (x, y) = (i64::from(x), i64::from(y));
    match what {
        0 => return u32::from(live.press(x, y)),
        1 => live.drag_start(x, y),
        2 => live.drag_to(x, y),
        3 => live.drag_end(),
        4 => live.clear(),
        _ => return 0,
    }
    1
}

/// Leaves as the message what the pointer added, as `[[stone]]` and `[[swipe]]` lines.
///
/// # Safety
/// `s` as for [`session`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rw_export(s: *mut Session) {
    // SAFETY: the caller's promise.
    say(unsafe { live(s) }.map_or_else(String::new, |l| l.export()));
}
