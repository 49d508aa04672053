//! The lit tones of a look (§9's clamp, and the water look's soft tone): rows drawn run by run,
//! calm water copied, steep pixels drawn by the formula ([`Pen::pixel`]), and neighbouring runs
//! of moving water taken together through the passes ([`super::passes`]) with the water terms
//! (caustics from the curvature, the soft tone's knee, the sky's share) between them.

#[cfg(target_arch = "x86_64")]
use super::avx2;
use super::backdrop::{Backdrop, sample};
use super::passes::{
    LIGHT_LIMIT, RUN, Row, SPAN, STEEP, Taps, arithmetic, blend, curvatures, gather, slopes, store_rgb,
};
use super::pen::{Pen, Slope, TERM_LIMIT, TONE_BOTTOM, TONE_TOP, WaterTerms, knee, sky_share};
#[cfg(target_arch = "x86_64")]
use crate::base::simd::Avx2;
use crate::draw::refract::{Height, steep_limit};

/// Draws rows `y0..` of the frame into `out` (whole rows, from row `y0` of the canvas): the
/// `backdrop` seen through the water with the look `pen` resolved.
pub fn look_band<H: Height>(
    heights: &[H],
    width: usize,
    pen: &Pen,
    backdrop: &Backdrop,
    out: &mut [[u8; 3]],
    y0: usize,
) {
    look_cells(heights, width, pen, &backdrop.0, out, y0);
}

crate::base::simd::dispatch! {
    /// Draws rows of a field with a look.
    fn look_cells<H: Height>(h: &[H], width: usize, pen: &Pen, rgbx: &[u32], out: &mut [[u8; 3]], y0: usize) => look_rows
}

/// Draws rows `y0..` of a `look` into `out`. The slopes of a row first; then, run by run of
/// `RUN` pixels: a run of calm water (no slope) is the background itself, copied; a run with a
/// slope of `STEEP` or more (only wrapped spring heights have them) is drawn pixel by pixel in
/// i64; neighbouring runs of moving water are drawn together, up to `SPAN` pixels, by `Passes`.
#[inline(always)]
fn look_rows<H: Height>(h: &[H], width: usize, pen: &Pen, rgbx: &[u32], out: &mut [[u8; 3]], y0: usize) {
    let height = h.len() / width;
    let zeros = vec![H::default(); width];
    let row_of = |y: i64| -> &[H] {
        if (0..height as i64).contains(&y) { &h[y as usize * width..(y as usize + 1) * width] } else { &zeros }
    };
    let limit = steep_limit(pen.r).min(i64::from(STEEP)) as i32;
    let mut passes = Passes::new(pen, limit, rgbx);
    let longest = passes.span();
    let mut dx = vec![0i32; width];
    let mut dy = vec![0i32; width];
    let mut k = vec![0i32; width];
    for (y, out_row) in (y0 as i64..).zip(out.chunks_exact_mut(width)) {
        let (up, mid, down) = (row_of(y - 1), row_of(y), row_of(y + 1));
        slopes(up, mid, down, &mut dx, &mut dy);
        if pen.water.is_some() {
            curvatures(up, mid, down, &mut k);
        }
        let background = &rgbx[y as usize * width..][..width];
        // Moving runs not yet drawn: where they start, and their magnitudes or-ed.
        let mut pending: Option<(usize, u32)> = None;
        for start in (0..width).step_by(RUN) {
            let span = start..(start + RUN).min(width);
            // The magnitudes of the run's slopes, or-ed: at least the largest, and under a power
            // of two exactly when the largest is.
            let mut magnitude = dx[span.clone()]
                .iter()
                .zip(&dy[span.clone()])
                .fold(0, |m, (&a, &b)| m | a.unsigned_abs() | b.unsigned_abs());
            if pen.water.is_some() {
                // Water is calm only where it is flat, not merely level (caustics).
                magnitude |= k[span.clone()].iter().fold(0, |m, &c| m | c.unsigned_abs());
            }
            if magnitude != 0 && magnitude < STEEP as u32 {
                let (from, before) = pending.unwrap_or((start, 0));
                pending = Some((from, before | magnitude));
                if span.end - from + RUN > longest {
                    let at = from..span.end;
                    let slopes = Slopes { dx: &dx[at.clone()], dy: &dy[at.clone()], k: &k[at.clone()] };
                    passes.draw(y, from, slopes, before | magnitude, &mut out_row[at]);
                    pending = None;
                }
                continue;
            }
            if let Some((from, magnitude)) = pending.take() {
                let slopes = Slopes { dx: &dx[from..start], dy: &dy[from..start], k: &k[from..start] };
                passes.draw(y, from, slopes, magnitude, &mut out_row[from..start]);
            }
            if magnitude == 0 {
                store_rgb(&background[span.clone()], &mut out_row[span]);
            } else {
                for x in span {
                    let left = if x > 0 { mid[x - 1].wide() } else { 0 };
                    let right = if x + 1 < width { mid[x + 1].wide() } else { 0 };
                    let (above, below) = (up[x].wide(), down[x].wide());
                    let k = left + right + above + below - 4 * mid[x].wide();
                    out_row[x] = pen.pixel(x as i64, y, Slope { dx: left - right, dy: above - below, k }, rgbx);
                }
            }
        }
        if let Some((from, magnitude)) = pending {
            let slopes = Slopes { dx: &dx[from..], dy: &dy[from..], k: &k[from..] };
            passes.draw(y, from, slopes, magnitude, &mut out_row[from..]);
        }
    }
}

/// What the passes over a span of moving water share: the look, the buffers between the
/// passes, and the backdrop.
struct Passes<'a> {
    pen: &'a Pen,
    limit: i32,
    rgbx: &'a [u32],
    row: Row,
    taps: Taps,
    blended: Vec<u32>,
    #[cfg(target_arch = "x86_64")]
    avx2: Option<Avx2>,
}

impl<'a> Passes<'a> {
    fn new(pen: &'a Pen, limit: i32, rgbx: &'a [u32]) -> Passes<'a> {
        let span = SPAN.min(pen.width as usize);
        Passes {
            pen,
            limit,
            rgbx,
            row: Row::new(span),
            taps: Taps(vec![[0; 4]; span]),
            blended: vec![0; span],
            #[cfg(target_arch = "x86_64")]
            avx2: Avx2::get(),
        }
    }

    /// Most pixels a span may have.
    fn span(&self) -> usize {
        self.blended.len()
    }

    /// Draws the pixels of row `y` from `x0` on whose slopes are `dx`, `dy`, their magnitudes
    /// or-ed `magnitude`, into `out`, in passes over them: the arithmetic (in i32, over slices,
    /// so it vectorizes), the gather of the taps (two 8-byte loads a pixel, stored side by side),
    /// the blend into packed pixels (vectorized again) and their unpacking to RGB; where the CPU
    /// has AVX2, bilinear pixels are gathered and blended eight at a time by `avx2`.
    #[inline(always)]
    fn draw(&mut self, y: i64, x0: usize, slopes: Slopes<'_>, magnitude: u32, out: &mut [[u8; 3]]) {
        let (pen, limit) = (self.pen, self.limit);
        let Slopes { dx, dy, k } = slopes;
        let (n, row) = (dx.len(), &mut self.row);
        match &pen.water {
            Some(water) => {
                arithmetic::<true>(pen, x0, y, limit, dx, dy, row);
                if water.soft {
                    water_arithmetic::<true>(water, dx, dy, k, row);
                } else {
                    water_arithmetic::<false>(water, dx, dy, k, row);
                }
            }
            None if gentle(pen, limit, magnitude) => arithmetic::<false>(pen, x0, y, limit, dx, dy, row),
            None => arithmetic::<true>(pen, x0, y, limit, dx, dy, row),
        }
        self.gather_and_blend(n, out);
    }

    /// The gather and blend of the first `n` pixels of the row buffers, whose arithmetic (the
    /// water terms' included) is done, into `out`.
    #[inline(always)]
    fn gather_and_blend(&mut self, n: usize, out: &mut [[u8; 3]]) {
        let (pen, rgbx, width, row) = (self.pen, self.rgbx, self.pen.width as usize, &self.row);
        let water = pen.water.as_ref();
        let sky = water.map_or([0; 3], |w| w.sky.map(|c| c as i32));
        #[allow(unused_mut)]
        let mut rest = 0..n;
        #[cfg(target_arch = "x86_64")]
        if let (true, Some(token)) = (pen.bilinear, self.avx2) {
            let run = row.run(n, rgbx, width);
            rest.start = match water {
                Some(_) => {
                    let terms = avx2::Water { tone: &row.tone[..n], mix: &row.mix[..n], sky };
                    crate::base::simd::avx2_call!(token => avx2::bilinear_water(&run, &terms, out))
                }
                None => crate::base::simd::avx2_call!(token => avx2::bilinear(&run, out)),
            };
        }
        let (taps, blended) = (&mut self.taps, &mut self.blended[rest.clone()]);
        if pen.bilinear {
            gather::<true>(row, rgbx, width, rest.clone(), taps);
        } else {
            gather::<false>(row, rgbx, width, rest.clone(), taps);
        }
        match (pen.bilinear, water.is_some()) {
            (true, false) => blend::<true>(row, taps, rest.clone(), blended),
            (false, false) => blend::<false>(row, taps, rest.clone(), blended),
            (true, true) => blend_water::<true>(row, taps, sky, rest.clone(), blended),
            (false, true) => blend_water::<false>(row, taps, sky, rest.clone(), blended),
        }
        store_rgb(blended, &mut out[rest]);
    }
}

/// The slopes and curvatures of a span of pixels (the curvatures only for a look with water
/// terms), each clamped as [`slopes`] and [`curvatures`] say.
#[derive(Clone, Copy)]
struct Slopes<'a> {
    dx: &'a [i32],
    dy: &'a [i32],
    k: &'a [i32],
}

/// Whether the arithmetic of a run may leave out its clamps of the slopes and the light sum:
/// when no slope's magnitude passes `magnitude`, which is within `limit`, and no light sum can
/// pass `LIGHT_LIMIT`, the clamps change nothing and every product still fits an i32.
fn gentle(pen: &Pen, limit: i32, magnitude: u32) -> bool {
    let magnitude = i64::from(magnitude);
    magnitude <= i64::from(limit) && magnitude * (pen.light[0].abs() + pen.light[1].abs()) <= i64::from(LIGHT_LIMIT)
}

/// The water terms of a span whose light sums [`arithmetic`] has put in `row.add`: the
/// caustics join the light; with the soft tone the light becomes the knee's fractions toward
/// the top and the bottom; and the sky's share from the tilt.
#[inline(always)]
fn water_arithmetic<const SOFT: bool>(water: &WaterTerms, dx: &[i32], dy: &[i32], k: &[i32], row: &mut Row) {
    let (caustics, reflection) = (water.caustics as i32, water.reflection as i32);
    let n = dx.len();
    let (dy, k) = (&dy[..n], &k[..n]);
    let (add, tone, mix) = (&mut row.add[..n], &mut row.tone[..n], &mut row.mix[..n]);
    for i in 0..n {
        let a = add[i] + ((k[i].max(0) * caustics) >> 8).min(255);
        if SOFT {
            let t = knee(a) as u32;
            add[i] = 0;
            tone[i] = if a > 0 { t } else { t << 16 };
        } else {
            add[i] = a;
            tone[i] = 0;
        }
        let f = sky_share((dx[i].abs() + dy[i].abs()).min(TERM_LIMIT), reflection) as u32;
        mix[i] = (256 - f) | f << 16;
    }
}

/// [`blend`] with the water terms: the light added (clamp tone) or the knee's fractions of the
/// way toward `TONE_TOP` and `TONE_BOTTOM` (soft tone), then the sky's share of `sky`.
#[inline(always)]
fn blend_water<const BILINEAR: bool>(
    row: &Row,
    taps: &Taps,
    sky: [i32; 3],
    span: std::ops::Range<usize>,
    out: &mut [u32],
) {
    let terms = row.tone[span.clone()].iter().zip(&row.mix[span.clone()]);
    let weights = row.fx[span.clone()].iter().zip(&row.fy[span.clone()]).zip(&row.add[span.clone()]).zip(terms);
    for (o, ((((&fx, &fy), &add), (&tone, &mix)), &taps)) in out.iter_mut().zip(weights.zip(&taps.0[span])) {
        let (up, down) = ((tone & 0xffff) as i32, (tone >> 16) as i32);
        let (keep, share) = ((mix & 0xffff) as i32, (mix >> 16) as i32);
        let channel = |shift: u32, sky: i32| -> u32 {
            let value = sample::<BILINEAR>(taps, fx, fy, shift) as i32;
            let lighter = ((TONE_TOP as i32 - value).max(0) * up) >> 8;
            let darker = ((value - TONE_BOTTOM as i32).max(0) * down) >> 8;
            let toned = (value + add + lighter - darker).clamp(0, 255);
            // u + ((sky − u)·f) >> 8 is (u·(256 − f) + sky·f) >> 8: u·256 is a multiple of 256.
            ((toned * keep + sky * share) >> 8) as u32
        };
        *o = channel(0, sky[0]) | channel(8, sky[1]) << 8 | channel(16, sky[2]) << 16;
    }
}
