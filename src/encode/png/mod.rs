//! PNG-sequence output (§6.2): `frame_0000.png`, … of 8-bit RGB in one folder, or, on
//! request, of 8-bit palette indices where the background's colours fit a palette exactly.

pub mod apng;
pub mod filter;

use std::io::Write;
use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::time::Instant;

use super::palette::Palette;
use super::workers::Workers;
use super::{Effort, EncodeTimes, Stream};
use crate::base::error::{Error, Result};

/// How many digits frame numbers get: max(4, digits of N-1).
pub fn digits(frames: u64) -> usize {
    frames.saturating_sub(1).to_string().len().max(4)
}

/// The file name of frame `i` in a sequence of `frames`.
pub fn frame_name(i: u64, frames: u64) -> String {
    format!("frame_{i:0width$}.png", width = digits(frames))
}

/// One frame for a worker: its output frame and its pixels.
type FrameJob<P> = (u64, Vec<P>);

/// Where a sequence's frames go: files in a folder, or each file's bytes handed over with its
/// output frame as it is made (`serve`'s live page): the same bytes either way.
#[derive(Clone)]
pub enum Destination {
    /// `frame_NNNN.png` files in this folder.
    Folder(PathBuf),
    /// Called with each frame's number and PNG file, from the encoding threads.
    Memory(Arc<dyn Fn(u64, Vec<u8>) + Send + Sync>),
}

/// A pixel a PNG frame is written in.
pub trait PngPixel: Copy + Default + Send + Sync + 'static {
    /// The pixels' bytes, as the PNG holds them.
    fn bytes(pixels: &[Self]) -> &[u8];

    /// RGB pixels in this pixel type, if it holds any colour.
    fn from_rgb(rgb: &[[u8; 3]]) -> Option<&[Self]>;
}

/// RGB, the default (§6.2).
impl PngPixel for [u8; 3] {
    fn bytes(pixels: &[Self]) -> &[u8] {
        pixels.as_flattened()
    }

    fn from_rgb(rgb: &[[u8; 3]]) -> Option<&[Self]> {
        Some(rgb)
    }
}

/// An index into the frame's palette (`--indexed-png`): only the background's colours.
impl PngPixel for u8 {
    fn bytes(pixels: &[Self]) -> &[u8] {
        pixels
    }

    fn from_rgb(_rgb: &[[u8; 3]]) -> Option<&[Self]> {
        None
    }
}

/// Writes one PNG file per frame into a folder that already exists, encoding frames on worker
/// threads (each file is independent, so the bytes do not depend on the thread count).
///
/// `P` is `[u8; 3]` for RGB frames ([`PngSequence::new`]) or `u8` for palette frames
/// ([`PngSequence::indexed`]).
pub struct PngSequence<P: PngPixel = [u8; 3]> {
    background: Vec<P>,
    /// For palette frames: the palette, as RGB triples.
    palette: Option<Arc<[[u8; 3]]>>,
    /// The output frames written, numbered as in the whole render (a part's files are named as
    /// the whole render's).
    held: std::ops::Range<u64>,
    written: u64,
    /// Encode and write each frame's file.
    workers: Workers<FrameJob<P>, EncodeTimes>,
    times: EncodeTimes,
}

impl PngSequence<[u8; 3]> {
    /// A sequence of `stream`'s RGB frames over `background`, written into `dir`, on every core.
    pub fn new(dir: &Path, stream: &Stream, background: Vec<[u8; 3]>) -> Self {
        PngSequence::with(Destination::Folder(dir.to_path_buf()), stream, background, None)
    }

    /// The same frames, each PNG file's bytes handed to `to` (see [`Destination::Memory`]).
    pub fn handing(to: Arc<dyn Fn(u64, Vec<u8>) + Send + Sync>, stream: &Stream, background: Vec<[u8; 3]>) -> Self {
        PngSequence::with(Destination::Memory(to), stream, background, None)
    }
}

impl PngSequence<u8> {
    /// A sequence of palette frames (colour type 3) in `palette`, which must hold every colour
    /// of the frames exactly (a background of at most 256 colours, frames that only move its
    /// pixels): each frame then decodes to exactly the RGB frame.
    pub fn indexed(dir: &Path, stream: &Stream, palette: Palette) -> Self {
        PngSequence::with(Destination::Folder(dir.to_path_buf()), stream, palette.indices, Some(palette.colors.into()))
    }
}

impl<P: PngPixel> PngSequence<P> {
    fn with(to: Destination, stream: &Stream, pixels: Vec<P>, palette: Option<Arc<[[u8; 3]]>>) -> Self {
        let size = (stream.width, stream.height);
        let (provenance, colors): (Arc<str>, _) = (stream.comment.clone().into(), palette.clone());
        let (effort, frames) = (stream.effort, stream.render_frames);
        let workers = Workers::new(move |(frame, pixels): FrameJob<P>| {
            let started = Instant::now();
            let bytes = frame_file(size, P::bytes(&pixels), colors.as_deref(), (&provenance, effort))?;
            let encode = started.elapsed();
            let started = Instant::now();
            match &to {
                Destination::Folder(dir) => {
                    let path = dir.join(frame_name(frame, frames));
                    std::fs::write(&path, &bytes).map_err(|source| Error::io(&path, source))?;
                }
                Destination::Memory(hand) => hand(frame, bytes),
            }
            Ok(EncodeTimes { encode, write: started.elapsed() })
        })
        .holding(3 * u64::from(stream.width) * u64::from(stream.height));
        PngSequence {
            background: pixels,
            palette,
            held: stream.held(),
            written: 0,
            workers,
            times: EncodeTimes::default(),
        }
    }

    /// Encodes frames on `threads` threads (1: all on the caller's thread).
    pub fn threads(mut self, threads: usize) -> Self {
        self.workers.set_threads(threads);
        self
    }
}

/// Bytes per pixel one thread holds while it compresses an RGB frame (3 bytes a pixel, `raw`),
/// at worst, when the frame does not compress (noise): the png crate's deflate output, a vector
/// grown by doubling (up to 2·raw), then beside it its stored fallback (again up to 2·raw), and
/// the file's bytes (raw and a sixteenth).
const WORKING_BYTES_PER_PIXEL: u64 = 16;

/// Bytes a PNG sequence (or a still) on `threads` threads holds per canvas pixel: its copy of
/// the background, each frame in flight as RGB, and on each thread the buffers of the frame it
/// compresses (at every effort: the `max` effort holds fewer, the filtered rows twice and a
/// stream, 3 + 3 + 4).
pub fn bytes_per_pixel(threads: usize, cells: u64) -> u64 {
    3 + crate::base::pool::in_flight(threads, 3 * cells) * 3 + threads.max(1) as u64 * WORKING_BYTES_PER_PIXEL
}

/// One frame's file, encoded in memory (so encoding and writing are timed apart). With a
/// palette, `pixels` are its indices; at the `max` effort, the smallest image data.
fn frame_file(
    (width, height): (u32, u32),
    pixels: &[u8],
    palette: Option<&[[u8; 3]]>,
    (comment, effort): (&str, Effort),
) -> Result<Vec<u8>> {
    // Room for a frame that does not compress at all (noise), so the buffer is never doubled
    // past what the memory estimate allows for a frame in flight: the filtered rows and a
    // margin for the deflate and chunk headers.
    let raw = pixels.len() + height as usize;
    let mut bytes = Vec::with_capacity(raw + raw / 16 + 4096);
    if effort == Effort::Max {
        smallest_png(&mut bytes, (width, height), pixels, palette, comment)?;
    } else {
        encode_png(&mut bytes, (width, height), pixels, palette, Some(comment))
            .map_err(|e| Error::Encode(e.to_string()))?;
    }
    Ok(bytes)
}

/// The smallest 8-bit RGB PNG this crate makes of `pixels` (every way of filtering, at
/// libdeflate's slowest level where it is built in), with `comment` as a text chunk: a picture
/// shipped once and fetched often (`ripple-render web`'s).
pub fn smallest_rgb_png(width: u32, height: u32, pixels: &[[u8; 3]], comment: &str) -> Result<Vec<u8>> {
    frame_file((width, height), pixels.as_flattened(), None, (comment, Effort::Max))
}

/// Writes one chunk (length, type, data, CRC) to `out`: a `max` PNG's, the APNG encoder's, and
/// `join`'s.
pub(crate) fn write_chunk(out: &mut impl Write, kind: &[u8; 4], data: &[u8]) -> Result<()> {
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    let io = Error::output;
    out.write_all(&(data.len() as u32).to_be_bytes()).map_err(io)?;
    out.write_all(kind).and_then(|()| out.write_all(data)).map_err(io)?;
    out.write_all(&crc.finalize().to_be_bytes()).map_err(io)
}

/// The `IHDR` chunk's data of an 8-bit image of `size`, RGB or (`indexed`) palette indices.
pub(crate) fn header((width, height): (u32, u32), indexed: bool) -> Vec<u8> {
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, if indexed { 3 } else { 2 }, 0, 0, 0]);
    ihdr
}

/// The `max` effort's PNG (into `bytes`): the chunks of [`encode_png`]'s, with image data that
/// tries every way of filtering at libdeflate's slowest level ([`filter::smallest`]).
fn smallest_png(
    bytes: &mut Vec<u8>,
    (width, height): (u32, u32),
    pixels: &[u8],
    palette: Option<&[[u8; 3]]>,
    comment: &str,
) -> Result<()> {
    let bpp = if palette.is_some() { 1 } else { 3 };
    let data = filter::smallest(pixels, width as usize * bpp, bpp);
    bytes.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let chunk = write_chunk;
    chunk(bytes, b"IHDR", &header((width, height), palette.is_some()))?;
    let text: Vec<u8> = b"Comment\0".iter().copied().chain(comment.bytes().filter(u8::is_ascii)).collect();
    chunk(bytes, b"tEXt", &text)?;
    if let Some(colors) = palette {
        chunk(bytes, b"PLTE", colors.as_flattened())?;
    }
    chunk(bytes, b"IDAT", &data)?;
    chunk(bytes, b"IEND", &[])
}

/// Encodes one RGB frame as a PNG into `out`, with `comment` as a `Comment` text chunk. An I/O
/// error speaks of the output, for the caller to name ([`Error::writing`]).
pub fn write_png(out: impl Write, width: u32, height: u32, pixels: &[[u8; 3]], comment: Option<&str>) -> Result<()> {
    encode_png(out, (width, height), pixels.as_flattened(), None, comment).map_err(|e| match e {
        png::EncodingError::IoError(source) => Error::output(source),
        other => Error::Encode(other.to_string()),
    })
}

/// Encodes an 8-bit RGB PNG, or with `palette` an 8-bit palette PNG whose `pixels` index it.
/// Frames use the png crate's `Fast` level (fdeflate), not its slower default.
fn encode_png(
    out: impl Write,
    (width, height): (u32, u32),
    pixels: &[u8],
    palette: Option<&[[u8; 3]]>,
    comment: Option<&str>,
) -> std::result::Result<(), png::EncodingError> {
    let mut encoder = png::Encoder::new(out, width, height);
    if let Some(text) = comment {
        encoder.add_text_chunk("Comment".to_string(), text.to_string())?;
    }
    match palette {
        Some(colors) => {
            encoder.set_color(png::ColorType::Indexed);
            encoder.set_palette(colors.as_flattened().to_vec());
        }
        None => encoder.set_color(png::ColorType::Rgb),
    }
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()
}

impl<P: PngPixel> super::Encoder for PngSequence<P> {
    type Pixel = P;

    fn background(&self) -> &[P] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[P]) -> Result<()> {
        let frame = self.held.start + self.written;
        self.written += 1;
        let times = &mut self.times;
        self.workers.submit((frame, pixels.to_vec()), &mut |t| {
            *times += t;
            Ok(())
        })
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        match P::from_rgb(rgb) {
            Some(pixels) => self.write_frame(pixels),
            None => Err(Error::Encode("a palette PNG sequence takes only the background's colours".into())),
        }
    }

    fn compresses_apart(&self) -> bool {
        true
    }

    fn compress_on(&mut self, pool: &crate::base::pool::Pool) {
        self.workers.set_pool(pool);
    }

    fn wanted(&self) -> std::ops::Range<u64> {
        self.held.clone()
    }

    fn finish(mut self) -> Result<EncodeTimes> {
        let times = &mut self.times;
        self.workers.finish(&mut |t| {
            *times += t;
            Ok(())
        })?;
        Ok(self.times)
    }

    fn exact_rgb<'a>(&self, pixels: &'a [P], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        // A palette sequence is made only from an exact palette.
        Some(match &self.palette {
            Some(colors) => super::expand(P::bytes(pixels), colors, scratch),
            None => P::bytes(pixels),
        })
    }
}

/// One still PNG of output frame `frame` (§12): 8-bit RGB, exact, with the provenance
/// comment of a sequence's frames (the smallest image data at the `max` effort).
pub struct Still<W: Write> {
    out: Option<W>,
    background: Vec<[u8; 3]>,
    provenance: String,
    size: (u32, u32),
    frame: u64,
    effort: Effort,
    times: EncodeTimes,
}

impl<W: Write> Still<W> {
    /// A still of output frame `frame` of `stream`, over `background`, written into `out`.
    pub fn new(out: W, stream: &Stream, background: Vec<[u8; 3]>, frame: u64) -> Self {
        Still {
            out: Some(out),
            background,
            provenance: format!("{} frame={frame}", stream.comment),
            size: (stream.width, stream.height),
            frame,
            effort: stream.effort,
            times: EncodeTimes::default(),
        }
    }
}

impl<W: Write> super::Encoder for Still<W> {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[[u8; 3]]) -> Result<()> {
        // The render hands over only the wanted frame.
        let Some(mut out) = self.out.take() else { return Ok(()) };
        let started = Instant::now();
        let (width, height) = self.size;
        if self.effort == Effort::Max {
            let mut bytes = Vec::new();
            smallest_png(&mut bytes, self.size, pixels.as_flattened(), None, &self.provenance)?;
            out.write_all(&bytes).map_err(Error::output)?;
        } else {
            write_png(&mut out, width, height, pixels, Some(&self.provenance))?;
        }
        self.times.encode += started.elapsed();
        let started = Instant::now();
        out.flush().map_err(Error::output)?;
        self.times.write += started.elapsed();
        Ok(())
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        self.write_frame(rgb)
    }

    fn wanted(&self) -> std::ops::Range<u64> {
        self.frame..self.frame + 1
    }

    fn finish(self) -> Result<EncodeTimes> {
        match self.out {
            None => Ok(self.times),
            Some(_) => Err(Error::Encode(format!("the render ended before frame {}", self.frame))),
        }
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_at_least_four_digits_and_all_the_same_width() {
        assert_eq!(frame_name(0, 1), "frame_0000.png");
        assert_eq!(frame_name(9999, 10000), "frame_9999.png");
        assert_eq!(frame_name(0, 10001), "frame_00000.png");
        assert_eq!(frame_name(10000, 10001), "frame_10000.png");
        assert_eq!(digits(1_000_000), 6);
    }
}
