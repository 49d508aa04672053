//! A part's seal: the last block of a GIF, APNG, WebP, MP4 or WebM rendered with `--frames`
//! holds the XXH3-64 of every byte before it, so that `join` can tell a part that is whole from
//! one cut at a block boundary, missing a frame, or relabelled: none of those keeps its seal.
//!
//! The seal's text is `ripple-render seal=HHHHHHHHHHHHHHHH` (16 hex digits), in a block every
//! reader of the format passes over, placed so the file stays valid:
//!
//! | format | block | where |
//! |---|---|---|
//! | GIF | comment extension | before the trailer |
//! | APNG | `tEXt` chunk, keyword `ripple-render seal` | before `IEND` |
//! | WebP | chunk `RRSL` (padded to even length) | last, the RIFF size grown to hold it |
//! | MP4 | `free` box | last |
//! | WebM | `Void` element | last, inside the Segment (its size grown to hold it) |
//!
//! The hash covers the bytes before the seal as they are in the sealed file (the RIFF and
//! Segment sizes already grown). A whole render has no seal, and `join` writes none.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

use xxhash_rust::xxh3::Xxh3;

use super::gif::comment_extension;
use super::png::write_chunk;
use super::webp::chunk;
use crate::base::files::hash_into;

/// The files a part's seal goes in: each format of an output that `--frames` may split, by the
/// blocks it is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// GIF: blocks and extensions.
    Gif,
    /// PNG (an APNG): chunks.
    Png,
    /// WebP: a RIFF of chunks.
    Webp,
    /// MP4: boxes (ffmpeg writes the file).
    Mp4,
    /// WebM: EBML elements (ffmpeg writes the file).
    Webm,
}

/// What a seal's text starts with.
const PREFIX: &[u8] = b"ripple-render seal=";
/// The seal's text: the prefix and 16 hex digits.
const TEXT_LEN: usize = PREFIX.len() + 16;
/// The APNG seal's `tEXt` keyword and its separator.
const KEYWORD: &[u8] = b"ripple-render seal\0";
/// The WebM Segment element's ID.
const SEGMENT: [u8; 4] = [0x18, 0x53, 0x80, 0x67];

/// The seal's text for a file whose bytes before it hash to `hash`.
fn text(hash: u64) -> Vec<u8> {
    [PREFIX, format!("{hash:016x}").as_bytes()].concat()
}

/// The bytes a container puts after the seal (its end: GIF's trailer, PNG's `IEND`), and the
/// seal block's length.
fn layout(container: Container) -> (&'static [u8], usize) {
    let end: &[u8] = match container {
        Container::Gif => &[0x3b],
        Container::Png => &[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82],
        _ => &[],
    };
    (end, block(container, &text(0)).len())
}

/// The seal block around `text`, written by the codec's own block writer where there is one
/// (ffmpeg writes MP4 and WebM, so their two blocks are made here).
fn block(container: Container, text: &[u8]) -> Vec<u8> {
    match container {
        Container::Gif => comment_extension(text),
        Container::Png => {
            let mut out = Vec::new();
            // Writing to memory cannot fail.
            let _ = write_chunk(&mut out, b"tEXt", &[KEYWORD, text].concat());
            out
        }
        Container::Webp => {
            let mut out = Vec::new();
            chunk(&mut out, b"RRSL", text);
            out
        }
        // An ISO BMFF `free` box: its size, its type, its bytes.
        Container::Mp4 => [&((8 + text.len()) as u32).to_be_bytes()[..], b"free", text].concat(),
        // An EBML `Void` element: its ID, its size in one byte (marker bit set), its bytes.
        Container::Webm => [&[0xec, 0x80 | text.len() as u8][..], text].concat(),
    }
}

/// Seals the finished part `file` of `container` (see the module's docs).
pub fn seal(file: &mut File, container: Container) -> std::io::Result<()> {
    let (end, seal_len) = layout(container);
    let len = file.seek(SeekFrom::End(0))?;
    let content = len.checked_sub(end.len() as u64).ok_or_else(|| std::io::Error::other("the part is empty"))?;
    match container {
        Container::Webp => grow_riff(file, seal_len as u64)?,
        Container::Webm => grow_segment(file, seal_len as u64)?,
        _ => {}
    }
    let hash = hash_of(file, content)?;
    file.seek(SeekFrom::Start(content))?;
    file.write_all(&block(container, &text(hash)))?;
    file.write_all(end)?;
    file.flush()
}

/// Why the part `file` of `container` does not hold its seal, if it does not.
pub fn check(file: &mut File, container: Container) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot be read ({e})");
    let (end, seal_len) = layout(container);
    let len = file.seek(SeekFrom::End(0)).map_err(io)?;
    let unsealed = "is not whole: it does not end in its seal (it was cut short, or written by another version)";
    let Some(content) = len.checked_sub((seal_len + end.len()) as u64) else { return Err(unsealed.into()) };
    let mut tail = vec![0u8; seal_len + end.len()];
    file.seek(SeekFrom::Start(content)).map_err(io)?;
    file.read_exact(&mut tail).map_err(io)?;
    let found = text_in(container, &tail[..seal_len]).filter(|_| tail[seal_len..] == *end).ok_or(unsealed)?;
    if container == Container::Webp && riff_size(file).map_err(io)? != len - 8 {
        return Err(unsealed.into());
    }
    if found != text(hash_of(file, content).map_err(io)?) {
        return Err("is not as it was rendered: its seal does not match (a frame was removed or changed, or its \
                    label was edited)"
            .into());
    }
    Ok(())
}

/// The seal's text in `block`, if `block` is a seal block of `container`.
fn text_in(container: Container, block: &[u8]) -> Option<Vec<u8>> {
    let at = match container {
        Container::Gif => 3,
        Container::Png => 8 + KEYWORD.len(),
        Container::Webp | Container::Mp4 => 8,
        Container::Webm => 2,
    };
    let text = block.get(at..at + TEXT_LEN)?;
    let hex = text.strip_prefix(PREFIX)?;
    let hash = u64::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
    (block == self::block(container, &self::text(hash))).then(|| text.to_vec())
}

/// The XXH3-64 of the first `len` bytes of `file`.
fn hash_of(file: &mut File, len: u64) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut hash = Xxh3::new();
    if hash_into(&mut hash, file.take(len))? != len {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(hash.digest())
}

/// The size a RIFF header gives.
fn riff_size(file: &mut File) -> std::io::Result<u64> {
    let mut size = [0u8; 4];
    file.seek(SeekFrom::Start(4))?;
    file.read_exact(&mut size)?;
    Ok(u64::from(u32::from_le_bytes(size)))
}

/// Adds `by` to a WebP's RIFF size.
fn grow_riff(file: &mut File, by: u64) -> std::io::Result<()> {
    let grown = u32::try_from(riff_size(file)? + by).map_err(|_| std::io::Error::other("the part is too large"))?;
    file.seek(SeekFrom::Start(4))?;
    file.write_all(&grown.to_le_bytes())
}

/// Grows the size of a WebM file's Segment by `by`, when it is known (ffmpeg writes it as an
/// 8-byte number once the file is done); an unknown size already runs to the end of the file.
fn grow_segment(file: &mut File, by: u64) -> std::io::Result<()> {
    // The EBML header comes first and is a few dozen bytes; the Segment follows it.
    let mut head = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    (&mut *file).take(1024).read_to_end(&mut head)?;
    let head = head.as_slice();
    let Some(at) = head.windows(4).position(|w| w == SEGMENT).map(|p| p + 4) else {
        return Err(std::io::Error::other("the WebM has no Segment"));
    };
    let Some(size) = head.get(at..at + 8).filter(|s| s[0] == 0x01) else {
        return Err(std::io::Error::other("the WebM's Segment size is not an 8-byte number"));
    };
    let value = u64::from_be_bytes(size.try_into().unwrap_or_default()) & 0x00ff_ffff_ffff_ffff;
    if value == 0x00ff_ffff_ffff_ffff {
        return Ok(());
    }
    let grown = (value + by) | 0x0100_0000_0000_0000;
    file.seek(SeekFrom::Start(at as u64))?;
    file.write_all(&grown.to_be_bytes())
}
