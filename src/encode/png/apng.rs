//! Animated PNG output (§12): the first frame is the default image, each later frame only
//! the rectangle that changed, delays of exactly 1/fps.
//!
//! The chunks are written here; each frame's rectangle is filtered and compressed by the png
//! crate on a worker thread (as a PNG of its own, whose image data is taken over whole), so
//! frames compress in parallel and the bytes do not depend on the thread count. Where the
//! background has fewer than 256 colours and frames only move them, frames are palette indices,
//! and one spare index stands for "unchanged"; in RGB without a look, a colour the background
//! lacks does (a `tRNS` colour key). Those pixels are transparent and the frame is blended over
//! the last, so a rectangle holds little but the ripples.

use std::io::Write;
use std::time::Instant;

use super::filter::{self, Rows};
use super::{PngPixel, write_chunk};
use crate::base::error::{Error, Result};
use crate::encode::palette::Palette;
use crate::encode::rect::{self, Rect};
use crate::encode::workers::Workers;
use crate::encode::{Effort, EncodeTimes, Stream};

/// How a frame is laid over the canvas (the `fcTL` blend op).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blend {
    /// The rectangle replaces what was there.
    Source,
    /// Transparent pixels keep what was there.
    Over,
}

/// One frame for a worker: its rectangle, how it blends, its pixels (the rectangle's), and how
/// hard it is compressed.
struct Job<P> {
    rect: Rect,
    blend: Blend,
    pixels: Vec<P>,
    effort: Effort,
}

/// A worker's result: the frame's compressed image data.
struct Compressed {
    rect: Rect,
    blend: Blend,
    data: Vec<u8>,
    encode: std::time::Duration,
}

/// Writes an animated PNG into `out`, compressing frames on worker threads.
///
/// `P` is `[u8; 3]` for RGB frames ([`Apng::rgb`], [`Apng::keyed`]) or `u8` for palette frames
/// ([`Apng::indexed`]).
pub struct Apng<W: Write, P: PngPixel> {
    background: Vec<P>,
    /// The pixel no frame holds (a spare palette index, or a colour the background lacks),
    /// transparent, which marks unchanged pixels.
    unchanged: Option<P>,
    previous: Vec<P>,
    written: u64,
    /// Filter and compress each frame's rectangle.
    workers: Workers<Job<P>, Compressed>,
    chunks: Chunks<W>,
}

/// The file's chunks as they are written: the header's, then each frame's control and data.
struct Chunks<W: Write> {
    out: W,
    stream: Stream,
    /// `PLTE`, for palette frames.
    palette: Option<Vec<[u8; 3]>>,
    /// The `tRNS` chunk that makes the unchanged pixel transparent.
    transparency: Option<Vec<u8>>,
    /// The next chunk's sequence number.
    sequence: u32,
    /// The output frame whose control chunk comes next.
    sequence_frame: u64,
    times: EncodeTimes,
}

impl<W: Write> Apng<W, [u8; 3]> {
    /// An animated PNG of `stream` in RGB, of frames of any colours (drawn with a look, or
    /// reduced), over `background`.
    pub fn rgb(out: W, stream: &Stream, background: Vec<[u8; 3]>) -> Self {
        Apng::with(Chunks::new(out, stream, None, None), background, None)
    }

    /// An animated PNG of `stream` in RGB, of frames that hold only `background`'s colours (they
    /// only move its pixels): a colour the background lacks, if any, marks unchanged pixels.
    pub fn keyed(out: W, stream: &Stream, background: Vec<[u8; 3]>) -> Self {
        let key = missing_colour(&background);
        // A colour key: `tRNS` holds its red, green and blue as 16-bit samples.
        let transparency = key.map(|[r, g, b]| vec![0, r, 0, g, 0, b]);
        Apng::with(Chunks::new(out, stream, None, transparency), background, key)
    }
}

/// The first colour (in RGB order, as a 24-bit number) that `pixels` lack, if any.
fn missing_colour(pixels: &[[u8; 3]]) -> Option<[u8; 3]> {
    let mut keys: Vec<u32> = pixels.iter().map(|&[r, g, b]| u32::from_be_bytes([0, r, g, b])).collect();
    keys.sort_unstable();
    keys.dedup();
    let first = keys.iter().enumerate().find(|&(i, &k)| k != i as u32).map_or(keys.len() as u32, |(i, _)| i as u32);
    (first < 1 << 24).then(|| {
        let [_, r, g, b] = first.to_be_bytes();
        [r, g, b]
    })
}

impl<W: Write> Apng<W, u8> {
    /// An animated PNG of `stream` in palette frames of `palette`, which must hold every colour
    /// of the frames exactly (the background's own colours, frames that only move its pixels).
    /// A palette with room to spare gets one more entry, transparent, for unchanged pixels.
    pub fn indexed(out: W, stream: &Stream, palette: Palette) -> Self {
        let Palette { mut colors, indices, .. } = palette;
        // Every entry opaque but the spare one.
        let spare = u8::try_from(colors.len()).ok();
        let transparency = spare.map(|index| {
            colors.push([0, 0, 0]);
            let mut alpha = vec![255u8; usize::from(index) + 1];
            alpha[usize::from(index)] = 0;
            alpha
        });
        Apng::with(Chunks::new(out, stream, Some(colors), transparency), indices, spare)
    }
}

impl<W: Write, P: PngPixel + PartialEq> Apng<W, P> {
    /// An animated PNG written as `chunks`, whose frames gather from `pixels`; `unchanged`
    /// marks unchanged pixels (made transparent by the chunks' `tRNS`).
    fn with(chunks: Chunks<W>, pixels: Vec<P>, unchanged: Option<P>) -> Self {
        let indexed = chunks.palette.is_some();
        let cells = u64::from(chunks.stream.width) * u64::from(chunks.stream.height);
        Apng {
            background: pixels,
            unchanged,
            previous: Vec::new(),
            written: 0,
            workers: Workers::new(move |job| compress(job, indexed)).holding(3 * cells),
            chunks,
        }
    }

    /// Compresses frames on `threads` threads (1: all on the caller's thread).
    pub fn threads(mut self, threads: usize) -> Self {
        self.workers.set_threads(threads);
        self
    }

    /// The job for the next frame: the whole canvas first, then the rectangle that changed.
    fn job(&mut self, pixels: &[P]) -> Job<P> {
        let stream = &self.chunks.stream;
        let job = job_after(&self.previous, pixels, (stream.width, stream.height), self.unchanged, stream.effort);
        self.previous.clear();
        self.previous.extend_from_slice(pixels);
        job
    }
}

/// The job for the frame `pixels` after `previous` (none: the whole canvas of `size`), the
/// pixels that did not change as `unchanged` where there is such a pixel (the frame then blends),
/// compressed at `effort`.
fn job_after<P: PngPixel + PartialEq>(
    previous: &[P],
    pixels: &[P],
    size: (u32, u32),
    unchanged: Option<P>,
    effort: Effort,
) -> Job<P> {
    let (rect, blend) = if previous.is_empty() {
        (Rect::whole(size.0, size.1), Blend::Source)
    } else {
        match rect::changed(previous, pixels, size.0 as usize) {
            Some(rect) => (rect, if unchanged.is_some() { Blend::Over } else { Blend::Source }),
            None => (Rect::PIXEL, Blend::Source),
        }
    };
    let unchanged = unchanged.filter(|_| blend == Blend::Over);
    let cut = rect::cut(pixels, previous, size.0 as usize, rect, unchanged);
    Job { rect, blend, pixels: cut, effort }
}

/// The chunks an APNG encoder writes for the frame `pixels` after `previous` on a canvas of
/// `size` (RGB, or palette indices with `indexed`), unchanged pixels as `unchanged` where there
/// is such a pixel, shown for `delay` (numerator, denominator), numbered from `sequence`,
/// compressed at `effort`: its `fcTL` and `fdAT`. What `join` puts in place of a later part's
/// whole first frame, so that the joined file is the whole render's, byte for byte.
pub fn frame_after<P: PngPixel + PartialEq>(
    previous: &[P],
    pixels: &[P],
    (size, indexed): ((u32, u32), bool),
    unchanged: Option<P>,
    (delay, sequence): ((u16, u16), u32),
    effort: Effort,
) -> Result<Vec<u8>> {
    if previous.len() != pixels.len() || pixels.len() != size.0 as usize * size.1 as usize {
        return Err(Error::Encode("a frame of another size than the APNG's canvas".into()));
    }
    let frame = compress(job_after(previous, pixels, size, unchanged, effort), indexed)?;
    let mut bytes = Vec::with_capacity(frame.data.len() + 64);
    frame_chunks(&mut bytes, &frame, delay, sequence, false)?;
    Ok(bytes)
}

/// Appends a frame's `fcTL` (numbered `sequence`) and its data: the `IDAT` of the default image
/// (`default`), or an `fdAT` numbered `sequence + 1`.
fn frame_chunks(
    bytes: &mut Vec<u8>,
    frame: &Compressed,
    (num, den): (u16, u16),
    sequence: u32,
    default: bool,
) -> Result<()> {
    let Rect { x, y, width, height } = frame.rect;
    let mut fctl = Vec::with_capacity(26);
    fctl.extend(sequence.to_be_bytes());
    for v in [width, height, x, y] {
        fctl.extend(v.to_be_bytes());
    }
    fctl.extend(num.to_be_bytes());
    fctl.extend(den.to_be_bytes());
    // Frames are never disposed (the next one is drawn over).
    fctl.extend([0, u8::from(frame.blend == Blend::Over)]);
    write_chunk(bytes, b"fcTL", &fctl)?;
    if default {
        write_chunk(bytes, b"IDAT", &frame.data)?;
    } else {
        let mut fdat = Vec::with_capacity(frame.data.len() + 4);
        fdat.extend((sequence + 1).to_be_bytes());
        fdat.extend_from_slice(&frame.data);
        write_chunk(bytes, b"fdAT", &fdat)?;
    }
    Ok(())
}

impl<W: Write> Chunks<W> {
    fn new(out: W, stream: &Stream, palette: Option<Vec<[u8; 3]>>, transparency: Option<Vec<u8>>) -> Self {
        // A part of a split render numbers its frames as the whole render does.
        let (sequence, sequence_frame, times) = (0, stream.held().start, EncodeTimes::default());
        Chunks { out, stream: stream.clone(), palette, transparency, sequence, sequence_frame, times }
    }

    /// The signature and the chunks before the first frame.
    fn write_header(&mut self) -> Result<()> {
        let mut header = Vec::with_capacity(1024);
        header.extend_from_slice(b"\x89PNG\r\n\x1a\n");
        let ihdr = super::header((self.stream.width, self.stream.height), self.palette.is_some());
        write_chunk(&mut header, b"IHDR", &ihdr)?;
        let held = self.stream.held();
        let frames = u32::try_from(held.end - held.start).unwrap_or(u32::MAX);
        // 0 plays forever; 1 plays once.
        let plays = u32::from(!self.stream.looping);
        write_chunk(&mut header, b"acTL", &[frames.to_be_bytes(), plays.to_be_bytes()].concat())?;
        let mut text = b"Comment\0".to_vec();
        text.extend(self.stream.label().bytes().filter(|b| b.is_ascii()));
        write_chunk(&mut header, b"tEXt", &text)?;
        if let Some(colors) = &self.palette {
            write_chunk(&mut header, b"PLTE", colors.as_flattened())?;
        }
        if let Some(transparency) = &self.transparency {
            write_chunk(&mut header, b"tRNS", transparency)?;
        }
        self.write(&header)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let started = Instant::now();
        self.out.write_all(bytes).map_err(Error::output)?;
        self.times.write += started.elapsed();
        Ok(())
    }

    /// Writes one compressed frame: its control chunk, then its data (`IDAT` for the first,
    /// which is the default image; `fdAT` after).
    fn write_compressed(&mut self, frame: Compressed) -> Result<()> {
        self.times.encode += frame.encode;
        let mut bytes = Vec::with_capacity(frame.data.len() + 64);
        // A delay of 1/fps exactly (or of the frames it stands for).
        let span = self.stream.span(self.sequence_frame);
        let delay = ((span.end - span.start) as u16, self.stream.fps as u16);
        self.sequence_frame += 1;
        let default = self.sequence == 0;
        frame_chunks(&mut bytes, &frame, delay, self.sequence, default)?;
        self.sequence += if default { 1 } else { 2 };
        self.write(&bytes)
    }

    /// The last chunk, then the output flushed.
    fn finish(mut self) -> Result<EncodeTimes> {
        let mut end = Vec::with_capacity(12);
        write_chunk(&mut end, b"IEND", &[])?;
        self.write(&end)?;
        let started = Instant::now();
        self.out.flush().map_err(Error::output)?;
        self.times.write += started.elapsed();
        Ok(self.times)
    }
}

/// Bytes per pixel one thread holds while it compresses a frame at `effort`, at worst: the
/// rectangle (3), then by default a PNG crate encoding's buffers (16, as for a PNG sequence's
/// frame) while the other filter's result (at most the raw size and a little) is kept beside
/// them; fast, the filtered rows (3) and libdeflate's output, at most their size and a little
/// (4); at max, beside those, the best filtered rows so far (3) and a trial's stream (4).
fn working_bytes_per_pixel(effort: Effort) -> u64 {
    match effort {
        Effort::Fast => 3 + 3 + 4,
        Effort::Default => 3 + 16 + 4,
        Effort::Max => 3 + 3 + 4 + 3 + 4,
    }
}

/// Bytes an APNG encoder on `threads` threads holds per canvas pixel at `effort`: its copy of
/// the background and the previous frame, each frame in flight as RGB, and each thread's
/// working buffers.
pub fn bytes_per_pixel(threads: usize, effort: Effort, cells: u64) -> u64 {
    let in_flight = crate::base::pool::in_flight(threads, 3 * cells);
    3 + 3 + in_flight * 3 + threads.max(1) as u64 * working_bytes_per_pixel(effort)
}

/// The zlib level frames are compressed at by default: 3 rather than the usual 6, which takes
/// twice the time for 4–5% less (see docs/benchmarks.md).
pub const COMPRESSION_LEVEL: u8 = 3;

/// libdeflate's level for the `fast` effort: its quickest, which on our frames is both faster
/// and smaller than zlib's (docs/design.md, Effort).
const FAST_LEVEL: i32 = 1;

/// Filters and compresses one frame's rectangle, as its effort says: the zlib stream the frame's
/// `IDAT`/`fdAT` carry.
fn compress<P: PngPixel>(job: Job<P>, indexed: bool) -> Result<Compressed> {
    let started = Instant::now();
    let data = match job.effort {
        Effort::Default => png_crate_data(&job, indexed)?,
        Effort::Fast => fast_data(&job, indexed),
        Effort::Max => max_data(&job, indexed),
    };
    Ok(Compressed { rect: job.rect, blend: job.blend, data, encode: started.elapsed() })
}

/// The rectangle's raw bytes, its row length and its bytes a pixel.
fn raw<P: PngPixel>(job: &Job<P>, indexed: bool) -> (&[u8], usize, usize) {
    let bpp = if indexed { 1 } else { 3 };
    (P::bytes(&job.pixels), job.rect.width as usize * bpp, bpp)
}

/// The `fast` effort: one way of filtering, the one the default picks most often for such a
/// frame (none for palette indices and for frames whose unchanged pixels are a colour key,
/// whose runs filters would break; the adaptive choice for drawn RGB frames), and libdeflate's
/// quickest level.
fn fast_data<P: PngPixel>(job: &Job<P>, indexed: bool) -> Vec<u8> {
    let (bytes, stride, bpp) = raw(job, indexed);
    let rows = if indexed || job.blend == Blend::Over { Rows::Fixed(0) } else { Rows::MinSum };
    let mut filtered = Vec::new();
    filter::filter(bytes, stride, bpp, rows, &mut filtered);
    filter::zlib(&filtered, FAST_LEVEL)
}

/// The `max` effort: see [`filter::smallest`].
fn max_data<P: PngPixel>(job: &Job<P>, indexed: bool) -> Vec<u8> {
    let (bytes, stride, bpp) = raw(job, indexed);
    filter::smallest(bytes, stride, bpp)
}

/// The default effort: the image data of a PNG of just the rectangle, made by the png crate
/// (zlib level 3), filtered adaptively and not at all, the smaller kept (palette indices only
/// unfiltered).
fn png_crate_data<P: PngPixel>(job: &Job<P>, indexed: bool) -> Result<Vec<u8>> {
    Ok(if indexed {
        // Palette indices are not filtered (PNG's own advice).
        image_data(&encode_rect(job, png::Filter::NoFilter, true)?)
    } else {
        // Smooth pictures compress best filtered (the adaptive choice per row), grainy ones
        // unfiltered: each frame is compressed both ways and the smaller kept.
        let filtered = image_data(&encode_rect(job, png::Filter::Adaptive, false)?);
        let plain = image_data(&encode_rect(job, png::Filter::NoFilter, false)?);
        if plain.len() < filtered.len() { plain } else { filtered }
    })
}

/// A PNG file of one frame's rectangle, made by the png crate with `filter`.
fn encode_rect<P: PngPixel>(job: &Job<P>, filter: png::Filter, indexed: bool) -> Result<Vec<u8>> {
    let Rect { width, height, .. } = job.rect;
    let mut png = Vec::with_capacity(job.pixels.len() * 3 / 2 + 1024);
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_depth(png::BitDepth::Eight);
    if indexed {
        encoder.set_color(png::ColorType::Indexed);
        // The palette's colours do not enter the image data: any full palette serves.
        encoder.set_palette(vec![0u8; 3 * 256]);
    } else {
        encoder.set_color(png::ColorType::Rgb);
    }
    encoder.set_filter(filter);
    // zlib level 3: see COMPRESSION_LEVEL.
    encoder.set_deflate_compression(png::DeflateCompression::Level(COMPRESSION_LEVEL));
    let failed = |e: png::EncodingError| Error::Encode(format!("APNG frame: {e}"));
    let mut writer = encoder.write_header().map_err(failed)?;
    writer.write_image_data(P::bytes(&job.pixels)).map_err(failed)?;
    writer.finish().map_err(failed)?;
    Ok(png)
}

/// The concatenated `IDAT` payloads of a PNG file (one zlib stream).
fn image_data(png: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    let mut at = 8;
    while at + 12 <= png.len() {
        let length = u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]) as usize;
        let body = at + 8..(at + 8 + length).min(png.len());
        if &png[at + 4..at + 8] == b"IDAT" {
            data.extend_from_slice(&png[body]);
        }
        at += 12 + length;
    }
    data
}

impl<W: Write, P: PngPixel + PartialEq> crate::encode::Encoder for Apng<W, P> {
    type Pixel = P;

    fn background(&self) -> &[P] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[P]) -> Result<()> {
        if self.written == 0 {
            self.chunks.write_header()?;
        }
        self.written += 1;
        let job = self.job(pixels);
        let chunks = &mut self.chunks;
        self.workers.submit(job, &mut |frame| chunks.write_compressed(frame))
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        match P::from_rgb(rgb) {
            Some(pixels) => self.write_frame(pixels),
            None => Err(Error::Encode("a palette APNG takes only the background's colours".into())),
        }
    }

    fn compresses_apart(&self) -> bool {
        true
    }

    fn compress_on(&mut self, pool: &crate::base::pool::Pool) {
        self.workers.set_pool(pool);
    }

    fn wanted(&self) -> std::ops::Range<u64> {
        self.chunks.stream.held()
    }

    fn finish(mut self) -> Result<EncodeTimes> {
        let chunks = &mut self.chunks;
        self.workers.finish(&mut |frame| chunks.write_compressed(frame))?;
        self.chunks.finish()
    }

    fn exact_rgb<'a>(&self, pixels: &'a [P], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        // A palette APNG is made only from an exact palette.
        Some(match &self.chunks.palette {
            Some(colors) => crate::encode::expand(P::bytes(pixels), colors, scratch),
            None => P::bytes(pixels),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_colour_is_the_first_the_pixels_lack() {
        assert_eq!(missing_colour(&[[0, 0, 1], [0, 0, 0], [0, 0, 3]]), Some([0, 0, 2]));
        assert_eq!(missing_colour(&[[9, 9, 9]]), Some([0, 0, 0]));
        assert_eq!(missing_colour(&[[0, 0, 0], [0, 0, 1]]), Some([0, 0, 2]));
    }

    #[test]
    fn chunks_carry_the_standard_crc() {
        let mut out = Vec::new();
        write_chunk(&mut out, b"IEND", &[]).unwrap();
        // The CRC every PNG ends with.
        assert_eq!(out, [0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82]);
    }
}
