//! Looks (§9): a frame drawn from the RGB background with bilinear sampling of the
//! displaced position and light added by the slope, where nearest-pixel refraction (§5,
//! `refract`) only gathers background pixels.
//!
//! For each pixel, with `dx = h(x−1, y) − h(x+1, y)`, `dy = h(x, y−1) − h(x, y+1)` and `R`:
//!
//! - the position, in 1/256 pixel, is `sx = 256·x + dx·R`, `sy = 256·y + dy·R`, clamped to the
//!   canvas; nearest sampling takes the pixel `(sx >> 8, sy >> 8)`, bilinear weighs it and its
//!   right, lower and lower-right neighbours by the fractions `sx & 255`, `sy & 255`;
//! - the light, with `s = dx·lx + dy·ly`, adds `clamp((s·shading) >> 8, −255, 255)` and the
//!   glint `(p·p) >> 8`, `p = clamp((max(s, 0)·highlight) >> 8, 0, 255)`, to every channel,
//!   clamped to 0..=255.
//!
//! The rooms: [`Backdrop`] and its sample (`backdrop`), the one-pixel [`Pen`] (`pen`), the
//! passes both tones draw rows with (`passes`, and `avx2`'s kernels), then the tones: the lit
//! ones (`lit`) and the gain tone (`gain`). A look is resolved once per render ([`Pens`]).

#[cfg(target_arch = "x86_64")]
mod avx2;
mod backdrop;
mod gain;
mod lit;
mod passes;
mod pen;

pub use backdrop::Backdrop;
pub use gain::GainPen;
pub(crate) use gain::gain_band;
pub use lit::look_band;
pub use pen::Pen;
pub(crate) use pen::Slope;

use crate::scene::{Look, Tone};

/// A look resolved for drawing, once per render: the tone's pens, with their tables and terms.
pub enum Pens {
    /// §9's clamp or the soft tone: the pen the passes draw with (positions clamped to the
    /// canvas) and the one a shore's edges are redrawn with (positions wrapped where an edge
    /// wraps).
    Lit {
        /// The passes' pen.
        passes: Pen,
        /// The edges' pen.
        edges: Pen,
    },
    /// The gain tone.
    Gain(GainPen),
}

impl Pens {
    /// `look` resolved for a canvas `width`×`height` with R = `r`, whose axes wrap as `wrap`
    /// says.
    pub fn new(look: &Look, r: i64, (width, height): (usize, usize), wrap: [bool; 2]) -> Pens {
        match look.tone {
            Tone::Gain => Pens::Gain(GainPen::new(look, r, width, height, wrap)),
            _ => {
                let passes = Pen::new(look, r, width, height);
                Pens::Lit { passes, edges: passes.wrapping(wrap[0], wrap[1]) }
            }
        }
    }
}

#[cfg(test)]
mod tests;
