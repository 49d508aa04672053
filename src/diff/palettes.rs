//! Two GIFs of one scene whose palettes differ (a look's palette is chosen from frames of the
//! render, so a change to the events re-makes it): which pairs of their colours can show one
//! and the same colour, so that a diff sees past the palettes to what changed.
//!
//! A GIF encoder maps each colour to its nearest palette entry (squared RGB distance, the
//! lowest index among equals). A pixel the render left unchanged has one exact colour `c`,
//! shown as `nearest_a(c)` in A and `nearest_b(c)` in B: that pair is *shared*. Running every
//! one of the 2^24 colours through both maps lists every shared pair, so a pixel whose pair is
//! not shared certainly changed; one whose pair is shared may have changed by less than the
//! palettes can show.

use std::collections::HashMap;

use crate::encode::palette::ColourIndex;

/// Each colour's nearest colour in a GIF's palette, as the encoder finds it.
pub struct PaletteMap {
    /// The palette's distinct colours, first occurrences in order (a later equal entry, such as
    /// padding, is never the lowest index among equals).
    colours: Vec<[u8; 3]>,
    /// The encoder's own map, for up to 255 colours; a full palette of 256 is a background's
    /// exact colours, which frames drawn without a look only move: looked up exactly.
    index: Option<ColourIndex>,
}

impl PaletteMap {
    /// The map into `palette` (a GIF's colours before its transparent index).
    pub fn new(palette: &[[u8; 3]]) -> PaletteMap {
        let mut colours: Vec<[u8; 3]> = Vec::with_capacity(palette.len());
        for c in palette {
            if !colours.contains(c) {
                colours.push(*c);
            }
        }
        let index = (colours.len() <= 255).then(|| ColourIndex::new(&colours));
        PaletteMap { colours, index }
    }

    /// The palette colour `c` is shown as.
    pub fn colour(&mut self, c: [u8; 3]) -> [u8; 3] {
        match &mut self.index {
            Some(index) => self.colours[usize::from(index.index(c))],
            None => {
                let d = |p: &[u8; 3]| (0..3).map(|k| (i32::from(p[k]) - i32::from(c[k])).pow(2)).sum::<i32>();
                let mut best = self.colours[0];
                for p in &self.colours {
                    if d(p) < d(&best) {
                        best = *p;
                    }
                }
                best
            }
        }
    }
}

/// The pairs of colours of two palettes that some colour maps to.
pub struct Shared {
    ids_a: HashMap<[u8; 3], usize>,
    ids_b: HashMap<[u8; 3], usize>,
    /// One bit per pair (id in A, id in B).
    bits: Vec<u64>,
    stride: usize,
}

/// Numbers each distinct colour of a palette.
fn ids(palette: &[[u8; 3]]) -> HashMap<[u8; 3], usize> {
    let mut ids = HashMap::new();
    for &c in palette {
        let next = ids.len();
        ids.entry(c).or_insert(next);
    }
    ids
}

impl Shared {
    /// The shared pairs of palettes `a` and `b` (the colours each GIF's encoder chose among).
    pub fn new(a: &[[u8; 3]], b: &[[u8; 3]]) -> Shared {
        let (ids_a, ids_b) = (ids(a), ids(b));
        let stride = ids_b.len().max(1);
        let mut bits = vec![0u64; (ids_a.len().max(1) * stride).div_ceil(64)];
        // Each palette entry's colour id, so that the inner loop looks nothing up by colour.
        let to_ids = |palette: &[[u8; 3]], ids: &HashMap<[u8; 3], usize>| -> Vec<usize> {
            palette.iter().map(|c| ids[c]).collect()
        };
        let (of_a, of_b) = (to_ids(a, &ids_a), to_ids(b, &ids_b));
        let (mut near_a, mut near_b) = (Vec::new(), Vec::new());
        for block in 0..(256 / BLOCK).pow(3) {
            let low = [block / 1024, block / 32 % 32, block % 32].map(|v| v * BLOCK);
            candidates(a, low, &mut near_a);
            candidates(b, low, &mut near_b);
            for r in low[0]..low[0] + BLOCK {
                for g in low[1]..low[1] + BLOCK {
                    for bl in low[2]..low[2] + BLOCK {
                        let c = [r, g, bl].map(|v| v as i32);
                        let bit = of_a[nearest(a, &near_a, c)] * stride + of_b[nearest(b, &near_b, c)];
                        bits[bit / 64] |= 1 << (bit % 64);
                    }
                }
            }
        }
        Shared { ids_a, ids_b, bits, stride }
    }

    /// Whether A's colour `a` and B's colour `b` can show one colour. Colours outside the
    /// palettes (black where a GIF drew nothing) are shared only when equal.
    pub fn shared(&self, a: [u8; 3], b: [u8; 3]) -> bool {
        match (self.ids_a.get(&a), self.ids_b.get(&b)) {
            (Some(&ia), Some(&ib)) => {
                let bit = ia * self.stride + ib;
                self.bits[bit / 64] >> (bit % 64) & 1 == 1
            }
            _ => a == b,
        }
    }

    /// `b` (RGB bytes) with every pixel whose colour is shared with `a`'s replaced by `a`'s:
    /// what is left differing certainly changed.
    pub fn see_past(&self, a: &[u8], b: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(b);
        for (pa, pb) in a.chunks_exact(3).zip(out.chunks_exact_mut(3)) {
            if pa != pb && self.shared([pa[0], pa[1], pa[2]], [pb[0], pb[1], pb[2]]) {
                pb.copy_from_slice(pa);
            }
        }
    }
}

/// The side of the cubes of colours whose nearest entries are searched together.
const BLOCK: usize = 8;

/// The entries of `palette` that can be nearest some colour of the cube of side [`BLOCK`] from
/// `low`: those no farther from the cube than the cube's farthest colour from the entry that
/// is nearest at worst. In index order, so the search below keeps the lowest among equals.
fn candidates(palette: &[[u8; 3]], low: [usize; 3], out: &mut Vec<usize>) {
    let box_distances = |c: &[u8; 3]| -> (i32, i32) {
        let (mut near, mut far) = (0, 0);
        for k in 0..3 {
            let (v, lo, hi) = (i32::from(c[k]), low[k] as i32, (low[k] + BLOCK - 1) as i32);
            let gap = if v < lo {
                lo - v
            } else if v > hi {
                v - hi
            } else {
                0
            };
            let reach = (v - lo).abs().max((v - hi).abs());
            near += gap * gap;
            far += reach * reach;
        }
        (near, far)
    };
    let bound = palette.iter().map(|c| box_distances(c).1).min().unwrap_or(0);
    out.clear();
    out.extend((0..palette.len()).filter(|&i| box_distances(&palette[i]).0 <= bound));
}

/// The entry among `candidates` nearest `c` (squared distance, the lowest index among equals),
/// as the GIF encoder's map finds it.
fn nearest(palette: &[[u8; 3]], candidates: &[usize], c: [i32; 3]) -> usize {
    let mut best = (i32::MAX, 0);
    for &i in candidates {
        let p = palette[i];
        let d = (0..3).map(|k| (i32::from(p[k]) - c[k]).pow(2)).sum::<i32>();
        if d < best.0 {
            best = (d, i);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_colours_are_shared_and_far_ones_are_not() {
        // A splits the greys at 64, B at 128.
        let a = [[0, 0, 0], [128, 128, 128], [255, 255, 255]];
        let b = [[0, 0, 0], [255, 255, 255]];
        let shared = Shared::new(&a, &b);
        // Grey 100 shows as A's 128 and B's 0; grey 200 as A's 255 and B's 255.
        assert!(shared.shared([128; 3], [0; 3]));
        assert!(shared.shared([128; 3], [255; 3]));
        assert!(shared.shared([255; 3], [255; 3]));
        // No colour is nearest A's black and B's white.
        assert!(!shared.shared([0; 3], [255; 3]));
        // A colour in neither palette only matches itself.
        assert!(!shared.shared([1, 2, 3], [0; 3]));
        assert!(shared.shared([1, 2, 3], [1, 2, 3]));
    }

    #[test]
    fn the_block_search_agrees_with_the_encoders_map() {
        use crate::encode::palette::ColourIndex;
        // A scattered palette with repeated colours (the lowest index must win).
        let palette: Vec<[u8; 3]> =
            (0..200u32).map(|i| [(i * 37 % 256) as u8, (i * 91 % 256) as u8, (i * 53 % 256) as u8]).collect();
        let mut map = ColourIndex::new(&palette);
        let mut near = Vec::new();
        for block in (0..32768).step_by(97) {
            let low = [block / 1024, block / 32 % 32, block % 32].map(|v| v * BLOCK);
            candidates(&palette, low, &mut near);
            for (dr, dg, db) in [(0, 0, 0), (7, 7, 7), (3, 5, 1)] {
                let c = [low[0] + dr, low[1] + dg, low[2] + db].map(|v| v as u8);
                let expected = palette[usize::from(map.index(c))];
                assert_eq!(palette[nearest(&palette, &near, c.map(i32::from))], expected, "{c:?}");
            }
        }
    }
}
