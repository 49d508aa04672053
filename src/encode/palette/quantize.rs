//! Colour quantization for GIF palettes: Wu's variance-minimizing cuts (X. Wu, "Efficient
//! Statistical Computations for Optimal Color Quantization", Graphics Gems II, 1991), made over
//! the exact colours rather than a binned histogram, refined by k-means, and an exact
//! nearest-colour search.
//!
//! Everything is integer or a fixed order of floating-point sums, so the palette is the same
//! on every run, machine and thread count.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// A map keyed by colour, looked up once per background pixel.
pub(crate) type ColourMap = HashMap<[u8; 3], u8, ColourHash>;

/// Hashes three-byte colours quickly: the bytes as one number, times a random odd multiplier
/// drawn once per map, folded. The default SipHash costs several milliseconds on a 640×480
/// photo. The random multiplier keeps what SipHash's key gives: as it is unknown in advance, a
/// picture cannot be prepared so that its colours crowd one bucket. Nothing visible depends on
/// it, as the maps are only looked up (the distinct colours are sorted before use).
#[derive(Clone)]
pub(crate) struct ColourHash {
    multiplier: u64,
}

impl Default for ColourHash {
    fn default() -> Self {
        ColourHash { multiplier: std::hash::RandomState::new().hash_one(0u8) | 1 }
    }
}

impl BuildHasher for ColourHash {
    type Hasher = ColourHasher;

    fn build_hasher(&self) -> ColourHasher {
        ColourHasher { key: 0, multiplier: self.multiplier }
    }
}

/// See [`ColourHash`].
pub(crate) struct ColourHasher {
    key: u64,
    multiplier: u64,
}

impl Hasher for ColourHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.key = self.key << 8 | u64::from(b);
        }
    }

    // The array's length, the same for every key.
    fn write_usize(&mut self, _: usize) {}

    fn finish(&self) -> u64 {
        // The product's low bits depend only on the key's low bits: fold the high ones down.
        let h = self.key.wrapping_mul(self.multiplier);
        h ^ h >> 29
    }
}

/// k-means rounds after Wu's cuts (more gain little: measured in docs/benchmarks.md).
const ROUNDS: usize = 4;

/// Colours with their weights (how many pixels have each), the quantizer's input: every
/// distinct colour and its count.
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    counts: HashMap<u32, u64, ColourHash>,
}

/// A colour as one number, `0xRRGGBB`.
pub fn key(colour: [u8; 3]) -> u32 {
    (u32::from(colour[0]) << 16) | (u32::from(colour[1]) << 8) | u32::from(colour[2])
}

/// The colour of a key (see [`key`]).
pub fn unkey(key: u32) -> [u8; 3] {
    [(key >> 16) as u8, (key >> 8) as u8, key as u8]
}

impl Histogram {
    /// Adds `count` pixels of `colour`.
    pub fn add(&mut self, colour: [u8; 3], count: u64) {
        *self.counts.entry(key(colour)).or_insert(0) += count;
    }

    /// Adds every pixel of `pixels`.
    pub fn add_all(&mut self, pixels: &[[u8; 3]]) {
        // Runs of one colour are common (flat areas): count them once.
        let mut run = (pixels.first().copied().unwrap_or_default(), 0u64);
        for &p in pixels {
            if p == run.0 {
                run.1 += 1;
            } else {
                self.add(run.0, run.1);
                run = (p, 1);
            }
        }
        if run.1 > 0 {
            self.add(run.0, run.1);
        }
    }

    /// Adds an even sample of `pixels`, at most `most` of them (all when there are fewer).
    pub fn add_sample(&mut self, pixels: &[[u8; 3]], most: usize) {
        let step = pixels.len().div_ceil(most.max(1)).max(1);
        if step == 1 {
            return self.add_all(pixels);
        }
        for p in pixels.iter().step_by(step) {
            self.add(*p, 1);
        }
    }

    /// The distinct colours' keys and counts, in key order (a radix sort of the table's keys, so
    /// the result does not depend on the table's order).
    fn sorted(&self) -> (Vec<u32>, Vec<u64>) {
        let mut keys: Vec<u32> = self.counts.keys().copied().collect();
        let mut spare = vec![0u32; keys.len()];
        for shift in [0, 8, 16] {
            let mut starts = [0usize; 257];
            for &k in &keys {
                starts[((k >> shift) & 255) as usize + 1] += 1;
            }
            for i in 1..257 {
                starts[i] += starts[i - 1];
            }
            for &k in &keys {
                let slot = &mut starts[((k >> shift) & 255) as usize];
                spare[*slot] = k;
                *slot += 1;
            }
            std::mem::swap(&mut keys, &mut spare);
        }
        let counts = keys.iter().map(|k| self.counts[k]).collect();
        (keys, counts)
    }
}

/// A palette and, for every distinct colour of the histogram, its nearest palette entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantized {
    /// At most `k` colours, sorted.
    pub colours: Vec<[u8; 3]>,
    /// The histogram's distinct colours as keys ([`key`]), sorted.
    pub keys: Vec<u32>,
    /// The index in `colours` nearest each key (squared distance; the lowest among equals).
    pub nearest: Vec<u8>,
}

/// At most `k` (≤ 256) colours that represent the histogram's colours well: Wu's cuts, then
/// k-means, with the clusters of largest error split while fewer than `k` are used. Every
/// distinct colour is mapped to its exactly nearest one.
pub fn quantize(histogram: &Histogram, k: usize) -> Quantized {
    let (keys, counts) = histogram.sorted();
    let colours: Vec<[u8; 3]> = keys.iter().map(|&key| unkey(key)).collect();
    let points: Vec<[f64; 3]> = colours.iter().map(|c| c.map(f64::from)).collect();
    let weights: Vec<f64> = counts.iter().map(|&n| n as f64).collect();
    if points.is_empty() || k == 0 {
        return Quantized { colours: Vec::new(), keys, nearest: Vec::new() };
    }
    let mut assigned = vec![0u32; points.len()];
    let mut centres = cuts(&colours, &weights, k, &mut assigned);
    kmeans(&points, &weights, &mut centres, &mut assigned);
    // Wu's boxes cannot cut finer than its bins: a smooth picture whose colours fill few bins
    // gets fewer than k. The clusters with the largest errors are split until k are used.
    while centres.len() < k.min(points.len()) {
        let before = centres.len();
        split_worst(&points, &weights, &mut centres, &assigned, k);
        if centres.len() == before {
            break;
        }
        kmeans(&points, &weights, &mut centres, &mut assigned);
    }
    // Whole colours, sorted and distinct; then each point's exact nearest, from its cluster's.
    let rounded: Vec<[u8; 3]> = centres.iter().map(|c| c.map(|v| v.round().clamp(0.0, 255.0) as u8)).collect();
    let mut colours = rounded.clone();
    colours.sort_unstable();
    colours.dedup();
    let place: Vec<usize> = rounded.iter().map(|c| colours.binary_search(c).unwrap_or(0)).collect();
    let final_centres: Vec<[f64; 3]> = colours.iter().map(|c| c.map(f64::from)).collect();
    let search = Nearest::new(&final_centres);
    let nearest =
        points.iter().zip(&assigned).map(|(p, &a)| search.find(&final_centres, p, place[a as usize]).0 as u8).collect();
    Quantized { colours, keys, nearest }
}

/// Wu's greedy cuts, over the exact colours: the colours are split box by box, each time the
/// box with the largest sum of squared errors, at the plane (between two values of one
/// channel) that most reduces it, until there are `k` boxes or none can be split. The boxes'
/// mean colours are the result. A box is a range of the colour list, which is reordered (the
/// colours themselves, so every pass reads memory in order) as boxes are cut.
fn cuts(colours: &[[u8; 3]], weights: &[f64], k: usize, assigned: &mut [u32]) -> Vec<[f64; 3]> {
    let mut list: Vec<Item> = (0..colours.len()).map(|i| (colours[i], weights[i], i as u32)).collect();
    let mut whole = [0.0f64; 6];
    for (c, w, _) in &list {
        add_moments(&mut whole, c, *w);
    }
    let mut boxes = vec![Span::new(0, list.len(), whole)];
    let mut scratch = list.clone();
    while boxes.len() < k {
        // The box whose cut helps most: the one with the largest error, splittable.
        let Some(next) = (0..boxes.len())
            .filter(|&i| boxes[i].error > 0.0)
            .max_by(|&a, &b| boxes[a].error.total_cmp(&boxes[b].error).then(b.cmp(&a)))
        else {
            break;
        };
        let span = boxes[next];
        let (part, spare) = (&mut list[span.start..span.end], &mut scratch[span.start..span.end]);
        match best_cut(part, spare, &span.moments) {
            Some((at, low)) => {
                let high: [f64; 6] = std::array::from_fn(|i| span.moments[i] - low[i]);
                boxes[next] = Span::new(span.start, span.start + at, low);
                boxes.push(Span::new(span.start + at, span.end, high));
            }
            None => boxes[next].error = 0.0,
        }
    }
    for (n, span) in boxes.iter().enumerate() {
        for item in &list[span.start..span.end] {
            assigned[item.2 as usize] = n as u32;
        }
    }
    boxes.iter().map(|b| b.mean()).collect()
}

/// A colour of the cuts' list: the colour, its weight and its place in the input.
type Item = ([u8; 3], f64, u32);

/// Adds a weighted colour to moments: weight, Σr, Σg, Σb, Σ(r²+g²+b²), and 1 to the number of
/// colours.
fn add_moments(m: &mut [f64; 6], c: &[u8; 3], w: f64) {
    let [r, g, b] = c.map(f64::from);
    m[0] += w;
    m[1] += w * r;
    m[2] += w * g;
    m[3] += w * b;
    m[4] += w * (r * r + g * g + b * b);
    m[5] += 1.0;
}

/// A box of the cuts: a range of the colour list, its moments and its squared error.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    moments: [f64; 6],
    error: f64,
}

impl Span {
    fn new(start: usize, end: usize, moments: [f64; 6]) -> Span {
        let m = &moments;
        let error = (m[4] - (m[1] * m[1] + m[2] * m[2] + m[3] * m[3]) / m[0]).max(0.0);
        Span { start, end, moments, error }
    }

    fn mean(&self) -> [f64; 3] {
        let m = &self.moments;
        [m[1] / m[0], m[2] / m[0], m[3] / m[0]]
    }
}

/// Finds the cut of a box that most reduces its error: one pass gathers, for each value of
/// each channel, the moments of the box's colours with that value; the cut between two values
/// is then judged from running sums. Reorders the box along the chosen channel (a stable
/// counting sort, through `spare`) and returns where the cut falls and the moments before it;
/// `None` when the box is one colour.
fn best_cut(part: &mut [Item], spare: &mut [Item], total: &[f64; 6]) -> Option<(usize, [f64; 6])> {
    let mut by_value = vec![[[0.0f64; 6]; 256]; 3];
    for (c, w, _) in part.iter() {
        for (axis, bins) in by_value.iter_mut().enumerate() {
            add_moments(&mut bins[usize::from(c[axis])], c, *w);
        }
    }
    // The score to maximize is the sum over the two sides of weight × squared mean.
    let score = |m: &[f64; 6]| (m[1] * m[1] + m[2] * m[2] + m[3] * m[3]) / m[0];
    let mut best: Option<(f64, usize, usize, [f64; 6])> = None;
    for (axis, bins) in by_value.iter().enumerate() {
        let mut low = [0.0f64; 6];
        for (value, bin) in bins.iter().enumerate() {
            if bin[5] == 0.0 {
                continue;
            }
            for (l, b) in low.iter_mut().zip(bin) {
                *l += b;
            }
            if low[5] == total[5] {
                break;
            }
            let high: [f64; 6] = std::array::from_fn(|i| total[i] - low[i]);
            let value_score = score(&low) + score(&high);
            if best.as_ref().is_none_or(|b| value_score > b.0) {
                best = Some((value_score, axis, value, low));
            }
        }
    }
    let (_, axis, value, low) = best?;
    let mut starts = [0usize; 257];
    for (v, bin) in by_value[axis].iter().enumerate() {
        starts[v + 1] = starts[v] + bin[5] as usize;
    }
    let at = starts[value + 1];
    for item in part.iter() {
        let slot = &mut starts[usize::from(item.0[axis])];
        spare[*slot] = *item;
        *slot += 1;
    }
    part.copy_from_slice(spare);
    Some((at, low))
}

fn distance(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

/// Adds a centre for each of the clusters with the largest squared errors, as many as are
/// missing from `k`: at the cluster's colour farthest from its centre.
fn split_worst(points: &[[f64; 3]], weights: &[f64], centres: &mut Vec<[f64; 3]>, assigned: &[u32], k: usize) {
    // Per cluster: its squared error, and its farthest point (distance, index).
    let mut clusters = vec![(0.0f64, (0.0f64, usize::MAX)); centres.len()];
    for (i, ((colour, weight), &a)) in points.iter().zip(weights).zip(assigned).enumerate() {
        let d = distance(colour, &centres[a as usize]);
        let cluster = &mut clusters[a as usize];
        cluster.0 += weight * d;
        if d > cluster.1.0 {
            cluster.1 = (d, i);
        }
    }
    let mut worst: Vec<usize> = (0..clusters.len()).filter(|&c| clusters[c].1.0 > 0.0).collect();
    worst.sort_by(|&a, &b| clusters[b].0.total_cmp(&clusters[a].0).then(a.cmp(&b)));
    for c in worst.into_iter().take(k - centres.len()) {
        centres.push(points[clusters[c].1.1]);
    }
}

/// Lloyd's k-means from the given centres over the weighted points, for a few rounds: each
/// point to its nearest centre, each centre to the weighted mean of its points. Hamerly's
/// bounds skip the search for a point whose centre cannot have changed: an upper bound of its
/// distance to its centre and a lower bound of its distance to every other, both moved by how
/// far the centres moved.
fn kmeans(points: &[[f64; 3]], weights: &[f64], centres: &mut [[f64; 3]], assigned: &mut [u32]) {
    let mut upper = vec![0.0f64; points.len()];
    let mut lower = vec![0.0f64; points.len()];
    let mut search = Nearest::new(centres);
    // The first search of each point starts from the centre it was given (its box's).
    for (i, p) in points.iter().enumerate() {
        let (a, d, l) = search.find(centres, p, assigned[i] as usize);
        (assigned[i], upper[i], lower[i]) = (a as u32, d, l);
    }
    for _ in 0..ROUNDS {
        let mut sums = vec![[0.0f64; 4]; centres.len()];
        for ((p, &w), &a) in points.iter().zip(weights).zip(assigned.iter()) {
            let s = &mut sums[a as usize];
            s[0] += w;
            for c in 0..3 {
                s[c + 1] += w * p[c];
            }
        }
        let mut moved = vec![0.0f64; centres.len()];
        for ((centre, s), m) in centres.iter_mut().zip(&sums).zip(&mut moved) {
            if s[0] > 0.0 {
                let new = [s[1] / s[0], s[2] / s[0], s[3] / s[0]];
                *m = distance(&new, centre).sqrt();
                *centre = new;
            }
        }
        let most = moved.iter().copied().fold(0.0, f64::max);
        if most < 0.05 {
            break;
        }
        search = Nearest::new(centres);
        for (i, p) in points.iter().enumerate() {
            let a = assigned[i] as usize;
            upper[i] += moved[a];
            lower[i] -= most;
            if upper[i] <= lower[i] {
                continue;
            }
            upper[i] = distance(p, &centres[a]).sqrt();
            if upper[i] <= lower[i] {
                continue;
            }
            let (a, d, l) = search.find(centres, p, a);
            (assigned[i], upper[i], lower[i]) = (a as u32, d, l);
        }
    }
}

/// An exact nearest-centre search that prunes by the triangle inequality: from a guess `g` at
/// distance `r`, a centre `j` with `|g − j| > 2·r` cannot be nearer (`|p − j| ≥ |g − j| − r > r`),
/// so only the centres near the guess are tried, nearest first. Each centre keeps its
/// 24 nearest (`NEIGHBOURS`); a search that would need more looks at every centre.
pub struct Nearest {
    /// For each centre: its nearest others (itself first), with their distances (not squared).
    neighbours: Vec<Vec<(f64, u32)>>,
}

/// Neighbours kept per centre.
const NEIGHBOURS: usize = 24;

impl Nearest {
    /// The search structure for `centres` (which [`Nearest::find`] is then given again).
    pub fn new(centres: &[[f64; 3]]) -> Nearest {
        let order = |x: &(f64, u32), y: &(f64, u32)| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1));
        let neighbours = centres
            .iter()
            .map(|a| {
                let mut others: Vec<(f64, u32)> =
                    centres.iter().enumerate().map(|(j, b)| (distance(a, b), j as u32)).collect();
                if others.len() > NEIGHBOURS {
                    others.select_nth_unstable_by(NEIGHBOURS - 1, order);
                    others.truncate(NEIGHBOURS);
                }
                others.sort_unstable_by(order);
                others.iter_mut().for_each(|o| o.0 = o.0.sqrt());
                others
            })
            .collect();
        Nearest { neighbours }
    }

    /// The centre nearest `colour` (the lowest index among equals), starting from the guess
    /// `from`: its index, its distance, and a lower bound of the distance to every other centre.
    pub fn find(&self, centres: &[[f64; 3]], colour: &[f64; 3], from: usize) -> (usize, f64, f64) {
        let from = from.min(centres.len() - 1);
        let guess = distance(colour, &centres[from]);
        let (mut best, mut second) = ((guess, from), f64::INFINITY);
        let radius = guess.sqrt();
        let consider = |j: usize, best: &mut (f64, usize), second: &mut f64| {
            let d = distance(colour, &centres[j]);
            if d < best.0 || (d == best.0 && j < best.1) {
                *second = second.min(best.0);
                *best = (d, j);
            } else {
                *second = second.min(d);
            }
        };
        let list = &self.neighbours[from];
        let reach = list.iter().position(|&(apart, _)| apart > 2.0 * radius + 1e-9);
        match reach {
            Some(end) => {
                for &(_, j) in &list[..end] {
                    if j as usize != from {
                        consider(j as usize, &mut best, &mut second);
                    }
                }
                // Every centre beyond is at least this far (by the triangle inequality).
                let unvisited = list[end].0 - radius;
                (best.1, best.0.sqrt(), second.sqrt().min(unvisited))
            }
            None => {
                // The search reaches past the kept neighbours: every centre is tried.
                for j in (0..centres.len()).filter(|&j| j != from) {
                    consider(j, &mut best, &mut second);
                }
                (best.1, best.0.sqrt(), second.sqrt())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(colours: &[([u8; 3], u64)]) -> Histogram {
        let mut h = Histogram::default();
        for &(c, n) in colours {
            h.add(c, n);
        }
        h
    }

    #[test]
    fn few_colours_come_back_exactly() {
        let h = histogram(&[([0, 0, 0], 10), ([255, 0, 0], 11), ([0, 128, 255], 12), ([10, 200, 30], 13)]);
        let q = quantize(&h, 16);
        assert_eq!(q.colours, vec![[0, 0, 0], [0, 128, 255], [10, 200, 30], [255, 0, 0]]);
        // The keys are sorted, each mapped to itself.
        assert_eq!(q.keys, vec![0x000000, 0x0080ff, 0x0ac81e, 0xff0000]);
        assert_eq!(q.nearest, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_gradient_is_spread_evenly() {
        // 256 greys, 4 colours: k-means settles near the quarter means 31.5, 95.5, 159.5, 223.5.
        let greys: Vec<([u8; 3], u64)> = (0..=255u8).map(|g| ([g, g, g], 1)).collect();
        let q = quantize(&histogram(&greys), 4);
        let levels: Vec<u8> = q.colours.iter().map(|c| c[1]).collect();
        for (got, want) in levels.iter().zip([32, 96, 160, 224]) {
            assert!(got.abs_diff(want) <= 3, "{levels:?}");
        }
    }

    #[test]
    fn every_colour_maps_to_its_nearest_entry() {
        let colours: Vec<([u8; 3], u64)> = (0..3000u32)
            .map(|i| ([(i * 37 % 256) as u8, (i * 91 % 256) as u8, (i * 13 % 256) as u8], 1 + u64::from(i % 5)))
            .collect();
        let q = quantize(&histogram(&colours), 64);
        assert_eq!(q.colours.len(), 64);
        for (&key, &index) in q.keys.iter().zip(&q.nearest) {
            let c = unkey(key);
            let d = |p: &[u8; 3]| (0..3).map(|i| (i32::from(p[i]) - i32::from(c[i])).pow(2)).sum::<i32>();
            let best = q.colours.iter().map(d).min().unwrap();
            assert_eq!(d(&q.colours[usize::from(index)]), best, "{c:?}");
        }
    }

    #[test]
    fn the_search_finds_the_nearest_and_bounds_the_rest() {
        let centres: Vec<[f64; 3]> =
            (0..50).map(|i| [(i * 37 % 256) as f64, (i * 91 % 256) as f64, (i * 13) as f64]).collect();
        let search = Nearest::new(&centres);
        for probe in 0..500 {
            let colour = [(probe * 7 % 256) as f64, (probe * 29 % 256) as f64, (probe * 3 % 256) as f64];
            let mut order: Vec<usize> = (0..centres.len()).collect();
            order.sort_by(|&a, &b| {
                distance(&colour, &centres[a]).total_cmp(&distance(&colour, &centres[b])).then(a.cmp(&b))
            });
            for from in [0, 17, 49] {
                let (best, d, lower) = search.find(&centres, &colour, from);
                assert_eq!(best, order[0], "{colour:?} from {from}");
                assert!((d - distance(&colour, &centres[best]).sqrt()).abs() < 1e-9);
                // The bound holds for the true second nearest.
                assert!(lower <= distance(&colour, &centres[order[1]]).sqrt() + 1e-9);
            }
        }
    }
}
