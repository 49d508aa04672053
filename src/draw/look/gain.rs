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

#[cfg(target_arch = "x86_64")]
use super::avx2;
use super::backdrop::Backdrop;
use super::passes::{Row, STEEP, Taps, arithmetic, blend, curvatures, gather, slopes, store_rgb};
use super::pen::{Pen, Slope};
#[cfg(target_arch = "x86_64")]
use crate::base::simd::Avx2;
use crate::draw::caustics::{Caustics, RAY};
use crate::draw::refract::{Height, steep_limit};
use crate::scene::Look;

/// Most light either way: the tone of a channel at ±4096 is within a step of its limit.
const LIGHT: i64 = 4096;

/// Entries of the sky table: tilts past it read its last entry.
const SKY_ENTRIES: usize = 4096;

/// Slopes are clamped to this for the sky and the glint.
const TILT: i64 = 65536;

/// A gain look resolved for drawing: the pen that samples, and the tone's tables and terms.
pub struct GainPen {
    /// Samples the backdrop; its light (toward the light, as `[look] light` gives it) is the
    /// gain tone's.
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
    /// See [`GainPen::floor_depth`].
    floor_depth: Option<i64>,
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
    pub fn new(look: &Look, r: i64, width: usize, height: usize, wrap: [bool; 2]) -> GainPen {
        let glint = look.glint;
        GainPen {
            // The pen samples only: its own light (§9's) is none, so the sampling passes add 0.
            pen: Pen::new(&Look { shading: 0, highlight: 0, ..*look }, r, width, height).wrapping(wrap[0], wrap[1]),
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
            floor_depth: look.makes_caustics().then(|| look.caustics_depth_q8.unwrap_or(2 * r)),
        }
    }

    /// How deep the floor lies under the water, in 1/256 (`[look] caustics_depth`, twice R
    /// when left out), when the look takes light from the floor's caustics.
    pub(crate) fn floor_depth(&self) -> Option<i64> {
        self.floor_depth
    }

    /// The colour of a pixel at (x, y) with slopes and curvature `slope` and the floor's light
    /// `e` under it, exactly as the gain tone's formulas say.
    pub(crate) fn draw(&self, x: i64, y: i64, slope: Slope, e: u64, backdrop: &Backdrop) -> [u8; 3] {
        self.pixel(x, y, slope, e, &backdrop.0)
    }

    /// [`GainPen::draw`] from the packed backdrop.
    #[inline(always)]
    fn pixel(&self, x: i64, y: i64, slope: Slope, e: u64, rgbx: &[u32]) -> [u8; 3] {
        self.shade(self.pen.sample(x, y, slope.dx, slope.dy, rgbx), slope, e)
    }

    /// The gain tone's light, sky and glint on the sampled channels `value`.
    #[inline(always)]
    fn shade(&self, value: [u32; 3], Slope { dx, dy, k }: Slope, e: u64) -> [u8; 3] {
        let a = self.light(dx, dy, e);
        let (dxc, dyc) = (dx.clamp(-TILT, TILT), dy.clamp(-TILT, TILT));
        let f = self.sky_share(dxc, dyc);
        let (gl, sun) = match &self.glint {
            Some(g) => (g.share(dxc, dyc, k), g.sun),
            None => (0, [0; 3]),
        };
        let mut out = [0u8; 3];
        for (c, o) in out.iter_mut().enumerate() {
            let u = self.tone(i64::from(value[c]), a);
            let o1 = u + (((self.sky[c] - u) * f) >> 8);
            *o = (o1 + (((sun[c] - o1) * gl) >> 8)) as u8;
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
            // Both sides are below 2^20: a 32-bit division is exact and faster.
            let y = ((v * a) >> 8) as u32;
            let headroom = (255 - v) as u32;
            v + i64::from((headroom * y) / (y + headroom).max(1))
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
        self.lobe(q, wg)
    }

    /// The share where the lobe is reached, `q > 0`, its width `wg`.
    #[inline(always)]
    fn lobe(&self, q: i64, wg: i64) -> i64 {
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
/// `heights` (read as 0 beyond the canvas, as §9's fast passes read them, positions clamped to
/// the canvas), lit by `pen` and, when it has them, the caustics' light `floor`. Each row is
/// drawn in passes over slices, so that they vectorize: the slopes, the positions (§9's
/// arithmetic pass), the light, sky and glint terms, the taps, and the tone and mixes per
/// channel; a pixel whose slope reaches ±`STEEP` is drawn again by the formula.
pub(crate) fn gain_band<H: Height>(
    heights: &[H],
    width: usize,
    pen: &GainPen,
    floor: Option<&Caustics>,
    backdrop: &Backdrop,
    out: &mut [[u8; 3]],
    y0: usize,
) {
    gain_cells(heights, width, pen, floor, &backdrop.0, out, y0);
}

crate::base::simd::dispatch! {
    /// Draws rows of a field with a gain look.
    fn gain_cells<H: Height>(heights: &[H], width: usize, pen: &GainPen, floor: Option<&Caustics>, rgbx: &[u32], out: &mut [[u8; 3]], y0: usize) => gain_rows
}

#[inline(always)]
fn gain_rows<H: Height>(
    heights: &[H],
    width: usize,
    pen: &GainPen,
    floor: Option<&Caustics>,
    rgbx: &[u32],
    out: &mut [[u8; 3]],
    y0: usize,
) {
    let height = heights.len() / width;
    let zeros = vec![H::default(); width];
    let row_of = |y: i64| -> &[H] {
        if (0..height as i64).contains(&y) { &heights[y as usize * width..(y as usize + 1) * width] } else { &zeros }
    };
    let inner = &pen.pen;
    let limit = steep_limit(inner.r).min(i64::from(STEEP)) as i32;
    let mut passes = GainPasses::new(width);
    let calm = vec![RAY; width];
    for (y, out_row) in (y0 as i64..).zip(out.chunks_exact_mut(width)) {
        let (up, mid, down) = (row_of(y - 1), row_of(y), row_of(y + 1));
        let light = floor.map_or(&calm[..], |f| &f.light()[y as usize * width..][..width]);
        let p = &mut passes;
        slopes(up, mid, down, &mut p.dx, &mut p.dy);
        curvatures(up, mid, down, &mut p.k);
        arithmetic::<true>(inner, 0, y, limit, &p.dx, &p.dy, &mut p.row);
        p.terms(pen, light);
        if inner.bilinear {
            p.sample::<true>(rgbx, width);
        } else {
            p.sample::<false>(rgbx, width);
        }
        p.blend(pen, out_row);
        // Clamped slopes are ±STEEP exactly: look for them only in a row that has one.
        let steepest = p.dx.iter().zip(&p.dy).fold(0, |m, (&a, &b)| m | a.unsigned_abs() | b.unsigned_abs());
        for x in (0..width).filter(|_| steepest >= STEEP as u32) {
            if p.dx[x].abs() >= STEEP || p.dy[x].abs() >= STEEP {
                let left = if x > 0 { mid[x - 1].wide() } else { 0 };
                let right = if x + 1 < width { mid[x + 1].wide() } else { 0 };
                let (above, below) = (up[x].wide(), down[x].wide());
                let k = left + right + above + below - 4 * mid[x].wide();
                let slope = Slope { dx: left - right, dy: above - below, k };
                out_row[x] = pen.pixel(x as i64, y, slope, light[x], rgbx);
            }
        }
    }
}

/// A row's buffers between the passes of [`gain_band`].
struct GainPasses {
    dx: Vec<i32>,
    dy: Vec<i32>,
    k: Vec<i32>,
    /// Tap indices and fractions (§9's arithmetic pass).
    row: Row,
    taps: Taps,
    /// The light, −4096..=4096.
    light: Vec<i32>,
    /// The sky's and the sun's shares, /256.
    sky: Vec<i32>,
    sun: Vec<i32>,
    /// The darkening gain `G` of each pixel's light (used where it is negative).
    gain: Vec<i32>,
    /// The glint's `q` and `Wg` (see [`GlintTerms::share`]).
    reach: Vec<i64>,
    wide: Vec<i64>,
    /// The row's pixels, `r | g << 8 | b << 16`.
    packed: Vec<u32>,
    /// The row's pixels as sampled.
    sampled: Vec<[u8; 3]>,
    #[cfg(target_arch = "x86_64")]
    avx2: Option<Avx2>,
}

impl GainPasses {
    fn new(width: usize) -> GainPasses {
        GainPasses {
            dx: vec![0; width],
            dy: vec![0; width],
            k: vec![0; width],
            row: Row::new(width),
            taps: Taps(vec![[0; 4]; width]),
            light: vec![0; width],
            sky: vec![0; width],
            sun: vec![0; width],
            gain: vec![0; width],
            reach: vec![0; width],
            wide: vec![0; width],
            packed: vec![0; width],
            sampled: vec![[0; 3]; width],
            #[cfg(target_arch = "x86_64")]
            avx2: Avx2::get(),
        }
    }

    /// Each pixel's light, sky share and glint share (exact while its slopes are within
    /// ±`STEEP`: the products are taken in i64 where they need it), in loops simple enough to
    /// vectorize.
    #[inline(always)]
    fn terms(&mut self, pen: &GainPen, floor: &[u64]) {
        let [lx, ly] = pen.pen.light;
        let (shading, caustics, reflection) = (pen.shading, pen.caustics, pen.reflection as i32);
        let slopes = self.dx.iter().zip(&self.dy);
        // Where the row's shading and caustics products stay below 2^30 (the usual case), the
        // light is taken in i32, as exact and twice as wide a vector.
        let steepest =
            self.dx.iter().zip(&self.dy).fold(0, |m, (&a, &b)| m.max(a.unsigned_abs()).max(b.unsigned_abs()));
        let brightest = floor.iter().fold(0, |m, &e| m.max(e));
        let shaded = i64::from(steepest) * (lx.abs() + ly.abs()) * shading;
        let focused = ((brightest.saturating_sub(RAY) >> 8) as i64).saturating_mul(caustics);
        if shaded < 1 << 30 && focused < 1 << 30 {
            let (lx, ly, shading, caustics) = (lx as i32, ly as i32, shading as i32, caustics as i32);
            for ((light, (&dx, &dy)), &e) in self.light.iter_mut().zip(slopes).zip(floor) {
                let a = ((dx * lx + dy * ly) * shading) >> 8;
                let c = ((((e as i64 - RAY as i64) >> 8) as i32) * caustics) >> 8;
                *light = (a + c).clamp(-LIGHT as i32, LIGHT as i32);
            }
        } else {
            for ((light, (&dx, &dy)), &e) in self.light.iter_mut().zip(slopes).zip(floor) {
                // Within ±STEEP, s fits an i32 (2·2^21·256 = 2^30); s·shading may not.
                let s = dx * lx as i32 + dy * ly as i32;
                let a = (i64::from(s) * shading) >> 8;
                let c = (((e as i64 - RAY as i64) >> 8) * caustics) >> 8;
                *light = (a + c).clamp(-LIGHT, LIGHT) as i32;
            }
        }
        // The sky's index: past |m| = 4096 along an axis the table's last entry is reached
        // (4096² >> 12 = 4096), so the tilts are clamped there and the sum fits an i32.
        let tilt = |d: i32| ((d.clamp(-TILT as i32, TILT as i32) * reflection) >> 8).clamp(-4096, 4096);
        for (sky, (&dx, &dy)) in self.sky.iter_mut().zip(self.dx.iter().zip(&self.dy)) {
            let (mx, my) = (tilt(dx), tilt(dy));
            *sky = ((mx * mx + my * my) >> 12).min(SKY_ENTRIES as i32 - 1);
        }
        for sky in &mut self.sky {
            *sky = i32::from(pen.sky_share[*sky as usize]);
        }
        let Some(g) = &pen.glint else {
            self.sun.fill(0);
            return;
        };
        // The lobe's reach first (branch-free), the share only where it is reached.
        let [tx, ty] = g.target;
        let slopes = self.dx.iter().zip(&self.dy).zip(&self.k);
        for ((reach, wide), ((&dx, &dy), &k)) in self.reach.iter_mut().zip(&mut self.wide).zip(slopes) {
            let (ex, ey) = (
                i64::from(dx.clamp(-TILT as i32, TILT as i32)) - tx,
                i64::from(dy.clamp(-TILT as i32, TILT as i32)) - ty,
            );
            let kc = i64::from(k.clamp(-32768, 32767));
            *wide = g.w0 + ((g.spread * kc * kc) >> 8);
            *reach = (*wide - (ex * ex + ey * ey)).max(0);
        }
        for (sun, (&q, &wg)) in self.sun.iter_mut().zip(self.reach.iter().zip(&self.wide)) {
            *sun = if q == 0 { 0 } else { g.lobe(q, wg) as i32 };
        }
    }

    /// The row's sampled pixels (§9's sampling with no light), into `sampled`: eight at a
    /// time by the AVX2 kernel where the CPU has it, the rest by the portable passes.
    #[inline(always)]
    fn sample<const BILINEAR: bool>(&mut self, rgbx: &[u32], width: usize) {
        let n = width;
        #[allow(unused_mut)]
        let mut rest = 0..n;
        #[cfg(target_arch = "x86_64")]
        if let (true, Some(token)) = (BILINEAR, self.avx2) {
            let run = self.row.run(n, rgbx, width);
            rest.start = crate::base::simd::avx2_call!(token => avx2::bilinear(&run, &mut self.sampled[..n]));
        }
        gather::<BILINEAR>(&self.row, rgbx, width, rest.clone(), &mut self.taps);
        blend::<BILINEAR>(&self.row, &self.taps, rest.clone(), &mut self.packed[rest.clone()]);
        store_rgb(&self.packed[rest.clone()], &mut self.sampled[rest]);
    }

    /// The sampled channels, toned and mixed with the sky and the sun, into `out`: one
    /// channel at a time over the row, branch-free, so that each loop vectorizes.
    #[inline(always)]
    fn blend(&mut self, pen: &GainPen, out: &mut [[u8; 3]]) {
        let n = out.len();
        let sky = pen.sky.map(|c| c as i32);
        let sun = pen.glint.map_or([0; 3], |g| g.sun.map(|c| c as i32));
        for (g, &a) in self.gain.iter_mut().zip(&self.light) {
            *g = i32::from(pen.shadow[a.min(0).unsigned_abs() as usize]);
        }
        self.packed[..n].fill(0);
        for c in 0..3 {
            let shift = 8 * c as u32;
            let terms = self.light[..n].iter().zip(&self.gain[..n]).zip(self.sky[..n].iter().zip(&self.sun[..n]));
            let pixels = self.packed[..n].iter_mut().zip(&self.sampled[..n]);
            for ((packed, p), ((&a, &g), (&f, &gl))) in pixels.zip(terms) {
                let v = i32::from(p[c]);
                let lighter = brighten(v, a.max(0));
                let darker = (v * g) >> 8;
                let u = if a >= 0 { lighter } else { darker };
                let o1 = u + (((sky[c] - u) * f) >> 8);
                *packed |= ((o1 + (((sun[c] - o1) * gl) >> 8)) as u32) << shift;
            }
        }
        store_rgb(&self.packed[..n], out);
    }
}

/// The tone of a channel `v` under light `a ≥ 0`, `v + (H·y) / max(y + H, 1)` with
/// `y = (v·a) >> 8` and `H = 255 − v`, in a form that vectorizes: both sides of the division are
/// below 2^20, so the f32 quotient floors to the exact one (its error, under 2^-16, is less than
/// the 1/divisor any fraction lies from the next integer); the whole number it gives, 0..=255,
/// is read from the float's bits above 2^23 (a cast would check every lane for overflow, one at
/// a time).
#[inline(always)]
fn brighten(v: i32, a: i32) -> i32 {
    let y = (v * a) >> 8;
    let headroom = 255 - v;
    let q = ((headroom * y) as f32 / (y + headroom).max(1) as f32).trunc();
    v + ((q + 8_388_608.0).to_bits() & 0x7f_ffff) as i32
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
    fn the_vectorized_brightening_is_the_integer_formula_everywhere() {
        let pen = gain(Look::PLAIN);
        for v in 0..=255 {
            for a in 0..=LIGHT {
                assert_eq!(i64::from(brighten(v as i32, a as i32)), pen.tone(v, a), "v = {v}, a = {a}");
            }
        }
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
