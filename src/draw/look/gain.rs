//! The gain tone (docs/scene-format.md, "The gain tone"): light that multiplies the floor and
//! never reaches a flat limit, a capped Schlick share of the sky, the sun's glint where the
//! slope mirrors it, and caustics from the light on the floor ([`Caustics`]).
//!
//! Per pixel, with `v` a sampled channel, `s = dx·lx + dy·ly` and `E` the floor's light:
//!
//! ```text
//! a = clamp((s·shading) >> 8 [+ (((E − 65536) >> 8)·caustics) >> 8], −4096, 4096)
//! a ≥ 0: y = (v·a) >> 8, H = 255 − v, u = v + (H·y) / max(y + H, 1)
//! a < 0: u = (v·G) >> 8, G = 65536 / (256 − a)
//! o1 = u + (((sky − u)·SKY[min(m2 >> 12, 4095)]) >> 8)
//! out = o1 + (((sun − o1)·gl) >> 8)
//! ```

use super::pen::{Pen, Slope};
use super::{Backdrop, unpack};
use crate::draw::caustics::{Caustics, RAY};
use crate::draw::refract::Height;
use crate::scene::Look;

/// Most light either way: the tone of a channel at ±4096 is within a step of its limit.
const LIGHT: i64 = 4096;

/// Entries of the sky table: tilts past it read its last entry.
const SKY_ENTRIES: usize = 4096;

/// Slopes are clamped to this for the sky and the glint.
const TILT: i64 = 65536;

/// A gain look resolved for drawing: the pen that samples, and the tone's tables and terms.
pub(crate) struct GainPen {
    pen: Pen,
    shading: i64,
    caustics: i64,
    reflection: i64,
    sky: [i64; 3],
    /// `SKY[i]`: the sky's share, /256, at `m2 >> 12 = i`.
    sky_share: Vec<u8>,
    /// `G[j] = 65536 / (256 + j)`: the darkening gain at light `−j`.
    shadow: Vec<u16>,
    glint: Option<GlintTerms>,
}

/// The glint's figures, once per scene.
#[derive(Debug, Clone, Copy)]
struct GlintTerms {
    target: [i64; 2],
    /// `W0 = glint_size²`.
    w0: i64,
    spread: i64,
    peak: i64,
    sun: [i64; 3],
}

impl GainPen {
    /// The gain pen of `look`, R = `r`, on a canvas `width`×`height`, wrapping as `wrap` says.
    pub(crate) fn new(look: &Look, r: i64, width: usize, height: usize, wrap: [bool; 2]) -> GainPen {
        let glint = look.glint;
        GainPen {
            pen: Pen::new(look, r, width, height).wrapping(wrap[0], wrap[1]),
            shading: look.shading,
            caustics: look.caustics,
            reflection: look.reflection,
            sky: look.sky.map(i64::from),
            sky_share: sky_table(look.sky_max),
            shadow: (0..=LIGHT).map(|j| (65536 / (256 + j)) as u16).collect(),
            glint: (glint.peak > 0).then(|| GlintTerms {
                target: glint.target(look.light),
                w0: glint.size * glint.size,
                spread: glint.spread,
                peak: glint.peak,
                sun: glint.sun.map(i64::from),
            }),
        }
    }

    /// Whether the look takes light from the floor's caustics.
    pub(crate) fn has_caustics(&self) -> bool {
        self.caustics > 0
    }

    /// The colour of a pixel at (x, y) with slopes and curvature `slope` and the floor's light
    /// `e` under it, exactly as the gain tone's formulas say.
    pub(crate) fn draw(&self, x: i64, y: i64, slope: Slope, e: u64, backdrop: &Backdrop) -> [u8; 3] {
        self.pixel(x, y, slope, e, &backdrop.0)
    }

    /// [`GainPen::draw`] from the packed backdrop.
    #[inline(always)]
    fn pixel(&self, x: i64, y: i64, Slope { dx, dy, k }: Slope, e: u64, rgbx: &[u32]) -> [u8; 3] {
        let value = self.pen.sample(x, y, dx, dy, rgbx);
        let a = self.light(dx, dy, e);
        let (dxc, dyc) = (dx.clamp(-TILT, TILT), dy.clamp(-TILT, TILT));
        let f = self.sky_share(dxc, dyc);
        let gl = self.glint.map_or(0, |g| g.share(dxc, dyc, k));
        let mut out = [0u8; 3];
        for (c, o) in out.iter_mut().enumerate() {
            let u = self.tone(i64::from(value[c]), a);
            let o1 = u + (((self.sky[c] - u) * f) >> 8);
            let sun = self.glint.map_or(0, |g| g.sun[c]);
            *o = (o1 + (((sun - o1) * gl) >> 8)) as u8;
        }
        out
    }

    /// The floor's light `a`, −4096..=4096: the shading along the light, and the caustics.
    #[inline(always)]
    fn light(&self, dx: i64, dy: i64, e: u64) -> i64 {
        let s = dx * self.pen.light[0] + dy * self.pen.light[1];
        let mut a = (s * self.shading) >> 8;
        if self.caustics > 0 {
            a += (((e as i64 - RAY as i64) >> 8) * self.caustics) >> 8;
        }
        a.clamp(-LIGHT, LIGHT)
    }

    /// A channel `v` under light `a`: multiplied, brightening squeezed into the headroom.
    #[inline(always)]
    fn tone(&self, v: i64, a: i64) -> i64 {
        if a >= 0 {
            let y = (v * a) >> 8;
            let headroom = 255 - v;
            v + (headroom * y) / (y + headroom).max(1)
        } else {
            (v * i64::from(self.shadow[(-a) as usize])) >> 8
        }
    }

    /// The sky's share, /256, at clamped slopes.
    #[inline(always)]
    fn sky_share(&self, dxc: i64, dyc: i64) -> i64 {
        let (mx, my) = ((dxc * self.reflection) >> 8, (dyc * self.reflection) >> 8);
        let m2 = mx * mx + my * my;
        i64::from(self.sky_share[((m2 >> 12) as usize).min(SKY_ENTRIES - 1)])
    }
}

impl GlintTerms {
    /// The glint's share of the sun, /256, at clamped slopes and curvature `k`.
    #[inline(always)]
    fn share(&self, dxc: i64, dyc: i64, k: i64) -> i64 {
        let (ex, ey) = (dxc - self.target[0], dyc - self.target[1]);
        let e2 = ex * ex + ey * ey;
        let kc = k.clamp(-32768, 32767);
        let wg = self.w0 + ((self.spread * kc * kc) >> 8);
        let q = (wg - e2).max(0);
        if q == 0 {
            return 0;
        }
        let r8 = (q << 8) / wg;
        let dim = (self.w0 << 8) / wg;
        (self.peak * ((r8 * r8) >> 8) * dim) >> 16
    }
}

/// The sky table of a cap `sky_max`: a Schlick share `(1 − cos θ)^5` of the tilt `tan θ = √m`,
/// `m = i << 12` in 1/65536: `c = 1048576 / isqrt(65536 + m)` (cos θ in 1/4096),
/// `o = 4096 − c`, `F = o` then four times `F = (F·o) >> 12`, `SKY[i] = (sky_max·F) >> 12`.
pub(crate) fn sky_table(sky_max: i64) -> Vec<u8> {
    (0..SKY_ENTRIES as i64)
        .map(|i| {
            let m = i << 12;
            let c = 1_048_576 / (65536 + m).isqrt();
            let o = 4096 - c;
            let mut f = o;
            for _ in 0..4 {
                f = (f * o) >> 12;
            }
            ((sky_max * f) >> 12) as u8
        })
        .collect()
}

/// Draws rows `y0..` of a gain look into `out` (whole rows): the `backdrop` seen through
/// `heights` (read as 0 beyond the canvas, as §9's fast passes read them), lit by `pen` and,
/// when it has them, the caustics' light `floor`.
pub(crate) fn gain_band<H: Height>(
    heights: &[H],
    width: usize,
    pen: &GainPen,
    floor: Option<&Caustics>,
    backdrop: &Backdrop,
    out: &mut [[u8; 3]],
    y0: usize,
) {
    let height = heights.len() / width;
    let zeros = vec![H::default(); width];
    let row_of = |y: i64| -> &[H] {
        if (0..height as i64).contains(&y) { &heights[y as usize * width..(y as usize + 1) * width] } else { &zeros }
    };
    let rgbx = &backdrop.0;
    for (y, out_row) in (y0 as i64..).zip(out.chunks_exact_mut(width)) {
        let (up, mid, down) = (row_of(y - 1), row_of(y), row_of(y + 1));
        let light = floor.map(|f| &f.light()[y as usize * width..][..width]);
        for (x, o) in out_row.iter_mut().enumerate() {
            let left = if x > 0 { mid[x - 1].wide() } else { 0 };
            let right = if x + 1 < width { mid[x + 1].wide() } else { 0 };
            let (above, below) = (up[x].wide(), down[x].wide());
            let slope =
                Slope { dx: left - right, dy: above - below, k: left + right + above + below - 4 * mid[x].wide() };
            let e = light.map_or(RAY, |l| l[x]);
            *o = if slope == Slope::default() && e == RAY {
                unpack(rgbx[y as usize * width + x])
            } else {
                pen.pixel(x as i64, y, slope, e, rgbx)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Glint, Sampling, Tone};

    fn gain(look: Look) -> GainPen {
        GainPen::new(&Look { tone: Tone::Gain, sampling: Sampling::Nearest, ..look }, 0, 1, 1, [false; 2])
    }

    #[test]
    fn the_tone_is_the_designs() {
        // WATER2.md's vectors.
        let pen = gain(Look::PLAIN);
        let at = |v, a| pen.tone(v, a);
        let lights = [0, 64, 256, 1024, 4096, -64, -256, -4096];
        assert_eq!(lights.map(|a| at(100, a)), [100, 121, 160, 211, 241, 79, 50, 5]);
        assert_eq!((at(250, 4096), at(255, 100)), (254, 255));
        // Light never makes white of a channel below it; the deepest shadow (G = 15 at −4096)
        // keeps a channel of 18 or more above black, and darker ones may reach 0.
        for v in 0..255 {
            assert!(at(v, LIGHT) < 255 && (v < 18 || at(v, -LIGHT) > 0), "{v}");
        }
        assert_eq!(at(17, -LIGHT), 0);
    }

    #[test]
    fn the_sky_table_is_the_designs() {
        let sky = sky_table(128);
        assert_eq!([0, 64, 128, 256, 512, 1024, 2048, 4095].map(|i| sky[i]), [0, 6, 16, 31, 49, 65, 80, 92]);
        assert!(sky.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn the_glint_is_the_designs() {
        let look = Look {
            glint: Glint { peak: 230, at: 80, size: 40, spread: 4096, ..Glint::NONE },
            light: [-1, -1],
            ..Look::PLAIN
        };
        let pen = gain(look);
        let glint = pen.glint.expect("a glint");
        assert_eq!(glint.target, [-56, -56]);
        let at = [(-56, -56, 0), (-56, -56, 10), (-56, -56, 40), (-40, -60, 0), (-90, -56, 0), (0, 0, 0)];
        assert_eq!(at.map(|(dx, dy, k)| glint.share(dx, dy, k)), [230, 115, 13, 157, 17, 0]);
    }

    #[test]
    fn calm_water_is_the_picture() {
        let look = Look {
            shading: 64,
            caustics: 96,
            reflection: 1024,
            glint: Glint { peak: 230, ..Glint::NONE },
            ..Look::PLAIN
        };
        let pen = gain(look);
        let backdrop = Backdrop::new(&[[7, 128, 250]], 1);
        assert_eq!(pen.draw(0, 0, Slope::default(), RAY, &backdrop), [7, 128, 250]);
    }
}
