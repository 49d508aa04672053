//! APNG parts: the first part's header chunks with the whole render's frame count and comment,
//! then every part's frame chunks, renumbered; a later part's default image (`IDAT`) becomes a
//! frame's data (`fdAT`).

use std::io::Write;
use std::path::Path;

use super::{Part, Source, bad, unlike};
use crate::base::error::{Error, Result};

const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// One chunk: its type and data.
struct Chunk {
    kind: [u8; 4],
    data: Vec<u8>,
}

/// Checks the signature.
fn open(source: &mut Source<'_>) -> Result<()> {
    if source.take(8)? != SIGNATURE {
        return Err(bad(source.path, "is not a PNG file"));
    }
    Ok(())
}

/// The next chunk (its CRC passed over), or `None` after `IEND` or at the end of the file.
fn next(source: &mut Source<'_>) -> Result<Option<Chunk>> {
    let Some(first) = source.next_byte()? else { return Ok(None) };
    let rest = source.take(7)?;
    let len = u32::from_be_bytes([first, rest[0], rest[1], rest[2]]) as usize;
    let kind = [rest[3], rest[4], rest[5], rest[6]];
    let data = source.take(len)?;
    source.take(4)?;
    Ok((&kind != b"IEND").then_some(Chunk { kind, data }))
}

/// Appends one chunk (length, type, data, CRC).
fn put(out: &mut impl Write, kind: &[u8; 4], data: &[u8]) -> Result<()> {
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    let io = Error::output;
    out.write_all(&(data.len() as u32).to_be_bytes()).map_err(io)?;
    out.write_all(kind).and_then(|()| out.write_all(data)).map_err(io)?;
    out.write_all(&crc.finalize().to_be_bytes()).map_err(io)
}

/// Whether a chunk belongs to the frames (from the first frame control on).
fn is_frame_chunk(kind: &[u8; 4]) -> bool {
    matches!(kind, b"fcTL" | b"IDAT" | b"fdAT")
}

/// The part's label: its `Comment` text, if it names ripple-render.
pub fn label(source: &mut Source<'_>) -> Result<Option<String>> {
    open(source)?;
    while let Some(chunk) = next(source)? {
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
        let source = &mut Source::open(&part.path)?;
        open(source)?;
        let mut own = Vec::new();
        let mut header = Vec::new();
        // The chunks before the first frame: compared with the first part's, which are written.
        let mut chunk = next(source)?;
        while let Some(c) = chunk.take_if(|c| !is_frame_chunk(&c.kind)) {
            if !matches!(&c.kind, b"acTL" | b"tEXt") {
                own.extend_from_slice(&c.kind);
                own.extend_from_slice(&c.data);
            }
            header.push(c);
            chunk = next(source)?;
        }
        match &shared {
            Some((first, first_path)) if *first != own => {
                return Err(unlike(&part.path, first_path, "canvas, palette or transparency"));
            }
            Some(_) => {}
            None => {
                out.write_all(SIGNATURE).map_err(Error::output)?;
                for c in &header {
                    match &c.kind {
                        b"acTL" if c.data.len() == 8 => {
                            let count = u32::try_from(frames).unwrap_or(u32::MAX);
                            put(out, b"acTL", &[&count.to_be_bytes()[..], &c.data[4..]].concat())?;
                        }
                        b"tEXt" if c.data.starts_with(b"Comment\0") => {
                            let text: Vec<u8> = comment.bytes().filter(u8::is_ascii).collect();
                            put(out, b"tEXt", &[&b"Comment\0"[..], &text].concat())?;
                        }
                        kind => put(out, kind, &c.data)?,
                    }
                }
                shared = Some((own, &part.path));
            }
        }
        while let Some(c) = chunk {
            match &c.kind {
                b"fcTL" | b"fdAT" if c.data.len() >= 4 => {
                    put(out, &c.kind, &[&sequence.to_be_bytes()[..], &c.data[4..]].concat())?;
                    sequence += 1;
                }
                // The first part's default image stays the file's; a later part's is a frame.
                b"IDAT" if index == 0 => put(out, b"IDAT", &c.data)?,
                b"IDAT" => {
                    put(out, b"fdAT", &[&sequence.to_be_bytes()[..], &c.data].concat())?;
                    sequence += 1;
                }
                _ => {}
            }
            chunk = next(source)?;
        }
    }
    put(out, b"IEND", &[])?;
    let ihdr = shared.as_ref().map(|(own, _)| own.as_slice()).unwrap_or_default();
    let side = |at: usize| ihdr.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    // `own` starts with IHDR's type and data: width at 4, height at 8.
    Ok((side(4), side(8)))
}
