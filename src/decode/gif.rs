//! The GIF side of a `diff`: its frames composed as a viewer shows them (disposal, transparency,
//! black where nothing was drawn), and its provenance from its comments.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels, check_size};
use crate::base::error::{Error, Result};
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

/// Opens a GIF: its frames composed as a viewer shows them.
pub fn open(path: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let file = File::open(path).map_err(|e| Error::input(path, format!("cannot read it: {e}")))?;
    let head = Head::read(BufReader::new(&file));
    let provenance = head.comments.iter().find_map(|c| Provenance::parse(c));
    let file = File::open(path).map_err(|e| Error::input(path, format!("cannot read it: {e}")))?;
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    // A frame's buffer may hold at most a whole canvas of the largest render.
    let most = std::num::NonZeroU64::new(4 * MAX_AREA as u64).unwrap_or(std::num::NonZeroU64::MIN);
    options.set_memory_limit(gif::MemoryLimit::Bytes(most));
    let decoder =
        options.read_info(BufReader::new(file)).map_err(|e| Error::input(path, format!("cannot decode it: {e}")))?;
    let (width, height) = (u32::from(decoder.width()), u32::from(decoder.height()));
    check_size(path, (width, height))?;
    let palette = head.palette.map(|mut colours| {
        colours.truncate(head.transparent.map_or(usize::MAX, usize::from));
        colours
    });
    let info = Info { path: path.into(), kind: Kind::Gif, width, height, provenance, colours: PixelKind::Gif, palette };
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
            return Err(Error::input(&self.path, format!("it has more than {} frames", MAX_FRAMES)));
        }
        let frame = match self.decoder.read_next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return Ok(None),
            Err(e) => return Err(Error::input(&self.path, format!("cannot decode it: {e}"))),
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

/// What a GIF says before and between its first images, read block by block without
/// decoding any: its global palette, its comments, and the index its frames mark transparent.
#[derive(Debug, Default, PartialEq)]
pub struct Head {
    /// The global palette, every entry.
    pub palette: Option<Vec<[u8; 3]>>,
    /// The comment extensions' texts.
    pub comments: Vec<String>,
    /// The index the first frames' graphic controls mark transparent, if any does.
    pub transparent: Option<u8>,
}

/// Images the head reader passes over looking for a transparent index (a first frame drawn
/// whole may have none; the next one, of changes only, does).
const HEAD_IMAGES: usize = 2;

impl Head {
    /// Reads the head of a GIF (a file cut short gives what is complete).
    pub fn read(mut input: impl Read) -> Head {
        let mut head = Head::default();
        let _ = head.read_blocks(&mut input);
        head
    }

    fn read_blocks(&mut self, input: &mut impl Read) -> std::io::Result<()> {
        let mut screen = [0u8; 13];
        input.read_exact(&mut screen)?;
        if !screen.starts_with(b"GIF8") {
            return Ok(());
        }
        if screen[10] & 0x80 != 0 {
            let mut table = vec![0u8; 3 * (2usize << (screen[10] & 7))];
            input.read_exact(&mut table)?;
            self.palette = Some(table.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect());
        }
        let mut images = 0;
        while images < HEAD_IMAGES && self.transparent.is_none() {
            let mut introducer = [0u8; 1];
            input.read_exact(&mut introducer)?;
            match introducer[0] {
                0x21 => {
                    let mut label = [0u8; 1];
                    input.read_exact(&mut label)?;
                    let data = sub_blocks(input)?;
                    match label[0] {
                        0xFE => self.comments.push(String::from_utf8_lossy(&data).into_owned()),
                        0xF9 if data.len() == 4 && data[0] & 1 == 1 => self.transparent = Some(data[3]),
                        _ => {}
                    }
                }
                0x2C => {
                    let mut descriptor = [0u8; 10];
                    input.read_exact(&mut descriptor)?;
                    if descriptor[8] & 0x80 != 0 {
                        std::io::copy(&mut input.take(3 * (2u64 << (descriptor[8] & 7))), &mut std::io::sink())?;
                    }
                    sub_blocks(input)?;
                    images += 1;
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }
}

/// The data of a run of sub-blocks, up to its terminator.
fn sub_blocks(input: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    loop {
        let mut len = [0u8; 1];
        input.read_exact(&mut len)?;
        if len[0] == 0 {
            return Ok(data);
        }
        let at = data.len();
        data.resize(at + usize::from(len[0]), 0);
        input.read_exact(&mut data[at..])?;
    }
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
        let head = Head::read(&gif[..]);
        assert_eq!(head.comments, vec!["abcde".to_string()]);
        assert_eq!(head.palette, Some(vec![[0, 0, 0], [255, 255, 255]]));
        assert_eq!(head.transparent, None);
        assert_eq!(Head::read(&b"GIF8"[..]), Head::default());
        assert_eq!(Head::read(&b"\x89PNG\r\n\x1a\n"[..]), Head::default());
        // Truncated inside a sub-block: no panic, no comment read.
        assert!(Head::read(&gif[..25]).comments.is_empty());
        // The first image (1×1, code size 2, one data block), then a graphic control that marks
        // index 1 transparent before the second.
        gif.extend_from_slice(b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x4C\x01\x00");
        gif.extend_from_slice(b"\x21\xF9\x04\x01\x00\x00\x01\x00\x2C");
        assert_eq!(Head::read(&gif[..]).transparent, Some(1));
    }
}
