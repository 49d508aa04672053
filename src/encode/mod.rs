//! Encoders: where refracted frames go. Each works in its own pixel type (palette indices for
//! GIF, RGB for PNG) so that refraction is a plain gather from the background.

pub mod gif;
pub mod png;
pub mod pool;

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

    /// Appends the RGB bytes a viewer of the output sees for `pixels` (a GIF shows its palette).
    fn rgb(&self, pixels: &[Self::Pixel], out: &mut Vec<u8>);
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

    fn finish(self) -> Result<()> {
        Ok(())
    }

    fn rgb(&self, pixels: &[[u8; 3]], out: &mut Vec<u8>) {
        out.extend_from_slice(pixels.as_flattened());
    }
}
