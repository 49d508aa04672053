//! The WebP side of a diff: an animated WebP composed frame by frame as libwebp's animation
//! decoder (the reference, what browsers, Pillow and ffmpeg use) composes it. Each frame's
//! bitstream is decoded on its own by image-webp (through the image crate), whose still images
//! are exact; the frames are
//! put together here, because image-webp's own composition blends an opaque pixel one level low.
//!
//! The rules, from the WebP container format and libwebp's `anim_decode.c`:
//! - the canvas starts transparent black; a frame disposed "to background" clears its
//!   rectangle to transparent black before the next frame is drawn;
//! - a frame that does not blend replaces its rectangle; one that blends leaves a pixel of
//!   alpha 255 as it is, shows what was there under a pixel of alpha 0, and mixes the others
//!   in 8-bit integers: `dst_factor = (dst_a·(256 − src_a)) >> 8`, `a = src_a + dst_factor`,
//!   each channel `((src·src_a + dst·dst_factor)·(2^24 / a)) >> 24`.

use std::io::Cursor;
use std::path::Path;

use image::ImageDecoder;

use crate::base::error::{Error, Result};
use crate::base::limits::{MAX_AREA, MAX_FRAMES};

/// A composed frame: RGBA over the whole canvas, and how long it shows, in milliseconds.
pub struct Composed {
    /// The canvas, RGBA.
    pub rgba: Vec<u8>,
    /// Its duration in milliseconds.
    pub duration_ms: u32,
}

/// An animated (or still) WebP's frames, ready to compose.
pub struct WebpFrames {
    bytes: Vec<u8>,
    /// Each frame: its place in `bytes`, rectangle, duration and flags.
    frames: Vec<Anmf>,
    width: usize,
    height: usize,
    canvas: Vec<u8>,
    next: usize,
    /// The last frame's rectangle, if it is to be cleared before the next.
    dispose: Option<[usize; 4]>,
}

/// One frame's entry.
struct Anmf {
    /// The frame's image chunks (ALPH, VP8, VP8L), as they stand in the file.
    data: std::ops::Range<usize>,
    rect: [usize; 4],
    duration_ms: u32,
    blend: bool,
    dispose: bool,
}

fn u24(b: &[u8]) -> usize {
    usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16
}

impl WebpFrames {
    /// Reads the container of the WebP in `bytes` (`path` names it in errors).
    pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<WebpFrames> {
        let broken = |why: &str| Error::input(path, format!("cannot decode it: {why}"));
        if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WEBP" {
            return Err(broken("not a WebP file"));
        }
        let (mut at, mut canvas, mut frames) = (12usize, None, Vec::new());
        let mut still = None;
        while at + 8 <= bytes.len() {
            let kind = &bytes[at..at + 4];
            let size = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]) as usize;
            let body = at + 8..(at + 8).saturating_add(size);
            if body.end > bytes.len() {
                return Err(broken("a chunk runs past the end of the file"));
            }
            match kind {
                b"VP8X" if size >= 10 => {
                    let b = &bytes[body.clone()];
                    canvas = Some((u24(&b[4..7]) + 1, u24(&b[7..10]) + 1));
                }
                b"ANMF" if size >= 16 => {
                    let b = &bytes[body.clone()];
                    let rect = [u24(&b[0..3]) * 2, u24(&b[3..6]) * 2, u24(&b[6..9]) + 1, u24(&b[9..12]) + 1];
                    let flags = b[15];
                    frames.push(Anmf {
                        data: body.start + 16..body.end,
                        rect,
                        duration_ms: u24(&b[12..15]) as u32,
                        blend: flags & 2 == 0,
                        dispose: flags & 1 == 1,
                    });
                    if frames.len() as u64 > MAX_FRAMES {
                        return Err(Error::input(path, format!("it has more than {MAX_FRAMES} frames")));
                    }
                }
                b"VP8 " | b"VP8L" | b"ALPH" if frames.is_empty() => {
                    let start = still.map_or(at, |r: std::ops::Range<usize>| r.start);
                    still = Some(start..body.end + (size & 1));
                }
                _ => {}
            }
            at = body.end + (size & 1);
        }
        if frames.is_empty() {
            // A still: its image chunks are the one frame, over the whole canvas.
            let Some(data) = still else { return Err(broken("it holds no image")) };
            let (w, h) = canvas.unwrap_or((0, 0));
            frames.push(Anmf { data, rect: [0, 0, w, h], duration_ms: 0, blend: false, dispose: false });
        }
        let (width, height) = canvas.ok_or_else(|| broken("no VP8X chunk gives the canvas size"))?;
        if width * height > MAX_AREA as usize {
            return Err(broken("the canvas is larger than any render"));
        }
        Ok(WebpFrames { bytes, frames, width, height, canvas: vec![0; width * height * 4], next: 0, dispose: None })
    }

    /// The canvas size.
    pub fn size(&self) -> (u32, u32) {
        (self.width as u32, self.height as u32)
    }

    /// The next frame composed, or `None` after the last.
    pub fn next_frame(&mut self, path: &Path) -> Result<Option<Composed>> {
        let Some(frame) = self.frames.get(self.next) else { return Ok(None) };
        self.next += 1;
        if let Some([x, y, w, h]) = self.dispose.take() {
            for row in y..(y + h).min(self.height) {
                let start = (row * self.width + x) * 4;
                let end = (row * self.width + (x + w).min(self.width)) * 4;
                self.canvas[start..end].fill(0);
            }
        }
        let [x, y, w, h] = frame.rect;
        let (pixels, alpha) = decode_frame(&self.bytes[frame.data.clone()], (w, h))
            .map_err(|why| Error::input(path, format!("cannot decode frame {}: {why}", self.next - 1)))?;
        for row in 0..h.min(self.height.saturating_sub(y)) {
            for col in 0..w.min(self.width.saturating_sub(x)) {
                let s = (row * w + col) * if alpha { 4 } else { 3 };
                let src = [pixels[s], pixels[s + 1], pixels[s + 2], if alpha { pixels[s + 3] } else { 255 }];
                let d = ((y + row) * self.width + x + col) * 4;
                let dst = [self.canvas[d], self.canvas[d + 1], self.canvas[d + 2], self.canvas[d + 3]];
                let out = if frame.blend { blend(src, dst) } else { src };
                self.canvas[d..d + 4].copy_from_slice(&out);
            }
        }
        if frame.dispose {
            self.dispose = Some(frame.rect);
        }
        Ok(Some(Composed { rgba: self.canvas.clone(), duration_ms: frame.duration_ms }))
    }
}

/// `src` (RGBA) drawn over `dst` as libwebp blends non-premultiplied pixels.
pub fn blend(src: [u8; 4], dst: [u8; 4]) -> [u8; 4] {
    let src_a = u32::from(src[3]);
    match src_a {
        255 => src,
        0 => dst,
        _ => {
            let dst_factor = (u32::from(dst[3]) * (256 - src_a)) >> 8;
            let a = src_a + dst_factor;
            let scale = (1u32 << 24) / a;
            let channel =
                |c: usize| (((u32::from(src[c]) * src_a + u32::from(dst[c]) * dst_factor) * scale) >> 24) as u8;
            [channel(0), channel(1), channel(2), a as u8]
        }
    }
}

/// Decodes one frame's image chunks (`ALPH` + `VP8 `, or `VP8L`) of `size` as a still WebP:
/// RGBA when it has alpha, else RGB.
fn decode_frame(chunks: &[u8], (w, h): (usize, usize)) -> std::result::Result<(Vec<u8>, bool), String> {
    let has_alph = chunks.starts_with(b"ALPH");
    let mut file = b"RIFF\0\0\0\0WEBP".to_vec();
    if has_alph {
        // A lossy frame with an alpha chunk needs the extended header around it.
        file.extend_from_slice(b"VP8X");
        file.extend_from_slice(&10u32.to_le_bytes());
        file.extend_from_slice(&[0x10, 0, 0, 0]);
        file.extend_from_slice(&((w - 1) as u32).to_le_bytes()[..3]);
        file.extend_from_slice(&((h - 1) as u32).to_le_bytes()[..3]);
    }
    file.extend_from_slice(chunks);
    let size = (file.len() - 8) as u32;
    file[4..8].copy_from_slice(&size.to_le_bytes());
    let decoder = image::codecs::webp::WebPDecoder::new(Cursor::new(file)).map_err(|e| e.to_string())?;
    if decoder.dimensions() != (w as u32, h as u32) {
        return Err(format!("its image is {:?}, its frame {w}×{h}", decoder.dimensions()));
    }
    let alpha = decoder.color_type().has_alpha();
    let mut out = vec![0; usize::try_from(decoder.total_bytes()).map_err(|_| "its image is too large")?];
    decoder.read_image(&mut out).map_err(|e| e.to_string())?;
    Ok((out, alpha))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blending_keeps_opaque_and_transparent_pixels_exact() {
        assert_eq!(blend([10, 20, 30, 255], [1, 2, 3, 255]), [10, 20, 30, 255]);
        assert_eq!(blend([10, 20, 30, 0], [1, 2, 3, 255]), [1, 2, 3, 255]);
        // Half over opaque: dst_factor = (255·128) >> 8 = 127, a = 255, scale = 65793;
        // red = ((200·128 + 100·127)·65793) >> 24 = 150.
        assert_eq!(blend([200, 0, 0, 128], [100, 0, 0, 255]), [150, 0, 0, 255]);
    }
}
