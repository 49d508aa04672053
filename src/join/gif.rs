//! GIF parts: the header, palette and loop of the first, the frames of each in turn, copied as
//! they are (each part's first frame is whole, so it needs nothing before it).

use std::io::Write;
use std::path::Path;

use super::{Part, bad, read};
use crate::base::error::{Error, Result};

/// One block of a GIF after its header, as a byte range of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// An extension: its label and where the whole block lies.
    Extension(u8, usize, usize),
    /// An image (descriptor, local palette, data).
    Image(usize, usize),
}

/// The header's length: signature, screen descriptor and global palette.
fn header_len(path: &Path, bytes: &[u8]) -> Result<usize> {
    if bytes.len() < 13 {
        return Err(bad(path, "is cut short: it has no GIF header"));
    }
    let packed = bytes[10];
    let palette = if packed & 0x80 != 0 { 3 << ((packed & 7) + 1) } else { 0 };
    Ok(13 + palette)
}

/// The end of the sub-blocks that start at `at` (after their terminator).
fn sub_blocks_end(path: &Path, bytes: &[u8], mut at: usize) -> Result<usize> {
    loop {
        let Some(&len) = bytes.get(at) else { return Err(bad(path, "is cut short inside a block")) };
        at += 1 + usize::from(len);
        if len == 0 {
            return Ok(at);
        }
    }
}

/// Every block after the header, up to the trailer.
fn blocks(path: &Path, bytes: &[u8]) -> Result<Vec<Block>> {
    let mut at = header_len(path, bytes)?;
    let mut found = Vec::new();
    loop {
        match bytes.get(at) {
            Some(0x3b) => return Ok(found),
            Some(0x21) => {
                let label = *bytes.get(at + 1).ok_or_else(|| bad(path, "is cut short inside an extension"))?;
                let end = sub_blocks_end(path, bytes, at + 2)?;
                found.push(Block::Extension(label, at, end));
                at = end;
            }
            Some(0x2c) => {
                let packed = *bytes.get(at + 9).ok_or_else(|| bad(path, "is cut short inside an image"))?;
                let palette = if packed & 0x80 != 0 { 3 << ((packed & 7) + 1) } else { 0 };
                // Descriptor, palette, the LZW code size, then the data's sub-blocks.
                let end = sub_blocks_end(path, bytes, at + 10 + palette + 1)?;
                found.push(Block::Image(at, end));
                at = end;
            }
            Some(other) => return Err(bad(path, format!("has an unknown block (0x{other:02x}) at byte {at}"))),
            None => return Err(bad(path, "is cut short: it has no trailer")),
        }
    }
}

/// The text of a comment extension.
fn comment_text(bytes: &[u8], start: usize, end: usize) -> String {
    let mut text = Vec::new();
    let mut at = start + 2;
    while at < end && bytes[at] != 0 {
        let len = usize::from(bytes[at]);
        text.extend_from_slice(&bytes[at + 1..(at + 1 + len).min(end)]);
        at += 1 + len;
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// The part's label: the first comment before its first frame that names ripple-render.
pub fn label(path: &Path, bytes: &[u8]) -> Result<Option<String>> {
    for block in blocks(path, bytes)? {
        match block {
            Block::Extension(0xfe, start, end) => {
                let text = comment_text(bytes, start, end);
                if text.starts_with("ripple-render ") {
                    return Ok(Some(text));
                }
            }
            Block::Extension(0xf9, ..) | Block::Image(..) => break,
            Block::Extension(..) => {}
        }
    }
    Ok(None)
}

/// Writes the joined GIF into `out`: the first part's header and loop, the whole render's
/// `comment`, every part's frames. Returns the canvas.
pub fn join(parts: &[Part], comment: &str, out: &mut impl Write) -> Result<(u32, u32)> {
    let io = Error::output;
    let mut header: Option<(Vec<u8>, &Path)> = None;
    for part in parts {
        let bytes = read(&part.path)?;
        let head = &bytes[..header_len(&part.path, &bytes)?];
        let blocks = blocks(&part.path, &bytes)?;
        let frames_from = blocks.iter().position(|b| matches!(b, Block::Extension(0xf9, ..) | Block::Image(..)));
        match &header {
            Some((first, first_path)) if first.as_slice() != head => {
                return Err(Error::Output {
                    message: format!(
                        "{} has another canvas or palette than {}: the parts of a render share them",
                        part.path.display(),
                        first_path.display()
                    ),
                    hint: Some("render every part from the same scene with the same options".into()),
                });
            }
            Some(_) => {}
            None => {
                out.write_all(head).map_err(io)?;
                // The loop (an application extension) as the first part has it, then the
                // whole render's comment.
                for block in &blocks[..frames_from.unwrap_or(blocks.len())] {
                    if let Block::Extension(0xff, start, end) = *block {
                        out.write_all(&bytes[start..end]).map_err(io)?;
                    }
                }
                out.write_all(&[0x21, 0xfe]).map_err(io)?;
                for piece in comment.as_bytes().chunks(255) {
                    out.write_all(&[piece.len() as u8]).and_then(|()| out.write_all(piece)).map_err(io)?;
                }
                out.write_all(&[0]).map_err(io)?;
                header = Some((head.to_vec(), &part.path));
            }
        }
        for block in &blocks[frames_from.unwrap_or(blocks.len())..] {
            match *block {
                // Comments and application extensions belong to a file, not to its frames.
                Block::Extension(0xfe | 0xff, ..) => {}
                Block::Extension(_, start, end) | Block::Image(start, end) => {
                    out.write_all(&bytes[start..end]).map_err(io)?;
                }
            }
        }
    }
    out.write_all(&[0x3b]).map_err(io)?;
    let head = header.map(|(h, _)| h).unwrap_or_default();
    let side = |at: usize| u32::from(u16::from_le_bytes([head[at], head[at + 1]]));
    Ok(if head.len() >= 10 { (side(6), side(8)) } else { (0, 0) })
}
