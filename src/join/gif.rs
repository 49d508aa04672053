//! GIF parts: the header, palette and loop of the first, the frames of each in turn, copied as
//! they are, but for each later part's first frame: whole in the part, it is encoded again as
//! the difference from the frame before it (the previous part's last), exactly as the whole
//! render encodes it, so the joined GIF is the whole render's, byte for byte.

use std::io::Write;
use std::path::Path;

use super::{Again, Container, Out, Pictures, Source, unreadable};
use crate::base::error::{Error, Result};
use crate::base::limits::MAX_AREA;
use crate::encode::Effort;
use crate::encode::gif::frame_after;

/// The palette indices on the canvas of the GIF at `path` after its first frame, and after its
/// last with `last`.
fn pictures(path: &Path, last: bool) -> Result<Pictures<Vec<u8>>> {
    let file = std::fs::File::open(path).map_err(|e| unreadable(path, &e))?;
    let mut options = ::gif::DecodeOptions::new();
    options.set_color_output(::gif::ColorOutput::Indexed);
    let most = std::num::NonZeroU64::new(MAX_AREA as u64).unwrap_or(std::num::NonZeroU64::MIN);
    options.set_memory_limit(::gif::MemoryLimit::Bytes(most));
    let decode = |e: ::gif::DecodingError| Error::input(path, format!("cannot be decoded: {e}"));
    let mut decoder = options.read_info(std::io::BufReader::new(file)).map_err(decode)?;
    let width = usize::from(decoder.width());
    let mut canvas = vec![0u8; width * usize::from(decoder.height())];
    let mut first = None;
    while let Some(frame) = decoder.read_next_frame().map_err(decode)? {
        let (left, top, w) = (usize::from(frame.left), usize::from(frame.top), usize::from(frame.width));
        for (y, row) in frame.buffer.chunks(w.max(1)).enumerate() {
            let at = (top + y) * width + left;
            let Some(out) = canvas.get_mut(at..at + row.len()) else {
                return Err(Error::input(path, "has a frame off its canvas"));
            };
            for (o, &p) in out.iter_mut().zip(row) {
                if Some(p) != frame.transparent {
                    *o = p;
                }
            }
        }
        if first.is_none() {
            first = Some(canvas.clone());
            if !last {
                break;
            }
        }
    }
    let first = first.ok_or_else(|| Error::input(path, "has no frame"))?;
    Ok(Pictures { first, last: last.then_some(canvas) })
}

/// The signature, the screen descriptor and the global palette.
fn header(source: &mut Source<'_>) -> Result<Vec<u8>> {
    let mut head = source.take(13)?;
    if !head.starts_with(b"GIF8") {
        return Err(Error::input(source.path, "is not a GIF file"));
    }
    let (width, height) = (u16::from_le_bytes([head[6], head[7]]), u16::from_le_bytes([head[8], head[9]]));
    if i64::from(width) * i64::from(height) > MAX_AREA {
        return Err(Error::input(
            source.path,
            format!("claims a {width}×{height} screen, larger than any render (at most {MAX_AREA} pixels)"),
        ));
    }
    let packed = head[10];
    if packed & 0x80 != 0 {
        head.extend(source.take(3 << ((packed & 7) + 1))?);
    }
    Ok(head)
}

/// The sub-blocks that follow, up to their terminator, as bytes (for the small blocks:
/// extensions).
fn sub_blocks(source: &mut Source<'_>) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    loop {
        let len = source.take(1)?[0];
        bytes.push(len);
        if len == 0 {
            return Ok(bytes);
        }
        bytes.extend(source.take(usize::from(len))?);
    }
}

/// Copies the sub-blocks that follow into `out`, one at a time (an image's data).
fn copy_sub_blocks(source: &mut Source<'_>, out: &mut impl Write) -> Result<()> {
    let mut block = [0u8; 256];
    loop {
        source.fill(&mut block[..1])?;
        let len = usize::from(block[0]);
        source.fill(&mut block[1..=len])?;
        out.write_all(&block[..=len]).map_err(Error::output)?;
        if len == 0 {
            return Ok(());
        }
    }
}

/// The text of a comment's sub-blocks.
fn text(blocks: &[u8]) -> String {
    let mut text = Vec::new();
    let mut at = 0;
    while at < blocks.len() && blocks[at] != 0 {
        let len = usize::from(blocks[at]);
        text.extend_from_slice(&blocks[at + 1..(at + 1 + len).min(blocks.len())]);
        at += 1 + len;
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// The part's label: the first comment before its first frame that names ripple-render.
pub fn label(source: &mut Source<'_>) -> Result<Option<String>> {
    header(source)?;
    loop {
        match source.next_byte()? {
            Some(0x21) => {
                let kind = source.take(1)?[0];
                if kind == 0xf9 {
                    return Ok(None);
                }
                let blocks = sub_blocks(source)?;
                let text = text(&blocks);
                if kind == 0xfe && text.starts_with("ripple-render ") {
                    return Ok(Some(text));
                }
            }
            _ => return Ok(None),
        }
    }
}

/// GIF parts joined: the first part's header, loop and the whole render's comment, then every
/// part's frames.
pub(super) struct Gif {
    /// The whole render's comment, written where the first part's stands.
    comment: String,
    /// The joined file's head (signature, screen, palette): the first part's.
    head: Vec<u8>,
}

impl Gif {
    pub(super) fn new(comment: String) -> Gif {
        Gif { comment, head: Vec::new() }
    }
}

impl Container for Gif {
    type Header = Vec<u8>;
    /// The palette indices on the canvas.
    type Picture = Vec<u8>;
    const SHARED: &'static str = "canvas or palette";

    fn header(&mut self, source: &mut Source<'_>) -> Result<Vec<u8>> {
        header(source)
    }

    fn write_header(&mut self, header: &Vec<u8>, out: &mut Out) -> Result<()> {
        self.head = header.clone();
        out.write_all(header).map_err(Error::output)
    }

    fn pictures(&self, path: &Path, last: bool) -> Result<Option<Pictures<Vec<u8>>>> {
        pictures(path, last).map(Some)
    }

    fn copy_frames(&mut self, index: usize, source: &mut Source, out: &mut Out, again: Again<Vec<u8>>) -> Result<u64> {
        let mut frames = 0;
        let io = Error::output;
        // Before the first frame: the loop (kept from the first part) and comments (the whole
        // render's written in their place).
        let mut framed = false;
        // A later part's first frame (its control extension, then its image) is encoded again.
        let mut first_frame = again.map(|(before, now)| (before, now, None::<Vec<u8>>));
        loop {
            let start = source.at;
            match source.next_byte()? {
                Some(0x3b) => return Ok(frames),
                Some(0x21) => {
                    let kind = source.take(1)?[0];
                    let blocks = sub_blocks(source)?;
                    let frame_part = kind == 0xf9;
                    if frame_part && !framed && index == 0 {
                        write_comment(out, &self.comment)?;
                    }
                    framed |= frame_part;
                    // Comments and application extensions belong to a file, not to its frames.
                    let keep = match kind {
                        0xfe => false,
                        0xff => index == 0 && !framed,
                        _ => framed,
                    };
                    if let Some((_, _, control)) = first_frame.as_mut().filter(|_| frame_part && is_control(&blocks)) {
                        *control = Some(blocks);
                    } else if keep {
                        out.write_all(&[0x21, kind]).and_then(|()| out.write_all(&blocks)).map_err(io)?;
                    }
                }
                Some(0x2c) => {
                    if !framed && index == 0 {
                        write_comment(out, &self.comment)?;
                    }
                    framed = true;
                    frames += 1;
                    let descriptor = source.take(9)?;
                    let packed = descriptor[8];
                    if let Some((before, now, control)) = first_frame.take() {
                        // Passed over, and written as the whole render writes it.
                        if packed & 0x80 != 0 {
                            source.take(3 << ((packed & 7) + 1))?;
                        }
                        let code_size = source.take(1)?[0];
                        sub_blocks(source)?;
                        let (delay, transparent) = control.as_deref().map_or((0, None), read_control);
                        let effort = Effort::recorded_in(&self.comment);
                        let frame = frame_after(&self.head, (transparent, code_size), &before, now, delay, effort)?;
                        out.write_all(&frame).map_err(io)?;
                        continue;
                    }
                    out.write_all(&[0x2c]).and_then(|()| out.write_all(&descriptor)).map_err(io)?;
                    if packed & 0x80 != 0 {
                        out.write_all(&source.take(3 << ((packed & 7) + 1))?).map_err(io)?;
                    }
                    // The LZW code size, then the data.
                    out.write_all(&source.take(1)?).map_err(io)?;
                    copy_sub_blocks(source, out)?;
                }
                Some(other) => {
                    return Err(Error::input(
                        source.path,
                        format!("has an unknown block (0x{other:02x}) at byte {start}"),
                    ));
                }
                None => return Err(Error::input(source.path, "is cut short: it has no trailer")),
            }
        }
    }

    fn finish(self, out: &mut Out) -> Result<(u32, u32)> {
        out.write_all(&[0x3b]).map_err(Error::output)?;
        let side = |at: usize| u32::from(u16::from_le_bytes([self.head[at], self.head[at + 1]]));
        Ok(if self.head.len() >= 10 { (side(6), side(8)) } else { (0, 0) })
    }
}

/// Whether a graphic control extension's sub-blocks (`blocks`) are well formed: 4 bytes and the
/// end.
fn is_control(blocks: &[u8]) -> bool {
    blocks.len() == 6 && blocks[0] == 4
}

/// A graphic control extension's delay and transparent index, from its sub-blocks.
fn read_control(blocks: &[u8]) -> (u16, Option<u8>) {
    let delay = u16::from_le_bytes([blocks[2], blocks[3]]);
    (delay, (blocks[1] & 1 == 1).then_some(blocks[4]))
}

/// A comment extension holding `text`, in sub-blocks of at most 255 bytes.
fn write_comment(out: &mut impl Write, text: &str) -> Result<()> {
    let io = Error::output;
    out.write_all(&[0x21, 0xfe]).map_err(io)?;
    for piece in text.as_bytes().chunks(255) {
        out.write_all(&[piece.len() as u8]).and_then(|()| out.write_all(piece)).map_err(io)?;
    }
    out.write_all(&[0]).map_err(io)
}
