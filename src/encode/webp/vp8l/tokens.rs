//! VP8L's pixel stream as symbols: literals, colour-cache hits and back references (a length and
//! a distance code, the 120 short codes for nearby pixels first), the greedy parse that finds
//! them through hash chains, the colour cache that turns literals into hits, and the counts of
//! the five alphabets the symbols fall in.

use super::prefix::prefix;

/// One symbol of the pixel stream.
#[derive(Clone, Copy)]
pub(super) enum Token {
    Literal(u32),
    Cache(u32),
    Copy { length: u32, code: u32 },
}

/// The colour cache's size (in bits) that ways are compared with.
pub(super) const CACHE_BITS: u32 = 10;
/// The shortest back reference the greedy parse takes.
const MIN_MATCH: usize = 6;
/// The longest back reference the format allows.
pub(super) const MAX_MATCH: usize = 4096;
/// Candidates of a hash chain tried at each pixel.
const CHAIN: usize = 24;
/// How far back a reference may reach.
const WINDOW: usize = 1 << 18;

/// A colour's slot in a colour cache of `bits` bits (the format's hash).
pub(super) fn cache_slot(argb: u32, bits: u32) -> usize {
    (argb.wrapping_mul(0x1e35_a7bd) >> (32 - bits)) as usize
}

/// The 120 short distance codes of VP8L (RFC 9649, 5.2.2): code `i + 1` stands for `x + y·width`
/// pixels back, the pixel `y` rows up and `x` columns left (right when negative), with
/// `(x, y)` the `i`th pair here.
#[rustfmt::skip]
pub(super) const NEAR: [(i8, i8); 120] = [
    (0, 1), (1, 0), (1, 1), (-1, 1), (0, 2), (2, 0), (1, 2), (-1, 2),
    (2, 1), (-2, 1), (2, 2), (-2, 2), (0, 3), (3, 0), (1, 3), (-1, 3),
    (3, 1), (-3, 1), (2, 3), (-2, 3), (3, 2), (-3, 2), (0, 4), (4, 0),
    (1, 4), (-1, 4), (4, 1), (-4, 1), (3, 3), (-3, 3), (2, 4), (-2, 4),
    (4, 2), (-4, 2), (0, 5), (3, 4), (-3, 4), (4, 3), (-4, 3), (5, 0),
    (1, 5), (-1, 5), (5, 1), (-5, 1), (2, 5), (-2, 5), (5, 2), (-5, 2),
    (4, 4), (-4, 4), (3, 5), (-3, 5), (5, 3), (-5, 3), (0, 6), (6, 0),
    (1, 6), (-1, 6), (6, 1), (-6, 1), (2, 6), (-2, 6), (6, 2), (-6, 2),
    (4, 5), (-4, 5), (5, 4), (-5, 4), (3, 6), (-3, 6), (6, 3), (-6, 3),
    (0, 7), (7, 0), (1, 7), (-1, 7), (5, 5), (-5, 5), (7, 1), (-7, 1),
    (4, 6), (-4, 6), (6, 4), (-6, 4), (2, 7), (-2, 7), (7, 2), (-7, 2),
    (3, 7), (-3, 7), (7, 3), (-7, 3), (5, 6), (-5, 6), (6, 5), (-6, 5),
    (8, 0), (4, 7), (-4, 7), (7, 4), (-7, 4), (8, 1), (8, 2), (6, 6),
    (-6, 6), (8, 3), (5, 7), (-5, 7), (7, 5), (-7, 5), (8, 4), (6, 7),
    (-6, 7), (7, 6), (-7, 6), (8, 5), (7, 7), (-7, 7), (8, 6), (8, 7),
];

/// The distance codes of an image `width` wide: the shortest code for each distance a short
/// code reaches, else distance + 120.
pub(super) struct Distances {
    /// The short code of each distance up to the farthest a short code reaches (0: none).
    near: Vec<u32>,
}

impl Distances {
    pub(super) fn new(width: usize) -> Distances {
        let mut near = vec![0; 8 * width + 9];
        for (i, &(x, y)) in NEAR.iter().enumerate() {
            let d = i64::from(x) + i64::from(y) * width as i64;
            if d >= 1 && near[d as usize] == 0 {
                near[d as usize] = i as u32 + 1;
            }
        }
        Distances { near }
    }

    pub(super) fn code(&self, distance: usize) -> u32 {
        match self.near.get(distance) {
            Some(&code) if code > 0 => code,
            _ => distance as u32 + 120,
        }
    }
}

/// The symbols for `pixels` (`width` wide): back references where at least [`MIN_MATCH`]
/// pixels repeat, else literals (which [`cache`] turns into colour-cache hits).
pub(super) fn tokens(pixels: &[u32], width: usize) -> Vec<Token> {
    let distances = Distances::new(width);
    let n = pixels.len();
    let mut out = Vec::with_capacity(n / 2);
    let hash_bits = 16;
    const NONE: u32 = u32::MAX;
    let mut head = vec![NONE; 1 << hash_bits];
    let mut chain = vec![NONE; n];
    let hash = |i: usize| {
        let key = pixels[i].wrapping_mul(0x9E37_79B1) ^ pixels[i + 1].wrapping_mul(0x85EB_CA6B).rotate_left(13);
        (key >> (32 - hash_bits)) as usize
    };
    let insert = |i: usize, head: &mut Vec<u32>, chain: &mut Vec<u32>| {
        if i + 1 < n {
            let h = hash(i);
            chain[i] = head[h];
            head[h] = i as u32;
        }
    };
    let mut i = 0;
    while i < n {
        let mut best = (0usize, 0usize);
        if i + MIN_MATCH <= n {
            let mut candidate = head[hash(i)];
            let mut tries = 0;
            // The pixel above, tried first: rows repeat in flat and predicted areas.
            let above = i.checked_sub(width);
            while tries < CHAIN {
                let Some(j) = (if tries == 0 { above } else { None }).or_else(|| {
                    let c = candidate;
                    if c == NONE {
                        return None;
                    }
                    candidate = chain[c as usize];
                    Some(c as usize)
                }) else {
                    break;
                };
                tries += 1;
                if i - j > WINDOW {
                    break;
                }
                let most = (n - i).min(MAX_MATCH);
                if best.0 >= most || pixels[j + best.0] != pixels[i + best.0] {
                    continue;
                }
                let length = pixels[j..].iter().zip(&pixels[i..i + most]).take_while(|(a, b)| a == b).count();
                if length > best.0 {
                    best = (length, i - j);
                }
            }
        }
        if best.0 >= MIN_MATCH {
            out.push(Token::Copy { length: best.0 as u32, code: distances.code(best.1) });
            for k in i..i + best.0 {
                insert(k, &mut head, &mut chain);
            }
            i += best.0;
            continue;
        }
        out.push(Token::Literal(pixels[i]));
        insert(i, &mut head, &mut chain);
        i += 1;
    }
    out
}

/// The symbols for `pixels` (`width` wide) found quickly, for the `fast` effort, with a colour
/// cache of `cache_bits` (as [`cache`] makes it) and their counts, in one pass: at each pixel
/// only the two nearest places are tried (the pixel before, a run, and the one above), and the
/// longest match of at least [`MIN_MATCH`] taken (the pixels above-left and above-right as well
/// made the busy benchmark 0.3% smaller for a tenth more time). Far matches found through a hash cost
/// more time than they save: on the busy benchmark the parse without them is 1% smaller (their
/// distances' codes are dear) and a third quicker.
pub(super) fn quick_tokens(pixels: &[u32], width: usize, cache_bits: u32) -> (Vec<Token>, Histograms) {
    let distances = Distances::new(width);
    let n = pixels.len();
    let mut out = Vec::with_capacity(n / 4);
    let mut counts = alphabet_sizes(cache_bits).map(|n| vec![0u32; n]);
    let mut cache = vec![0u32; 1 << cache_bits];
    let near = QUICK_NEAR.map(|(x, y)| (i64::from(x) + i64::from(y) * width as i64).max(1) as usize);
    // The length of the match `d` back from `i`, at most `most`, if longer than `best`.
    let longer = |i: usize, d: usize, most: usize, best: usize| {
        let probe = best.min(most - 1);
        if d > i || pixels[i - d + probe] != pixels[i + probe] || pixels[i - d] != pixels[i] {
            return 0;
        }
        pixels[i - d..i - d + most].iter().zip(&pixels[i..i + most]).take_while(|(a, b)| a == b).count()
    };
    let mut i = 0;
    while i < n {
        let most = (n - i).min(MAX_MATCH);
        let mut best = (0usize, 0usize);
        if most >= MIN_MATCH {
            for d in near {
                let length = longer(i, d, most, best.0);
                if length > best.0 {
                    best = (length, d);
                }
            }
        }
        let token = if best.0 >= MIN_MATCH {
            if cache_bits > 0 {
                // A repeat of the pixel before changes nothing: runs cost one store.
                let mut last = None;
                for &p in &pixels[i..i + best.0] {
                    if last != Some(p) {
                        cache[cache_slot(p, cache_bits)] = p;
                        last = Some(p);
                    }
                }
            }
            let copy = Token::Copy { length: best.0 as u32, code: distances.code(best.1) };
            i += best.0;
            copy
        } else {
            let p = pixels[i];
            i += 1;
            if cache_bits > 0 {
                let slot = cache_slot(p, cache_bits);
                let hit = cache[slot] == p;
                cache[slot] = p;
                if hit { Token::Cache(slot as u32) } else { Token::Literal(p) }
            } else {
                Token::Literal(p)
            }
        };
        symbols(&token, |a, s| counts[a][s] += 1);
        out.push(token);
    }
    (out, counts)
}

/// The places [`quick_tokens`] tries, as `(x, y)` pixels left and up.
const QUICK_NEAR: [(i8, i8); 2] = [(1, 0), (0, 1)];

/// Turns each literal of `tokens` (of `pixels`) found in a colour cache of `cache_bits` (0:
/// none) into a hit, in place; the cache learns every pixel, copied ones included.
pub(super) fn cache(tokens: &mut [Token], pixels: &[u32], cache_bits: u32) {
    if cache_bits == 0 {
        return;
    }
    let mut cache = vec![0u32; 1 << cache_bits];
    let mut at = 0;
    for t in tokens.iter_mut() {
        match *t {
            Token::Literal(p) => {
                let slot = cache_slot(p, cache_bits);
                if cache[slot] == p {
                    *t = Token::Cache(slot as u32);
                }
                cache[slot] = p;
                at += 1;
            }
            Token::Copy { length, .. } => {
                for &p in &pixels[at..at + length as usize] {
                    cache[cache_slot(p, cache_bits)] = p;
                }
                at += length as usize;
            }
            // A hit already: the cache holds its colour.
            Token::Cache(_) => at += 1,
        }
    }
}

/// The counts of each symbol of the five alphabets (see [`alphabet_sizes`]).
pub(super) type Histograms = [Vec<u32>; 5];

/// The sizes of the five alphabets: green (with lengths and cache slots), red, blue, alpha,
/// distance.
pub(super) fn alphabet_sizes(cache_bits: u32) -> [usize; 5] {
    let cache_size = if cache_bits > 0 { 1usize << cache_bits } else { 0 };
    [256 + 24 + cache_size, 256, 256, 256, 40]
}

/// The symbols one token adds: (alphabet, symbol).
pub(super) fn symbols(t: &Token, mut add: impl FnMut(usize, usize)) {
    match *t {
        Token::Literal(p) => {
            add(0, (p >> 8 & 255) as usize);
            add(1, (p >> 16 & 255) as usize);
            add(2, (p & 255) as usize);
            add(3, (p >> 24) as usize);
        }
        Token::Cache(slot) => add(0, 256 + 24 + slot as usize),
        Token::Copy { length, code } => {
            add(0, 256 + prefix(length).0);
            add(4, prefix(code).0);
        }
    }
}

/// The five histograms of `tokens`.
pub(super) fn histograms(tokens: &[Token], cache_bits: u32) -> Histograms {
    let mut out = alphabet_sizes(cache_bits).map(|n| vec![0u32; n]);
    for t in tokens {
        symbols(t, |a, s| out[a][s] += 1);
    }
    out
}

/// The pixel each of `tokens` starts at.
pub(super) fn starts(tokens: &[Token]) -> impl Iterator<Item = usize> + '_ {
    tokens.iter().scan(0, |at, t| {
        let start = *at;
        *at += match *t {
            Token::Copy { length, .. } => length as usize,
            _ => 1,
        };
        Some(start)
    })
}
