//! APNG parts: the first part's header chunks with the whole render's frame count and comment,
//! then every part's frame chunks, renumbered; a later part's default image (whole, so that the
//! part plays on its own) is encoded again as the frame the whole render has there, from the
//! previous part's last picture, so the joined APNG is the whole render's, byte for byte.

use std::io::Write;
use std::path::Path;

use super::{Part, Pictures, Source, unlike, unreadable};
use crate::base::error::{Error, Result};
use crate::encode::apng::frame_after;

/// What a part's frames are made of: RGB or palette samples, and the pixel that marks an
/// unchanged one (the `tRNS` colour key, or the palette's transparent index), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Samples {
    size: (u32, u32),
    indexed: bool,
    unchanged: Option<Vec<u8>>,
}

impl Samples {
    /// Read from the header chunks `IHDR` and `tRNS` (type and data, one after the other).
    fn of(header: &[Chunk]) -> Option<Samples> {
        let ihdr = header.iter().find(|c| &c.kind == b"IHDR").filter(|c| c.data.len() >= 13)?;
        let word =
            |at: usize| u32::from_be_bytes([ihdr.data[at], ihdr.data[at + 1], ihdr.data[at + 2], ihdr.data[at + 3]]);
        let indexed = match (ihdr.data[8], ihdr.data[9]) {
            (8, 2) => false,
            (8, 3) => true,
            _ => return None,
        };
        let trns = header.iter().find(|c| &c.kind == b"tRNS").map(|c| c.data.as_slice());
        let unchanged = match (indexed, trns) {
            (false, Some(&[0, r, 0, g, 0, b])) => Some(vec![r, g, b]),
            (true, Some(alpha)) => {
                alpha.iter().position(|&a| a == 0).and_then(|i| u8::try_from(i).ok()).map(|i| vec![i])
            }
            _ => None,
        };
        Some(Samples { size: (word(0), word(4)), indexed, unchanged })
    }

    fn bytes_per_pixel(&self) -> usize {
        if self.indexed { 1 } else { 3 }
    }
}

/// The samples on the canvas of the APNG at `path` after its first frame, and after its last
/// with `last`: each frame's rectangle over the one before, its unchanged pixels kept where it
/// blends.
fn pictures(path: &Path, samples: &Samples, last: bool) -> Result<Pictures<Vec<u8>>> {
    let file = std::fs::File::open(path).map_err(|e| unreadable(path, &e))?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::IDENTITY);
    let decode = |e: png::DecodingError| Error::input(path, format!("cannot be decoded: {e}"));
    let mut reader = decoder.read_info().map_err(decode)?;
    let frames = reader.info().animation_control.map_or(1, |a| a.num_frames);
    let (width, bpp) = (samples.size.0 as usize, samples.bytes_per_pixel());
    let mut canvas = vec![0u8; width * samples.size.1 as usize * bpp];
    let mut buffer =
        vec![0u8; reader.output_buffer_size().ok_or_else(|| Error::input(path, "has too large a canvas"))?];
    let mut first = None;
    for _ in 0..if last { frames } else { 1 } {
        let out = reader.next_frame(&mut buffer).map_err(decode)?;
        let control = reader.info().frame_control;
        let (x, y, w, h) = control.map_or((0, 0, width, samples.size.1 as usize), |c| {
            (c.x_offset as usize, c.y_offset as usize, c.width as usize, c.height as usize)
        });
        let over = control.is_some_and(|c| c.blend_op == png::BlendOp::Over);
        for row in 0..h {
            let from = &buffer[row * out.line_size..][..w * bpp];
            let at = ((y + row) * width + x) * bpp;
            let Some(to) = canvas.get_mut(at..at + w * bpp) else {
                return Err(Error::input(path, "has a frame off its canvas"));
            };
            for (t, f) in to.chunks_exact_mut(bpp).zip(from.chunks_exact(bpp)) {
                if !(over && samples.unchanged.as_deref() == Some(f)) {
                    t.copy_from_slice(f);
                }
            }
        }
        first.get_or_insert_with(|| canvas.clone());
    }
    let first = first.ok_or_else(|| Error::input(path, "has no frame"))?;
    Ok(Pictures { first, last: last.then_some(canvas) })
}

/// The chunks the whole render has for the frame `now` after `before` (both the canvas's
/// samples), shown for `delay`, numbered from `sequence`.
fn again(samples: &Samples, before: &[u8], now: &[u8], delay: (u16, u16), sequence: u32) -> Result<Vec<u8>> {
    let shape = (samples.size, samples.indexed);
    if samples.indexed {
        let unchanged = samples.unchanged.as_ref().map(|u| u[0]);
        frame_after(before, now, shape, unchanged, delay, sequence)
    } else {
        let rgb = |bytes: &[u8]| bytes.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect::<Vec<[u8; 3]>>();
        let unchanged = samples.unchanged.as_ref().map(|u| [u[0], u[1], u[2]]);
        frame_after(&rgb(before), &rgb(now), shape, unchanged, delay, sequence)
    }
}

const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// One chunk: its type and data.
struct Chunk {
    kind: [u8; 4],
    data: Vec<u8>,
}

/// Checks the signature.
fn open(source: &mut Source<'_>) -> Result<()> {
    if source.take(8)? != SIGNATURE {
        return Err(Error::input(source.path, "is not a PNG file"));
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
    // The previous part's last picture, for the next part's first frame.
    let mut previous: Option<Vec<u8>> = None;
    let mut samples = None;
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
                samples = Samples::of(&header);
                shared = Some((own, &part.path));
            }
        }
        // A later part's first frame (its control chunk, then its default image) is encoded
        // again; parts of another kind of samples are joined as they are.
        let later = index + 1 < parts.len();
        let mut pictures = match &samples {
            Some(s) if index > 0 || later => Some(pictures(&part.path, s, later)?),
            _ => None,
        };
        let mut first_frame = previous.take().zip(samples.as_ref()).map(|(before, s)| (before, s, None));
        while let Some(c) = chunk {
            if let Some((before, s, delay)) = &mut first_frame {
                match &c.kind {
                    b"fcTL" if c.data.len() >= 26 && delay.is_none() => {
                        *delay = Some((
                            u16::from_be_bytes([c.data[20], c.data[21]]),
                            u16::from_be_bytes([c.data[22], c.data[23]]),
                        ));
                        chunk = next(source)?;
                        continue;
                    }
                    b"IDAT" => {
                        let now = pictures.as_ref().map(|p| p.first.as_slice()).unwrap_or_default();
                        let delay = delay.unwrap_or((1, 1));
                        out.write_all(&again(s, before, now, delay, sequence)?).map_err(Error::output)?;
                        sequence += 2;
                        // Any further IDAT of that image is passed over.
                        chunk = next(source)?;
                        while chunk.as_ref().is_some_and(|c| &c.kind == b"IDAT") {
                            chunk = next(source)?;
                        }
                        first_frame = None;
                        continue;
                    }
                    _ => {}
                }
            }
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
        previous = pictures.take().and_then(|p| p.last);
    }
    put(out, b"IEND", &[])?;
    let ihdr = shared.as_ref().map(|(own, _)| own.as_slice()).unwrap_or_default();
    let side = |at: usize| ihdr.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    // `own` starts with IHDR's type and data: width at 4, height at 8.
    Ok((side(4), side(8)))
}
