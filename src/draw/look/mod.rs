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

#[cfg(target_arch = "x86_64")]
mod avx2;
mod gain;
mod pen;

pub(crate) use gain::{GainPen, gain_band};
pub(crate) use pen::{Pen, Slope};
use pen::{TERM_LIMIT, TONE_BOTTOM, TONE_TOP, WaterTerms, knee, sky_share};

use super::refract::{Height, steep_limit};
#[cfg(target_arch = "x86_64")]
use crate::base::simd::Avx2;
use crate::scene::Look;

/// The background as a look reads it: one `u32` per pixel, `r | g << 8 | b << 16`, followed by
/// a row and a pixel of padding, so that a pixel and its right neighbour are one 8-byte load,
/// and so are the two below them, wherever the pixel is. (Where a neighbour lies outside the
/// canvas its weight is 0: a position clamped to the last column or row has no fraction.)
pub struct Backdrop(pub(super) Vec<u32>);

impl Backdrop {
    /// Packs an RGB background `width` pixels wide.
    pub fn new(background: &[[u8; 3]], width: usize) -> Backdrop {
        let packed = background.iter().map(|p| u32::from(p[0]) | u32::from(p[1]) << 8 | u32::from(p[2]) << 16);
        Backdrop(packed.chain(std::iter::repeat_n(0, width + 1)).collect())
    }

    /// Bytes a backdrop takes per pixel.
    pub const BYTES_PER_PIXEL: u64 = 4;
}

/// A packed pixel's channels.
#[inline(always)]
pub(super) fn unpack(p: u32) -> [u8; 3] {
    [p as u8, (p >> 8) as u8, (p >> 16) as u8]
}

/// Draws rows `y0..` of the frame into `out` (whole rows, from row `y0` of the canvas): the
/// `backdrop` seen through the water with `look`, and `R = refraction_q8`.
pub fn look_band<H: Height>(
    heights: &[H],
    width: usize,
    look: &Look,
    refraction_q8: i64,
    backdrop: &Backdrop,
    out: &mut [[u8; 3]],
    y0: usize,
) {
    look_cells(heights, width, look, refraction_q8, &backdrop.0, out, y0);
}

crate::base::simd::dispatch! {
    /// Draws rows of a field with a look.
    fn look_cells<H: Height>(h: &[H], width: usize, look: &Look, r: i64, rgbx: &[u32], out: &mut [[u8; 3]], y0: usize) => look_rows
}

/// A light sum past this saturates both terms for any strength ≥ 1 (`2^17·1 >> 8 = 512 > 255`).
const LIGHT_LIMIT: i32 = 1 << 17;

/// Per pixel of a span, from the arithmetic pass to the gather and blend: where to sample, with
/// what weights, and what light to add.
struct Row {
    /// Index of the pixel the position falls in.
    index: Vec<u32>,
    /// The fractions, 0..=255 (0 for nearest sampling).
    fx: Vec<u32>,
    fy: Vec<u32>,
    /// Light added to every channel, −255..=764.
    add: Vec<i32>,
    /// The water terms, each two 16-bit halves of a word (so that the kernel multiplies them
    /// with 16-bit products): the soft tone's fractions toward the top (low half) and toward
    /// the bottom (high half), one of them 0; and the weights of the toned colour, `256 − f`
    /// (low), and of the sky, `f` (high), all in 1/256.
    tone: Vec<u32>,
    mix: Vec<u32>,
}

/// The four taps of each pixel of a span, `r | g << 8 | b << 16`: upper left, upper right,
/// lower left, lower right.
struct Taps(Vec<[u32; 4]>);

impl Row {
    /// The first `n` pixels' arithmetic as the AVX2 kernel reads it, with the padded backdrop
    /// `width` pixels wide.
    #[cfg(target_arch = "x86_64")]
    fn run<'a>(&'a self, n: usize, rgbx: &'a [u32], width: usize) -> avx2::Run<'a> {
        avx2::Run { index: &self.index[..n], fx: &self.fx[..n], fy: &self.fy[..n], add: &self.add[..n], rgbx, width }
    }

    fn new(pixels: usize) -> Row {
        Row {
            index: vec![0; pixels],
            fx: vec![0; pixels],
            fy: vec![0; pixels],
            add: vec![0; pixels],
            tone: vec![0; pixels],
            mix: vec![0; pixels],
        }
    }
}

/// Draws rows `y0..` of a `look` into `out`. The slopes of a row first; then, run by run of
/// `RUN` pixels: a run of calm water (no slope) is the background itself, copied; a run with a
/// slope of `STEEP` or more (only wrapped spring heights have them) is drawn pixel by pixel in
/// i64; neighbouring runs of moving water are drawn together, up to `SPAN` pixels, by `Passes`.
#[inline(always)]
fn look_rows<H: Height>(h: &[H], width: usize, look: &Look, r: i64, rgbx: &[u32], out: &mut [[u8; 3]], y0: usize) {
    let height = h.len() / width;
    let pen = Pen::new(look, r, width, height);
    let zeros = vec![H::default(); width];
    let row_of = |y: i64| -> &[H] {
        if (0..height as i64).contains(&y) { &h[y as usize * width..(y as usize + 1) * width] } else { &zeros }
    };
    let limit = steep_limit(r).min(i64::from(STEEP)) as i32;
    let mut passes = Passes::new(&pen, limit, rgbx);
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

/// Pixels a run of which is checked for calm (or steep) water at once.
const RUN: usize = 64;

/// Most pixels of moving water (neighbouring runs of it) taken through the passes at once: the
/// passes' set-up is paid per span, and their buffers still stay in the first-level cache.
const SPAN: usize = 4 * RUN;

/// Slopes are kept in i32 clamped to ±`STEEP`: within it the light sum `dx·lx + dy·ly` is exact
/// in i32 (`2·2^21·256 = 2^30`).
const STEEP: i32 = 1 << 21;

/// The slopes of a row (§5), from the rows above, at and below it, clamped to ±`STEEP`.
#[inline(always)]
fn slopes<H: Height>(up: &[H], mid: &[H], down: &[H], dx: &mut [i32], dy: &mut [i32]) {
    let width = mid.len();
    let narrow = |d: i64| d.clamp(-i64::from(STEEP), i64::from(STEEP)) as i32;
    for ((d, &u), &b) in dy.iter_mut().zip(up).zip(down) {
        *d = narrow(u.wide() - b.wide());
    }
    if width == 1 {
        dx[0] = 0;
        return;
    }
    dx[0] = narrow(-mid[1].wide());
    dx[width - 1] = narrow(mid[width - 2].wide());
    for (d, (&left, &right)) in dx[1..width - 1].iter_mut().zip(mid.iter().zip(&mid[2..])) {
        *d = narrow(left.wide() - right.wide());
    }
}

/// The curvatures of a row, `left + right + up + down − 4·mid`, clamped to ±`TERM_LIMIT`
/// (where the caustics saturate).
#[inline(always)]
fn curvatures<H: Height>(up: &[H], mid: &[H], down: &[H], k: &mut [i32]) {
    let width = mid.len();
    let limit = i64::from(TERM_LIMIT);
    let at = |x: usize| if x < width { mid[x].wide() } else { 0 };
    let one = |x: usize, left: i64, right: i64| {
        (left + right + up[x].wide() + down[x].wide() - 4 * mid[x].wide()).clamp(-limit, limit) as i32
    };
    k[0] = one(0, 0, at(1));
    if width > 1 {
        k[width - 1] = one(width - 1, mid[width - 2].wide(), 0);
    }
    if width > 2 {
        let sides = mid.iter().zip(&mid[2..]);
        let centre = mid[1..].iter().zip(&up[1..]).zip(&down[1..]);
        for (k, ((&l, &r), ((&m, &u), &d))) in k[1..width - 1].iter_mut().zip(sides.zip(centre)) {
            let sum = H::curvature(l, r, u, d, m);
            *k = sum.clamp(-TERM_LIMIT, TERM_LIMIT);
        }
    }
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

/// The arithmetic of the pixels of a row from `x0` on (as many as `dx` holds): each one's tap
/// index, fractions and light (exact for slopes within ±`STEEP`).
#[inline(always)]
fn arithmetic<const CLAMP: bool>(pen: &Pen, x0: usize, y: i64, limit: i32, dx: &[i32], dy: &[i32], row: &mut Row) {
    let (w, h, r) = (pen.width as i32, pen.height as i32, pen.r as i32);
    let (max_x, max_y) = (256 * (w - 1), 256 * (h - 1));
    let (lx, ly) = (pen.light[0] as i32, pen.light[1] as i32);
    let (shading, highlight) = (pen.shading as i32, pen.highlight as i32);
    let fraction = if pen.bilinear { 255 } else { 0 };
    let base_y = 256 * y as i32;
    let per_pixel = row
        .index
        .iter_mut()
        .zip(row.fx.iter_mut().zip(row.fy.iter_mut()))
        .zip(row.add.iter_mut())
        .zip(dx.iter().zip(dy));
    for (x, (((index, (fx, fy)), add), (&dx, &dy))) in (x0 as i32..).zip(per_pixel) {
        // Slopes clamped to ±limit move a position past any canvas exactly as the unclamped
        // ones do (`limit·R ≥ 2^22 + 256`), and keep it in i32.
        let (cx, cy) = if CLAMP { (dx.clamp(-limit, limit), dy.clamp(-limit, limit)) } else { (dx, dy) };
        let sx = (256 * x + cx * r).clamp(0, max_x);
        let sy = (base_y + cy * r).clamp(0, max_y);
        *index = ((sy >> 8) * w + (sx >> 8)) as u32;
        *fx = (sx & fraction) as u32;
        *fy = (sy & fraction) as u32;
        // A light sum past ±LIGHT_LIMIT saturates both terms, and within it `s·strength` fits
        // an i32 (2^17·4096 = 2^29).
        let s = dx * lx + dy * ly;
        let s = if CLAMP { s.clamp(-LIGHT_LIMIT, LIGHT_LIMIT) } else { s };
        let shade = ((s * shading) >> 8).clamp(-255, 255);
        let p = ((s.max(0) * highlight) >> 8).clamp(0, 255);
        *add = shade + ((p * p) >> 8);
    }
}

/// The taps of each pixel in `span`: the one the position falls in and, for bilinear
/// sampling, its right, lower and lower-right neighbours (from the padded backdrop).
#[inline(always)]
fn gather<const BILINEAR: bool>(row: &Row, rgbx: &[u32], width: usize, span: std::ops::Range<usize>, taps: &mut Taps) {
    let index = &row.index[span.clone()];
    let taps = &mut taps.0[span];
    if !BILINEAR {
        for (t, &i) in taps.iter_mut().zip(index) {
            t[0] = rgbx[i as usize];
        }
        return;
    }
    let pair = |i: usize| -> [u32; 2] { rgbx[i..i + 2].try_into().expect("two taps") };
    for (t, &i) in taps.iter_mut().zip(index) {
        let ([t00, t10], [t01, t11]) = (pair(i as usize), pair(i as usize + width));
        *t = [t00, t10, t01, t11];
    }
}

/// Blends the taps of `span` with the fractions, adds the light and writes the pixels, packed
/// (so that the loop runs over whole words and vectorizes).
#[inline(always)]
fn blend<const BILINEAR: bool>(row: &Row, taps: &Taps, span: std::ops::Range<usize>, out: &mut [u32]) {
    let weights = row.fx[span.clone()].iter().zip(&row.fy[span.clone()]).zip(&row.add[span.clone()]);
    for (o, (((&fx, &fy), &add), &[c00, c10, c01, c11])) in out.iter_mut().zip(weights.zip(&taps.0[span])) {
        let channel = |shift: u32| -> u32 {
            let at = |c: u32| (c >> shift) & 255;
            let value = if BILINEAR {
                let top = at(c00) * (256 - fx) + at(c10) * fx;
                let bottom = at(c01) * (256 - fx) + at(c11) * fx;
                (top * (256 - fy) + bottom * fy + 32768) >> 16
            } else {
                at(c00)
            };
            (value as i32 + add).clamp(0, 255) as u32
        };
        *o = channel(0) | channel(8) << 8 | channel(16) << 16;
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
    for (o, ((((&fx, &fy), &add), (&tone, &mix)), &[c00, c10, c01, c11])) in
        out.iter_mut().zip(weights.zip(&taps.0[span]))
    {
        let (up, down) = ((tone & 0xffff) as i32, (tone >> 16) as i32);
        let (keep, share) = ((mix & 0xffff) as i32, (mix >> 16) as i32);
        let channel = |shift: u32, sky: i32| -> u32 {
            let at = |c: u32| (c >> shift) & 255;
            let value = if BILINEAR {
                let top = at(c00) * (256 - fx) + at(c10) * fx;
                let bottom = at(c01) * (256 - fx) + at(c11) * fx;
                (top * (256 - fy) + bottom * fy + 32768) >> 16
            } else {
                at(c00)
            } as i32;
            let lighter = ((TONE_TOP as i32 - value).max(0) * up) >> 8;
            let darker = ((value - TONE_BOTTOM as i32).max(0) * down) >> 8;
            let toned = (value + add + lighter - darker).clamp(0, 255);
            // u + ((sky − u)·f) >> 8 is (u·(256 − f) + sky·f) >> 8: u·256 is a multiple of 256.
            ((toned * keep + sky * share) >> 8) as u32
        };
        *o = channel(0, sky[0]) | channel(8, sky[1]) << 8 | channel(16, sky[2]) << 16;
    }
}

/// Unpacks pixels into RGB, four at a time as three words.
#[inline(always)]
fn store_rgb(packed: &[u32], out: &mut [[u8; 3]]) {
    let mut fours = packed.chunks_exact(4);
    let mut outs = out.chunks_exact_mut(4);
    for (p, o) in (&mut fours).zip(&mut outs) {
        let words = [p[0] | p[1] << 24, p[1] >> 8 | p[2] << 16, p[2] >> 16 | p[3] << 8];
        for (o, w) in o.as_flattened_mut().chunks_exact_mut(4).zip(words) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }
    for (o, &p) in outs.into_remainder().iter_mut().zip(fours.remainder()) {
        *o = unpack(p);
    }
}

#[cfg(test)]
mod tests;
