//! One pixel of a look by its formulas (§9 and the water look): the [`Pen`] that draws any
//! pixel exactly from its slopes and curvature, which the shore's edges are redrawn with and
//! the fast passes are checked against, and the tone, caustics and sky it adds.

use super::backdrop::{Backdrop, sample, unpack};
use crate::scene::{Look, Sampling, Tone};

/// A look resolved for drawing: the strengths, the light and R.
#[derive(Debug, Clone, Copy)]
pub struct Pen {
    pub(super) bilinear: bool,
    pub(super) shading: i64,
    pub(super) highlight: i64,
    pub(super) light: [i64; 2],
    pub(super) r: i64,
    pub(super) width: i64,
    pub(super) height: i64,
    /// Whether positions are taken modulo the canvas along x and y (wrapped edges, §8)
    /// instead of clamped.
    wrap: [bool; 2],
    /// The water terms, if the look has any.
    pub(super) water: Option<WaterTerms>,
}

/// The terms a look adds to §9 (docs/scene-format.md, "The water look"): the soft tone,
/// caustics from the curvature, and the sky mirrored with the tilt.
#[derive(Debug, Clone, Copy)]
pub(super) struct WaterTerms {
    pub(super) soft: bool,
    pub(super) caustics: i64,
    pub(super) sky: [i64; 3],
    pub(super) reflection: i64,
}

/// The soft tone moves a channel toward these as the light rises and falls: never past them,
/// so light alone makes no black or white.
pub(super) const TONE_TOP: i64 = 245;
pub(super) const TONE_BOTTOM: i64 = 10;

/// A curvature or a tilt of this much or more saturates its term for any strength ≥ 1
/// (`2^16·1 >> 8 = 256`), and within it `term·strength` fits an i32 (2^16·4096 = 2^28).
pub(super) const TERM_LIMIT: i32 = 1 << 16;

/// The soft tone's knee: the fraction of the way, in 1/256, that light `a` moves a channel,
/// `t = min(|a|, 256)`, `(t·(512 − t)) >> 8`: twice the light at first, bending to 256 (all
/// the way) at |a| = 256.
#[inline(always)]
pub(super) fn knee(a: i32) -> i32 {
    let t = a.abs().min(256);
    (t * (512 - t)) >> 8
}

/// The share of the sky, in 1/256, at a tilt `m = |dx| + |dy|`: `q = min((m·reflection) >> 8,
/// 256)`, `(q·q) >> 8`, rising with the square of the tilt as a Fresnel reflection does.
#[inline(always)]
pub(super) fn sky_share(m: i32, reflection: i32) -> i32 {
    let q = ((m * reflection) >> 8).min(256);
    (q * q) >> 8
}

impl Pen {
    /// The pen of `look` on a canvas `width`×`height` with R = `r`, positions clamped to it.
    pub fn new(look: &Look, r: i64, width: usize, height: usize) -> Pen {
        Pen {
            bilinear: look.sampling == Sampling::Bilinear,
            shading: look.shading,
            highlight: look.highlight,
            light: look.light,
            r,
            width: width as i64,
            height: height as i64,
            wrap: [false; 2],
            water: look.has_water_terms().then(|| WaterTerms {
                soft: look.tone == Tone::Soft,
                caustics: look.caustics,
                sky: look.sky.map(i64::from),
                reflection: look.reflection,
            }),
        }
    }

    /// The same pen on a canvas whose x and/or y axis wraps.
    pub(crate) fn wrapping(mut self, x: bool, y: bool) -> Pen {
        self.wrap = [x, y];
        self
    }

    /// [`Pen::pixel`] from a backdrop.
    pub(crate) fn draw(&self, x: i64, y: i64, slope: Slope, backdrop: &Backdrop) -> [u8; 3] {
        self.pixel(x, y, slope, &backdrop.0)
    }

    /// Unpacks a backdrop pixel.
    pub(crate) fn unmoved(backdrop: &Backdrop, index: usize) -> [u8; 3] {
        unpack(backdrop.0[index])
    }

    /// The sampled channels at (x, y) moved by the slopes `dx`, `dy`: the position
    /// `256·x + dx·R`, `256·y + dy·R`, clamped to the canvas or taken modulo along a wrapped
    /// axis, then the pixel it falls in (nearest) or the four around it weighed by its fractions
    /// (bilinear).
    #[inline(always)]
    pub(super) fn sample(&self, x: i64, y: i64, dx: i64, dy: i64, rgbx: &[u32]) -> [u32; 3] {
        let (w, h) = (self.width, self.height);
        let place = |p: i64, size: i64, wraps: bool| {
            if wraps { p.rem_euclid(256 * size) } else { p.clamp(0, 256 * (size - 1)) }
        };
        let next = |v: i64, size: i64, wraps: bool| if wraps { (v + 1) % size } else { (v + 1).min(size - 1) };
        let sx = place(256 * x + dx * self.r, w, self.wrap[0]);
        let sy = place(256 * y + dy * self.r, h, self.wrap[1]);
        let (x0, y0) = (sx >> 8, sy >> 8);
        if self.bilinear {
            let (fx, fy) = ((sx & 255) as u32, (sy & 255) as u32);
            let (x1, y1) = (next(x0, w, self.wrap[0]), next(y0, h, self.wrap[1]));
            let at = |x: i64, y: i64| rgbx[(y * w + x) as usize];
            let taps = [at(x0, y0), at(x1, y0), at(x0, y1), at(x1, y1)];
            [0, 8, 16].map(|shift| sample::<true>(taps, fx, fy, shift))
        } else {
            unpack(rgbx[(y0 * w + x0) as usize]).map(u32::from)
        }
    }

    /// The colour of a pixel at (x, y) with slopes `dx`, `dy` and curvature `k`, in i64
    /// exactly as §9 and the water terms say: how steep runs are drawn, and what the fast
    /// passes are checked against.
    pub(super) fn pixel(&self, x: i64, y: i64, Slope { dx, dy, k }: Slope, rgbx: &[u32]) -> [u8; 3] {
        let value = self.sample(x, y, dx, dy, rgbx);
        let s = dx * self.light[0] + dy * self.light[1];
        let shade = ((s * self.shading) >> 8).clamp(-255, 255);
        let p = ((s.max(0) * self.highlight) >> 8).clamp(0, 255);
        let add = shade + ((p * p) >> 8);
        let Some(water) = self.water else {
            return value.map(|v| (i64::from(v) + add).clamp(0, 255) as u8);
        };
        let a = add + ((k.max(0) * water.caustics) >> 8).clamp(0, 255);
        let toned = value.map(|v| {
            let v = i64::from(v);
            if !water.soft {
                (v + a).clamp(0, 255)
            } else {
                let t = a.abs().min(256);
                let t = (t * (512 - t)) >> 8;
                if a >= 0 { v + (((TONE_TOP - v).max(0) * t) >> 8) } else { v - (((v - TONE_BOTTOM).max(0) * t) >> 8) }
            }
        });
        let q = (((dx.abs() + dy.abs()) * water.reflection) >> 8).min(256);
        let f = (q * q) >> 8;
        let mut out = [0u8; 3];
        for ((o, u), sky) in out.iter_mut().zip(toned).zip(water.sky) {
            *o = (u + (((sky - u) * f) >> 8)) as u8;
        }
        out
    }
}

/// What a pixel is drawn with: the slopes `dx = h(x−1, y) − h(x+1, y)`,
/// `dy = h(x, y−1) − h(x, y+1)` and the curvature
/// `k = h(x−1, y) + h(x+1, y) + h(x, y−1) + h(x, y+1) − 4·h(x, y)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Slope {
    pub dx: i64,
    pub dy: i64,
    pub k: i64,
}
