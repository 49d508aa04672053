//! Looks (SPEC §9): a frame drawn from the RGB background with bilinear sampling of the
//! displaced position and light added by the slope, where nearest-pixel refraction (SPEC §5,
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

use crate::refract::Height;
use crate::scene::{Look, Sampling};
use crate::water::Heights;

/// A look resolved for drawing: the strengths, the light and R.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pen {
    bilinear: bool,
    shading: i64,
    highlight: i64,
    light: [i64; 2],
    r: i64,
    width: i64,
    height: i64,
}

impl Pen {
    fn new(look: &Look, r: i64, width: usize, height: usize) -> Pen {
        Pen {
            bilinear: look.sampling == Sampling::Bilinear,
            shading: look.shading,
            highlight: look.highlight,
            light: look.light,
            r,
            width: width as i64,
            height: height as i64,
        }
    }

    /// The colour of a pixel at (x, y) with slopes `dx`, `dy` (i64, exactly as SPEC §9 says).
    #[inline(always)]
    fn pixel(&self, x: i64, y: i64, dx: i64, dy: i64, background: &[[u8; 3]]) -> [u8; 3] {
        let (w, h) = (self.width, self.height);
        let sx = (256 * x + dx * self.r).clamp(0, 256 * (w - 1));
        let sy = (256 * y + dy * self.r).clamp(0, 256 * (h - 1));
        let (x0, y0) = (sx >> 8, sy >> 8);
        let value = if self.bilinear {
            let (fx, fy) = ((sx & 255) as u32, (sy & 255) as u32);
            let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
            let at = |x: i64, y: i64| background[(y * w + x) as usize];
            let (c00, c10, c01, c11) = (at(x0, y0), at(x1, y0), at(x0, y1), at(x1, y1));
            let mut out = [0u32; 3];
            for (c, o) in out.iter_mut().enumerate() {
                let top = u32::from(c00[c]) * (256 - fx) + u32::from(c10[c]) * fx;
                let bottom = u32::from(c01[c]) * (256 - fx) + u32::from(c11[c]) * fx;
                *o = (top * (256 - fy) + bottom * fy + 32768) >> 16;
            }
            out
        } else {
            background[(y0 * w + x0) as usize].map(u32::from)
        };
        let s = dx * self.light[0] + dy * self.light[1];
        let shade = ((s * self.shading) >> 8).clamp(-255, 255);
        let p = ((s.max(0) * self.highlight) >> 8).clamp(0, 255);
        let add = shade + ((p * p) >> 8);
        value.map(|v| (i64::from(v) + add).clamp(0, 255) as u8)
    }
}

/// Draws rows `y0..` of the frame into `out` (whole rows, from row `y0` of the canvas): the
/// background seen through the water with `look`, and `R = refraction_q8`.
pub fn look_band(
    heights: Heights<'_>,
    width: usize,
    look: &Look,
    refraction_q8: i64,
    background: &[[u8; 3]],
    out: &mut [[u8; 3]],
    y0: usize,
) {
    match heights {
        Heights::I16(h) => look_rows(h, width, look, refraction_q8, background, out, y0),
        Heights::I32(h) => look_rows(h, width, look, refraction_q8, background, out, y0),
    }
}

fn look_rows<H: Height>(
    h: &[H],
    width: usize,
    look: &Look,
    r: i64,
    background: &[[u8; 3]],
    out: &mut [[u8; 3]],
    y0: usize,
) {
    let height = h.len() / width;
    let pen = Pen::new(look, r, width, height);
    // Heights outside the canvas read as 0: a row of zeros stands above and below it.
    let zeros = vec![H::default(); width];
    let row = |y: i64| -> &[H] {
        if (0..height as i64).contains(&y) { &h[y as usize * width..(y as usize + 1) * width] } else { &zeros }
    };
    for (y, out_row) in (y0 as i64..).zip(out.chunks_exact_mut(width)) {
        let (up, mid, down) = (row(y - 1), row(y), row(y + 1));
        for (x, o) in out_row.iter_mut().enumerate() {
            let left = if x > 0 { mid[x - 1].wide() } else { 0 };
            let right = if x + 1 < width { mid[x + 1].wide() } else { 0 };
            let (dx, dy) = (left - right, up[x].wide() - down[x].wide());
            *o = pen.pixel(x as i64, y, dx, dy, background);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(sampling: Sampling, shading: i64, highlight: i64, light: [i64; 2]) -> Look {
        Look { sampling, shading, highlight, light }
    }

    /// A 2×2 background with distinct channels, so a weighted sample can be worked by hand.
    const PATCH: [[u8; 3]; 4] = [[0, 100, 200], [255, 100, 0], [40, 60, 80], [240, 20, 10]];

    #[test]
    fn bilinear_weighs_the_four_pixels_by_the_fractions() {
        let pen = Pen::new(&look(Sampling::Bilinear, 0, 0, [-1, -1]), 64, 2, 2);
        // At (0,0) with dx = 1, dy = 2: sx = 0 + 64 = 64 (fx = 64), sy = 128 (fy = 128).
        // Red: top = 0·192 + 255·64 = 16320; bottom = 40·192 + 240·64 = 23040;
        //      (16320·128 + 23040·128 + 32768) >> 16 = 5070848 >> 16 = 77.
        // Green: top = 100·256 = 25600; bottom = 60·192 + 20·64 = 12800;
        //      (25600·128 + 12800·128 + 32768) >> 16 = 4947968 >> 16 = 75.
        // Blue: top = 200·192 = 38400; bottom = 80·192 + 10·64 = 16000;
        //      (38400·128 + 16000·128 + 32768) >> 16 = 6996000 >> 16 = 106.
        assert_eq!(pen.pixel(0, 0, 1, 2, &PATCH), [77, 75, 106]);
        // No fractions: the pixel itself, as nearest sampling gives.
        assert_eq!(pen.pixel(1, 1, 0, 0, &PATCH), PATCH[3]);
        // Clamped at the far edge: sx = 256 + 256·64 → 256, so (1, ·) with fx = 0.
        assert_eq!(pen.pixel(1, 0, 256, 0, &PATCH), PATCH[1]);
        // Clamped at 0 from a negative position.
        assert_eq!(pen.pixel(0, 0, -10, -10, &PATCH), PATCH[0]);
    }

    #[test]
    fn nearest_takes_the_pixel_the_position_falls_in() {
        let pen = Pen::new(&look(Sampling::Nearest, 0, 0, [-1, -1]), 64, 2, 2);
        // sx = 64 + 64·5 = 384 → x0 = 1; sy = 0 → row 0.
        assert_eq!(pen.pixel(0, 0, 5, 0, &PATCH), PATCH[1]);
        // The floor: sx = 256 − 64 = 192 → x0 = 0.
        assert_eq!(pen.pixel(1, 0, -1, 0, &PATCH), PATCH[0]);
    }

    #[test]
    fn shading_and_highlight_on_a_known_slope() {
        // Light toward the upper left, [-1, -1]: s = −dx − dy.
        let lit = look(Sampling::Nearest, 512, 1024, [-1, -1]);
        let pen = Pen::new(&lit, 0, 2, 2);
        // dx = −20, dy = −10: s = 30; shade = (30·512) >> 8 = 60; p = (30·1024) >> 8 = 120,
        // glint = 14400 >> 8 = 56: +116 on every channel, clamped at 255.
        assert_eq!(pen.pixel(0, 0, -20, -10, &PATCH), [116, 216, 255]);
        // The other side: s = −30; shade = (−30·512) >> 8 = −60; no glint; clamped at 0.
        assert_eq!(pen.pixel(0, 0, 20, 10, &PATCH), [0, 40, 140]);
        // A floor on the way: s = −1: (−512) >> 8 = −2.
        assert_eq!(pen.pixel(0, 0, 1, 0, &PATCH), [0, 98, 198]);
        // Steep slopes saturate: shade ±255, p = 255 and glint (255·255) >> 8 = 254.
        assert_eq!(pen.pixel(1, 1, -100_000, 0, &PATCH), [255, 255, 255]);
        assert_eq!(pen.pixel(1, 1, 100_000, 0, &PATCH), [0, 0, 0]);
        // The light's length scales both terms: [-2, 0] doubles s.
        let pen = Pen::new(&look(Sampling::Nearest, 256, 0, [-2, 0]), 0, 2, 2);
        assert_eq!(pen.pixel(0, 0, -5, 0, &PATCH), [10, 110, 210]);
    }
}
