//! The cross-colour transform (RFC 9649, 4.2): in each tile, red is predicted from green, and
//! blue from green and red, each by a multiplier in 1/32ths, and the predictions are taken away.
//! Where light brightens every channel of a pixel alike (the gain tone, caustics), the residuals
//! left by the predictor still move together; taking green's share out of red and blue leaves
//! them smaller. Each tile's multipliers are those whose transformed channel has the smallest
//! entropy in the tile, searched coarse to fine (0 kept unless another is strictly better).

use super::prefix::nlogn;

/// Cross-colour tiles are `1 << CROSS_BITS` pixels a side.
pub(super) const CROSS_BITS: u32 = 5;

/// One tile's multipliers, each a signed number of 1/32ths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Multipliers {
    pub(super) green_to_red: i8,
    pub(super) green_to_blue: i8,
    pub(super) red_to_blue: i8,
}

impl Multipliers {
    /// The transform image's pixel: alpha 255, red_to_blue in red, green_to_blue in green,
    /// green_to_red in blue.
    pub(super) fn pixel(self) -> u32 {
        0xff00_0000
            | u32::from(self.red_to_blue as u8) << 16
            | u32::from(self.green_to_blue as u8) << 8
            | u32::from(self.green_to_red as u8)
    }
}

/// The format's `ColorTransformDelta`: `t · c / 32` of two signed bytes, rounded down.
fn delta(t: i8, c: u8) -> u32 {
    ((i32::from(t) * i32::from(c as i8)) >> 5) as u32
}

/// The pixel `p` with green's share (and red's, for blue) taken out of red and blue by `m`.
pub(super) fn forward(p: u32, m: Multipliers) -> u32 {
    let (r, g) = ((p >> 16) as u8, (p >> 8) as u8);
    let red = u32::from(r).wrapping_sub(delta(m.green_to_red, g)) & 255;
    let blue = (p & 255).wrapping_sub(delta(m.green_to_blue, g)).wrapping_sub(delta(m.red_to_blue, r)) & 255;
    (p & 0xff00_ff00) | red << 16 | blue
}

/// The bits (in 1/65536ths) a channel's values in a tile take by their entropy there.
fn entropy(histogram: &[u32; 256], count: u64) -> u64 {
    nlogn(count) - histogram.iter().map(|&n| nlogn(u64::from(n))).sum::<u64>()
}

/// The multipliers of the tile whose pixels are `tile`: green_to_red alone for red, then
/// green_to_blue and red_to_blue in turn for blue, each searched coarse to fine; with the bits
/// of red and blue in the tile before, and the bits they save.
fn choose(tile: &[u32]) -> (Multipliers, u64, u64) {
    let count = tile.len() as u64;
    let (g, r, b): (Vec<u8>, Vec<u8>, Vec<u8>) = (
        tile.iter().map(|&p| (p >> 8) as u8).collect(),
        tile.iter().map(|&p| (p >> 16) as u8).collect(),
        tile.iter().map(|&p| p as u8).collect(),
    );
    // The bits of `channel` less `t`'s share of `by` (and `u`'s of `also`), by their entropy.
    let cost = |channel: &[u8], (t, by): (i8, &[u8]), (u, also): (i8, &[u8])| {
        let mut histogram = [0u32; 256];
        for k in 0..channel.len() {
            let v = channel[k].wrapping_sub(delta(t, by[k]) as u8).wrapping_sub(delta(u, also[k]) as u8);
            histogram[usize::from(v)] += 1;
        }
        entropy(&histogram, count)
    };
    let search = |price: &dyn Fn(i8) -> u64| {
        let mut best = (price(0), 0i8);
        let consider = |t: i8, best: &mut (u64, i8)| {
            let c = price(t);
            if c < best.0 {
                *best = (c, t);
            }
        };
        for t in (-96..=96).step_by(16) {
            consider(t as i8, &mut best);
        }
        for step in [8, 4, 2, 1] {
            let centre = best.1;
            for t in [i16::from(centre) - step, i16::from(centre) + step] {
                if let Ok(t) = i8::try_from(t) {
                    consider(t, &mut best);
                }
            }
        }
        best.1
    };
    let green_to_red = search(&|t| cost(&r, (t, &g), (0, &r)));
    let green_to_blue = search(&|t| cost(&b, (t, &g), (0, &r)));
    let red_to_blue = search(&|t| cost(&b, (green_to_blue, &g), (t, &r)));
    let before = cost(&r, (0, &g), (0, &r)) + cost(&b, (0, &g), (0, &r));
    let after = cost(&r, (green_to_red, &g), (0, &r)) + cost(&b, (green_to_blue, &g), (red_to_blue, &r));
    (Multipliers { green_to_red, green_to_blue, red_to_blue }, before, before.saturating_sub(after))
}

/// The share of red's and blue's bits (1/`WORTH`) the multipliers must save, summed over the
/// tiles, for the transform to be tried at all: below it, parsing the transformed residuals (a
/// way of its own, a fifth of a frame's time) is not worth what it could win.
const WORTH: u64 = 50;

/// Chooses each tile's multipliers for `argb` (`width` × `height`) and applies them in place;
/// returns them, row by row of tiles, or `None` when every tile's are zero (the transform would
/// change nothing) or they save less than a [`WORTH`]th of red's and blue's bits.
pub(super) fn transform(argb: &mut [u32], width: usize, height: usize) -> Option<Vec<Multipliers>> {
    let side = 1usize << CROSS_BITS;
    let tiles_x = width.div_ceil(side);
    let mut chosen = Vec::with_capacity(tiles_x * height.div_ceil(side));
    let mut tile = Vec::with_capacity(side * side);
    let (mut bits, mut saved) = (0, 0);
    for ty in 0..height.div_ceil(side) {
        let rows = ty * side..((ty + 1) * side).min(height);
        for tx in 0..tiles_x {
            let columns = tx * side..((tx + 1) * side).min(width);
            tile.clear();
            // Every other row of the tile is weighed: half the time, much the same choice (the
            // pool scene 0.2% larger than weighing every row, the busy one a fifth quicker).
            for y in rows.clone().step_by(2) {
                tile.extend_from_slice(&argb[y * width + columns.start..y * width + columns.end]);
            }
            let (multipliers, before, saves) = choose(&tile);
            (bits, saved) = (bits + before, saved + saves);
            chosen.push(multipliers);
        }
    }
    if chosen.iter().all(|&m| m == Multipliers::default()) || saved * WORTH < bits {
        return None;
    }
    for (y, row) in argb.chunks_exact_mut(width).enumerate() {
        for (x, p) in row.iter_mut().enumerate() {
            *p = forward(*p, chosen[(y >> CROSS_BITS) * tiles_x + (x >> CROSS_BITS)]);
        }
    }
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's inverse, as RFC 9649 gives it: red first, then blue from the red restored.
    fn inverse(p: u32, m: Multipliers) -> u32 {
        let g = (p >> 8) as u8;
        let red = (p >> 16).wrapping_add(delta(m.green_to_red, g)) & 255;
        let blue =
            (p & 255).wrapping_add(delta(m.green_to_blue, g)).wrapping_add(delta(m.red_to_blue, red as u8)) & 255;
        (p & 0xff00_ff00) | red << 16 | blue
    }

    #[test]
    fn the_decoder_undoes_the_transform() {
        let ms = [
            Multipliers { green_to_red: 32, green_to_blue: -17, red_to_blue: 5 },
            Multipliers { green_to_red: -128, green_to_blue: 127, red_to_blue: -1 },
        ];
        for p in (0..1 << 20).map(|i: u32| i.wrapping_mul(0x9E37_79B1)) {
            for m in ms {
                assert_eq!(inverse(forward(p, m), m), p);
            }
        }
    }

    #[test]
    fn channels_that_move_with_green_get_its_share_taken_out() {
        // Red = green, blue = green / 2 (as signed residuals): the multipliers found take them out.
        let tile: Vec<u32> = (0..1024u32)
            .map(|i| {
                let g = ((i * 37) % 61) as u8 as i8 as i32 - 30;
                let (r, b) = (g, g / 2);
                0xff00_0000 | ((r as u8) as u32) << 16 | ((g as u8) as u32) << 8 | (b as u8) as u32
            })
            .collect();
        let (m, _, saved) = choose(&tile);
        assert!(saved > 0);
        assert_eq!(m.green_to_red, 32);
        let left: Vec<u32> = tile.iter().map(|&p| forward(p, m)).collect();
        assert!(left.iter().all(|&p| (p >> 16) & 255 == 0), "{m:?}");
        // Nothing to take out: zeros.
        assert_eq!(choose(&[0xff00_0000; 64]).0, Multipliers::default());
    }
}
