//! The passes a look's row is drawn in, shared by both tones (§9's arithmetic and sampling):
//! the slopes and curvatures of a row, each pixel's tap index, fractions and light ([`Row`]),
//! the gather of its taps, their blend into packed pixels and the unpacking into RGB. Each is a
//! loop over slices simple enough to vectorize; the bilinear ones have an AVX2 kernel too.

#[cfg(target_arch = "x86_64")]
use super::avx2;
use super::backdrop::{sample, unpack};
use super::pen::{Pen, TERM_LIMIT};
use crate::draw::refract::Height;

/// Pixels a run of which is checked for calm (or steep) water at once.
pub(super) const RUN: usize = 64;

/// Most pixels of moving water (neighbouring runs of it) taken through the passes at once: the
/// passes' set-up is paid per span, and their buffers still stay in the first-level cache.
pub(super) const SPAN: usize = 4 * RUN;

/// Slopes are kept in i32 clamped to ±`STEEP`: within it the light sum `dx·lx + dy·ly` is exact
/// in i32 (`2·2^21·256 = 2^30`).
pub(super) const STEEP: i32 = 1 << 21;

/// A light sum past this saturates both terms for any strength ≥ 1 (`2^17·1 >> 8 = 512 > 255`).
pub(super) const LIGHT_LIMIT: i32 = 1 << 17;

/// Per pixel of a span, from the arithmetic pass to the gather and blend: where to sample, with
/// what weights, and what light to add.
pub(super) struct Row {
    /// Index of the pixel the position falls in.
    pub(super) index: Vec<u32>,
    /// The fractions, 0..=255 (0 for nearest sampling).
    pub(super) fx: Vec<u32>,
    pub(super) fy: Vec<u32>,
    /// Light added to every channel, −255..=764.
    pub(super) add: Vec<i32>,
    /// The water terms, each two 16-bit halves of a word (so that the kernel multiplies them
    /// with 16-bit products): the soft tone's fractions toward the top (low half) and toward
    /// the bottom (high half), one of them 0; and the weights of the toned colour, `256 − f`
    /// (low), and of the sky, `f` (high), all in 1/256.
    pub(super) tone: Vec<u32>,
    pub(super) mix: Vec<u32>,
}

/// The four taps of each pixel of a span, `r | g << 8 | b << 16`: upper left, upper right,
/// lower left, lower right.
pub(super) struct Taps(pub(super) Vec<[u32; 4]>);

impl Row {
    /// The first `n` pixels' arithmetic as the AVX2 kernel reads it, with the padded backdrop
    /// `width` pixels wide.
    #[cfg(target_arch = "x86_64")]
    pub(super) fn run<'a>(&'a self, n: usize, rgbx: &'a [u32], width: usize) -> avx2::Run<'a> {
        avx2::Run { index: &self.index[..n], fx: &self.fx[..n], fy: &self.fy[..n], add: &self.add[..n], rgbx, width }
    }

    pub(super) fn new(pixels: usize) -> Row {
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

/// The slopes of a row (§5), from the rows above, at and below it, clamped to ±`STEEP`.
#[inline(always)]
pub(super) fn slopes<H: Height>(up: &[H], mid: &[H], down: &[H], dx: &mut [i32], dy: &mut [i32]) {
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
pub(super) fn curvatures<H: Height>(up: &[H], mid: &[H], down: &[H], k: &mut [i32]) {
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

/// The arithmetic of the pixels of a row from `x0` on (as many as `dx` holds): each one's tap
/// index, fractions and light (exact for slopes within ±`STEEP`).
#[inline(always)]
pub(super) fn arithmetic<const CLAMP: bool>(
    pen: &Pen,
    x0: usize,
    y: i64,
    limit: i32,
    dx: &[i32],
    dy: &[i32],
    row: &mut Row,
) {
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
pub(super) fn gather<const BILINEAR: bool>(
    row: &Row,
    rgbx: &[u32],
    width: usize,
    span: std::ops::Range<usize>,
    taps: &mut Taps,
) {
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
pub(super) fn blend<const BILINEAR: bool>(row: &Row, taps: &Taps, span: std::ops::Range<usize>, out: &mut [u32]) {
    let weights = row.fx[span.clone()].iter().zip(&row.fy[span.clone()]).zip(&row.add[span.clone()]);
    for (o, (((&fx, &fy), &add), &taps)) in out.iter_mut().zip(weights.zip(&taps.0[span])) {
        let channel = |shift: u32| -> u32 {
            let value = sample::<BILINEAR>(taps, fx, fy, shift);
            (value as i32 + add).clamp(0, 255) as u32
        };
        *o = channel(0) | channel(8) << 8 | channel(16) << 16;
    }
}

/// Unpacks pixels into RGB, four at a time as three words.
#[inline(always)]
pub(super) fn store_rgb(packed: &[u32], out: &mut [[u8; 3]]) {
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
