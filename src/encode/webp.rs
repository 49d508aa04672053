//! Animated lossless WebP output (SPEC §12): one `ANMF` frame per output frame, each the
//! rectangle that changed (from even coordinates, as WebP requires), durations in whole
//! milliseconds by the pinned rule.
//!
//! Each rectangle is compressed losslessly by the `image-webp` crate on a worker thread; the
//! RIFF container around them is written here. Frames replace their rectangle (no alpha
//! blending): blending opaque pixels is exact in libwebp, but not in every decoder.

use std::io::{Seek, SeekFrom, Write};
use std::time::Instant;

use super::EncodeTimes;
use super::apng::{Rect, changed};
use super::pool::Ordered;
use crate::background::Background;
use crate::error::{Error, Result};
use crate::scene::Scene;

/// The millisecond output frame `j` starts at: `(2000·j + fps) / (2·fps)`, 1000·j/fps rounded
/// half up, so the total is exact.
pub fn start_ms(j: u64, fps: u32) -> u64 {
    (2000 * j + u64::from(fps)) / (2 * u64::from(fps))
}

/// Bytes per pixel one thread holds while it compresses a frame, at worst: the rectangle's RGB
/// (3), the encoder's RGBA copy (4), its output, grown by doubling past a frame that does not
/// compress (up to 2·4), and the frame's chunk (4).
pub const WORKING_BYTES_PER_PIXEL: u64 = 19;

/// One frame for a worker: its rectangle and the rectangle's RGB pixels.
struct Job {
    rect: Rect,
    pixels: Vec<[u8; 3]>,
    duration: u32,
}

/// A worker's result: the frame's `ANMF` chunk, whole.
struct Compressed {
    chunk: Vec<u8>,
    encode: std::time::Duration,
}

/// Writes an animated lossless WebP into `out`, compressing frames on worker threads. The
/// RIFF size at the start is written last, so `out` must seek (a file; for a stream, see
/// [`crate::output::Spool`]).
pub struct Webp<W: Write + Seek> {
    out: W,
    background: Vec<[u8; 3]>,
    width: u32,
    height: u32,
    fps: u32,
    loops: u16,
    previous: Vec<[u8; 3]>,
    written: u64,
    /// Bytes written so far, for the RIFF size.
    length: u64,
    threads: usize,
    pool: Option<Ordered<Job, Compressed>>,
    times: EncodeTimes,
}

impl<W: Write + Seek> Webp<W> {
    /// An animated WebP of the scene's frames.
    pub fn new(out: W, scene: &Scene, background: &Background) -> Self {
        Webp {
            out,
            background: background.pixels.clone(),
            width: background.width as u32,
            height: background.height as u32,
            fps: scene.fps,
            // 0 plays forever; 1 plays once.
            loops: u16::from(!scene.looping),
            previous: Vec::new(),
            written: 0,
            length: 0,
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

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let started = Instant::now();
        self.out.write_all(bytes).map_err(|source| Error::Io { path: super::STREAM.into(), source })?;
        self.length += bytes.len() as u64;
        self.times.write += started.elapsed();
        Ok(())
    }

    /// `RIFF` (its size filled in at the end), `WEBP`, `VP8X` and `ANIM`.
    fn write_header(&mut self) -> Result<()> {
        let mut header = Vec::with_capacity(64);
        header.extend_from_slice(b"RIFF\0\0\0\0WEBP");
        let mut vp8x = vec![0x02, 0, 0, 0]; // animated
        vp8x.extend_from_slice(&(self.width - 1).to_le_bytes()[..3]);
        vp8x.extend_from_slice(&(self.height - 1).to_le_bytes()[..3]);
        chunk(&mut header, b"VP8X", &vp8x);
        // Background colour (a hint players mostly ignore; the first frame covers the canvas)
        // and the loop count.
        let mut anim = vec![255, 255, 255, 255];
        anim.extend(self.loops.to_le_bytes());
        chunk(&mut header, b"ANIM", &anim);
        self.write(&header)
    }

    fn job(&mut self, pixels: &[[u8; 3]]) -> Job {
        let width = self.width as usize;
        let duration = (start_ms(self.written + 1, self.fps) - start_ms(self.written, self.fps)) as u32;
        let rect = if self.previous.is_empty() {
            Rect { x: 0, y: 0, width: self.width, height: self.height }
        } else {
            match changed(&self.previous, pixels, width) {
                // Frames start at even coordinates.
                Some(r) => Rect { x: r.x & !1, y: r.y & !1, width: r.width + (r.x & 1), height: r.height + (r.y & 1) },
                // Nothing moved: one pixel, as it is (a frame is never dropped).
                None => Rect { x: 0, y: 0, width: 1, height: 1 },
            }
        };
        let mut cut = Vec::with_capacity(rect.width as usize * rect.height as usize);
        for row in rect.y as usize..(rect.y + rect.height) as usize {
            cut.extend_from_slice(&pixels[row * width + rect.x as usize..][..rect.width as usize]);
        }
        self.previous.clear();
        self.previous.extend_from_slice(pixels);
        self.written += 1;
        Job { rect, pixels: cut, duration }
    }

    fn deliver(&mut self, frame: Compressed) -> Result<()> {
        self.times.encode += frame.encode;
        self.write(&frame.chunk)
    }
}

/// Appends one RIFF chunk (type, little-endian size, data, a pad byte to an even length).
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
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
    let mut file = Vec::with_capacity(job.pixels.len() * 2 + 64);
    image_webp::WebPEncoder::new(&mut file)
        .encode(job.pixels.as_flattened(), width, height, image_webp::ColorType::Rgb8)
        .map_err(|e| Error::Encode(format!("WebP frame: {e}")))?;
    // The encoder writes a simple file: RIFF, size, WEBP, then one VP8L chunk.
    let vp8l = file
        .get(12..)
        .filter(|c| c.starts_with(b"VP8L"))
        .ok_or_else(|| Error::Encode("WebP frame: the encoder did not write one lossless chunk".into()))?;
    let mut anmf = Vec::with_capacity(16 + vp8l.len());
    for v in [x / 2, y / 2, width - 1, height - 1, job.duration] {
        anmf.extend_from_slice(&v.to_le_bytes()[..3]);
    }
    // Do not blend (the rectangle replaces what was there); do not dispose.
    anmf.push(0b10);
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
        let mut pool = self.pool.take().unwrap_or_else(|| Ordered::new(self.threads, compress));
        let submitted = pool.submit(job, &mut |frame| self.deliver(frame));
        self.pool = Some(pool);
        submitted
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        self.write_frame(rgb)
    }

    fn finish(mut self) -> Result<EncodeTimes> {
        if let Some(pool) = self.pool.take() {
            pool.finish(&mut |frame| self.deliver(frame))?;
        }
        let started = Instant::now();
        let size = u32::try_from(self.length - 8)
            .map_err(|_| Error::Encode("the WebP is larger than 4 GiB, which RIFF cannot hold".into()))?;
        let io = |source| Error::Io { path: super::STREAM.into(), source };
        self.out.seek(SeekFrom::Start(4)).map_err(io)?;
        self.out.write_all(&size.to_le_bytes()).map_err(io)?;
        self.out.seek(SeekFrom::End(0)).map_err(io)?;
        self.out.flush().map_err(io)?;
        self.times.write += started.elapsed();
        Ok(self.times)
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_add_up_to_the_exact_total() {
        // 30 fps: 33, 34, 33, … ms, 1000 ms a second exactly.
        let d: Vec<u64> = (0..3).map(|j| start_ms(j + 1, 30) - start_ms(j, 30)).collect();
        assert_eq!(d, [33, 34, 33]);
        assert_eq!(start_ms(30, 30), 1000);
        assert_eq!(start_ms(7, 7), 1000);
        // Half a millisecond rounds up: 1000/16 = 62.5.
        assert_eq!(start_ms(1, 16), 63);
    }
}
