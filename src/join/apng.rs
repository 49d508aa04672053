//! APNG parts: the first part's header chunks with the whole render's frame count and comment,
//! then every part's frame chunks, renumbered; a later part's default image (`IDAT`) becomes a
//! frame's data (`fdAT`).

use std::io::Write;
use std::path::Path;

use super::{Part, bad, read};
use crate::base::error::{Error, Result};

const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// One chunk: its type and data.
struct Chunk<'a> {
    kind: [u8; 4],
    data: &'a [u8],
}

/// Every chunk of a PNG file, in order.
fn chunks<'a>(path: &Path, bytes: &'a [u8]) -> Result<Vec<Chunk<'a>>> {
    if !bytes.starts_with(SIGNATURE) {
        return Err(bad(path, "is not a PNG file"));
    }
    let mut at = SIGNATURE.len();
    let mut found = Vec::new();
    while at < bytes.len() {
        let cut = || bad(path, format!("is cut short inside a chunk at byte {at}"));
        let head = bytes.get(at..at + 8).ok_or_else(cut)?;
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let kind = [head[4], head[5], head[6], head[7]];
        let data = bytes.get(at + 8..at + 8 + len).ok_or_else(cut)?;
        found.push(Chunk { kind, data });
        at += 12 + len;
        if &kind == b"IEND" {
            break;
        }
    }
    Ok(found)
}

/// Appends one chunk (length, type, data, CRC).
fn put(out: &mut impl Write, kind: &[u8; 4], data: &[u8]) -> Result<()> {
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    let mut bytes = Vec::with_capacity(data.len() + 12);
    bytes.extend((data.len() as u32).to_be_bytes());
    bytes.extend_from_slice(kind);
    bytes.extend_from_slice(data);
    bytes.extend(crc.finalize().to_be_bytes());
    out.write_all(&bytes).map_err(Error::output)
}

/// Whether a chunk belongs to the frames (from the first frame control on).
fn is_frame_chunk(kind: &[u8; 4]) -> bool {
    matches!(kind, b"fcTL" | b"IDAT" | b"fdAT")
}

/// The part's label: its `Comment` text, if it names ripple-render.
pub fn label(path: &Path, bytes: &[u8]) -> Result<Option<String>> {
    for chunk in chunks(path, bytes)? {
        if is_frame_chunk(&chunk.kind) {
            break;
        }
        let text = (&chunk.kind == b"tEXt").then(|| chunk.data.strip_prefix(b"Comment\0")).flatten();
        if let Some(text) = text.map(String::from_utf8_lossy).filter(|t| t.starts_with("ripple-render ")) {
            return Ok(Some(text.into_owned()));
        }
    }
    Ok(None)
}

/// Writes the joined APNG into `out`: `frames` frames, the whole render's `comment`. Returns
/// the canvas.
pub fn join(parts: &[Part], comment: &str, frames: u64, out: &mut impl Write) -> Result<(u32, u32)> {
    let mut sequence = 0u32;
    // The chunks every part must share (canvas, palette, transparency), from the first.
    let mut shared: Option<(Vec<u8>, &Path)> = None;
    for (index, part) in parts.iter().enumerate() {
        let bytes = read(&part.path)?;
        let chunks = chunks(&part.path, &bytes)?;
        let frames_from = chunks.iter().position(|c| is_frame_chunk(&c.kind)).unwrap_or(chunks.len());
        let mut own = Vec::new();
        for chunk in &chunks[..frames_from] {
            if !matches!(&chunk.kind, b"acTL" | b"tEXt") {
                own.extend_from_slice(&chunk.kind);
                own.extend_from_slice(chunk.data);
            }
        }
        match &shared {
            Some((first, first_path)) if *first != own => {
                return Err(Error::Output {
                    message: format!(
                        "{} has another canvas, palette or transparency than {}: the parts of a render share them",
                        part.path.display(),
                        first_path.display()
                    ),
                    hint: Some("render every part from the same scene with the same options".into()),
                });
            }
            Some(_) => {}
            None => {
                out.write_all(SIGNATURE).map_err(Error::output)?;
                for chunk in &chunks[..frames_from] {
                    match &chunk.kind {
                        b"acTL" if chunk.data.len() == 8 => {
                            let count = u32::try_from(frames).unwrap_or(u32::MAX);
                            put(out, b"acTL", &[&count.to_be_bytes()[..], &chunk.data[4..]].concat())?;
                        }
                        b"tEXt" if chunk.data.starts_with(b"Comment\0") => {
                            let text: Vec<u8> = comment.bytes().filter(u8::is_ascii).collect();
                            put(out, b"tEXt", &[&b"Comment\0"[..], &text].concat())?;
                        }
                        kind => put(out, kind, chunk.data)?,
                    }
                }
                shared = Some((own, &part.path));
            }
        }
        for chunk in &chunks[frames_from..] {
            match &chunk.kind {
                b"fcTL" | b"fdAT" if chunk.data.len() >= 4 => {
                    let kind = &chunk.kind;
                    put(out, kind, &[&sequence.to_be_bytes()[..], &chunk.data[4..]].concat())?;
                    sequence += 1;
                }
                // The first part's default image stays the file's; a later part's is a frame.
                b"IDAT" if index == 0 => put(out, b"IDAT", chunk.data)?,
                b"IDAT" => {
                    put(out, b"fdAT", &[&sequence.to_be_bytes()[..], chunk.data].concat())?;
                    sequence += 1;
                }
                _ => {}
            }
        }
    }
    put(out, b"IEND", &[])?;
    let ihdr = shared.as_ref().map(|(own, _)| own.as_slice()).unwrap_or_default();
    let side = |at: usize| ihdr.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    // `own` starts with IHDR's type and data: width at 4, height at 8.
    Ok((side(4), side(8)))
}
