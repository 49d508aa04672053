//! Animated lossless WebP output (§12): one `ANMF` frame per output frame, each the
//! rectangle that changed (from even coordinates, as WebP requires), durations in whole
//! milliseconds by the pinned rule.
//!
//! Each rectangle is compressed losslessly by our VP8L encoder ([`vp8l`]) on a worker thread;
//! the RIFF container around them is written here. The first frame replaces the canvas; each
//! later one blends: a pixel it leaves unchanged is transparent (alpha 0, shows what was there),
//! a changed one opaque (alpha 255, shows itself), which libwebp's animation decoder and
//! browsers compose exactly. (image-webp composes a blended opaque pixel one level low, so
//! `diff` composes WebP frames itself.)

#[cfg_attr(not(feature = "native"), path = "vp8_absent.rs")]
pub mod vp8;
pub mod vp8l;

use std::io::{Seek, SeekFrom, Write};
use std::time::Instant;

use super::rect::{self, Rect};
use super::workers::Workers;
use super::{Effort, EncodeTimes, Stream};
use crate::base::error::{Error, Result};

/// Bytes per pixel one thread holds while it compresses a frame, at worst (noise), beside the
/// frame itself (counted with the frames in flight): at the peak the chosen way being parsed for
/// fewest bits (see `vp8l::encode`, the other ways gone by then): its pixels (4), its greedy
/// symbols (12, a pixel each), the matches weighed at each pixel (16), the cheapest cost and step
/// there (8 + 4), and the new parse's symbols beside a copy marked for the colour cache
/// (12 + 12), with the cross-colour transform's way waiting its turn (4 + 12). Less is held
/// before: the two versions weighed (`vp8l::encode_smaller`: 4 + 4 for the better so far, 4 + 4
/// for the next), then the four ways' pixels and greedy symbols (4 · (4 + 12): predicted, with
/// the transform, subtract-green alone, the colour table) while one is sorted into groups, with
/// each symbol's group (1) and the tiles' counted symbols (up to 16); and after: choosing the
/// cache size (4 · 12), writing (the bit stream grown by doubling, up to 2·4, beside the
/// symbols), the chunk around it, the first way's bitstream (up to 4) beside the transform's
/// parse.
const WORKING_BYTES_PER_PIXEL: u64 = 84;

/// Bytes a frame in flight holds per pixel: its rectangle in ARGB as it is and with gaps closed
/// (4 + 4; a frame's compressed chunk, once made, is smaller).
const IN_FLIGHT_BYTES_PER_PIXEL: u64 = 8;

/// Bytes a WebP encoder on `threads` threads holds per canvas pixel: its copy of the background
/// and the previous frame, each frame in flight, and each thread's working buffers.
pub fn bytes_per_pixel(threads: usize, effort: Effort, cells: u64) -> u64 {
    let working = match effort {
        Effort::Fast => FAST_WORKING_BYTES_PER_PIXEL,
        Effort::Default => WORKING_BYTES_PER_PIXEL,
        // Every way is parsed for fewest bits in turn (the default's peak), beside the smallest
        // bitstream so far (at most 4 a pixel and a little).
        Effort::Max => WORKING_BYTES_PER_PIXEL + 5,
    };
    3 + 3
        + crate::base::pool::in_flight(threads, IN_FLIGHT_BYTES_PER_PIXEL * cells) * IN_FLIGHT_BYTES_PER_PIXEL
        + threads.max(1) as u64 * working
}

/// The `fast` effort's working bytes per pixel: the pixels turned into residuals in place (4),
/// the symbols (12) and the bit stream (grown by doubling, up to 2·4).
const FAST_WORKING_BYTES_PER_PIXEL: u64 = 4 + 12 + 8;

/// One frame for a worker: its rectangle and the rectangle's pixels as ARGB, and whether they
/// blend (unchanged pixels transparent) or replace what was there (all opaque).
struct Job {
    rect: Rect,
    pixels: Vec<u32>,
    /// The blended pixels with short gaps closed (see [`close_gaps`]), if that changed any.
    closed: Option<Vec<u32>>,
    blend: bool,
    duration: u32,
    effort: Effort,
}

/// A worker's result: the frame's `ANMF` chunk, whole.
struct Compressed {
    chunk: Vec<u8>,
    encode: std::time::Duration,
}

/// Writes an animated lossless WebP into `out`, compressing frames on worker threads. The
/// RIFF size at the start is written last, so `out` must seek (a file; for a stream, a
/// [`super::fit::Capped`] buffer written out whole at the end).
pub struct Webp<W: Write + Seek> {
    background: Vec<[u8; 3]>,
    stream: Stream,
    previous: Vec<[u8; 3]>,
    written: u64,
    /// Compress each frame's rectangle into its `ANMF` chunk.
    workers: Workers<Job, Compressed>,
    riff: Riff<W>,
}

/// The file as it is written: its bytes so far, counted for the RIFF size.
struct Riff<W: Write + Seek> {
    out: W,
    /// Bytes written so far.
    length: u64,
    times: EncodeTimes,
}

impl<W: Write + Seek> Webp<W> {
    /// An animated WebP of `stream`, whose frames are gathered from `background` or given whole
    /// in RGB.
    pub fn new(out: W, stream: &Stream, background: Vec<[u8; 3]>) -> Self {
        Webp {
            background,
            stream: stream.clone(),
            previous: Vec::new(),
            written: 0,
            workers: Workers::new(compress)
                .holding(IN_FLIGHT_BYTES_PER_PIXEL * u64::from(stream.width) * u64::from(stream.height)),
            riff: Riff { out, length: 0, times: EncodeTimes::default() },
        }
    }

    /// Compresses frames on `threads` threads (1: all on the caller's thread).
    pub fn threads(mut self, threads: usize) -> Self {
        self.workers.set_threads(threads);
        self
    }

    /// `RIFF` (its size filled in at the end), `WEBP`, `VP8X` and `ANIM`.
    fn write_header(&mut self) -> Result<()> {
        let mut header = Vec::with_capacity(64);
        header.extend_from_slice(b"RIFF\0\0\0\0WEBP");
        // Animated, and with alpha: frames after the first are transparent where unchanged.
        let mut vp8x = vec![0x12, 0, 0, 0];
        vp8x.extend_from_slice(&(self.stream.width - 1).to_le_bytes()[..3]);
        vp8x.extend_from_slice(&(self.stream.height - 1).to_le_bytes()[..3]);
        chunk(&mut header, b"VP8X", &vp8x);
        // Background colour (a hint players mostly ignore; the first frame covers the canvas)
        // and the loop count.
        let mut anim = vec![255, 255, 255, 255];
        // 0 plays forever; 1 plays once.
        anim.extend(u16::from(!self.stream.looping).to_le_bytes());
        chunk(&mut header, b"ANIM", &anim);
        self.riff.write(&header)
    }

    fn job(&mut self, pixels: &[[u8; 3]]) -> Job {
        let duration = self.stream.duration_ms(self.stream.held().start + self.written);
        let job =
            job_after(&self.previous, pixels, (self.stream.width, self.stream.height), (duration, self.stream.effort));
        self.previous.clear();
        self.previous.extend_from_slice(pixels);
        self.written += 1;
        job
    }
}

/// The job for the frame `pixels` after `previous` (none: the whole canvas of `size`), shown
/// for `duration` milliseconds, compressed at `effort`.
fn job_after(previous: &[[u8; 3]], pixels: &[[u8; 3]], size: (u32, u32), (duration, effort): (u32, Effort)) -> Job {
    let width = size.0 as usize;
    let rect = if previous.is_empty() {
        Rect::whole(size.0, size.1)
    } else {
        match rect::changed(previous, pixels, width) {
            // Frames start at even coordinates.
            Some(r) => Rect { x: r.x & !1, y: r.y & !1, width: r.width + (r.x & 1), height: r.height + (r.y & 1) },
            None => Rect::PIXEL,
        }
    };
    let opaque = |[r, g, b]: [u8; 3]| 0xff00_0000 | u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b);
    // After the first frame, a pixel the frame leaves as it was is transparent and the frame
    // blends: runs of transparent pixels cost almost nothing.
    let blend = !previous.is_empty();
    let (x0, y0, w) = (rect.x as usize, rect.y as usize, rect.width as usize);
    let mut cut = Vec::with_capacity(w * rect.height as usize);
    for y in y0..y0 + rect.height as usize {
        let row = y * width + x0..y * width + x0 + w;
        if blend {
            let old = &previous[row.clone()];
            cut.extend(pixels[row].iter().zip(old).map(|(&p, &o)| if p == o { 0 } else { opaque(p) }));
        } else {
            cut.extend(pixels[row].iter().map(|&p| opaque(p)));
        }
    }
    // A blended frame's pixels with short gaps closed, if that changes any.
    // (The fast effort codes the frame as it is.)
    let closed = (blend && effort != Effort::Fast)
        .then(|| {
            let mut closed = cut.clone();
            let mut any = false;
            for (y, line) in (y0..).zip(closed.chunks_exact_mut(w)) {
                any |= close_gaps(line, &pixels[y * width + x0..][..w], opaque);
            }
            any.then_some(closed)
        })
        .flatten();
    Job { rect, pixels: cut, closed, blend, duration, effort }
}

/// The `ANMF` chunk a WebP encoder writes for the frame `pixels` after `previous` on a canvas of
/// `size`, shown for `duration` milliseconds, compressed at `effort`: what `join` puts in place
/// of a later part's whole first frame, so that the joined file is the whole render's, byte for
/// byte.
pub fn frame_after(
    previous: &[[u8; 3]],
    pixels: &[[u8; 3]],
    size: (u32, u32),
    (duration, effort): (u32, Effort),
) -> Result<Vec<u8>> {
    if previous.is_empty() || previous.len() != pixels.len() || pixels.len() != size.0 as usize * size.1 as usize {
        return Err(Error::Encode("a frame of another size than the WebP's canvas".into()));
    }
    compress(job_after(previous, pixels, size, (duration, effort))).map(|frame| frame.chunk)
}

/// The longest run of unchanged pixels between two changed ones (in a row) that is written
/// opaque, in its colour, rather than transparent.
const GAP: usize = 6;

/// Turns the short runs of transparent (unchanged) pixels in `line` that lie between opaque ones
/// back into their colours in `source`. Both decode alike (an opaque pixel of the colour that
/// was there). Where the water is lit, a changed region without holes predicts and repeats
/// better than one whose alpha flips every few pixels (the bundled pond 4.5% smaller); where
/// whole pixels move over a flat picture, the holes are cheaper (the classic rain 6.7% larger
/// closed), so each frame keeps the version that looks smaller (see `vp8l::encode_smaller`).
/// Returns whether it closed any.
fn close_gaps(line: &mut [u32], source: &[[u8; 3]], opaque: impl Fn([u8; 3]) -> u32) -> bool {
    let (mut last, mut closed) = (None, false);
    for i in 0..line.len() {
        if line[i] >> 24 == 0 {
            continue;
        }
        if let Some(last) = last.filter(|&l| i - l - 1 <= GAP && i - l > 1) {
            for j in last + 1..i {
                line[j] = opaque(source[j]);
            }
            closed = true;
        }
        last = Some(i);
    }
    closed
}

impl<W: Write + Seek> Riff<W> {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let started = Instant::now();
        self.out.write_all(bytes).map_err(Error::output)?;
        self.length += bytes.len() as u64;
        self.times.write += started.elapsed();
        Ok(())
    }

    fn deliver(&mut self, frame: Compressed) -> Result<()> {
        self.times.encode += frame.encode;
        self.write(&frame.chunk)
    }

    /// The RIFF size filled in, then the output flushed.
    fn finish(mut self) -> Result<EncodeTimes> {
        let started = Instant::now();
        let size = u32::try_from(self.length - 8)
            .map_err(|_| Error::usage("the WebP is larger than 4 GiB, which RIFF cannot hold", Some(RIFF_HINT)))?;
        let io = Error::output;
        self.out.seek(SeekFrom::Start(4)).map_err(io)?;
        self.out.write_all(&size.to_le_bytes()).map_err(io)?;
        self.out.seek(SeekFrom::End(0)).map_err(io)?;
        self.out.flush().map_err(io)?;
        self.times.write += started.elapsed();
        Ok(self.times)
    }
}

/// How to make a WebP that RIFF's 32-bit sizes can hold.
pub const RIFF_HINT: &str = "shorten the render or shrink the canvas, or write an MP4 or a PNG sequence";

/// The chunk a part of a split render carries its provenance in (`--frames`), after its frames.
pub const PART_CHUNK: &[u8; 4] = b"RIPL";

/// Appends one RIFF chunk (type, little-endian size, data, a pad byte to an even length).
pub(crate) fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(kind);
    out.extend((data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    if data.len() % 2 == 1 {
        out.push(0);
    }
}

/// Compresses one frame's rectangle losslessly and wraps it in its `ANMF` chunk.
fn compress(job: Job) -> Result<Compressed> {
    let started = Instant::now();
    let Rect { x, y, width, height } = job.rect;
    let (w, h) = (width as usize, height as usize);
    let vp8l = match job.effort {
        Effort::Fast => vp8l::encode_fast(job.pixels, w, h, job.blend),
        effort => {
            // The blended pixels with gaps closed, or as they are: whichever looks smaller (by
            // default) or is (at max).
            let versions: Vec<&[u32]> =
                [Some(&job.pixels), job.closed.as_ref()].into_iter().flatten().map(|v| &v[..]).collect();
            if effort == Effort::Max {
                vp8l::encode_max(&versions, w, h, job.blend)
            } else {
                vp8l::encode_smaller(&versions, w, h, job.blend)
            }
        }
    };
    let mut vp8l_chunk = Vec::with_capacity(vp8l.len() + 9);
    chunk(&mut vp8l_chunk, b"VP8L", &vp8l);
    let vp8l = &vp8l_chunk;
    let mut anmf = Vec::with_capacity(16 + vp8l.len());
    for v in [x / 2, y / 2, width - 1, height - 1, job.duration] {
        anmf.extend_from_slice(&v.to_le_bytes()[..3]);
    }
    // Blend (bit 1 clear: transparent pixels show what was there) or replace; never dispose.
    anmf.push(if job.blend { 0 } else { 0b10 });
    anmf.extend_from_slice(vp8l);
    let mut out = Vec::with_capacity(anmf.len() + 9);
    chunk(&mut out, b"ANMF", &anmf);
    Ok(Compressed { chunk: out, encode: started.elapsed() })
}

impl<W: Write + Seek> super::Encoder for Webp<W> {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[[u8; 3]]) -> Result<()> {
        if self.written == 0 {
            self.write_header()?;
        }
        let job = self.job(pixels);
        let riff = &mut self.riff;
        self.workers.submit(job, &mut |frame| riff.deliver(frame))
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        self.write_frame(rgb)
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

    fn finish(mut self) -> Result<EncodeTimes> {
        let riff = &mut self.riff;
        self.workers.finish(&mut |frame| riff.deliver(frame))?;
        if self.stream.part.is_some() {
            // A part of a split render says which, for `join`: a chunk of its own after the
            // frames, which decoders pass over (WebP has no comment).
            let mut part = Vec::new();
            chunk(&mut part, PART_CHUNK, self.stream.label().as_bytes());
            self.riff.write(&part)?;
        }
        self.riff.finish()
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(fps: u32, render_frames: u64) -> Stream {
        let comment = String::new();
        Stream {
            width: 1,
            height: 1,
            fps,
            step: 1,
            render_frames,
            looping: true,
            comment,
            effort: Effort::Default,
            part: None,
            quality: None,
            lossy: None,
        }
    }

    #[test]
    fn only_short_gaps_between_changed_pixels_are_closed() {
        let opaque = |[r, g, b]: [u8; 3]| 0xff00_0000 | u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b);
        let source: Vec<[u8; 3]> = (0..32).map(|i| [i, 2 * i, 3 * i]).collect();
        // Changed at 1, then after a gap of GAP, then after a gap of GAP + 1; the ends lie outside.
        let (a, b) = (1 + GAP + 1, 1 + GAP + 1 + GAP + 2);
        let mut line: Vec<u32> = (0..32).map(|i| if [1, a, b].contains(&i) { opaque(source[i]) } else { 0 }).collect();
        assert!(close_gaps(&mut line, &source, opaque));
        let shown: Vec<usize> = (0..32).filter(|&i| line[i] >> 24 == 255).collect();
        let expected: Vec<usize> = (1..=a).chain([b]).collect();
        assert_eq!(shown, expected);
        assert!(shown.iter().all(|&i| line[i] == opaque(source[i])));
        assert!(line.iter().all(|&p| p >> 24 == 255 || p == 0));
        // Nothing to close: changed neighbours, then a gap one too long.
        let ends = [0, 1, GAP + 3];
        let mut line: Vec<u32> = (0..GAP + 4).map(|i| if ends.contains(&i) { opaque(source[i]) } else { 0 }).collect();
        let before = line.clone();
        assert!(!close_gaps(&mut line, &source, opaque));
        assert_eq!(line, before);
    }

    #[test]
    fn durations_add_up_to_the_exact_total() {
        // 30 fps: 33, 34, 33, … ms, 1000 ms a second exactly.
        let s = stream(30, 60);
        assert_eq!((0..3).map(|i| s.duration_ms(i)).collect::<Vec<_>>(), [33, 34, 33]);
        assert_eq!((0..30).map(|i| s.duration_ms(i)).sum::<u32>(), 1000);
        assert_eq!((0..7).map(|i| stream(7, 7).duration_ms(i)).sum::<u32>(), 1000);
        // Half a millisecond rounds up: 1000/16 = 62.5.
        assert_eq!(stream(16, 2).duration_ms(0), 63);
    }

    #[test]
    fn every_other_frame_lasts_two_and_the_total_stays_exact() {
        // 5 frames at 30 fps, every other kept: 0–1, 2–3, 4 → 67, 66, 34 ms (167 ms in all).
        let s = stream(30, 5).reduced(2, 1, "");
        assert_eq!(s.frames(), 3);
        assert_eq!((0..3).map(|i| s.duration_ms(i)).collect::<Vec<_>>(), [67, 66, 34]);
        assert_eq!((0..3).map(|i| s.delay_cs(i)).collect::<Vec<_>>(), [7, 6, 4]);
        assert_eq!(stream(30, 5).duration_ms(0) + stream(30, 5).duration_ms(1), 67);
    }
}
