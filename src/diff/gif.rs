//! The GIF side of a `diff`: its frames composed as a viewer shows them (disposal, transparency,
//! black where nothing was drawn), and its provenance from its comments.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels, bad, check_size};
use crate::base::error::Result;
use crate::base::limits::{MAX_AREA, MAX_FRAMES};
use crate::encode::manifest::PixelKind;
use crate::encode::provenance::Provenance;

struct GifFrames {
    path: PathBuf,
    decoder: gif::Decoder<BufReader<File>>,
    /// The composed canvas, RGBA.
    canvas: Vec<u8>,
    /// What `DisposalMethod::Previous` restores.
    saved: Vec<u8>,
    /// The previous frame's rectangle and disposal, applied before the next frame.
    pending: Option<(usize, usize, usize, usize, gif::DisposalMethod)>,
    width: usize,
    /// Frames read so far.
    frames: u64,
}

pub(super) fn open(path: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let file = File::open(path).map_err(|e| bad(path, format!("cannot read it: {e}")))?;
    let mut head = vec![0u8; 4096];
    let n = (&file).read(&mut head).map_err(|e| bad(path, e))?;
    let provenance = comments(&head[..n]).iter().find_map(|c| Provenance::parse(c));
    let file = File::open(path).map_err(|e| bad(path, format!("cannot read it: {e}")))?;
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    // A frame's buffer may hold at most a whole canvas of the largest render.
    let most = std::num::NonZeroU64::new(4 * MAX_AREA as u64).unwrap_or(std::num::NonZeroU64::MIN);
    options.set_memory_limit(gif::MemoryLimit::Bytes(most));
    let decoder = options.read_info(BufReader::new(file)).map_err(|e| bad(path, format!("cannot decode it: {e}")))?;
    let (width, height) = (u32::from(decoder.width()), u32::from(decoder.height()));
    check_size(path, (width, height))?;
    let info = Info { path: path.into(), kind: Kind::Gif, width, height, provenance, colours: PixelKind::Gif };
    let pixels = width as usize * height as usize * 4;
    let frames = GifFrames {
        path: path.into(),
        decoder,
        canvas: vec![0; pixels],
        saved: Vec::new(),
        pending: None,
        width: width as usize,
        frames: 0,
    };
    Ok((info, Box::new(frames)))
}

impl FrameSource for GifFrames {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        // Dispose of the previous frame as a viewer would before drawing this one.
        if let Some((left, top, w, h, dispose)) = self.pending.take() {
            match dispose {
                gif::DisposalMethod::Background => {
                    for y in top..top + h {
                        let row = (y * self.width + left) * 4;
                        if let Some(r) = self.canvas.get_mut(row..row + w * 4) {
                            r.fill(0);
                        }
                    }
                }
                gif::DisposalMethod::Previous if !self.saved.is_empty() => self.canvas.copy_from_slice(&self.saved),
                _ => {}
            }
        }
        if self.frames == MAX_FRAMES {
            return Err(bad(&self.path, format!("it has more than {} frames", MAX_FRAMES)));
        }
        let frame = match self.decoder.read_next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return Ok(None),
            Err(e) => return Err(bad(&self.path, format!("cannot decode it: {e}"))),
        };
        self.frames += 1;
        let (left, top) = (usize::from(frame.left), usize::from(frame.top));
        let (w, h) = (usize::from(frame.width), usize::from(frame.height));
        if frame.dispose == gif::DisposalMethod::Previous {
            self.saved.clone_from(&self.canvas);
        }
        let height = self.canvas.len() / 4 / self.width.max(1);
        let visible = w.min(self.width.saturating_sub(left));
        for y in 0..h.min(height.saturating_sub(top)) {
            let src = &frame.buffer[y * w * 4..][..visible * 4];
            let at = ((top + y) * self.width + left) * 4;
            let dst = &mut self.canvas[at..at + visible * 4];
            if frame.transparent.is_none() {
                dst.copy_from_slice(src);
                continue;
            }
            // Transparent pixels leave what was there.
            for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                if s[3] != 0 {
                    d.copy_from_slice(s);
                }
            }
        }
        self.pending =
            Some((left, top, w.min(self.width.saturating_sub(left)), h.min(height.saturating_sub(top)), frame.dispose));
        let delay = frame.delay;
        // What shows where nothing was ever drawn is black.
        let mut rgb = vec![0u8; self.canvas.len() / 4 * 3];
        for (d, p) in rgb.chunks_exact_mut(3).zip(self.canvas.chunks_exact(4)) {
            if p[3] != 0 {
                d.copy_from_slice(&p[..3]);
            }
        }
        Ok(Some(Frame { pixels: Pixels::Rgb(rgb), delay: Some(Delay::centiseconds(delay)) }))
    }
}

/// The comment extensions of a GIF that come before its first image, read from its first
/// bytes without decoding anything.
pub fn comments(bytes: &[u8]) -> Vec<String> {
    let mut comments = Vec::new();
    if bytes.len() < 13 || !bytes.starts_with(b"GIF8") {
        return comments;
    }
    let flags = bytes[10];
    let mut at = 13;
    if flags & 0x80 != 0 {
        at += 3 * (2usize << (flags & 7));
    }
    // Extensions (0x21 label sub-blocks…) until an image (0x2C) or the trailer.
    while bytes.get(at) == Some(&0x21) {
        let Some(&label) = bytes.get(at + 1) else { break };
        at += 2;
        let mut data = Vec::new();
        loop {
            // A missing terminator means the file is cut short: keep only complete comments.
            let Some(&len) = bytes.get(at) else { return comments };
            at += 1;
            if len == 0 {
                break;
            }
            let Some(block) = bytes.get(at..at + usize::from(len)) else { return comments };
            data.extend_from_slice(block);
            at += usize::from(len);
        }
        if label == 0xFE {
            comments.push(String::from_utf8_lossy(&data).into_owned());
        }
    }
    comments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_comment_before_the_first_image() {
        // Header, a 2-entry global palette, a comment in two sub-blocks, then an image.
        let mut gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00".to_vec();
        gif.extend_from_slice(&[0, 0, 0, 255, 255, 255]);
        gif.extend_from_slice(b"\x21\xFE\x03abc\x02de\x00");
        gif.extend_from_slice(b"\x21\xF9\x04\x00\x00\x00\x00\x00");
        gif.extend_from_slice(b"\x2C");
        assert_eq!(comments(&gif), vec!["abcde".to_string()]);
        assert!(comments(b"GIF8").is_empty());
        assert!(comments(b"\x89PNG\r\n\x1a\n").is_empty());
        // Truncated inside a sub-block: no panic, nothing read.
        assert!(comments(&gif[..25]).is_empty());
    }
}
