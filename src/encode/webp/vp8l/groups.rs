//! Groups of prefix codes: a main image's 8×8 tiles sorted into up to sixteen groups of like
//! statistics, each group with its own five codes, chosen per tile through a meta image.

use super::prefix::{log2, nlogn};
use super::tokens::{Token, alphabet_sizes, starts, symbols};

/// Most groups of prefix codes a main image's tiles are sorted into.
const MAX_GROUPS: usize = 16;

/// Rounds of sorting tiles into groups.
const ROUNDS: usize = 3;
/// A group tile's side is `1 << GROUP_TILE_BITS` pixels (8): each tile of the main image takes
/// the codes of one group.
const GROUP_TILE_BITS: u32 = 3;

/// Tiles of a main image sorted into groups that share prefix codes.
pub(super) struct Groups {
    /// Tiles are `1 << tile_bits` pixels a side.
    pub(super) tile_bits: u32,
    /// Tiles in a row.
    pub(super) tiles_x: usize,
    /// Each tile's group.
    pub(super) of_tile: Vec<usize>,
    /// Groups in use.
    pub(super) count: usize,
}

impl Groups {
    /// The tile of pixel `p` of an image `width` wide.
    pub(super) fn tile(&self, p: usize, width: usize) -> usize {
        tile_of(p, width, self.tile_bits, self.tiles_x)
    }

    /// The meta image: each tile's group in its pixel's red (high byte) and green.
    pub(super) fn meta_pixels(&self) -> Vec<u32> {
        self.of_tile.iter().map(|&n| ((n as u32 >> 8) << 16) | ((n as u32 & 255) << 8)).collect()
    }
}

/// The tile, `1 << tile_bits` pixels a side and `tiles_x` to a row, of pixel `p` of an image
/// `width` wide.
fn tile_of(p: usize, width: usize, tile_bits: u32, tiles_x: usize) -> usize {
    ((p / width) >> tile_bits) * tiles_x + ((p % width) >> tile_bits)
}

/// Sorts the tiles of a main image into at most [`MAX_GROUPS`] groups of like statistics:
/// Lloyd's rounds on the bits a tile's symbols take under a group's counts (and a few bits for
/// each symbol the group's code must newly describe). `None` when there are too few tiles.
pub(super) fn groups(tokens: &[Token], width: usize, height: usize, cache_bits: u32) -> Option<Groups> {
    let tile_bits = GROUP_TILE_BITS;
    let (tiles_x, tiles_y) = (width.div_ceil(1 << tile_bits), height.div_ceil(1 << tile_bits));
    if tiles_x * tiles_y < 4 {
        return None;
    }
    let tiles = Tiles::count(tokens, width, (tiles_x, tiles_y), cache_bits);
    let used: Vec<usize> = (0..tiles.sparse.len()).filter(|&t| !tiles.sparse[t].is_empty()).collect();
    if used.len() < 4 {
        return None;
    }
    let mut of_tile = tiles.sort(&used);
    // The groups in use, numbered in order of first use.
    let mut number = [usize::MAX; MAX_GROUPS];
    let mut count = 0;
    for g in of_tile.iter_mut() {
        if number[*g] == usize::MAX {
            number[*g] = count;
            count += 1;
        }
        *g = number[*g];
    }
    (count > 1).then_some(Groups { tile_bits, tiles_x, of_tile, count })
}

/// The alphabet of symbol `s`, numbered over the alphabets that start at `offsets`.
fn alphabet_of(offsets: &[usize; 5], s: usize) -> usize {
    offsets.iter().rposition(|&o| o <= s).unwrap_or(0)
}

/// Each tile's symbols, counted, over one numbering of the five alphabets' symbols.
struct Tiles {
    /// Per tile: each symbol it uses (numbered over all alphabets) and how often.
    sparse: Vec<Vec<(u32, u32)>>,
    /// Per tile: its symbols in each alphabet.
    counts: Vec<[u64; 5]>,
    /// Where each alphabet's symbols start in the numbering.
    offsets: [usize; 5],
    /// Symbols in all alphabets.
    total: usize,
}

impl Tiles {
    /// Counts the symbols of `tokens` (a main image `width` wide) by tile: a row of tiles at a
    /// time (tokens come in rows of pixels), so that only one row's symbols are held.
    fn count(tokens: &[Token], width: usize, (tiles_x, tiles_y): (usize, usize), cache_bits: u32) -> Tiles {
        let sizes = alphabet_sizes(cache_bits);
        let mut offsets = [0usize; 5];
        for a in 1..5 {
            offsets[a] = offsets[a - 1] + sizes[a - 1];
        }
        let total: usize = sizes.iter().sum();
        let mut tiles = Tiles {
            sparse: vec![Vec::new(); tiles_x * tiles_y],
            counts: vec![[0; 5]; tiles_x * tiles_y],
            offsets,
            total,
        };
        let mut dense = vec![0u32; total];
        let mut band: Vec<Vec<u32>> = vec![Vec::new(); tiles_x];
        let mut row = 0;
        for (t, start) in tokens.iter().zip(starts(tokens)) {
            if (start / width) >> GROUP_TILE_BITS != row {
                tiles.count_band(row * tiles_x, &mut band, &mut dense);
                row = (start / width) >> GROUP_TILE_BITS;
            }
            symbols(t, |a, s| band[(start % width) >> GROUP_TILE_BITS].push((offsets[a] + s) as u32));
        }
        tiles.count_band(row * tiles_x, &mut band, &mut dense);
        tiles
    }

    /// Counts a row of tiles' symbols (`band`, one list a tile, emptied), the first tile being
    /// `first`; `dense` is all zeros before and after.
    fn count_band(&mut self, first: usize, band: &mut [Vec<u32>], dense: &mut [u32]) {
        for (tx, list) in band.iter_mut().enumerate() {
            let offsets = self.offsets;
            let (mut touched, n) = (Vec::new(), &mut self.counts[first + tx]);
            for &s in list.iter() {
                let s = s as usize;
                n[alphabet_of(&offsets, s)] += 1;
                if dense[s] == 0 {
                    touched.push(s as u32);
                }
                dense[s] += 1;
            }
            self.sparse[first + tx] = touched.iter().map(|&s| (s, std::mem::take(&mut dense[s as usize]))).collect();
            list.clear();
        }
    }

    /// The alphabet symbol `s` is of.
    fn alphabet(&self, s: usize) -> usize {
        alphabet_of(&self.offsets, s)
    }

    /// The bits per symbol tile `t` needs alone.
    fn alone(&self, t: usize) -> u64 {
        let whole: u64 = self.counts[t].iter().map(|&n| nlogn(n)).sum();
        whole.saturating_sub(self.sparse[t].iter().map(|&(_, c)| nlogn(c.into())).sum())
            / self.counts[t].iter().sum::<u64>().max(1)
    }

    /// The group of each tile (of the `used` ones; the rest are in group 0), after Lloyd's
    /// rounds from seeds spread over the bits per symbol the tiles need alone.
    fn sort(&self, used: &[usize]) -> Vec<usize> {
        let total = self.total;
        let mut order = used.to_vec();
        order.sort_by_key(|&t| (self.alone(t), t));
        let k = MAX_GROUPS.min(order.len());
        let mut hist = vec![vec![0u64; total]; k];
        let mut totals = vec![[0u64; 5]; k];
        for g in 0..k {
            let t = order[g * (order.len() - 1) / (k - 1)];
            for &(s, c) in &self.sparse[t] {
                hist[g][s as usize] += u64::from(c);
            }
            totals[g] = self.counts[t];
        }
        let mut of_tile = vec![0usize; self.sparse.len()];
        // A symbol's bits in a group: log2 of the group's count in its alphabet over the
        // symbol's (a symbol the group has not seen: its alphabet's whole log, and 5 bits to
        // describe it).
        let mut bits = vec![0u64; k * total];
        for _ in 0..ROUNDS {
            for g in 0..k {
                let whole = totals[g].map(|n| log2(n + 1));
                for (s, b) in bits[g * total..(g + 1) * total].iter_mut().enumerate() {
                    let (n, whole) = (hist[g][s], whole[self.alphabet(s)]);
                    *b = whole + if n == 0 { 5 << 16 } else { 0 } - log2(n.max(1)).min(whole);
                }
            }
            for &t in used {
                of_tile[t] = self.cheapest_group(t, &bits, k);
            }
            hist.iter_mut().for_each(|h| h.iter_mut().for_each(|n| *n = 0));
            totals.iter_mut().for_each(|n| *n = [0; 5]);
            for &t in used {
                let g = of_tile[t];
                for &(s, c) in &self.sparse[t] {
                    hist[g][s as usize] += u64::from(c);
                }
                for (total, n) in totals[g].iter_mut().zip(self.counts[t]) {
                    *total += n;
                }
            }
        }
        of_tile
    }

    /// The group of `k` (each symbol's `bits` in it) whose codes take tile `t` in the fewest
    /// bits; the first of equals.
    fn cheapest_group(&self, t: usize, bits: &[u64], k: usize) -> usize {
        let mut best = (u64::MAX, 0);
        for g in 0..k {
            let bits = &bits[g * self.total..(g + 1) * self.total];
            let cost: u64 = self.sparse[t].iter().map(|&(s, c)| u64::from(c) * bits[s as usize]).sum();
            if cost < best.0 {
                best = (cost, g);
            }
        }
        best.1
    }
}
