//! WebP parts: the first part's `VP8X` and `ANIM`, then every part's `ANMF` frames as they are,
//! but for each later part's first frame: whole in the part (so that the part plays on its own),
//! it is encoded again as the frame the whole render has there, from the previous part's last
//! picture, so the joined WebP is the whole render's, byte for byte. The part's own chunk is
//! left out, and the `RIFF` size filled in at the end.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::{Again, Container, Out, Pictures, Source, unreadable};
use crate::base::error::{Error, Result};
use crate::decode::webp::WebpFrames;
use crate::encode::Effort;
use crate::encode::webp::{PART_CHUNK, RIFF_HINT, frame_after};

/// The pictures of the WebP at `path`, in RGB (a render's frames are opaque), after its first
/// frame and, with `last`, after its last, as libwebp composes them (the whole file is read:
/// `diff`'s reader holds it).
fn pictures(path: &Path, last: bool) -> Result<Pictures<Vec<[u8; 3]>>> {
    let bytes = std::fs::read(path).map_err(|e| unreadable(path, &e))?;
    let mut frames = WebpFrames::parse(path, bytes)?;
    let rgb = |rgba: Vec<u8>| rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect::<Vec<[u8; 3]>>();
    let first = frames.next_frame(path)?.ok_or_else(|| Error::input(path, "has no frame"))?.rgba;
    let mut latest = None;
    while last && let Some(frame) = frames.next_frame(path)? {
        latest = Some(frame.rgba);
    }
    let last = last.then(|| rgb(latest.unwrap_or_else(|| first.clone())));
    Ok(Pictures { first: rgb(first), last })
}

/// The canvas a part's `VP8X` chunk (whole, at the start of `chunks`) gives: its data's width − 1
/// and height − 1, 24 bits each, after 4 bytes of flags.
fn canvas_size(chunks: &[u8]) -> (u32, u32) {
    let side = |at: usize| chunks.get(at..at + 3).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], 0]) + 1);
    (side(12), side(15))
}

/// Checks the `RIFF` header.
fn open(source: &mut Source<'_>) -> Result<()> {
    let head = source.take(12)?;
    if &head[..4] != b"RIFF" || &head[8..12] != b"WEBP" {
        return Err(Error::input(source.path, "is not a WebP file"));
    }
    Ok(())
}

/// The next chunk's type and data length (its padding excluded), or `None` at the end.
fn next(source: &mut Source<'_>) -> Result<Option<([u8; 4], u64)>> {
    let Some(first) = source.next_byte()? else { return Ok(None) };
    let rest = source.take(7)?;
    let len = u32::from_le_bytes([rest[3], rest[4], rest[5], rest[6]]);
    Ok(Some(([first, rest[0], rest[1], rest[2]], u64::from(len))))
}

/// The whole chunk whose header [`next`] read: header, data, padding.
fn whole(source: &mut Source<'_>, kind: [u8; 4], len: u64) -> Result<Vec<u8>> {
    let len32 = u32::try_from(len).map_err(|_| Error::input(source.path, "has a chunk longer than RIFF allows"))?;
    let mut chunk = kind.to_vec();
    chunk.extend(len32.to_le_bytes());
    chunk.extend(source.take(usize::try_from(len + (len & 1)).unwrap_or(usize::MAX))?);
    Ok(chunk)
}

/// The part's label: its part chunk's text.
pub fn label(source: &mut Source<'_>) -> Result<Option<String>> {
    open(source)?;
    while let Some((kind, len)) = next(source)? {
        if &kind == PART_CHUNK {
            let text = source.take(usize::try_from(len).unwrap_or(usize::MAX))?;
            return Ok(Some(String::from_utf8_lossy(&text).into_owned()));
        }
        source.skip(len + (len & 1))?;
    }
    Ok(None)
}

/// WebP parts joined: the first part's `VP8X` and `ANIM`, then every part's frames; the
/// `RIFF` size filled in at the end.
#[derive(Default)]
pub(super) struct Webp {
    /// How hard the render's encoder worked (its label says), for its parts' first frames.
    effort: Effort,
    /// Bytes after the `RIFF` size so far.
    length: u64,
    /// The first part's `VP8X` and `ANIM`, for the canvas.
    own: Vec<u8>,
    /// The chunk header read after a part's head: its first frame's.
    next: Option<([u8; 4], u64)>,
}

impl Webp {
    /// Joins the parts of a render whose encoder worked at `effort`.
    pub(super) fn at(effort: Effort) -> Webp {
        Webp { effort, ..Webp::default() }
    }
}

impl Container for Webp {
    /// The part's `VP8X` and `ANIM` chunks, whole.
    type Header = Vec<u8>;
    /// The canvas in RGB (a render's frames are opaque).
    type Picture = Vec<[u8; 3]>;
    const SHARED: &'static str = "canvas or loop";

    fn header(&mut self, source: &mut Source<'_>) -> Result<Vec<u8>> {
        open(source)?;
        // VP8X and ANIM come before the frames; other chunks are passed over.
        let mut own = Vec::new();
        self.next = None;
        while let Some((kind, len)) = next(source)? {
            match &kind {
                b"VP8X" | b"ANIM" => own.extend(whole(source, kind, len)?),
                b"ANMF" => {
                    self.next = Some((kind, len));
                    break;
                }
                _ => source.skip(len + (len & 1))?,
            }
        }
        Ok(own)
    }

    fn write_header(&mut self, own: &Vec<u8>, out: &mut Out) -> Result<()> {
        out.write_all(b"RIFF\0\0\0\0WEBP").and_then(|()| out.write_all(own)).map_err(Error::output)?;
        self.length = 4 + own.len() as u64;
        self.own = own.clone();
        Ok(())
    }

    fn pictures(&self, path: &Path, last: bool) -> Result<Option<Pictures<Vec<[u8; 3]>>>> {
        pictures(path, last).map(Some)
    }

    fn copy_frames(
        &mut self,
        _index: usize,
        source: &mut Source,
        out: &mut Out,
        again: Again<Vec<[u8; 3]>>,
    ) -> Result<u64> {
        let mut first_frame = again;
        let mut frames = 0;
        // Each ANMF is one frame, copied whole; the part's own chunk and any other is left out.
        let mut chunk = self.next.take();
        while let Some((kind, len)) = chunk {
            if &kind == b"ANMF" {
                frames += 1;
                let mut frame = whole(source, kind, len)?;
                if let Some((before, now)) = first_frame.take() {
                    // ANMF's data: x, y, width − 1, height − 1, then the duration, 24 bits each.
                    let duration = frame.get(20..23).map_or(0, |d| u32::from_le_bytes([d[0], d[1], d[2], 0]));
                    frame = frame_after(&before, now, canvas_size(&self.own), (duration, self.effort))?;
                }
                out.write_all(&frame).map_err(Error::output)?;
                self.length += frame.len() as u64;
            } else {
                source.skip(len + (len & 1))?;
            }
            chunk = next(source)?;
        }
        Ok(frames)
    }

    fn finish(self, out: &mut Out) -> Result<(u32, u32)> {
        let io = Error::output;
        let size = u32::try_from(self.length).map_err(|_| {
            Error::usage("the joined WebP is larger than 4 GiB, which RIFF cannot hold", Some(RIFF_HINT))
        })?;
        out.seek(SeekFrom::Start(4)).map_err(io)?;
        out.write_all(&size.to_le_bytes()).map_err(io)?;
        out.seek(SeekFrom::End(0)).map_err(io)?;
        Ok(canvas_size(&self.own))
    }
}
