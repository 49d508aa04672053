//! The parse of fewest estimated bits: where the greedy parse takes the longest match at each
//! step, this one weighs every way to cover the pixels (a literal or cache hit, or a copy of
//! any length from the match found there) by what its symbols cost under the counts of an
//! earlier parse, and keeps the cheapest path through the image (shortest path over positions,
//! as libwebp's "trace backwards" does at its default effort).
//!
//! Two kinds of match are offered at each position: the greedy parse's copy over it (what is
//! left of it from here), and the nearby distances of the first short codes, whose codes cost a
//! few bits where a far match's distance costs up to 18 extra bits. A shorter match at a cheap
//! distance often beats a longer one at a dear distance: on a checkerboard frame of seven
//! colours that alone is 7% of its size. All costs are integers (1/65536 bit), so every machine
//! parses alike.

use super::coding::{Coding, Image};
use super::prefix::{log2, prefix};
use super::tokens::{Distances, Histograms, MAX_MATCH, NEAR, Token, cache, cache_slot, histograms};

/// The shortest copy the parse weighs: a shorter one never pays for its length and distance.
const MIN_COPY: usize = 4;
/// Copies up to this long are weighed at every length; a longer match at its whole length
/// only (and at the shorter ones).
const ALL_LENGTHS: usize = 16;
/// How many of the short codes' distances are tried at each position (the cheapest first).
const NEAR_TRIED: usize = 8;

/// The matches weighed at each position, found once for every pass: the rest of the greedy
/// parse's copy over it, and of the nearby distances those longer than any at a cheaper code
/// (the first two and the longest), each as `length << 19 | code` (0: none).
pub(super) struct Matches(Vec<[u32; CANDIDATES]>);

/// Matches kept per position.
const CANDIDATES: usize = 4;

impl Matches {
    pub(super) fn find(pixels: &[u32], width: usize, greedy: &[Token]) -> Matches {
        let n = pixels.len();
        let distances = Distances::new(width);
        let mut near: Vec<(usize, u32)> = Vec::with_capacity(NEAR_TRIED);
        for &(x, y) in &NEAR {
            let d = i64::from(x) + i64::from(y) * width as i64;
            if d >= 1 && near.len() < NEAR_TRIED && !near.iter().any(|&(e, _)| e == d as usize) {
                near.push((d as usize, distances.code(d as usize)));
            }
        }
        let mut near_length = vec![0usize; near.len()];
        let mut out = vec![[0u32; CANDIDATES]; n];
        // The greedy parse's copies, at every position they cover.
        let mut at = 0;
        for t in greedy {
            let Token::Copy { length, code } = *t else {
                at += 1;
                continue;
            };
            for (k, found) in out[at..at + length as usize].iter_mut().enumerate() {
                let left = length as usize - k;
                if left >= MIN_COPY {
                    found[0] = (left as u32) << 19 | code;
                }
            }
            at += length as usize;
        }
        for (i, found) in out.iter_mut().enumerate() {
            // Near distances, cheapest code first: inside a match the length one shorter, else
            // measured afresh.
            let mut longest = MIN_COPY - 1;
            let mut kept = 1;
            for (k, &(d, code)) in near.iter().enumerate() {
                if d > i {
                    continue;
                }
                near_length[k] = match near_length[k] {
                    0 | 1 if pixels[i - d] != pixels[i] => 0,
                    0 | 1 => common(pixels, i - d, i),
                    l => l - 1,
                };
                if near_length[k] > longest {
                    longest = near_length[k];
                    found[kept] = (longest as u32) << 19 | code;
                    kept = (kept + 1).min(CANDIDATES - 1);
                }
            }
        }
        Matches(out)
    }
}

/// How many pixels from `i` repeat those from `j` (`j < i`), at most [`MAX_MATCH`].
fn common(pixels: &[u32], j: usize, i: usize) -> usize {
    let most = (pixels.len() - i).min(MAX_MATCH);
    pixels[j..].iter().zip(&pixels[i..i + most]).take_while(|(a, b)| a == b).count()
}

/// What each symbol costs, in 1/65536 bit: `log2(total / count)` under `counts`, and a symbol
/// never seen there its alphabet's whole log and 2 bits.
fn symbol_costs(counts: &Histograms) -> [Vec<u64>; 5] {
    counts.each_ref().map(|counts| {
        let total = log2(counts.iter().map(|&c| u64::from(c)).sum::<u64>().max(1));
        counts.iter().map(|&c| if c > 0 { total - log2(u64::from(c)) } else { total + (2 << 16) }).collect()
    })
}

/// What coding a pixel costs under an earlier parse's counts, in 1/65536 bit.
struct Prices {
    /// Each symbol's cost, by alphabet ([`symbol_costs`]).
    costs: [Vec<u64>; 5],
    /// A copy's length symbol and extra bits, by length.
    length: Vec<u64>,
    /// A literal's mean cost over a sample of the pixels: what a copy's every pixel saves.
    mean_literal: u64,
}

impl Prices {
    fn new(counts: &Histograms, pixels: &[u32]) -> Prices {
        let costs = symbol_costs(counts);
        let length = (0..=MAX_MATCH as u32)
            .map(|k| {
                let (symbol, _, extra) = prefix(k.max(1));
                costs[0][256 + symbol] + (u64::from(extra) << 16)
            })
            .collect();
        let mut prices = Prices { costs, length, mean_literal: 0 };
        let (n, sample) = (pixels.len(), pixels.len().clamp(1, 4096));
        prices.mean_literal = (0..sample).map(|s| prices.literal(pixels[s * n / sample])).sum::<u64>() / sample as u64;
        prices
    }

    /// A literal pixel `p`: its green, red, blue and alpha symbols.
    fn literal(&self, p: u32) -> u64 {
        let c = &self.costs;
        c[0][(p >> 8 & 255) as usize]
            + c[1][(p >> 16 & 255) as usize]
            + c[2][(p & 255) as usize]
            + c[3][(p >> 24) as usize]
    }

    /// A copy's distance code.
    fn distance(&self, code: u32) -> u64 {
        let (symbol, _, extra) = prefix(code);
        self.costs[4][symbol] + (u64::from(extra) << 16)
    }

    /// Of the matches `found` at a position (`length << 19 | code`, 0: none), the one that saves
    /// the most literal bits for its own: its length, code and distance's cost.
    fn best_match(&self, found: &[u32]) -> Option<(usize, u32, u64)> {
        let mut best = None;
        let mut best_score = i64::MIN;
        for &found in found.iter().filter(|&&f| f != 0) {
            let (length, code) = ((found >> 19) as usize, found & 0x7ffff);
            let bits = self.distance(code);
            let score = (length as u64 * self.mean_literal) as i64 - (bits + self.length[length]) as i64;
            if score > best_score {
                best_score = score;
                best = Some((length, code, bits));
            }
        }
        best
    }
}

/// The cheapest parse of `pixels` (colour cache of `cache_bits`) under `counts`,
/// the symbol counts of an earlier parse, with the matches `matches` found.
pub(super) fn parse(pixels: &[u32], cache_bits: u32, counts: &Histograms, matches: &Matches) -> Vec<Token> {
    let n = pixels.len();
    let prices = Prices::new(counts, pixels);
    let mut slots = vec![0u32; if cache_bits > 0 { 1 << cache_bits } else { 0 }];
    // The cheapest cost of the first `i` pixels, and the last step there (`length << 19 | code`,
    // a literal's length 1).
    let mut cost = vec![u64::MAX; n + 1];
    let mut step = vec![0u32; n + 1];
    cost[0] = 0;
    let mut last = 0;
    for i in 0..n {
        let here = cost[i];
        let p = pixels[i];
        // The cache holds every pixel before this one, whatever path covers them.
        let mut one = prices.literal(p);
        if cache_bits > 0 {
            let slot = cache_slot(p, cache_bits);
            if slots[slot] == p {
                one = one.min(prices.costs[0][256 + 24 + slot]);
            }
            slots[slot] = p;
        }
        if here + one < cost[i + 1] {
            cost[i + 1] = here + one;
            step[i + 1] = 1 << 19;
        }
        let Some((length, code, bits)) = prices.best_match(&matches.0[i]) else {
            last = 0;
            continue;
        };
        // Deep inside a long copy, cutting it short at a small length rarely pays: only its
        // whole length is weighed.
        let inside = code == last && length >= 2 * ALL_LENGTHS;
        last = code;
        let base = here + bits;
        let mut relax = |k: usize| {
            let v = base + prices.length[k];
            if v < cost[i + k] {
                cost[i + k] = v;
                step[i + k] = (k as u32) << 19 | code;
            }
        };
        if !inside {
            for k in MIN_COPY..=length.min(ALL_LENGTHS) {
                relax(k);
            }
        }
        if length > ALL_LENGTHS {
            relax(length);
        }
    }
    traced_back(pixels, &step)
}

/// The tokens of the path whose last step to each position `step` holds: back from the end,
/// then turned around.
fn traced_back(pixels: &[u32], step: &[u32]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut at = pixels.len();
    while at > 0 {
        let (length, code) = ((step[at] >> 19) as usize, step[at] & 0x7ffff);
        at -= length;
        tokens.push(if length == 1 { Token::Literal(pixels[at]) } else { Token::Copy { length: length as u32, code } });
    }
    tokens.reverse();
    tokens
}

/// Cheapest parses, each priced by the one before.
pub(super) const PASSES: usize = 2;

/// The colour cache sizes (in bits; 0: none) the cheapest parse is counted with: every size the
/// format allows (against 0, 4, 6, 8 and 10 only, 0.4–3.6% smaller files, and no slower: a
/// count and a code per size, beside the parse).
pub(super) const CACHE_SIZES: [u32; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/// The `max` effort's passes: one more.
pub(super) const MAX_PASSES: usize = 3;

impl Image {
    /// `pixels`, parsed greedily as `self`, parsed again for fewest bits: [`PASSES`] cheapest
    /// parses, each priced by the counts of the one before (the first by the greedy parse's),
    /// then the colour cache of [`CACHE_SIZES`] that takes fewest bits; `self` where it is
    /// smaller still.
    pub(super) fn cheapest(self, pixels: &[u32]) -> Image {
        self.cheapest_by(pixels, PASSES)
    }

    /// [`Image::cheapest`] with `passes` cheapest parses.
    pub(super) fn cheapest_by(self, pixels: &[u32], passes: usize) -> Image {
        let greedy = self;
        let Image { width, cache_bits, main, .. } = greedy;
        let matches = Matches::find(pixels, width, &greedy.tokens);
        let mut counts = histograms(&greedy.tokens, cache_bits);
        let mut plain = Vec::new();
        for _ in 0..passes {
            // The last pass's symbols go before the next are made.
            drop(std::mem::take(&mut plain));
            plain = parse(pixels, cache_bits, &counts, &matches);
            let mut marked = plain.clone();
            cache(&mut marked, pixels, cache_bits);
            counts = histograms(&marked, cache_bits);
        }
        drop(matches);
        let mut best = (Coding::single(&greedy).bits, greedy);
        for bits in CACHE_SIZES {
            let mut tokens = plain.clone();
            cache(&mut tokens, pixels, bits);
            let image = Image { tokens, width, height: best.1.height, cache_bits: bits, main };
            let size = Coding::single(&image).bits;
            if size < best.0 {
                best = (size, image);
            }
        }
        best.1
    }
}
