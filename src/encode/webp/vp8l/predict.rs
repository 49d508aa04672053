//! The predictor transform: the fourteen modes by which a pixel is predicted from its left,
//! top, top-left and top-right neighbours, channel-wise subtraction, subtract-green, and the
//! cost of each mode's residuals per 8×8 tile, by which a tile's mode is chosen.

use super::prefix::log2_q16;

/// The channel of `p` at bit `shift`.
fn channel(p: u32, shift: u32) -> i32 {
    (p >> shift & 255) as i32
}

/// The channel-wise mean of two pixels, rounded down.
fn average(a: u32, b: u32) -> u32 {
    (((a ^ b) & 0xfefe_fefe) >> 1) + (a & b)
}

/// The number of predictor modes.
pub(super) const MODES: usize = 14;

/// The predictions of all [`MODES`] modes from the left, top, top-left and top-right pixels, in
/// the format's order: black, left, top, top-right, top-left, four means of two, a mean of
/// means, select, and the full and half clamped gradients.
fn predictions(l: u32, t: u32, tl: u32, tr: u32) -> [u32; MODES] {
    let mean = average(l, t);
    let (mut full, mut half, mut from_top, mut from_left) = (0, 0, 0, 0);
    for c in 0..4 {
        let (l, t, tl, m) = (channel(l, 8 * c), channel(t, 8 * c), channel(tl, 8 * c), channel(mean, 8 * c));
        full |= ((l + t - tl).clamp(0, 255) as u32) << (8 * c);
        // Halved toward zero, as the format's C does.
        half |= ((m + (m - tl) / 2).clamp(0, 255) as u32) << (8 * c);
        from_top += (t - tl).abs();
        from_left += (l - tl).abs();
    }
    // Select: left when the top pixel is further from the gradient's estimate than the left.
    let select = if from_top < from_left { l } else { t };
    [
        0xff00_0000,
        l,
        t,
        tr,
        tl,
        average(average(l, tr), t),
        average(l, tl),
        mean,
        average(tl, t),
        average(t, tr),
        average(average(l, tl), average(t, tr)),
        select,
        full,
        half,
    ]
}

/// The prediction of `mode` alone: [`predictions`]`[mode]`, without working out the others.
pub(super) fn predict(mode: u32, l: u32, t: u32, tl: u32, tr: u32) -> u32 {
    match mode {
        0 => 0xff00_0000,
        1 => l,
        2 => t,
        3 => tr,
        4 => tl,
        6 => average(l, tl),
        7 => average(l, t),
        8 => average(tl, t),
        9 => average(t, tr),
        11 => select(l, t, tl),
        _ => predictions(l, t, tl, tr)[mode as usize],
    }
}

/// Mode 11, select: the left pixel when the top one is further from the gradient's estimate
/// (`l + t − tl`, summed over channels) than the left, else the top.
fn select(l: u32, t: u32, tl: u32) -> u32 {
    let (mut from_top, mut from_left) = (0, 0);
    for c in 0..4 {
        let (l, t, tl) = (channel(l, 8 * c), channel(t, 8 * c), channel(tl, 8 * c));
        from_top += (t - tl).abs();
        from_left += (l - tl).abs();
    }
    if from_top < from_left { l } else { t }
}

/// The modes the `fast` effort chooses among: left and top (select, the third cheapest to
/// weigh, made the busy benchmark no smaller).
pub(super) const QUICK_MODES: [u32; 2] = [1, 2];

const QUICK_STEP: usize = 8;

/// For each tile, the size of its residuals under each of [`QUICK_MODES`] (the others priced out
/// of reach), weighed on every other row (the odd ones) for speed: the `fast` effort's costs.
/// Transparent pixels are weighed as they are.
fn quick_costs(argb: &[u32], width: usize, height: usize) -> Vec<[u64; MODES]> {
    let tiles_x = width.div_ceil(1 << TILE_BITS);
    let mut totals = vec![[u64::MAX; MODES]; tiles_x * height.div_ceil(1 << TILE_BITS)];
    let size: [u64; 256] = std::array::from_fn(|d| log2_q16(d.min(256 - d) as u64 + 1) >> 10);
    let cost = |r: u32| {
        size[(r & 255) as usize]
            + size[(r >> 8 & 255) as usize]
            + size[(r >> 16 & 255) as usize]
            + size[(r >> 24) as usize]
    };
    for (tile_row, tiles) in totals.chunks_exact_mut(tiles_x).enumerate() {
        let mut sums = vec![[0u64; 2]; tiles_x];
        for y in (tile_row << TILE_BITS | 1..((tile_row + 1) << TILE_BITS).min(height)).step_by(QUICK_STEP) {
            let (row, up) = (&argb[y * width..][..width], &argb[(y - 1) * width..][..width]);
            for x in 1..width {
                let (p, l, t) = (row[x], row[x - 1], up[x]);
                let sum = &mut sums[x >> TILE_BITS];
                sum[0] += cost(subtract(p, l));
                sum[1] += cost(subtract(p, t));
            }
        }
        for (total, sum) in tiles.iter_mut().zip(&sums) {
            for (k, &m) in QUICK_MODES.iter().enumerate() {
                total[m as usize] = sum[k];
            }
        }
    }
    totals
}

/// Channel-wise `a - b`, each modulo 256: the four bytes at once, each borrow kept from the
/// byte above by subtracting with its top bit set and putting that bit right after.
pub(super) fn subtract(a: u32, b: u32) -> u32 {
    const TOP: u32 = 0x8080_8080;
    ((a | TOP).wrapping_sub(b & !TOP)) ^ ((a ^ !b) & TOP)
}

/// Predictor tiles are `1 << TILE_BITS` pixels a side.
pub(super) const TILE_BITS: u32 = 3;

/// For each tile, the size of its residuals under each of the [`MODES`] modes (summed over
/// channels, see `size` below). Pixels of the first row and column cost nothing: their
/// predictor is fixed. A transparent pixel costs its alpha residual alone (its colour will be
/// the prediction's), and pixels after it are predicted from a stand-in for that colour: the
/// pixel before it (counting transparent pixels, and not comparing with a transparent black
/// neighbour, made a blended frame of scattered changes 3.6% smaller).
fn mode_costs(argb: &[u32], width: usize, height: usize) -> Vec<[u64; MODES]> {
    let tiles_x = width.div_ceil(1 << TILE_BITS);
    let mut totals = vec![[0u64; MODES]; tiles_x * height.div_ceil(1 << TILE_BITS)];
    // A residual byte's cost grows with the log of its distance from 0 (modulo 256), as its
    // code's length does, not with the distance itself: 1/64ths of log2(distance + 1).
    let size: [u64; 256] = std::array::from_fn(|d| log2_q16(d.min(256 - d) as u64 + 1) >> 10);
    let mut guess = argb.to_vec();
    for i in 0..guess.len() {
        if guess[i] >> 24 == 0 {
            let before = match (i % width, i / width) {
                (0, 0) => 0,
                (0, _) => guess[i - width],
                _ => guess[i - 1],
            };
            guess[i] = before & 0x00ff_ffff;
        }
    }
    for y in 1..height {
        let row = &mut totals[(y >> TILE_BITS) * tiles_x..][..tiles_x];
        for x in 1..width {
            let i = y * width + x;
            let p = guess[i];
            let (l, t, tl, tr) = (guess[i - 1], guess[i - width], guess[i - width - 1], guess[i - width + 1]);
            let total = &mut row[x >> TILE_BITS];
            if (p | l | t | tl | tr) >> 24 == 0 {
                // Transparent among transparent: every mode but black predicts its alpha.
                total[0] += size[1];
                continue;
            }
            let all = predictions(l, t, tl, tr);
            if p >> 24 == 0 {
                for (sum, prediction) in total.iter_mut().zip(all) {
                    *sum += size[(subtract(p, prediction) >> 24) as usize];
                }
            } else {
                for (sum, prediction) in total.iter_mut().zip(all) {
                    let r = subtract(p, prediction);
                    *sum += size[(r & 255) as usize]
                        + size[(r >> 8 & 255) as usize]
                        + size[(r >> 16 & 255) as usize]
                        + size[(r >> 24) as usize];
                }
            }
        }
    }
    totals
}

/// A picture with subtract-green applied, and its tiles' residual sizes under each predictor
/// mode: the predicted way's start, and a quick guess at how well the picture codes.
pub(super) struct Predictable {
    /// The picture with subtract-green applied.
    pub(super) argb: Vec<u32>,
    /// Each tile's residual sizes under each mode.
    pub(super) totals: Vec<[u64; MODES]>,
}

impl Predictable {
    pub(super) fn new(pixels: &[u32], width: usize, height: usize) -> Predictable {
        let argb: Vec<u32> = pixels.iter().map(|&p| subtract_green(p)).collect();
        let totals = mode_costs(&argb, width, height);
        Predictable { argb, totals }
    }

    /// [`Predictable::new`] of `argb` (taken over) weighing [`QUICK_MODES`] alone, on one row
    /// of each tile: the `fast` effort's.
    pub(super) fn quick(mut argb: Vec<u32>, width: usize, height: usize) -> Predictable {
        argb.iter_mut().for_each(|p| *p = subtract_green(*p));
        let totals = quick_costs(&argb, width, height);
        Predictable { argb, totals }
    }

    /// The residual sizes of each tile's best mode (in 1/64 bits): a guess at the coded size
    /// without parsing or coding.
    pub(super) fn size(&self) -> u64 {
        self.totals.iter().map(|t| t.iter().copied().min().unwrap_or(0)).sum()
    }
}

/// A pixel with green taken from red and blue (modulo 256).
pub(super) fn subtract_green(p: u32) -> u32 {
    let g = p >> 8 & 255;
    let r = (p >> 16).wrapping_sub(g) & 255;
    let b = p.wrapping_sub(g) & 255;
    (p & 0xff00_ff00) | r << 16 | b
}
