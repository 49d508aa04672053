//! Animated GIF output (§6.1): one global palette from the background, exact delays. The frames'
//! LZW code streams come from one of two parses: [`lzw`] (the fast one, every level's default)
//! and `choosing` (`--effort max`: unchanged pixels transparent or their own colour, whichever
//! codes shorter, written through `code_stream`). With `--lossy`, `lossy` first holds each frame
//! where the screen already shows a near colour; what it leaves is compressed like any frame.

mod choosing;
mod code_stream;
mod lossy;
pub mod lzw;

pub use lossy::{DEFAULT_LEVEL as DEFAULT_LOSSY, LEVELS_PER_CHANNEL_STEP};

use std::io::Write;
use std::sync::{Arc, OnceLock};

use std::time::{Duration, Instant};

use super::palette::{ColourIndex, Palette};
use super::workers::Workers;
use super::{Effort, EncodeTimes, Stream};
use crate::base::error::{Error, Result};

/// The delay of output frame `i` in centiseconds: `c(i+1) - c(i)` with
/// `c(j) = (200·j + fps) / (2·fps)`, so the running total is always exact.
pub fn delay_cs(i: u64, fps: u32) -> u16 {
    let c = |j: u64| (200 * j + u64::from(fps)) / (2 * u64::from(fps));
    (c(i + 1) - c(i)) as u16
}

/// A comment extension holding `text` (at most 255 bytes: one sub-block), as a GIF's blocks
/// carry it: introducer, label, the sub-block, the terminator.
pub(crate) fn comment_extension(text: &[u8]) -> Vec<u8> {
    [&[0x21, 0xfe, text.len() as u8][..], text, &[0]].concat()
}

/// Bytes a GIF encoder on `threads` threads holds per canvas pixel of `cells`: the palette
/// indices of the background and of the previous frame, and each frame in flight (and one set
/// kept for the next, see `JOB_BYTES_PER_PIXEL`); at the `max` effort, each thread also holds
/// the rectangle's colours (1) and two more streams (at most 1.5 each).
pub fn bytes_per_pixel(threads: usize, effort: Effort, cells: u64) -> u64 {
    let choosing = if effort == Effort::Max { threads.max(1) as u64 * 4 } else { 0 };
    2 + (crate::base::pool::in_flight(threads, JOB_BYTES_PER_PIXEL * cells) + 1) * JOB_BYTES_PER_PIXEL + choosing
}

/// Bytes a frame's job holds per pixel: its indices (shared with the next job, whose previous
/// frame they are) and the rectangle that changed, then its compressed bytes in the
/// rectangle's place (measured on a 16384×4096 canvas of noise with rain everywhere, the worst
/// case: 10.6 bytes a pixel in all at three jobs in flight, against the 11 this gives).
const JOB_BYTES_PER_PIXEL: u64 = 2;

/// Streams frames of palette indices into a GIF.
///
/// Each frame after the first holds only the rectangle that changed, with unchanged pixels
/// transparent where the palette has a free index; frames are LZW-compressed on worker threads
/// and written in order. The decoded frames are the same whatever the thread count, and so are
/// the bytes.
pub struct GifEncoder<W: Write> {
    encoder: ::gif::Encoder<W>,
    palette: Palette,
    transparent: Option<u8>,
    stream: Stream,
    written: u64,
    /// The last frame's palette indices, which the next is compared with.
    previous: Option<Arc<Vec<u8>>>,
    /// LZW-compress frames, each with the time it took.
    workers: Workers<Job, Compressed>,
    /// Buffers of frames written, for the next frames' pixels and data (fresh ones cost the
    /// system a page fault every few kilobytes).
    spare: Spare,
    times: EncodeTimes,
    /// For frames drawn with a look: each colour's palette index, one table for every thread
    /// that maps, made on the first such frame.
    colour_index: OnceLock<Arc<ColourIndex>>,
    /// A buffer for such a frame's indices.
    indices: Vec<u8>,
    /// `--lossy`: which shown colours may stay for which rendered ones. Each frame is held here,
    /// against what the frame before showed (`previous`), before it goes to the workers.
    lossy: Option<lossy::Hold>,
}

fn gif_error(e: ::gif::EncodingError) -> Error {
    match e {
        ::gif::EncodingError::Io(source) => Error::output(source),
        other => Error::Encode(other.to_string()),
    }
}

impl<W: Write> GifEncoder<W> {
    /// Writes the header of a GIF of `stream` (its canvas, timing, loop and provenance comment)
    /// in `palette`, whose indices are the background's at the stream's size, or which frames
    /// given in RGB are mapped to. Frames are compressed on every core; see
    /// [`GifEncoder::threads`].
    pub fn new(writer: W, stream: &Stream, palette: Palette) -> Result<Self> {
        let transparent = palette.transparent_index();
        let mut flat: Vec<u8> = palette.colors.iter().flatten().copied().collect();
        if transparent.is_some() {
            // The transparent slot's colour is never shown.
            flat.extend([0, 0, 0]);
        }
        let (width, height) = (stream.width as u16, stream.height as u16);
        let mut encoder = ::gif::Encoder::new(writer, width, height, &flat).map_err(gif_error)?;
        if stream.looping {
            encoder.set_repeat(::gif::Repeat::Infinite).map_err(gif_error)?;
        }
        encoder.write_raw_extension(::gif::AnyExtension(0xFE), &[stream.label().as_bytes()]).map_err(gif_error)?;
        let colors = palette.colors.len() + usize::from(transparent.is_some());
        let code_size = lzw::min_code_size(colors);
        let size = (width, height);
        let effort = stream.effort;
        let workers = Workers::new(move |job: Job| {
            let started = Instant::now();
            let Job { previous, pixels, delay, transparent_whole, mut cut, mut data } = job;
            let mut frame = match &previous {
                Some(previous) => difference(previous, &pixels, size, transparent, delay, cut),
                None => {
                    cut.clear();
                    cut.extend_from_slice(&pixels);
                    let (width, height) = size;
                    let transparent = transparent_whole;
                    ::gif::Frame { width, height, delay, transparent, buffer: cut.into(), ..Default::default() }
                }
            };
            // Unchanged pixels are runs of the transparent index.
            lzw::compress_into(&frame.buffer, code_size, frame.transparent, &mut data);
            if let (Effort::Max, Some(previous)) = (effort, &previous) {
                choose_smaller(&mut data, &frame, (previous, &pixels), size.0, code_size);
            }
            let cut = std::mem::replace(&mut frame.buffer, data.into()).into_owned();
            Ok(Compressed { frame, cut, previous, took: started.elapsed() })
        })
        .holding(JOB_BYTES_PER_PIXEL * u64::from(stream.width) * u64::from(stream.height));
        let lossy = stream.lossy.map(|level| lossy::Hold::new(&palette.colors, level));
        Ok(GifEncoder {
            encoder,
            palette,
            transparent,
            stream: stream.clone(),
            written: 0,
            previous: None,
            workers,
            spare: Spare::default(),
            times: EncodeTimes::default(),
            colour_index: OnceLock::new(),
            indices: Vec::new(),
            lossy,
        })
    }

    /// Adds a comment after the provenance, before any frame: text a reader of the file may
    /// want besides the picture (a reference's frame hashes), in sub-blocks of 255 bytes.
    pub fn note(&mut self, text: &str) -> Result<()> {
        let blocks: Vec<&[u8]> = text.as_bytes().chunks(255).collect();
        self.encoder.write_raw_extension(::gif::AnyExtension(0xFE), &blocks).map_err(gif_error)
    }

    /// Compresses frames on `threads` threads (1: all on the caller's thread).
    pub fn threads(mut self, threads: usize) -> Self {
        self.workers.set_threads(threads);
        self
    }

    /// The palette the frames index into.
    pub fn palette(&self) -> &Palette {
        &self.palette
    }

    /// Hands `frame`, the next frame's palette indices (with `--lossy`, held first where the
    /// screen is near enough), to the workers, which compare it with the frame before and
    /// compress what changed.
    fn submit(&mut self, mut frame: Vec<u8>) -> Result<()> {
        let started = Instant::now();
        if let (Some(hold), Some(shown)) = (&self.lossy, &self.previous) {
            // A lossy GIF shows the render held where the screen is near enough.
            hold.apply(&mut frame, shown);
        }
        let frame = Arc::new(frame);
        let held = self.stream.held();
        let job = Job {
            previous: self.previous.replace(frame.clone()),
            pixels: frame,
            delay: self.stream.delay_cs(held.start + self.written),
            // A part after the first names the transparent index on its whole first frame (no
            // pixel of which takes it), for `join` to re-encode that frame as the difference the
            // whole render has there.
            transparent_whole: self.transparent.filter(|_| held.start > 0),
            cut: self.spare.cuts.pop().unwrap_or_default(),
            data: self.spare.data.pop().unwrap_or_default(),
        };
        self.written += 1;
        self.times.encode += started.elapsed();
        let (encoder, times, spare) = (&mut self.encoder, &mut self.times, &mut self.spare);
        self.workers.submit(job, &mut |done| write_compressed(encoder, times, spare, done))
    }

    /// The table frames drawn in RGB are mapped through, made the first time.
    fn colour_index(&self) -> &Arc<ColourIndex> {
        self.colour_index.get_or_init(|| Arc::new(ColourIndex::new(&self.palette.colors)))
    }
}

/// The part of `pixels` (a frame's palette indices, `size` as width and height) that differs
/// from `previous`, unchanged pixels as `transparent` where there is such an index, as a GIF
/// frame shown for `delay` to compress, cut into `out`.
fn difference(
    previous: &[u8],
    pixels: &[u8],
    size: (u16, u16),
    transparent: Option<u8>,
    delay: u16,
    mut out: Vec<u8>,
) -> ::gif::Frame<'static> {
    let Some(rect) = super::rect::changed(previous, pixels, usize::from(size.0)) else {
        // Nothing changed: one pixel, unchanged, carries the delay.
        let pixel = transparent.unwrap_or(pixels[0]);
        return ::gif::Frame {
            width: 1,
            height: 1,
            delay,
            transparent,
            buffer: vec![pixel].into(),
            ..Default::default()
        };
    };
    super::rect::cut_into(pixels, previous, usize::from(size.0), rect, transparent, &mut out);
    let buffer = out;
    ::gif::Frame {
        left: rect.x as u16,
        top: rect.y as u16,
        width: rect.width as u16,
        height: rect.height as u16,
        delay,
        transparent,
        buffer: buffer.into(),
        ..Default::default()
    }
}

/// The `max` effort: `data`, the LZW stream of `frame` (the frame `pixels` after `previous` on a
/// canvas `width` wide, unchanged pixels transparent), replaced by the stream that may code
/// each unchanged pixel as transparent or as its own colour, whichever makes longer strings,
/// where that is smaller.
fn choose_smaller(
    data: &mut Vec<u8>,
    frame: &::gif::Frame<'_>,
    (previous, pixels): (&[u8], &[u8]),
    width: u16,
    code_size: u8,
) {
    let Some(transparent) = frame.transparent else { return };
    let rect = super::rect::Rect {
        x: u32::from(frame.left),
        y: u32::from(frame.top),
        width: u32::from(frame.width),
        height: u32::from(frame.height),
    };
    let mut colours = Vec::new();
    super::rect::cut_into(pixels, previous, usize::from(width), rect, None, &mut colours);
    let choosing = choosing::compress_choosing(&frame.buffer, &colours, transparent, code_size);
    if choosing.len() < data.len() {
        *data = choosing;
    }
}

/// The bytes a GIF encoder writes for the frame `pixels` (palette indices) after `previous`,
/// shown for `delay`, in a GIF whose header (signature, screen, palette) is `header`, whose
/// unchanged pixels take `transparent` and whose data starts at LZW code size `code_size`,
/// compressed at `effort`:
/// what `join` puts in place of a part's whole first frame, so that the joined file is the whole
/// render's, byte for byte.
pub fn frame_after(
    header: &[u8],
    (transparent, code_size): (Option<u8>, u8),
    previous: &[u8],
    pixels: &[u8],
    delay: u16,
    effort: Effort,
) -> Result<Vec<u8>> {
    let side = |at: usize| header.get(at..at + 2).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    let size = (side(6), side(8));
    if previous.len() != pixels.len() || pixels.len() != usize::from(size.0) * usize::from(size.1) {
        return Err(Error::Encode("a frame of another size than the GIF's canvas".into()));
    }
    let mut frame = difference(previous, pixels, size, transparent, delay, Vec::new());
    let mut data = lzw::compress(&frame.buffer, code_size, frame.transparent);
    if effort == Effort::Max {
        choose_smaller(&mut data, &frame, (previous, pixels), size.0, code_size);
    }
    frame.buffer = data.into();
    let palette = header.get(13..).unwrap_or_default();
    let mut encoder = ::gif::Encoder::new(Vec::new(), size.0, size.1, palette).map_err(gif_error)?;
    let start = encoder.get_ref().len();
    encoder.write_lzw_pre_encoded_frame(&frame).map_err(gif_error)?;
    Ok(encoder.get_ref()[start..].to_vec())
}

impl<W: Write> super::Encoder for GifEncoder<W> {
    type Pixel = u8;

    fn background(&self) -> &[u8] {
        &self.palette.indices
    }

    fn write_frame(&mut self, pixels: &[u8]) -> Result<()> {
        let mut frame = self.spare.frames.pop().unwrap_or_default();
        frame.clear();
        frame.extend_from_slice(pixels);
        self.submit(frame)
    }

    fn write_owned(&mut self, pixels: Vec<u8>) -> Result<Vec<u8>> {
        let spare = self.spare.frames.pop().unwrap_or_default();
        self.submit(pixels)?;
        Ok(spare)
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        let started = Instant::now();
        let mut indices = std::mem::take(&mut self.indices);
        indices.resize(rgb.len(), 0);
        self.colour_index().map(rgb, &mut indices);
        self.times.encode += started.elapsed();
        self.indices = self.write_owned(indices)?;
        Ok(())
    }

    fn colour_map(&self) -> Option<super::RgbMap<u8>> {
        let index = self.colour_index().clone();
        Some(Arc::new(move |rgb: &[[u8; 3]], out: &mut [u8]| index.map(rgb, out)))
    }

    fn compresses_apart(&self) -> bool {
        true
    }

    fn compress_on(&mut self, pool: &crate::base::pool::Pool) {
        self.workers.set_pool(pool);
    }

    fn wanted(&self) -> std::ops::Range<u64> {
        self.stream.held()
    }

    fn exact_rgb<'a>(&self, pixels: &'a [u8], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        self.palette.exact.then(|| super::expand(pixels, &self.palette.colors, scratch))
    }

    fn finish(mut self) -> Result<EncodeTimes> {
        let (encoder, times, spare) = (&mut self.encoder, &mut self.times, &mut self.spare);
        self.workers.finish(&mut |done| write_compressed(encoder, times, spare, done))?;
        let started = Instant::now();
        let mut writer = self.encoder.into_inner().map_err(gif_error)?;
        writer.flush().map_err(Error::output)?;
        self.times.write += started.elapsed();
        Ok(self.times)
    }
}

/// A frame to compress: its palette indices and the frame's before it (none for the first), its
/// delay, the transparent index a whole first frame names, and buffers for its changed
/// rectangle and its data.
struct Job {
    previous: Option<Arc<Vec<u8>>>,
    pixels: Arc<Vec<u8>>,
    delay: u16,
    transparent_whole: Option<u8>,
    cut: Vec<u8>,
    data: Vec<u8>,
}

/// A frame compressed, the buffers it is done with given back, and the time it took.
struct Compressed {
    frame: ::gif::Frame<'static>,
    cut: Vec<u8>,
    previous: Option<Arc<Vec<u8>>>,
    took: Duration,
}

/// Buffers of frames written: for whole frames, their changed rectangles and their data.
#[derive(Default)]
struct Spare {
    frames: Vec<Vec<u8>>,
    cuts: Vec<Vec<u8>>,
    data: Vec<Vec<u8>>,
}

/// Writes one compressed frame, counting the compression and the writing; its buffers go to
/// `spare`.
fn write_compressed<W: Write>(
    encoder: &mut ::gif::Encoder<W>,
    times: &mut EncodeTimes,
    spare: &mut Spare,
    Compressed { frame, cut, previous, took }: Compressed,
) -> Result<()> {
    times.encode += took;
    let started = Instant::now();
    encoder.write_lzw_pre_encoded_frame(&frame).map_err(gif_error)?;
    times.write += started.elapsed();
    spare.cuts.push(cut);
    spare.data.push(frame.buffer.into_owned());
    // The frame before this one: every job that compared with it is done (results come in
    // order), and a later frame is the last.
    if let Some(previous) = previous.and_then(|p| Arc::try_unwrap(p).ok()) {
        spare.frames.push(previous);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_at_30_fps_alternate_3_4_3() {
        let d: Vec<u16> = (0..6).map(|i| delay_cs(i, 30)).collect();
        assert_eq!(d, vec![3, 4, 3, 3, 4, 3]);
        // 30 frames at 30 fps are exactly one second.
        assert_eq!((0..30).map(|i| u32::from(delay_cs(i, 30))).sum::<u32>(), 100);
    }

    #[test]
    fn delays_at_other_rates() {
        assert!((0..10).all(|i| delay_cs(i, 25) == 4));
        assert!((0..10).all(|i| delay_cs(i, 50) == 2));
        // 7 fps: c = 0, 14, 29, 43, 57, 71, 86, 100 (100·j/7 rounded half up).
        let d: Vec<u16> = (0..7).map(|i| delay_cs(i, 7)).collect();
        assert_eq!(d, vec![14, 15, 14, 14, 14, 15, 14]);
    }
}
