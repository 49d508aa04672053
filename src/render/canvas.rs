//! Where a frame is drawn, chosen once per render. Nearest-pixel sampling without light only
//! moves background pixels, so a frame is a gather in the encoder's own pixels (palette indices
//! for a GIF) from the encoder's copy of the background. A look (bilinear sampling, light)
//! makes colours the background lacks: the frame is drawn in RGB and the encoder converts it.

use crate::base::error::Result;
use crate::draw::Lens;
use crate::draw::background::Background;
use crate::draw::look::Backdrop;
use crate::draw::refract::Height;
use crate::encode::Encoder;
use crate::scene::{Look, Scene};

/// A render's frame buffers, in the way its frames are drawn.
pub(super) enum Canvas<P> {
    /// Frames gathered in the encoder's pixels; `rgb` and `scratch` make the exact RGB frame
    /// for a manifest when the encoder's pixels do not hold it.
    Gather { frame: Vec<P>, rgb: Vec<[u8; 3]>, scratch: Vec<u8> },
    /// Frames drawn in RGB with a look, from the background packed for it.
    Look { look: Look, backdrop: Backdrop, rgb: Vec<[u8; 3]> },
}

impl<P: Copy + Send + Sync> Canvas<P> {
    /// The canvas of a render of `scene` over `background` into `encoder`.
    pub(super) fn new<E: Encoder<Pixel = P>>(scene: &Scene, background: &Background, encoder: &E) -> Canvas<P> {
        if scene.look.is_gather() {
            Canvas::Gather { frame: encoder.background().to_vec(), rgb: Vec::new(), scratch: Vec::new() }
        } else {
            let backdrop = Backdrop::new(&background.pixels, scene.width as usize);
            Canvas::Look { look: scene.look, backdrop, rgb: vec![[0; 3]; background.pixels.len()] }
        }
    }

    /// Draws the frame of `heights`.
    pub(super) fn draw<H: Height, E: Encoder<Pixel = P>>(&mut self, lens: &Lens<'_>, heights: &[H], encoder: &E) {
        match self {
            Canvas::Gather { frame, .. } => lens.refract(heights, encoder.background(), frame),
            Canvas::Look { look, backdrop, rgb } => lens.look(heights, look, backdrop, rgb),
        }
    }

    /// Hands the frame drawn to `encoder`.
    pub(super) fn hand_to<E: Encoder<Pixel = P>>(&self, encoder: &mut E) -> Result<()> {
        match self {
            Canvas::Gather { frame, .. } => encoder.write_frame(frame),
            Canvas::Look { rgb, .. } => encoder.write_rgb(rgb),
        }
    }

    /// The exact RGB bytes of the frame drawn (of `heights`, over `background`), for a manifest:
    /// the RGB frame itself, the encoder's pixels when they hold it, or else (a GIF of a
    /// quantized palette) the frame drawn again in RGB.
    pub(super) fn exact<H: Height, E: Encoder<Pixel = P>>(
        &mut self,
        lens: &Lens<'_>,
        heights: &[H],
        background: &Background,
        encoder: &E,
    ) -> &[u8] {
        match self {
            Canvas::Look { rgb, .. } => rgb.as_flattened(),
            Canvas::Gather { frame, rgb, scratch } => match encoder.exact_rgb(frame, scratch) {
                Some(exact) => exact,
                None => {
                    rgb.resize(frame.len(), [0; 3]);
                    lens.refract(heights, &background.pixels, rgb);
                    rgb.as_flattened()
                }
            },
        }
    }
}
