//! Encoders: where refracted frames go. Each works in its own pixel type (palette indices for
//! GIF, RGB for PNG) so that refraction is a plain gather from the background.

pub mod apng;
pub mod gif;
pub mod lzw;
pub mod palette;
pub mod png;
pub mod pool;
pub mod quantize;
pub mod video;
pub mod webp;

use std::time::Duration;

use crate::error::Result;

/// The name I/O errors inside an encoder's output carry; the command line reports them against
/// the output's path.
pub const STREAM: &str = "output stream";

/// Time an encoder spent in its own work, summed over every thread that did it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EncodeTimes {
    /// Compressing frames (LZW, deflate) and preparing them.
    pub encode: Duration,
    /// Writing bytes to the output.
    pub write: Duration,
}

impl std::ops::AddAssign for EncodeTimes {
    fn add_assign(&mut self, other: EncodeTimes) {
        self.encode += other.encode;
        self.write += other.write;
    }
}

/// A destination for rendered frames, fed in order.
pub trait Encoder {
    /// The pixel the encoder stores: a palette index, or RGB.
    type Pixel: Copy + Send + Sync;

    /// The background in this encoder's pixels, row-major; every frame is gathered from it.
    fn background(&self) -> &[Self::Pixel];

    /// Encodes the next frame (full canvas, row-major), a gather of [`Encoder::background`].
    fn write_frame(&mut self, pixels: &[Self::Pixel]) -> Result<()>;

    /// Encodes the next frame given in RGB: a frame drawn with a look, whose colours need not
    /// be the background's (the encoder maps them to its own pixels).
    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()>;

    /// The output frames this encoder takes (a still takes one): the render draws no frame
    /// before the range that nothing else needs, and stops after it.
    fn wanted(&self) -> std::ops::Range<u64> {
        0..u64::MAX
    }

    /// Completes the output (trailer, flush) and says where the time went.
    fn finish(self) -> Result<EncodeTimes>;

    /// The exact render's RGB bytes for `pixels`, when this encoder's pixels hold it: the pixels
    /// themselves when they are RGB, or their palette colours (converted into `scratch`) when
    /// the palette holds every colour exactly. `None` when they do not (a quantized palette):
    /// the frame must then be drawn in RGB to know it.
    fn exact_rgb<'a>(&self, pixels: &'a [Self::Pixel], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]>;
}

/// Expands palette indices to their colours' RGB bytes.
pub(crate) fn expand<'a>(indices: &[u8], colors: &[[u8; 3]], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    scratch.clear();
    scratch.extend(indices.iter().flat_map(|&i| colors[usize::from(i)]));
    scratch
}

/// An encoder that writes nothing: renders RGB frames for a hash manifest alone.
pub struct Discard {
    background: Vec<[u8; 3]>,
}

impl Discard {
    /// Renders over `background`'s RGB pixels.
    pub fn new(background: &crate::Background) -> Self {
        Discard { background: background.pixels.clone() }
    }
}

impl Encoder for Discard {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, _pixels: &[[u8; 3]]) -> Result<()> {
        Ok(())
    }

    fn write_rgb(&mut self, _rgb: &[[u8; 3]]) -> Result<()> {
        Ok(())
    }

    fn finish(self) -> Result<EncodeTimes> {
        Ok(EncodeTimes::default())
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}
