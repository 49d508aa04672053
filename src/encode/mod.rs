//! Encoders: where refracted frames go. Each works in its own pixel type (palette indices for
//! GIF, RGB for PNG) so that refraction is a plain gather from the background.

pub mod gif;
pub mod png;

use crate::error::Result;

/// A destination for rendered frames, fed in order.
pub trait Encoder {
    /// The pixel the encoder stores: a palette index, or RGB.
    type Pixel: Copy;

    /// The background in this encoder's pixels, row-major; every frame is gathered from it.
    fn background(&self) -> &[Self::Pixel];

    /// Encodes the next frame (full canvas, row-major).
    fn write_frame(&mut self, pixels: &[Self::Pixel]) -> Result<()>;

    /// Completes the output (trailer, flush).
    fn finish(self) -> Result<()>;
}
