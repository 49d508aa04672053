//! Refraction (§5): each output pixel is the background pixel displaced by the local slope.

use crate::sim::field::Cell;

/// Fills `out` with `background` displaced by the slope of `heights`, nearest-pixel:
/// `ox = ((h(x-1,y) - h(x+1,y))·R) >> 8`, likewise `oy`, the source clamped to the canvas.
///
/// `P` is whatever the encoder works in: palette indices for GIF, RGB for PNG. Every output
/// pixel is a background pixel, so no colour the background lacks can appear.
pub fn refract<H: Height, P: Copy>(heights: &[H], width: usize, refraction_q8: i64, background: &[P], out: &mut [P]) {
    refract_band(heights, width, refraction_q8, background, out, 0);
}

/// Refracts the rows of `out_band`, which are the canvas rows from `y0` on.
pub fn refract_band<H: Height, P: Copy>(
    heights: &[H],
    width: usize,
    refraction_q8: i64,
    background: &[P],
    out_band: &mut [P],
    y0: usize,
) {
    let y1 = y0 + out_band.len() / width;
    refract_cells(heights, width, y0, y1, refraction_q8, background, out_band);
}

crate::base::simd::dispatch! {
    /// Refracts rows `y0..y1` of a field.
    fn refract_cells<H: Height, P: Copy>(h: &[H], width: usize, y0: usize, y1: usize, r: i64, background: &[P], out: &mut [P]) => refract_rows
}

/// A height field's cell as drawing reads it: how a row of source indices is computed from it,
/// in the narrowest arithmetic that is exact for its type.
pub trait Height: Cell {
    /// The height as an i64, for exact arithmetic.
    #[inline(always)]
    fn wide(self) -> i64 {
        self.into()
    }

    /// `((a - b)·r) >> 8`, exact for every a, b of the type and r in 0..=4096.
    fn offset(a: Self, b: Self, r: i64) -> i64;

    /// The curvature `left + right + up + down − 4·mid`, clamped to ±2^30 (in the narrowest
    /// arithmetic that is exact for the type, so that a row of them vectorizes).
    fn curvature(left: Self, right: Self, up: Self, down: Self, mid: Self) -> i32;

    /// Source indices for the interior columns 1..w-1 of row `y`, from that row (`mid`) and the
    /// rows above and below; `source` holds the interior only.
    #[inline(always)]
    fn interior_sources(mid: &[Self], up: &[Self], down: &[Self], y: usize, dims: Dims, source: &mut [u32]) {
        let interior = source.iter_mut().zip(mid.iter().zip(&mid[2..])).zip(up[1..].iter().zip(&down[1..]));
        for (x, ((s, (&left, &right)), (&u, &d))) in (1i64..).zip(interior) {
            *s = dims.index(x, y as i64, Self::offset(left, right, dims.r), Self::offset(u, d, dims.r));
        }
    }
}

/// The canvas size and R, for index arithmetic.
#[derive(Clone, Copy)]
pub struct Dims {
    width: i64,
    height: i64,
    r: i64,
}

impl Dims {
    /// The background index a pixel samples, its displaced position clamped to the canvas.
    fn index(self, x: i64, y: i64, ox: i64, oy: i64) -> u32 {
        let sx = (x + ox).clamp(0, self.width - 1);
        let sy = (y + oy).clamp(0, self.height - 1);
        (sy * self.width + sx) as u32
    }
}

impl Height for i16 {
    /// Exact in i32: at most 8·2^15 = 2^18.
    #[inline(always)]
    fn curvature(left: i16, right: i16, up: i16, down: i16, mid: i16) -> i32 {
        let wide = i32::from;
        wide(left) + wide(right) + wide(up) + wide(down) - 4 * wide(mid)
    }

    fn offset(a: i16, b: i16, r: i64) -> i64 {
        // |a - b| ≤ 65535 and r ≤ 4096, so the product fits in i32 (2.7e8 < 2.1e9).
        i64::from(((i32::from(a) - i32::from(b)) * r as i32) >> 8)
    }

    /// All in i32 (the canvas has at most 2^26 pixels), so the loop vectorizes.
    #[inline(always)]
    fn interior_sources(mid: &[i16], up: &[i16], down: &[i16], y: usize, dims: Dims, source: &mut [u32]) {
        let (w, max_x, max_y, r) = (dims.width as i32, dims.width as i32 - 1, dims.height as i32 - 1, dims.r as i32);
        let y = y as i32;
        let interior = source.iter_mut().zip(mid.iter().zip(&mid[2..])).zip(up[1..].iter().zip(&down[1..]));
        for (x, ((s, (&left, &right)), (&u, &d))) in (1i32..).zip(interior) {
            let ox = ((i32::from(left) - i32::from(right)) * r) >> 8;
            let oy = ((i32::from(u) - i32::from(d)) * r) >> 8;
            let sx = (x + ox).clamp(0, max_x);
            let sy = (y + oy).clamp(0, max_y);
            *s = (sy * w + sx) as u32;
        }
    }
}

impl Height for i32 {
    #[inline(always)]
    fn curvature(left: i32, right: i32, up: i32, down: i32, mid: i32) -> i32 {
        let wide = i64::from;
        let limit = 1 << 30;
        (wide(left) + wide(right) + wide(up) + wide(down) - 4 * wide(mid)).clamp(-limit, limit) as i32
    }

    fn offset(a: i32, b: i32, r: i64) -> i64 {
        ((i64::from(a) - i64::from(b)) * r) >> 8
    }

    /// In i32 too: a slope so steep that the sample leaves any canvas (|offset| > 16384) is
    /// clamped to one that still leaves it, which changes no clamped result but keeps `d·R`
    /// within i32.
    #[inline(always)]
    fn interior_sources(mid: &[i32], up: &[i32], down: &[i32], y: usize, dims: Dims, source: &mut [u32]) {
        let (w, max_x, max_y, r) = (dims.width as i32, dims.width as i32 - 1, dims.height as i32 - 1, dims.r as i32);
        let limit = steep_limit(dims.r);
        let slope = |a: i32, b: i32| (i64::from(a) - i64::from(b)).clamp(-limit, limit) as i32;
        let y = y as i32;
        let interior = source.iter_mut().zip(mid.iter().zip(&mid[2..])).zip(up[1..].iter().zip(&down[1..]));
        for (x, ((s, (&left, &right)), (&u, &d))) in (1i32..).zip(interior) {
            let ox = (slope(left, right) * r) >> 8;
            let oy = (slope(u, d) * r) >> 8;
            let sx = (x + ox).clamp(0, max_x);
            let sy = (y + oy).clamp(0, max_y);
            *s = (sy * w + sx) as u32;
        }
    }
}

/// The largest slope worth keeping for a given R: `limit·R ≥ 2^22 + 256`, so a clamped slope
/// still moves the sample more than 16384 pixels, and `limit·R < 2^31`.
pub(crate) fn steep_limit(r: i64) -> i64 {
    if r == 0 { 0 } else { ((1 << 22) + 256 + r - 1) / r }
}

/// Refracts rows `y0..y1` of the canvas into `out`, which holds just those rows.
#[inline(always)]
pub(crate) fn refract_rows<H: Height, P: Copy>(
    h: &[H],
    width: usize,
    y0: usize,
    y1: usize,
    r: i64,
    background: &[P],
    out: &mut [P],
) {
    let height = h.len() / width;
    let dims = Dims { width: width as i64, height: height as i64, r };
    // Heights outside the canvas read as 0: a row of zeros stands above and below it.
    let zeros = vec![H::default(); width];
    let row = |y: i64| -> &[H] {
        if (0..height as i64).contains(&y) { &h[y as usize * width..(y as usize + 1) * width] } else { &zeros }
    };
    // Two passes a row: first every source index (arithmetic only), then the gather.
    let mut source = vec![0u32; width];
    for (y, out_row) in (y0..y1).zip(out.chunks_exact_mut(width)) {
        let yi = y as i64;
        let (up, mid, down) = (row(yi - 1), row(yi), row(yi + 1));
        // The first and last columns read a 0 beyond the edge.
        for x in [0, width - 1] {
            let left = if x > 0 { mid[x - 1] } else { H::default() };
            let right = if x + 1 < width { mid[x + 1] } else { H::default() };
            source[x] = dims.index(x as i64, yi, H::offset(left, right, r), H::offset(up[x], down[x], r));
        }
        H::interior_sources(mid, up, down, y, dims, &mut source[1..width - 1]);
        gather(background, &source, y * width, out_row);
    }
}

/// Pixels a run of which is checked for calm water at once.
const RUN: usize = 128;

/// `out[j] = background[source[j]]` for one row whose first pixel is `start` in the background.
/// Where the water is calm every pixel samples itself: such a run of pixels is one copy of the
/// background row (on busy scenes most of the surface is calm between the ripples).
#[inline(always)]
fn gather<P: Copy>(background: &[P], source: &[u32], start: usize, out: &mut [P]) {
    const OFFSETS: [u32; RUN] = {
        let mut offsets = [0; RUN];
        let mut k = 0;
        while k < RUN {
            offsets[k] = k as u32;
            k += 1;
        }
        offsets
    };
    for ((out, source), first) in out.chunks_mut(RUN).zip(source.chunks(RUN)).zip((start..).step_by(RUN)) {
        // Branch-free (an OR of differences), so it compiles to a few vector instructions.
        let differs = source.iter().zip(&OFFSETS).fold(0, |acc, (&s, &k)| acc | (s ^ (first as u32 + k)));
        if differs == 0 {
            out.copy_from_slice(&background[first..first + out.len()]);
        } else {
            for (o, &i) in out.iter_mut().zip(source) {
                *o = background[i as usize];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4×3 background numbered 0..12, so the output names the source pixel.
    fn numbered() -> Vec<u32> {
        (0..12).collect()
    }

    #[test]
    fn flat_water_shows_the_background() {
        let h = vec![0i16; 12];
        let mut out = vec![99u32; 12];
        refract(&h, 4, 256, &numbered(), &mut out);
        assert_eq!(out, numbered());
    }

    #[test]
    fn slope_moves_the_sample_and_floors() {
        // One dent of -3 at (1,1) in a 4×3 field.
        let mut h = vec![0i32; 12];
        h[5] = -3;
        let mut out = vec![0u32; 12];
        // R = 128 (refraction 0.5).
        refract(&h, 4, 128, &numbered(), &mut out);
        // (0,1): dx = h(-1,1) - h(1,1) = 0 - -3 = 3; ox = 384 >> 8 = 1 → source (1,1) = 5.
        assert_eq!(out[4], 5);
        // (2,1): dx = h(1,1) - h(3,1) = -3; ox = -384 >> 8 = -2 (floors) → source (0,1) = 4.
        assert_eq!(out[6], 4);
        // (1,0): dy = h(1,-1) - h(1,1) = 3; oy = 1 → source (1,1) = 5.
        assert_eq!(out[1], 5);
        // (1,2): dy = -3 → oy = -2 → source row clamps to 0: (1,0) = 1.
        assert_eq!(out[9], 1);
        // (1,1) itself has flat neighbours.
        assert_eq!(out[5], 5);
    }

    #[test]
    fn the_i32_shortcut_matches_i64_arithmetic_at_the_extremes() {
        let values = [i32::MIN, i32::MIN + 1, -(1 << 22) - 7, -70_000, -257, -1, 0, 1, 255, 65_536, 1 << 23, i32::MAX];
        for r in [0, 1, 2, 3, 26, 255, 256, 257, 1000, 4095, 4096] {
            let limit = steep_limit(r);
            assert!(limit * r < (1 << 31) && (r == 0 || limit * r >= (1 << 22) + 256));
            for &a in &values {
                for &b in &values {
                    for x in [0i64, 1, 5000, 16383] {
                        let exact = (x + i32::offset(a, b, r)).clamp(0, 16383);
                        let d = (i64::from(a) - i64::from(b)).clamp(-limit, limit) as i32;
                        let fast = (x + i64::from((d * r as i32) >> 8)).clamp(0, 16383);
                        assert_eq!(fast, exact, "a={a} b={b} r={r} x={x}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_avx2_and_baseline_paths_agree() {
        let (w, h) = (37, 23);
        let field: Vec<i32> = (0..w * h).map(|i| ((i as i64 * 2_654_435_761) % 200_001 - 100_000) as i32).collect();
        let small: Vec<i16> = field.iter().map(|&v| (v / 4) as i16).collect();
        let background: Vec<u32> = (0..(w * h) as u32).collect();
        let run = |baseline: bool| {
            crate::base::simd::set_baseline_only(baseline);
            let mut a = vec![0u32; w * h];
            let mut b = vec![0u32; w * h];
            refract(&field, w, 300, &background, &mut a);
            refract(&small, w, 300, &background, &mut b);
            crate::base::simd::set_baseline_only(false);
            (a, b)
        };
        assert_eq!(run(true), run(false));
    }

    #[test]
    fn calm_runs_and_busy_ones_match_the_formula_pixel_by_pixel() {
        // Rows wider than a run, with calm stretches of many lengths (whole runs, parts of
        // runs, row ends) between single dents.
        let (w, h) = (3 * RUN + 37, 9);
        let mut field = vec![0i16; w * h];
        for (i, v) in field.iter_mut().enumerate() {
            if (i * 7919) % 211 < 3 {
                *v = ((i % 97) as i16 - 48) * 40;
            }
        }
        let at = |x: i64, y: i64| {
            if (0..w as i64).contains(&x) && (0..h as i64).contains(&y) {
                i64::from(field[y as usize * w + x as usize])
            } else {
                0
            }
        };
        let r = 256;
        let background: Vec<[u8; 3]> = (0..w * h).map(|i| [i as u8, (i >> 8) as u8, 7]).collect();
        let mut out = vec![[0u8; 3]; w * h];
        refract(&field, w, r, &background, &mut out);
        for y in 0..h as i64 {
            for x in 0..w as i64 {
                let ox = ((at(x - 1, y) - at(x + 1, y)) * r) >> 8;
                let oy = ((at(x, y - 1) - at(x, y + 1)) * r) >> 8;
                let source = (y + oy).clamp(0, h as i64 - 1) as usize * w + (x + ox).clamp(0, w as i64 - 1) as usize;
                assert_eq!(out[y as usize * w + x as usize], background[source], "({x}, {y})");
            }
        }
    }

    #[test]
    fn huge_slopes_clamp_to_the_canvas() {
        let mut h = vec![0i32; 12];
        h[5] = i32::MIN;
        h[6] = i32::MAX;
        let mut out = vec![0u32; 12];
        refract(&h, 4, 4096, &numbered(), &mut out);
        // (2,1): dx = h(1,1) - h(3,1) = MIN → far left, clamped to x = 0.
        assert_eq!(out[6], 4);
        // (1,1): dx = 0 - MAX → far left; (0,1) = 4.
        assert_eq!(out[5], 4);
    }
}
