//! Animated PNG output (SPEC §12): the first frame is the default image, each later frame only
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

use super::EncodeTimes;
use super::Stream;
use super::png::PngPixel;
use super::pool::Ordered;
use super::rect::{self, Rect};
use crate::background::Background;
use crate::error::{Error, Result};
use crate::scene::Scene;

/// How a frame is laid over the canvas (the `fcTL` blend op).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blend {
    /// The rectangle replaces what was there.
    Source,
    /// Transparent pixels keep what was there.
    Over,
}

/// One frame for a worker: its rectangle, how it blends, and its pixels (the rectangle's).
struct Job<P> {
    rect: Rect,
    blend: Blend,
    pixels: Vec<P>,
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
/// `P` is `[u8; 3]` for RGB frames ([`Apng::new`]) or `u8` for palette frames
/// ([`Apng::indexed`]).
pub struct Apng<W: Write, P: PngPixel> {
    out: W,
    background: Vec<P>,
    palette: Option<Vec<[u8; 3]>>,
    /// The pixel no frame holds (a spare palette index, or a colour the background lacks),
    /// transparent, which marks unchanged pixels.
    unchanged: Option<P>,
    /// The `tRNS` chunk that makes it transparent.
    transparency: Option<Vec<u8>>,
    stream: Stream,
    previous: Vec<P>,
    written: u64,
    sequence: u32,
    /// The output frame whose control chunk comes next.
    sequence_frame: u64,
    threads: usize,
    pool: Option<Ordered<Job<P>, Compressed>>,
    times: EncodeTimes,
}

impl<W: Write> Apng<W, [u8; 3]> {
    /// An animated PNG of the scene's RGB frames. Without a look, frames hold only background
    /// colours, so a colour the background lacks can mark unchanged pixels.
    pub fn new(out: W, scene: &Scene, background: &Background) -> Self {
        let stream = Stream::of(scene, background);
        let key = scene.look.is_gather().then(|| missing_colour(&background.pixels)).flatten();
        // A colour key: `tRNS` holds its red, green and blue as 16-bit samples.
        let transparency = key.map(|[r, g, b]| vec![0, r, 0, g, 0, b]);
        Apng::for_stream(out, &stream, background.pixels.clone(), None, (key, transparency))
    }

    /// An animated PNG of `stream` in RGB (frames given whole, in RGB, of any colours).
    pub fn rgb(out: W, stream: &Stream) -> Self {
        Apng::for_stream(out, stream, Vec::new(), None, (None, None))
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
    /// An animated PNG of palette frames, when the background has at most 256 colours and the
    /// scene has no look (frames then hold only its colours); `Err(out)` gives the writer back
    /// otherwise.
    pub fn indexed(out: W, scene: &Scene, background: &Background) -> std::result::Result<Self, W> {
        if !scene.look.is_gather() {
            return Err(out);
        }
        let mut palette = super::gif::Palette::for_background(&background.pixels);
        if !palette.exact {
            return Err(out);
        }
        let stream = Stream::of(scene, background);
        // A palette with room to spare gets one more entry, transparent, for unchanged pixels:
        // every entry opaque but that one.
        let spare = u8::try_from(palette.colors.len()).ok();
        let transparency = spare.map(|index| {
            palette.colors.push([0, 0, 0]);
            let mut alpha = vec![255u8; usize::from(index) + 1];
            alpha[usize::from(index)] = 0;
            alpha
        });
        Ok(Apng::for_stream(out, &stream, palette.indices, Some(palette.colors), (spare, transparency)))
    }
}

impl<W: Write, P: PngPixel + PartialEq> Apng<W, P> {
    /// An animated PNG of `stream` whose frames gather from `pixels` (palette indices of
    /// `palette`, or RGB without one); `unchanged` marks unchanged pixels, made transparent by
    /// its `tRNS` chunk.
    fn for_stream(
        out: W,
        stream: &Stream,
        pixels: Vec<P>,
        palette: Option<Vec<[u8; 3]>>,
        (unchanged, transparency): (Option<P>, Option<Vec<u8>>),
    ) -> Self {
        Apng {
            out,
            background: pixels,
            palette,
            unchanged,
            transparency,
            stream: stream.clone(),
            previous: Vec::new(),
            written: 0,
            sequence: 0,
            sequence_frame: 0,
            threads: super::pool::default_threads(),
            pool: None,
            times: EncodeTimes::default(),
        }
    }

    /// Compresses frames on `threads` threads (1: all on the caller's thread).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The signature and the chunks before the first frame.
    fn write_header(&mut self) -> Result<()> {
        let mut header = Vec::with_capacity(1024);
        header.extend_from_slice(b"\x89PNG\r\n\x1a\n");
        let colour_type = if self.palette.is_some() { 3 } else { 2 };
        let mut ihdr = Vec::with_capacity(13);
        ihdr.extend(self.stream.width.to_be_bytes());
        ihdr.extend(self.stream.height.to_be_bytes());
        ihdr.extend([8, colour_type, 0, 0, 0]);
        chunk(&mut header, b"IHDR", &ihdr);
        let frames = u32::try_from(self.stream.frames()).unwrap_or(u32::MAX);
        // 0 plays forever; 1 plays once.
        let plays = u32::from(!self.stream.looping);
        chunk(&mut header, b"acTL", &[frames.to_be_bytes(), plays.to_be_bytes()].concat());
        let mut text = b"Comment\0".to_vec();
        text.extend(self.stream.comment.bytes().filter(|b| b.is_ascii()));
        chunk(&mut header, b"tEXt", &text);
        if let Some(colors) = &self.palette {
            chunk(&mut header, b"PLTE", colors.as_flattened());
        }
        if let Some(transparency) = &self.transparency {
            chunk(&mut header, b"tRNS", transparency);
        }
        self.write(&header)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let started = Instant::now();
        self.out.write_all(bytes).map_err(|source| Error::Io { path: super::STREAM.into(), source })?;
        self.times.write += started.elapsed();
        Ok(())
    }

    /// Writes one compressed frame: its control chunk, then its data (`IDAT` for the first,
    /// which is the default image; `fdAT` after).
    fn write_compressed(&mut self, frame: Compressed) -> Result<()> {
        self.times.encode += frame.encode;
        let mut bytes = Vec::with_capacity(frame.data.len() + 64);
        let Rect { x, y, width, height } = frame.rect;
        let mut fctl = Vec::with_capacity(26);
        fctl.extend(self.sequence.to_be_bytes());
        for v in [width, height, x, y] {
            fctl.extend(v.to_be_bytes());
        }
        // A delay of 1/fps exactly (or of the frames it stands for); frames are never disposed
        // (the next one is drawn over).
        let span = self.stream.span(self.sequence_frame);
        fctl.extend(((span.end - span.start) as u16).to_be_bytes());
        fctl.extend((self.stream.fps as u16).to_be_bytes());
        self.sequence_frame += 1;
        fctl.extend([0, u8::from(frame.blend == Blend::Over)]);
        chunk(&mut bytes, b"fcTL", &fctl);
        self.sequence += 1;
        if self.sequence == 1 {
            chunk(&mut bytes, b"IDAT", &frame.data);
        } else {
            let mut fdat = Vec::with_capacity(frame.data.len() + 4);
            fdat.extend(self.sequence.to_be_bytes());
            fdat.extend_from_slice(&frame.data);
            chunk(&mut bytes, b"fdAT", &fdat);
            self.sequence += 1;
        }
        self.write(&bytes)
    }

    /// The job for the next frame: the whole canvas first, then the rectangle that changed.
    fn job(&mut self, pixels: &[P]) -> Job<P> {
        let width = self.stream.width as usize;
        let (rect, blend) = if self.previous.is_empty() {
            (Rect::whole(self.stream.width, self.stream.height), Blend::Source)
        } else {
            match rect::changed(&self.previous, pixels, width) {
                Some(rect) => (rect, if self.unchanged.is_some() { Blend::Over } else { Blend::Source }),
                None => (Rect::PIXEL, Blend::Source),
            }
        };
        let unchanged = self.unchanged.filter(|_| blend == Blend::Over);
        let cut = rect::cut(pixels, &self.previous, width, rect, unchanged);
        self.previous.clear();
        self.previous.extend_from_slice(pixels);
        Job { rect, blend, pixels: cut }
    }
}

/// Bytes per pixel one thread holds while it compresses a frame, at worst: the rectangle (3),
/// and a PNG crate encoding's buffers ([`super::png::WORKING_BYTES_PER_PIXEL`]) while the
/// other filter's result (at most the raw size and a little) is kept beside them.
pub const WORKING_BYTES_PER_PIXEL: u64 = 3 + super::png::WORKING_BYTES_PER_PIXEL + 4;

/// The zlib level frames are compressed at: 3 rather than the usual 6, which takes twice the
/// time for 4–5% less (see BENCHMARKS.md).
pub const COMPRESSION_LEVEL: u8 = 3;

/// Appends one chunk (length, type, data, CRC) to `out`.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend((data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend(crc.finalize().to_be_bytes());
}

/// Filters and compresses one frame's rectangle: the image data of a PNG of just that
/// rectangle (made by the png crate), which is what the frame's `IDAT`/`fdAT` carry.
fn compress<P: PngPixel>(job: Job<P>, indexed: bool) -> Result<Compressed> {
    let started = Instant::now();
    let data = if indexed {
        // Palette indices are not filtered (PNG's own advice).
        image_data(&encode_rect(&job, png::Filter::NoFilter, true)?)
    } else {
        // Smooth pictures compress best filtered (the adaptive choice per row), grainy ones
        // unfiltered: each frame is compressed both ways and the smaller kept.
        let filtered = image_data(&encode_rect(&job, png::Filter::Adaptive, false)?);
        let plain = image_data(&encode_rect(&job, png::Filter::NoFilter, false)?);
        if plain.len() < filtered.len() { plain } else { filtered }
    };
    Ok(Compressed { rect: job.rect, blend: job.blend, data, encode: started.elapsed() })
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

impl<W: Write, P: PngPixel + PartialEq> super::Encoder for Apng<W, P> {
    type Pixel = P;

    fn background(&self) -> &[P] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[P]) -> Result<()> {
        if self.written == 0 {
            self.write_header()?;
        }
        self.written += 1;
        let job = self.job(pixels);
        let (threads, indexed) = (self.threads, self.palette.is_some());
        let mut pool = self.pool.take().unwrap_or_else(|| Ordered::new(threads, move |job| compress(job, indexed)));
        let submitted = pool.submit(job, &mut |frame| self.write_compressed(frame));
        self.pool = Some(pool);
        submitted
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        match P::from_rgb(rgb) {
            Some(pixels) => self.write_frame(pixels),
            None => Err(Error::Encode("a palette APNG takes only the background's colours".into())),
        }
    }

    fn finish(mut self) -> Result<EncodeTimes> {
        if let Some(pool) = self.pool.take() {
            pool.finish(&mut |frame| self.write_compressed(frame))?;
        }
        let mut end = Vec::with_capacity(12);
        chunk(&mut end, b"IEND", &[]);
        self.write(&end)?;
        let started = Instant::now();
        self.out.flush().map_err(|source| Error::Io { path: super::STREAM.into(), source })?;
        self.times.write += started.elapsed();
        Ok(self.times)
    }

    fn exact_rgb<'a>(&self, pixels: &'a [P], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        // A palette APNG is made only from an exact palette.
        Some(match &self.palette {
            Some(colors) => super::expand(P::bytes(pixels), colors, scratch),
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
        chunk(&mut out, b"IEND", &[]);
        // The CRC every PNG ends with.
        assert_eq!(out, [0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82]);
    }
}
