//! A reference: what `check` compares a scene's render with. One GIF per scene, small enough to
//! commit and to look at in any viewer or code review:
//!
//! - its picture is the render shrunk so that its longer side is at most [`PREVIEW_SIDE`]
//!   pixels (each pixel the mean of a square block, as `--max-size` shrinks), every frame,
//!   through one palette chosen from those frames;
//! - a second comment holds the hash manifest of the full-size exact render (the format of
//!   `--hashes`): the canvas, and per frame the XXH3-64 of its RGB pixels and its delay.
//!
//! A frame is the same as its reference when its hash is; the picture shows what a differing
//! frame was, and is what `--tolerance` and `--max-pixels` are judged on: the new frame is
//! shrunk the same way and mapped through the reference's own palette, so a frame that did not
//! change shows exactly as its reference does.

use std::io::{BufReader, Write};
use std::path::Path;

use crate::base::error::{Error, Result};
use crate::decode::frames::FrameSource;
use crate::decode::gif::Head;
use crate::diff::palettes::PaletteMap;
use crate::encode::gif::GifEncoder;
use crate::encode::manifest::{self, Manifest};
use crate::encode::palette::quantize::Histogram;
use crate::encode::palette::{Palette, SAMPLE};
use crate::encode::provenance::Provenance;
use crate::encode::reduce::shrink;
use crate::encode::{Effort, Encoder, Stream};

/// The longest side of a reference's picture.
pub const PREVIEW_SIDE: u32 = 320;

/// How many times a canvas is shrunk for its reference's picture.
pub fn preview_scale(width: u32, height: u32) -> u32 {
    width.max(height).div_ceil(PREVIEW_SIDE).max(1)
}

/// A reference read back: the exact hashes, and the picture's palette.
pub struct Reference {
    /// The full-size render's canvas, frame hashes and delays.
    pub manifest: Manifest,
    /// How many times the picture is shrunk.
    pub scale: u32,
    /// The picture's palette, as its encoder mapped colours to it.
    pub palette: PaletteMap,
    /// Which version made it from which scene (its provenance comment), if it says.
    pub provenance: Option<String>,
}

/// Where a GIF's trailer ends: its blocks walked from the head (the screen, the global
/// palette, extensions and images with their sub-blocks) to the trailer; `None` when they do
/// not lead to one.
pub fn gif_length(bytes: &[u8]) -> Option<usize> {
    let mut at = 13;
    let packed = *bytes.get(10)?;
    if packed & 0x80 != 0 {
        at += 3 << ((packed & 7) + 1);
    }
    // Sub-blocks from `at`: each a length and its bytes, up to a zero length.
    let sub_blocks = |mut at: usize| -> Option<usize> {
        loop {
            let len = usize::from(*bytes.get(at)?);
            at += 1 + len;
            if len == 0 {
                return Some(at);
            }
        }
    };
    loop {
        match *bytes.get(at)? {
            0x3b => return Some(at + 1),
            0x21 => at = sub_blocks(at + 2)?,
            0x2c => {
                let packed = *bytes.get(at + 9)?;
                at += 10;
                if packed & 0x80 != 0 {
                    at += 3 << ((packed & 7) + 1);
                }
                // The LZW minimum code size, then the data's sub-blocks.
                at = sub_blocks(at + 1)?;
            }
            _ => return None,
        }
    }
}

impl Reference {
    /// Reads a reference's head: its manifest comment and palette. A GIF without the manifest
    /// is not a reference.
    pub fn read(path: &Path) -> Result<Reference> {
        let bad = |reason: String| Error::input(path, reason);
        // A pipe or device is refused unread: it could hold the check forever.
        let (file, _) = crate::base::files::open_regular(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        let head = Head::read(BufReader::new(file));
        let Some(palette) = head.palette else {
            return Err(bad("not a ripple-render reference: it is not a GIF with a palette".into()));
        };
        let text = head.comments.iter().find(|c| manifest::looks_like_manifest(c.as_bytes()));
        let Some(text) = text else {
            return Err(bad(
                "not a ripple-render reference: it holds no frame hashes (references are written by `check --bless`)"
                    .into(),
            ));
        };
        let manifest = manifest::parse(text).map_err(|e| bad(format!("its frame hashes cannot be read: {e}")))?;
        let colours = &palette[..head.transparent.map_or(palette.len(), usize::from).min(palette.len())];
        let scale = preview_scale(manifest.width, manifest.height);
        let provenance = head.comments.iter().find(|c| Provenance::parse(c).is_some()).cloned();
        Ok(Reference { manifest, scale, palette: PaletteMap::new(colours), provenance })
    }

    /// The most bytes a reference of this canvas and these frames takes as `check` writes it:
    /// the head and its comments, and each frame's picture coded at LZW's worst (12 bits a
    /// pixel) with its blocks. A file past it holds more than a reference.
    pub fn most_bytes(&self) -> u64 {
        let (width, height) = (self.manifest.width, self.manifest.height);
        let pixels = u64::from(width.div_ceil(self.scale)) * u64::from(height.div_ceil(self.scale));
        let frames = self.manifest.frames.len() as u64;
        (64 << 10) + frames * (128 + 2 * pixels)
    }

    /// A new frame as the reference's picture would show it: shrunk, through its palette.
    pub fn show(&mut self, rgb: &[u8], width: u32, out: &mut Vec<u8>) {
        let pixels: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let mut small = Vec::new();
        shrink(&pixels, width as usize, self.scale as usize, &mut small);
        out.clear();
        out.extend(small.into_iter().flat_map(|p| self.palette.colour(p)));
    }
}

/// Collects a render's frames for a new reference: each frame's hash and its shrunk picture.
pub struct Recorder {
    width: u32,
    height: u32,
    fps: u32,
    scale: u32,
    hashes: Vec<u64>,
    frames: Vec<Vec<[u8; 3]>>,
}

impl Recorder {
    /// A recorder for a render of `width`×`height` at `fps`.
    pub fn new(width: u32, height: u32, fps: u32) -> Recorder {
        let scale = preview_scale(width, height);
        Recorder { width, height, fps, scale, hashes: Vec::new(), frames: Vec::new() }
    }

    /// Takes the next frame's exact RGB bytes.
    pub fn add(&mut self, rgb: &[u8]) {
        self.hashes.push(manifest::frame_hash(rgb));
        let pixels: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let mut small = Vec::new();
        shrink(&pixels, self.width as usize, self.scale as usize, &mut small);
        self.frames.push(small);
    }

    /// Writes the reference GIF into `out`; `comment` is the render's provenance.
    pub fn write(self, out: impl Write, comment: &str) -> Result<()> {
        let (w, h) = (self.width.div_ceil(self.scale), self.height.div_ceil(self.scale));
        let frames = self.frames.len() as u64;
        let stream = Stream {
            width: w,
            height: h,
            fps: self.fps,
            step: 1,
            render_frames: frames,
            looping: true,
            comment: comment.to_string(),
            effort: Effort::Default,
            part: None,
            quality: None,
            lossy: None,
        };
        let mut histogram = Histogram::default();
        let per_frame = SAMPLE / self.frames.len().max(1);
        for frame in &self.frames {
            histogram.add_sample(frame, per_frame);
        }
        let palette = Palette::for_look(histogram, &[]);
        let mut manifest = Vec::new();
        let full = Stream { width: self.width, height: self.height, ..stream.clone() };
        let mut writer = manifest::Writer::new(&mut manifest, Path::new("reference"), &full)?;
        for hash in &self.hashes {
            writer.add_hash(*hash)?;
        }
        drop(writer);
        let mut gif = GifEncoder::new(out, &stream, palette)?.threads(1);
        gif.note(&String::from_utf8_lossy(&manifest))?;
        for frame in &self.frames {
            gif.write_rgb(frame)?;
        }
        gif.finish()?;
        Ok(())
    }
}

/// The frames of a reference's picture, in RGB.
pub fn preview_frames(path: &Path) -> Result<Box<dyn FrameSource>> {
    Ok(crate::decode::gif::open(path)?.1)
}
