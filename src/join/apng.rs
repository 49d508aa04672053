//! APNG parts: the first part's header chunks with the whole render's frame count and comment,
//! then every part's frame chunks, renumbered; a later part's default image (whole, so that the
//! part plays on its own) is encoded again as the frame the whole render has there, from the
//! previous part's last picture, so the joined APNG is the whole render's, byte for byte.

use std::io::Write;
use std::path::Path;

use super::{Again, Container, Out, Pictures, Source, unreadable};
use crate::base::error::{Error, Result};
use crate::encode::Effort;
use crate::encode::png::apng::frame_after;
use crate::encode::png::write_chunk;

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
/// samples), shown for `delay`, numbered from `sequence`, compressed at the render's `effort`.
fn encoded_again(
    samples: &Samples,
    (before, now): (&[u8], &[u8]),
    delay: (u16, u16),
    sequence: u32,
    effort: Effort,
) -> Result<Vec<u8>> {
    let shape = (samples.size, samples.indexed);
    if samples.indexed {
        let unchanged = samples.unchanged.as_ref().map(|u| u[0]);
        frame_after(before, now, shape, unchanged, (delay, sequence), effort)
    } else {
        let rgb = |bytes: &[u8]| bytes.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect::<Vec<[u8; 3]>>();
        let unchanged = samples.unchanged.as_ref().map(|u| [u[0], u[1], u[2]]);
        frame_after(&rgb(before), &rgb(now), shape, unchanged, (delay, sequence), effort)
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

/// What every APNG part must share: its chunks before the first frame (canvas, palette,
/// transparency), but for the frame count and the comment, which are the whole render's.
pub(super) struct Head {
    /// The shared chunks' types and data, one after the other (`IHDR` first).
    own: Vec<u8>,
    /// Every chunk before the first frame.
    chunks: Vec<Chunk>,
}

impl PartialEq for Head {
    fn eq(&self, other: &Head) -> bool {
        self.own == other.own
    }
}

/// APNG parts joined: the first part's header chunks with the whole render's frame count and
/// comment, then every part's frame chunks, renumbered.
pub(super) struct Apng {
    /// The whole render's comment.
    comment: String,
    /// The whole render's frames.
    frames: u64,
    /// The next sequence number.
    sequence: u32,
    /// The first part's samples, if its frames can be encoded again.
    samples: Option<Samples>,
    /// The first part's shared chunks, for the canvas.
    own: Vec<u8>,
    /// The chunk read after a part's head: its first frame's.
    next: Option<Chunk>,
}

impl Apng {
    pub(super) fn new(comment: String, frames: u64) -> Apng {
        Apng { comment, frames, sequence: 0, samples: None, own: Vec::new(), next: None }
    }
}

impl Container for Apng {
    type Header = Head;
    /// The canvas's samples (RGB or palette indices).
    type Picture = Vec<u8>;
    const SHARED: &'static str = "canvas, palette or transparency";

    fn header(&mut self, source: &mut Source<'_>) -> Result<Head> {
        open(source)?;
        let (mut own, mut chunks) = (Vec::new(), Vec::new());
        // The chunks before the first frame: compared with the first part's, which are written.
        let mut chunk = next(source)?;
        while let Some(c) = chunk.take_if(|c| !is_frame_chunk(&c.kind)) {
            if !matches!(&c.kind, b"acTL" | b"tEXt") {
                own.extend_from_slice(&c.kind);
                own.extend_from_slice(&c.data);
            }
            chunks.push(c);
            chunk = next(source)?;
        }
        self.next = chunk;
        Ok(Head { own, chunks })
    }

    fn write_header(&mut self, head: &Head, out: &mut Out) -> Result<()> {
        out.write_all(SIGNATURE).map_err(Error::output)?;
        for c in &head.chunks {
            match &c.kind {
                b"acTL" if c.data.len() == 8 => {
                    let count = u32::try_from(self.frames).unwrap_or(u32::MAX);
                    write_chunk(out, b"acTL", &[&count.to_be_bytes()[..], &c.data[4..]].concat())?;
                }
                b"tEXt" if c.data.starts_with(b"Comment\0") => {
                    let text: Vec<u8> = self.comment.bytes().filter(u8::is_ascii).collect();
                    write_chunk(out, b"tEXt", &[&b"Comment\0"[..], &text].concat())?;
                }
                kind => write_chunk(out, kind, &c.data)?,
            }
        }
        self.samples = Samples::of(&head.chunks);
        self.own = head.own.clone();
        Ok(())
    }

    fn pictures(&self, path: &Path, last: bool) -> Result<Option<Pictures<Vec<u8>>>> {
        // Parts of another kind of samples are joined as they are.
        self.samples.as_ref().map(|s| pictures(path, s, last)).transpose()
    }

    fn copy_frames(&mut self, index: usize, source: &mut Source, out: &mut Out, again: Again<Vec<u8>>) -> Result<u64> {
        let mut frames = 0;
        // A later part's first frame (its control chunk, then its default image) is encoded
        // again.
        let mut first_frame = again.zip(self.samples.as_ref()).map(|((before, now), s)| (before, now, s, None));
        let mut chunk = self.next.take();
        while let Some(c) = chunk {
            // Each frame has its control chunk.
            frames += u64::from(&c.kind == b"fcTL");
            if let Some((before, now, s, delay)) = &mut first_frame {
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
                        let delay = delay.unwrap_or((1, 1));
                        let effort = Effort::recorded_in(&self.comment);
                        let again = encoded_again(s, (before, now), delay, self.sequence, effort)?;
                        out.write_all(&again).map_err(Error::output)?;
                        self.sequence += 2;
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
                    write_chunk(out, &c.kind, &[&self.sequence.to_be_bytes()[..], &c.data[4..]].concat())?;
                    self.sequence += 1;
                }
                // The first part's default image stays the file's; a later part's is a frame.
                b"IDAT" if index == 0 => write_chunk(out, b"IDAT", &c.data)?,
                b"IDAT" => {
                    write_chunk(out, b"fdAT", &[&self.sequence.to_be_bytes()[..], &c.data].concat())?;
                    self.sequence += 1;
                }
                _ => {}
            }
            chunk = next(source)?;
        }
        Ok(frames)
    }

    fn finish(self, out: &mut Out) -> Result<(u32, u32)> {
        write_chunk(out, b"IEND", &[])?;
        let side = |at: usize| self.own.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        // `own` starts with IHDR's type and data: width at 4, height at 8.
        Ok((side(4), side(8)))
    }
}
