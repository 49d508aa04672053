//! WebP parts: the first part's `VP8X` and `ANIM`, then every part's `ANMF` frames as they are
//! (each part's first frame covers the canvas and does not blend); the part's own chunk is
//! left out, and the `RIFF` size filled in at the end.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::{Part, bad, read};
use crate::base::error::{Error, Result};
use crate::encode::webp::PART_CHUNK;

/// One chunk: its type and the whole chunk's bytes (header, data, padding).
struct Chunk<'a> {
    kind: [u8; 4],
    whole: &'a [u8],
}

impl Chunk<'_> {
    fn data(&self) -> &[u8] {
        let len = u32::from_le_bytes([self.whole[4], self.whole[5], self.whole[6], self.whole[7]]) as usize;
        &self.whole[8..8 + len]
    }
}

/// Every chunk inside the `RIFF`.
fn chunks<'a>(path: &Path, bytes: &'a [u8]) -> Result<Vec<Chunk<'a>>> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WEBP" {
        return Err(bad(path, "is not a WebP file"));
    }
    let mut at = 12;
    let mut found = Vec::new();
    while at + 8 <= bytes.len() {
        let len = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]) as usize;
        let end = at + 8 + len + (len & 1);
        let whole = bytes.get(at..end.min(bytes.len())).filter(|w| w.len() >= 8 + len);
        let whole = whole.ok_or_else(|| bad(path, format!("is cut short inside a chunk at byte {at}")))?;
        found.push(Chunk { kind: [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]], whole });
        at = end;
    }
    Ok(found)
}

/// The part's label: its part chunk's text.
pub fn label(path: &Path, bytes: &[u8]) -> Result<Option<String>> {
    let chunks = chunks(path, bytes)?;
    let part = chunks.iter().find(|c| &c.kind == PART_CHUNK);
    Ok(part.map(|c| String::from_utf8_lossy(c.data()).into_owned()))
}

/// Writes the joined WebP into `out`. Returns the canvas.
pub fn join(parts: &[Part], out: &mut (impl Write + Seek)) -> Result<(u32, u32)> {
    let io = Error::output;
    out.write_all(b"RIFF\0\0\0\0WEBP").map_err(io)?;
    let mut length = 4u64;
    let mut shared: Option<(Vec<u8>, &Path)> = None;
    for part in parts {
        let bytes = read(&part.path)?;
        let chunks = chunks(&part.path, &bytes)?;
        let own: Vec<u8> =
            chunks.iter().filter(|c| matches!(&c.kind, b"VP8X" | b"ANIM")).flat_map(|c| c.whole.to_vec()).collect();
        match &shared {
            Some((first, first_path)) if *first != own => {
                return Err(Error::Output {
                    message: format!(
                        "{} has another canvas or loop than {}: the parts of a render share them",
                        part.path.display(),
                        first_path.display()
                    ),
                    hint: Some("render every part from the same scene with the same options".into()),
                });
            }
            Some(_) => {}
            None => {
                out.write_all(&own).map_err(io)?;
                length += own.len() as u64;
                shared = Some((own, &part.path));
            }
        }
        for chunk in chunks.iter().filter(|c| &c.kind == b"ANMF") {
            out.write_all(chunk.whole).map_err(io)?;
            length += chunk.whole.len() as u64;
        }
    }
    let size = u32::try_from(length)
        .map_err(|_| Error::Encode("the joined WebP is larger than 4 GiB, which RIFF cannot hold".into()))?;
    out.seek(SeekFrom::Start(4)).map_err(io)?;
    out.write_all(&size.to_le_bytes()).map_err(io)?;
    out.seek(SeekFrom::End(0)).map_err(io)?;
    let vp8x = shared.as_ref().map(|(own, _)| own.as_slice()).unwrap_or_default();
    // VP8X's data: flags (4), then width - 1 and height - 1 in 24 bits each.
    let side = |at: usize| vp8x.get(at..at + 3).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], 0]) + 1);
    Ok((side(12), side(15)))
}
