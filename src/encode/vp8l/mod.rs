//! A lossless WebP (VP8L) encoder for our frames: a colour table for images of at most 256
//! colours (indices packed several to a pixel when there are at most 16), else subtract green
//! and a predictor chosen per 16×16 tile; back references found through hash chains (the 120
//! short codes for nearby pixels), a colour cache, and canonical prefix codes limited to 15
//! bits. The ways are compared parsed greedily; the one kept is parsed again for fewest bits
//! (`cheapest.rs`). Written from the format's description (RFC 9649). Pixels are opaque, or
//! transparent where a blended frame leaves the canvas as it was: a transparent pixel's colour
//! is free, and is given the prediction's.

mod cheapest;
mod prefix;

use prefix::{Bits, Code, prefix, write_code};

/// One symbol of the pixel stream.
#[derive(Clone, Copy)]
enum Token {
    Literal(u32),
    Cache(u32),
    Copy { length: u32, code: u32 },
}

const CACHE_BITS: u32 = 10;
const MIN_MATCH: usize = 6;
const MAX_MATCH: usize = 4096;
const CHAIN: usize = 24;
const WINDOW: usize = 1 << 18;

fn cache_slot(argb: u32, bits: u32) -> usize {
    (argb.wrapping_mul(0x1e35_a7bd) >> (32 - bits)) as usize
}

/// The 120 short distance codes of VP8L (RFC 9649, 5.2.2): code `i + 1` stands for `x + y·width`
/// pixels back, the pixel `y` rows up and `x` columns left (right when negative), with
/// `(x, y)` the `i`th pair here.
const NEAR: [(i8, i8); 120] = [
    (0, 1),
    (1, 0),
    (1, 1),
    (-1, 1),
    (0, 2),
    (2, 0),
    (1, 2),
    (-1, 2),
    (2, 1),
    (-2, 1),
    (2, 2),
    (-2, 2),
    (0, 3),
    (3, 0),
    (1, 3),
    (-1, 3),
    (3, 1),
    (-3, 1),
    (2, 3),
    (-2, 3),
    (3, 2),
    (-3, 2),
    (0, 4),
    (4, 0),
    (1, 4),
    (-1, 4),
    (4, 1),
    (-4, 1),
    (3, 3),
    (-3, 3),
    (2, 4),
    (-2, 4),
    (4, 2),
    (-4, 2),
    (0, 5),
    (3, 4),
    (-3, 4),
    (4, 3),
    (-4, 3),
    (5, 0),
    (1, 5),
    (-1, 5),
    (5, 1),
    (-5, 1),
    (2, 5),
    (-2, 5),
    (5, 2),
    (-5, 2),
    (4, 4),
    (-4, 4),
    (3, 5),
    (-3, 5),
    (5, 3),
    (-5, 3),
    (0, 6),
    (6, 0),
    (1, 6),
    (-1, 6),
    (6, 1),
    (-6, 1),
    (2, 6),
    (-2, 6),
    (6, 2),
    (-6, 2),
    (4, 5),
    (-4, 5),
    (5, 4),
    (-5, 4),
    (3, 6),
    (-3, 6),
    (6, 3),
    (-6, 3),
    (0, 7),
    (7, 0),
    (1, 7),
    (-1, 7),
    (5, 5),
    (-5, 5),
    (7, 1),
    (-7, 1),
    (4, 6),
    (-4, 6),
    (6, 4),
    (-6, 4),
    (2, 7),
    (-2, 7),
    (7, 2),
    (-7, 2),
    (3, 7),
    (-3, 7),
    (7, 3),
    (-7, 3),
    (5, 6),
    (-5, 6),
    (6, 5),
    (-6, 5),
    (8, 0),
    (4, 7),
    (-4, 7),
    (7, 4),
    (-7, 4),
    (8, 1),
    (8, 2),
    (6, 6),
    (-6, 6),
    (8, 3),
    (5, 7),
    (-5, 7),
    (7, 5),
    (-7, 5),
    (8, 4),
    (6, 7),
    (-6, 7),
    (7, 6),
    (-7, 6),
    (8, 5),
    (7, 7),
    (-7, 7),
    (8, 6),
    (8, 7),
];

/// The distance codes of an image `width` wide: the shortest code for each distance a short
/// code reaches, else distance + 120.
struct Distances {
    /// The short code of each distance up to the farthest a short code reaches (0: none).
    near: Vec<u32>,
}

impl Distances {
    fn new(width: usize) -> Distances {
        let mut near = vec![0; 8 * width + 9];
        for (i, &(x, y)) in NEAR.iter().enumerate() {
            let d = i64::from(x) + i64::from(y) * width as i64;
            if d >= 1 && near[d as usize] == 0 {
                near[d as usize] = i as u32 + 1;
            }
        }
        Distances { near }
    }

    fn code(&self, distance: usize) -> u32 {
        match self.near.get(distance) {
            Some(&code) if code > 0 => code,
            _ => distance as u32 + 120,
        }
    }
}

/// The symbols for `pixels` (`width` wide): back references where at least [`MIN_MATCH`]
/// pixels repeat, else literals (which [`cache`] turns into colour-cache hits).
fn tokens(pixels: &[u32], width: usize) -> Vec<Token> {
    let cache_bits = 0;
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
    let mut cache = vec![0u32; if cache_bits > 0 { 1 << cache_bits } else { 0 }];
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
                if cache_bits > 0 {
                    cache[cache_slot(pixels[k], cache_bits)] = pixels[k];
                }
                insert(k, &mut head, &mut chain);
            }
            i += best.0;
            continue;
        }
        let p = pixels[i];
        if cache_bits > 0 {
            let slot = cache_slot(p, cache_bits);
            if cache[slot] == p {
                out.push(Token::Cache(slot as u32));
            } else {
                out.push(Token::Literal(p));
                cache[slot] = p;
            }
        } else {
            out.push(Token::Literal(p));
        }
        insert(i, &mut head, &mut chain);
        i += 1;
    }
    out
}

/// Turns each literal of `tokens` (of `pixels`) found in a colour cache of `cache_bits` (0:
/// none) into a hit, in place; the cache learns every pixel, copied ones included.
fn cache(tokens: &mut [Token], pixels: &[u32], cache_bits: u32) {
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
            Token::Cache(_) => unreachable!("tokens come without cache hits"),
        }
    }
}

/// The counts of each symbol of the five alphabets (see [`alphabet_sizes`]).
type Histograms = [Vec<u32>; 5];

/// The sizes of the five alphabets: green (with lengths and cache slots), red, blue, alpha,
/// distance.
fn alphabet_sizes(cache_bits: u32) -> [usize; 5] {
    let cache_size = if cache_bits > 0 { 1usize << cache_bits } else { 0 };
    [256 + 24 + cache_size, 256, 256, 256, 40]
}

/// The symbols one token adds: (alphabet, symbol).
fn symbols(t: &Token, mut add: impl FnMut(usize, usize)) {
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
fn histograms(tokens: &[Token], cache_bits: u32) -> Histograms {
    let mut out = alphabet_sizes(cache_bits).map(|n| vec![0u32; n]);
    for t in tokens {
        symbols(t, |a, s| out[a][s] += 1);
    }
    out
}

/// Writes an entropy-coded sub-image (a transform's data): no colour cache, one group of codes.
fn write_image(bits: &mut Bits, pixels: &[u32], width: usize) {
    let image = Image::new(pixels, width, 0, false);
    write_tokens(bits, &image, &Coding::single(&image));
}

/// An entropy-coded image (a way's main image, or a transform's sub-image), parsed into
/// symbols once.
struct Image {
    tokens: Vec<Token>,
    width: usize,
    height: usize,
    cache_bits: u32,
    main: bool,
}

impl Image {
    /// `pixels` parsed greedily with a colour cache of `cache_bits` (0: none); `main` says it is
    /// a way's main image, which may group its codes.
    fn new(pixels: &[u32], width: usize, cache_bits: u32, main: bool) -> Image {
        let mut tokens = tokens(pixels, width);
        cache(&mut tokens, pixels, cache_bits);
        Image { tokens, width, height: pixels.len() / width.max(1), cache_bits, main }
    }

    /// `pixels`, parsed greedily as `self`, parsed again for fewest bits: [`PASSES`] cheapest
    /// parses, each priced by the counts of the one before (the first by the greedy parse's),
    /// then the colour cache of [`CACHE_SIZES`] that takes fewest bits; `self` where it is
    /// smaller still.
    fn cheapest(self, pixels: &[u32]) -> Image {
        let greedy = self;
        let Image { width, cache_bits, main, .. } = greedy;
        let matches = cheapest::Matches::find(pixels, width, &greedy.tokens);
        let mut counts = histograms(&greedy.tokens, cache_bits);
        let mut plain = Vec::new();
        for _ in 0..PASSES {
            // The last pass's symbols go before the next are made.
            drop(std::mem::take(&mut plain));
            plain = cheapest::parse(pixels, cache_bits, &counts, &matches);
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

/// Cheapest parses, each priced by the one before.
const PASSES: usize = 2;

/// The colour cache sizes (in bits; 0: none) the cheapest parse is counted with.
const CACHE_SIZES: [u32; 5] = [0, 4, 6, 8, 10];

/// A way of coding a picture: its header and transforms, then its main image.
struct Way {
    head: Bits,
    image: Image,
    /// The main image's pixels, which `image` parses greedily.
    pixels: Vec<u32>,
}

impl Way {
    /// A way whose main image `pixels` (`width` wide, a colour cache of `cache_bits`) is parsed
    /// greedily, to be compared with other ways.
    fn new(head: Bits, pixels: Vec<u32>, width: usize, cache_bits: u32) -> Way {
        Way { head, image: Image::new(&pixels, width, cache_bits, true), pixels }
    }

    /// The way with its main image parsed again, for fewest bits.
    fn cheapest(self) -> Way {
        let Way { head, image, pixels } = self;
        Way { head, image: image.cheapest(&pixels), pixels }
    }

    /// The main image coded with one group of codes.
    fn single(&self) -> Coding {
        Coding::single(&self.image)
    }

    /// The main image's tiles sorted into groups of codes, if that is smaller than `one` (its
    /// coding with one group), else `one`.
    fn grouped(&self, one: Coding) -> Coding {
        Coding::grouped(&self.image, one)
    }

    /// The length in bits of the whole bitstream coded so.
    fn bits(&self, coding: &Coding) -> u64 {
        self.head.len() + coding.bits
    }

    /// The whole bitstream, coded so.
    fn bytes(&self, coding: &Coding) -> Vec<u8> {
        let mut bits = self.head.clone();
        write_tokens(&mut bits, &self.image, coding);
        bits.finish()
    }
}

/// How a main image's symbols are coded, and the bits that takes.
struct Coding {
    /// The tiles' groups (none: one group of codes for the whole image).
    groups: Option<Groups>,
    /// Each symbol's group (none: all in group 0).
    of: Vec<u8>,
    /// Each group's counts.
    histograms: Vec<Histograms>,
    /// The image's length in bits: cache and meta flags, meta image, codes, symbols and extra bits.
    bits: u64,
    /// Of those, the flags and the extra bits of lengths and distances, the same however the
    /// symbols are grouped.
    fixed: u64,
}

impl Coding {
    /// `image` with one group of codes.
    fn single(image: &Image) -> Coding {
        let Image { ref tokens, cache_bits, main, .. } = *image;
        let mut fixed = 1 + if cache_bits > 0 { 4 } else { 0 } + u64::from(main);
        for t in tokens {
            if let Token::Copy { length, code } = *t {
                fixed += u64::from(prefix(length).2 + prefix(code).2);
            }
        }
        let histograms = vec![histograms(tokens, cache_bits)];
        let mut scratch = Bits::new();
        let bits = fixed + code_bits(&mut scratch, &histograms) + scratch.len();
        Coding { groups: None, of: Vec::new(), histograms, bits, fixed }
    }

    /// A main `image`'s tiles sorted into groups of codes, kept only when the meta image, the
    /// groups' codes and their symbols take fewer bits than `one`, its single coding.
    fn grouped(image: &Image, one: Coding) -> Coding {
        let Image { ref tokens, width, height, cache_bits, main } = *image;
        if !main {
            return one;
        }
        let Some(g) = groups(tokens, width, height, cache_bits) else {
            return one;
        };
        let of: Vec<u8> = starts(tokens).map(|p| g.of_tile[g.tile(p, width)] as u8).collect();
        let mut histograms: Vec<Histograms> =
            (0..g.count).map(|_| alphabet_sizes(cache_bits).map(|n| vec![0u32; n])).collect();
        for (t, &k) in tokens.iter().zip(&of) {
            symbols(t, |a, s| histograms[usize::from(k)][a][s] += 1);
        }
        let mut scratch = Bits::new();
        write_image(&mut scratch, &g.meta_pixels(), g.tiles_x);
        let bits = one.fixed + 3 + code_bits(&mut scratch, &histograms) + scratch.len();
        if bits < one.bits { Coding { groups: Some(g), of, histograms, bits, fixed: one.fixed } } else { one }
    }
}

/// Writes an entropy-coded image coded as `coding` says: its colour cache flag, for a main
/// image whether and how its tiles choose among groups of prefix codes, each group's five
/// prefix codes, and the symbols.
fn write_tokens(bits: &mut Bits, image: &Image, coding: &Coding) {
    let Image { ref tokens, cache_bits, main, .. } = *image;
    if cache_bits > 0 {
        bits.put(1, 1);
        bits.put(cache_bits, 4);
    } else {
        bits.put(0, 1);
    }
    match &coding.groups {
        Some(g) => {
            bits.put(1, 1);
            bits.put(g.tile_bits - 2, 3);
            write_image(bits, &g.meta_pixels(), g.tiles_x);
        }
        None if main => bits.put(0, 1),
        None => {}
    }
    let codes: Vec<[Code; 5]> = coding.histograms.iter().map(|h| h.each_ref().map(|f| write_code(bits, f))).collect();
    for (i, t) in tokens.iter().enumerate() {
        let [green, red, blue, alpha, distance] = &codes[coding.of.get(i).map_or(0, |&k| usize::from(k))];
        match *t {
            Token::Literal(p) => {
                green.put(bits, (p >> 8 & 255) as usize);
                red.put(bits, (p >> 16 & 255) as usize);
                blue.put(bits, (p & 255) as usize);
                alpha.put(bits, (p >> 24) as usize);
            }
            Token::Cache(slot) => green.put(bits, 256 + 24 + slot as usize),
            Token::Copy { length, code } => {
                let (symbol, extra, count) = prefix(length);
                green.put(bits, 256 + symbol);
                bits.put(extra, count);
                let (symbol, extra, count) = prefix(code);
                distance.put(bits, symbol);
                bits.put(extra, count);
            }
        }
    }
}

/// The pixel each of `tokens` starts at.
fn starts(tokens: &[Token]) -> impl Iterator<Item = usize> + '_ {
    tokens.iter().scan(0, |at, t| {
        let start = *at;
        *at += match *t {
            Token::Copy { length, .. } => length as usize,
            _ => 1,
        };
        Some(start)
    })
}

/// Writes the codes of `histograms` into `bits` and returns the bits their symbols take (but
/// for the extra bits of lengths and distances).
fn code_bits(bits: &mut Bits, histograms: &[Histograms]) -> u64 {
    let mut total = 0;
    for h in histograms {
        for f in h {
            let code = write_code(bits, f);
            total += f.iter().enumerate().map(|(s, &n)| u64::from(n) * code.length(s)).sum::<u64>();
        }
    }
    total
}

/// Most groups of prefix codes a main image's tiles are sorted into.
const MAX_GROUPS: usize = 16;

/// Rounds of sorting tiles into groups.
const ROUNDS: usize = 3;

/// Tiles of a main image sorted into groups that share prefix codes.
struct Groups {
    tile_bits: u32,
    tiles_x: usize,
    of_tile: Vec<usize>,
    count: usize,
}

impl Groups {
    /// The tile of pixel `p` of an image `width` wide.
    fn tile(&self, p: usize, width: usize) -> usize {
        tile_of(p, width, self.tile_bits, self.tiles_x)
    }

    /// The meta image: each tile's group in its pixel's red (high byte) and green.
    fn meta_pixels(&self) -> Vec<u32> {
        self.of_tile.iter().map(|&n| ((n as u32 >> 8) << 16) | ((n as u32 & 255) << 8)).collect()
    }
}

/// The tile, `1 << tile_bits` pixels a side and `tiles_x` to a row, of pixel `p` of an image
/// `width` wide.
fn tile_of(p: usize, width: usize, tile_bits: u32, tiles_x: usize) -> usize {
    ((p / width) >> tile_bits) * tiles_x + ((p % width) >> tile_bits)
}

/// `n·log2(n)` in 1/65536 bits, in integers only (the same on every machine).
fn nlogn(n: u64) -> u64 {
    n * log2(n)
}

/// `log2(n)` in 1/65536 bits from a table: exact for counts below 4096, and for larger ones the
/// table's value at the count's top 12 bits, shifted (within 1/2048 of a bit). The costs that
/// sort tiles and price symbols take thousands of logs a frame; [`log2_q16`] each time was a
/// fixed cost that small frames felt most.
fn log2(n: u64) -> u64 {
    static TABLE: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| (0..4096u64).map(log2_q16).collect());
    if n < 4096 {
        return table[n as usize];
    }
    let shift = 64 - u64::from(n.leading_zeros()) - 12;
    table[(n >> shift) as usize] + (shift << 16)
}

/// `log2(n)` in 1/65536 bits, by repeated squaring.
fn log2_q16(n: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let whole = 63 - u64::from(n.leading_zeros());
    let mut x: u64 = if whole >= 32 { n >> (whole - 32) } else { n << (32 - whole) };
    let mut fraction = 0u64;
    for bit in (0..16).rev() {
        x = ((u128::from(x) * u128::from(x)) >> 32) as u64;
        if x >= 1 << 33 {
            x >>= 1;
            fraction |= 1 << bit;
        }
    }
    whole << 16 | fraction
}

/// Sorts the tiles of a main image into at most [`MAX_GROUPS`] groups of like statistics:
/// Lloyd's rounds on the bits a tile's symbols take under a group's counts (and a few bits for
/// each symbol the group's code must newly describe). `None` when there are too few tiles.
fn groups(tokens: &[Token], width: usize, height: usize, cache_bits: u32) -> Option<Groups> {
    let tile_bits = 3;
    let (tiles_x, tiles_y) = (width.div_ceil(1 << tile_bits), height.div_ceil(1 << tile_bits));
    let tiles = tiles_x * tiles_y;
    if tiles < 4 {
        return None;
    }
    let sizes = alphabet_sizes(cache_bits);
    let mut offsets = [0usize; 5];
    for a in 1..5 {
        offsets[a] = offsets[a - 1] + sizes[a - 1];
    }
    let total: usize = sizes.iter().sum();
    // Each tile's symbols, counted: a row of tiles at a time (tokens come in rows of pixels),
    // so that only one row's symbols are held.
    let alphabet = |s: usize| offsets.iter().rposition(|&o| o <= s).unwrap_or(0);
    let mut sparse: Vec<Vec<(u32, u32)>> = vec![Vec::new(); tiles];
    let mut counts: Vec<[u64; 5]> = vec![[0; 5]; tiles];
    let mut dense = vec![0u32; total];
    let mut count = |row: usize, band: &mut [Vec<u32>]| {
        for (tx, list) in band.iter_mut().enumerate() {
            let (mut touched, n) = (Vec::new(), &mut counts[row * tiles_x + tx]);
            for &s in list.iter() {
                let s = s as usize;
                n[alphabet(s)] += 1;
                if dense[s] == 0 {
                    touched.push(s as u32);
                }
                dense[s] += 1;
            }
            sparse[row * tiles_x + tx] = touched.iter().map(|&s| (s, std::mem::take(&mut dense[s as usize]))).collect();
            list.clear();
        }
    };
    let mut band: Vec<Vec<u32>> = vec![Vec::new(); tiles_x];
    let mut row = 0;
    for (t, start) in tokens.iter().zip(starts(tokens)) {
        if (start / width) >> tile_bits != row {
            count(row, &mut band);
            row = (start / width) >> tile_bits;
        }
        symbols(t, |a, s| band[(start % width) >> tile_bits].push((offsets[a] + s) as u32));
    }
    count(row, &mut band);
    let used: Vec<usize> = (0..tiles).filter(|&t| !sparse[t].is_empty()).collect();
    if used.len() < 4 {
        return None;
    }
    // Seeds: tiles spread over the bits per symbol they need alone.
    let alone = |t: usize| -> u64 {
        let whole: u64 = counts[t].iter().map(|&n| nlogn(n)).sum();
        whole.saturating_sub(sparse[t].iter().map(|&(_, c)| nlogn(c.into())).sum())
            / counts[t].iter().sum::<u64>().max(1)
    };
    let mut order = used.clone();
    order.sort_by_key(|&t| (alone(t), t));
    let k = MAX_GROUPS.min(order.len());
    let mut hist = vec![vec![0u64; total]; k];
    let mut totals = vec![[0u64; 5]; k];
    for g in 0..k {
        let t = order[g * (order.len() - 1) / (k - 1)];
        for &(s, c) in &sparse[t] {
            hist[g][s as usize] += u64::from(c);
        }
        totals[g] = counts[t];
    }
    let mut of_tile = vec![0usize; tiles];
    // A symbol's bits in a group: log2 of the group's count in its alphabet over the symbol's
    // (a symbol the group has not seen: its alphabet's whole log, and 5 bits to describe it).
    let mut bits = vec![0u64; k * total];
    for _ in 0..ROUNDS {
        for g in 0..k {
            let whole = totals[g].map(|n| log2(n + 1));
            for (s, b) in bits[g * total..(g + 1) * total].iter_mut().enumerate() {
                let n = hist[g][s];
                *b = whole[alphabet(s)] + if n == 0 { 5 << 16 } else { 0 } - log2(n.max(1)).min(whole[alphabet(s)]);
            }
        }
        for &t in &used {
            let mut best = (u64::MAX, 0);
            for g in 0..k {
                let bits = &bits[g * total..(g + 1) * total];
                let cost: u64 = sparse[t].iter().map(|&(s, c)| u64::from(c) * bits[s as usize]).sum();
                if cost < best.0 {
                    best = (cost, g);
                }
            }
            of_tile[t] = best.1;
        }
        hist.iter_mut().for_each(|h| h.iter_mut().for_each(|n| *n = 0));
        totals.iter_mut().for_each(|n| *n = [0; 5]);
        for &t in &used {
            let g = of_tile[t];
            for &(s, c) in &sparse[t] {
                hist[g][s as usize] += u64::from(c);
            }
            for a in 0..5 {
                totals[g][a] += counts[t][a];
            }
        }
    }
    // The groups in use, numbered in order of first use.
    let mut number = vec![usize::MAX; k];
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

fn channel(p: u32, shift: u32) -> i32 {
    (p >> shift & 255) as i32
}

fn average(a: u32, b: u32) -> u32 {
    (((a ^ b) & 0xfefe_fefe) >> 1) + (a & b)
}

/// The number of predictor modes.
const MODES: usize = 14;

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
fn predict(mode: u32, l: u32, t: u32, tl: u32, tr: u32) -> u32 {
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
        _ => predictions(l, t, tl, tr)[mode as usize],
    }
}

/// Channel-wise `a - b`, each modulo 256: the four bytes at once, each borrow kept from the
/// byte above by subtracting with its top bit set and putting that bit right after.
fn subtract(a: u32, b: u32) -> u32 {
    const TOP: u32 = 0x8080_8080;
    ((a | TOP).wrapping_sub(b & !TOP)) ^ ((a ^ !b) & TOP)
}

const TILE_BITS: u32 = 3;

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
struct Predictable {
    argb: Vec<u32>,
    totals: Vec<[u64; MODES]>,
}

impl Predictable {
    fn new(pixels: &[u32], width: usize, height: usize) -> Predictable {
        let argb: Vec<u32> = pixels.iter().map(|&p| subtract_green(p)).collect();
        let totals = mode_costs(&argb, width, height);
        Predictable { argb, totals }
    }

    /// The residual sizes of each tile's best mode (in 1/64 bits): a guess at the coded size
    /// without parsing or coding.
    fn size(&self) -> u64 {
        self.totals.iter().map(|t| t.iter().copied().min().unwrap_or(0)).sum()
    }
}

/// Encodes whichever of `versions`, ARGB pictures that show alike (`width` × `height`), looks
/// smaller by its predictors' residuals (the sizes under each tile's best mode), as [`encode`]
/// does. Ranking them so costs about a tenth of an encode, and the one kept is not weighed again.
pub fn encode_smaller(versions: &[&[u32]], width: usize, height: usize, alpha: bool) -> Vec<u8> {
    let mut best: Option<(usize, Predictable)> = None;
    for (k, pixels) in versions.iter().enumerate() {
        let this = Predictable::new(pixels, width, height);
        if best.as_ref().is_none_or(|(_, b)| this.size() < b.size()) {
            best = Some((k, this));
        }
    }
    let Some((k, predictable)) = best else { return Vec::new() };
    encode_predictable(versions[k], predictable, width, height, alpha)
}

/// Encodes ARGB `pixels` (`width` × `height`, at most 16384 a side) as a VP8L bitstream;
/// `alpha` says whether any is not opaque. An image of at most 16 colours is coded through a
/// colour table, its indices packed several to a pixel; any other with subtract-green and
/// predictors, with subtract-green alone, and (up to 256 colours) through the table, the way of
/// fewest bits (parsed greedily, its tiles sorted into groups of codes if that is smaller) kept,
/// then parsed again for fewest bits and grouped again.
pub fn encode(pixels: &[u32], width: usize, height: usize, alpha: bool) -> Vec<u8> {
    encode_predictable(pixels, Predictable::new(pixels, width, height), width, height, alpha)
}

/// [`encode`], with `pixels`' predictor residuals weighed already.
fn encode_predictable(pixels: &[u32], predictable: Predictable, width: usize, height: usize, alpha: bool) -> Vec<u8> {
    let table = colour_table(pixels);
    if let Some(table) = table.as_ref().filter(|t| t.len() <= 16) {
        let way = indexed_way(pixels, width, height, alpha, table).cheapest();
        return way.bytes(&way.grouped(way.single()));
    }
    let mut ways = vec![predicted_way(predictable, width, height, alpha), green_way(pixels, width, height, alpha)];
    if let Some(table) = &table {
        ways.push(indexed_way(pixels, width, height, alpha, table));
    }
    // The way of fewest bits is tried grouped. Grouping can turn the order of ways around (a
    // busy blended frame: subtract-green alone 0.3% larger with one group, 12% smaller
    // grouped): where it pays on the first way, the others within a tenth are tried grouped too.
    let singles: Vec<Coding> = ways.iter().map(Way::single).collect();
    let bits: Vec<u64> = ways.iter().zip(&singles).map(|(way, coding)| way.bits(coding)).collect();
    // Each single coding is moved into its grouped try, at most once.
    let mut singles: Vec<Option<Coding>> = singles.into_iter().map(Some).collect();
    let Some(first) = (0..ways.len()).min_by_key(|&w| bits[w]) else {
        return Vec::new();
    };
    let Some(one) = singles[first].take() else { return Vec::new() };
    let mut best = (first, ways[first].grouped(one));
    if best.1.groups.is_some() {
        for w in (0..ways.len()).filter(|&w| w != first && bits[w] <= bits[first] + bits[first] / 10) {
            let Some(one) = singles[w].take() else { continue };
            let coding = ways[w].grouped(one);
            if ways[w].bits(&coding) < ways[best.0].bits(&best.1) {
                best = (w, coding);
            }
        }
    }
    // The way chosen is parsed again, for fewest bits, with the others gone.
    let chosen = best.0;
    drop((singles, best));
    let way = ways.swap_remove(chosen).cheapest();
    drop(ways);
    way.bytes(&way.grouped(way.single()))
}

/// Codes `pixels` with subtract-green alone: where neighbours predict a pixel poorly (a frame
/// of displaced, lit water), back references and the colour cache do better on the colours
/// themselves than on residuals.
fn green_way(pixels: &[u32], width: usize, height: usize, alpha: bool) -> Way {
    let mut head = header(width, height, alpha);
    head.put(1, 1);
    head.put(2, 2);
    head.put(0, 1);
    let argb: Vec<u32> = pixels.iter().map(|&p| subtract_green(p)).collect();
    Way::new(head, argb, width, CACHE_BITS)
}

/// A pixel with green taken from red and blue (modulo 256).
fn subtract_green(p: u32) -> u32 {
    let g = p >> 8 & 255;
    let r = (p >> 16).wrapping_sub(g) & 255;
    let b = p.wrapping_sub(g) & 255;
    (p & 0xff00_ff00) | r << 16 | b
}

/// The header every image starts with: the signature, size, alpha hint and version 0.
fn header(width: usize, height: usize, alpha: bool) -> Bits {
    let mut bits = Bits::new();
    bits.put(0x2f, 8);
    bits.put(width as u32 - 1, 14);
    bits.put(height as u32 - 1, 14);
    bits.put(u32::from(alpha), 1);
    bits.put(0, 3);
    bits
}

/// The distinct colours of `pixels`, sorted, if there are at most 256.
fn colour_table(pixels: &[u32]) -> Option<Vec<u32>> {
    let mut seen: Vec<u32> = Vec::with_capacity(257);
    let mut last = None;
    for &p in pixels {
        if last == Some(p) {
            continue;
        }
        last = Some(p);
        if let Err(at) = seen.binary_search(&p) {
            if seen.len() == 256 {
                return None;
            }
            seen.insert(at, p);
        }
    }
    Some(seen)
}

/// Codes `pixels` through the colour-indexing transform: the table (each entry as its
/// difference from the one before), then the indices, bundled 8, 4 or 2 to a pixel's green
/// when the table has at most 2, 4 or 16 colours.
fn indexed_way(pixels: &[u32], width: usize, height: usize, alpha: bool, table: &[u32]) -> Way {
    let mut bits = header(width, height, alpha);
    bits.put(1, 1);
    bits.put(3, 2);
    bits.put(table.len() as u32 - 1, 8);
    let deltas: Vec<u32> =
        table.iter().enumerate().map(|(i, &c)| if i == 0 { c } else { subtract(c, table[i - 1]) }).collect();
    write_image(&mut bits, &deltas, table.len());
    // No more transforms.
    bits.put(0, 1);
    let width_bits = match table.len() {
        0..=2 => 3,
        3..=4 => 2,
        5..=16 => 1,
        _ => 0,
    };
    let (per, index_bits) = (1usize << width_bits, 8 >> width_bits);
    let packed_width = width.div_ceil(per);
    let mut packed = Vec::with_capacity(packed_width * height);
    for row in pixels.chunks_exact(width) {
        for group in row.chunks(per) {
            let mut code = 0u32;
            for (k, p) in group.iter().enumerate() {
                let index = table.binary_search(p).unwrap_or(0) as u32;
                code |= index << (k * index_bits);
            }
            packed.push(0xff00_0000 | code << 8);
        }
    }
    // Indices repeat as whole runs, not as scattered colours: no cache.
    Way::new(bits, packed, packed_width, 0)
}

/// Codes `pixels` with subtract-green and a predictor chosen per tile.
fn predicted_way(predictable: Predictable, width: usize, height: usize, alpha: bool) -> Way {
    let Predictable { mut argb, totals } = predictable;
    let mut bits = header(width, height, alpha);
    // Subtract green.
    bits.put(1, 1);
    bits.put(2, 2);
    // The predictor: each tile's mode is the one with the smallest residuals.
    let tile = 1usize << TILE_BITS;
    let tiles_x = width.div_ceil(tile);
    // The first of the cheapest modes.
    let modes: Vec<u32> =
        totals.iter().map(|t| (0..MODES).fold(0, |best, m| if t[m] < t[best] { m } else { best }) as u32).collect();
    // A transparent pixel shows nothing, so its colour is the prediction's: its residual is
    // zero but for alpha. Later pixels are predicted from it as the decoder rebuilds it.
    let mut residuals = Vec::with_capacity(argb.len());
    for y in 0..height {
        for x in 0..width {
            let i = y * width + x;
            let prediction = match (x, y) {
                (0, 0) => 0xff00_0000,
                (_, 0) => argb[i - 1],
                (0, _) => argb[i - width],
                _ => {
                    // The top-right of the last column is the row's first pixel, as the
                    // format has it: the pixel after the top one in memory.
                    let (l, t, tl, tr) = (argb[i - 1], argb[i - width], argb[i - width - 1], argb[i - width + 1]);
                    predict(modes[(y >> TILE_BITS) * tiles_x + (x >> TILE_BITS)], l, t, tl, tr)
                }
            };
            if argb[i] >> 24 == 0 {
                argb[i] = prediction & 0x00ff_ffff;
            }
            residuals.push(subtract(argb[i], prediction));
        }
    }
    bits.put(1, 1);
    bits.put(0, 2);
    bits.put(TILE_BITS - 2, 3);
    let mode_image: Vec<u32> = modes.iter().map(|&m| 0xff00_0000 | m << 8).collect();
    write_image(&mut bits, &mode_image, tiles_x);
    // No more transforms.
    bits.put(0, 1);
    Way::new(bits, residuals, width, CACHE_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(data: &[u8], width: usize, height: usize) -> Vec<u8> {
        let rgba = decode_rgba(data, width, height);
        rgba.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect()
    }

    /// A still VP8L bitstream decoded by image-webp, as RGBA.
    fn decode_rgba(data: &[u8], width: usize, height: usize) -> Vec<u8> {
        let mut file = b"RIFF\0\0\0\0WEBPVP8L".to_vec();
        file.extend((data.len() as u32).to_le_bytes());
        file.extend_from_slice(data);
        if data.len() % 2 == 1 {
            file.push(0);
        }
        let size = (file.len() - 8) as u32;
        file[4..8].copy_from_slice(&size.to_le_bytes());
        let mut decoder = image_webp::WebPDecoder::new(std::io::Cursor::new(file)).unwrap();
        assert_eq!(decoder.dimensions(), (width as u32, height as u32));
        let mut out = vec![0; decoder.output_buffer_size().unwrap()];
        decoder.read_image(&mut out).unwrap_or_else(|e| panic!("{width}×{height}: {e}"));
        if decoder.has_alpha() { out } else { out.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect() }
    }

    #[test]
    fn prefix_values_match_the_format() {
        // 1..=4 are codes 0..=3; 5 and 6 are code 4 with one extra bit; 7, 8 code 5.
        assert_eq!(prefix(1), (0, 0, 0));
        assert_eq!(prefix(4), (3, 0, 0));
        assert_eq!(prefix(5), (4, 0, 1));
        assert_eq!(prefix(6), (4, 1, 1));
        assert_eq!(prefix(7), (5, 0, 1));
        assert_eq!(prefix(9), (6, 0, 2));
        assert_eq!(prefix(4096), (23, 1023, 10));
    }

    #[test]
    fn images_decode_exactly() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || xorshift(&mut state);
        for (w, h, kind) in [
            (1, 1, 0),
            (2, 1, 1),
            (1, 5, 1),
            (17, 3, 1),
            (64, 48, 2),
            (97, 33, 3),
            (200, 120, 1),
            (33, 70, 0),
            (31, 9, 4),
            (13, 17, 5),
            (61, 40, 6),
        ] {
            let pixels: Vec<[u8; 3]> = (0..w * h)
                .map(|i| match kind {
                    // One colour.
                    0 => [10, 200, 30],
                    // Noise.
                    1 => {
                        let v = next();
                        [v as u8, (v >> 8) as u8, (v >> 16) as u8]
                    }
                    // A gradient with stripes (copies, cache hits).
                    2 => [(i % w) as u8 * 3, (i / w) as u8, ((i / 7) % 5) as u8 * 40],
                    // A few colours in blocks.
                    3 => [[0, 0, 0], [255, 0, 0], [0, 255, 0], [7, 7, 7]][(i % w / 5 + i / w / 3) % 4],
                    // Two colours; eleven; a hundred (a colour table of each bundling).
                    4 => [[9, 9, 9], [250, 1, 2]][(i * 7 / 3) % 2],
                    5 => [(i % 11) as u8 * 20, 3, 4],
                    _ => [(i % 100) as u8, (i % 100) as u8 / 2, 77],
                })
                .collect();
            let argb: Vec<u32> = pixels.iter().map(|&p| opaque(p)).collect();
            let data = encode(&argb, w, h, false);
            assert_eq!(decode(&data, w, h), pixels.as_flattened(), "{w}×{h} kind {kind}");
            // With transparent pixels among them (every third), alpha and all.
            let holed: Vec<u32> = argb.iter().enumerate().map(|(i, &p)| if i % 3 == 1 { 0 } else { p }).collect();
            // A transparent pixel's colour is the encoder's to choose: only its alpha counts.
            let rgba = decode_rgba(&encode(&holed, w, h, true), w, h);
            let seen: Vec<u32> = rgba
                .chunks_exact(4)
                .map(|c| if c[3] == 0 { 0 } else { u32::from_be_bytes([c[3], c[0], c[1], c[2]]) })
                .collect();
            assert_eq!(seen, holed, "{w}×{h} kind {kind}, with alpha");
        }
    }

    #[test]
    fn tiles_of_unlike_statistics_share_codes_in_groups() {
        // Left half: noise in dark reds; right half: noise in light blues. One code for both
        // halves wastes a bit or so a channel; a group each saves it (colours as they are, no
        // prediction, which would make the halves alike).
        let (w, h) = (320, 192);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let pixels: Vec<[u8; 3]> = (0..w * h)
            .map(|i| {
                let v = (xorshift(&mut state) >> 20) as u8 & 63;
                if i % w < w / 2 { [v, v / 4, 0] } else { [128, 192 + v / 2, 192 + v] }
            })
            .collect();
        let argb: Vec<u32> = pixels.iter().map(|&p| opaque(p)).collect();
        let way = green_way(&argb, w, h, false);
        let (one, several) = (way.single(), way.grouped(way.single()));
        let (single, grouped) = (way.bytes(&one), way.bytes(&several));
        assert!(
            grouped.len() * 100 < single.len() * 97,
            "grouped {} against one group {}",
            grouped.len(),
            single.len()
        );
        assert_eq!(decode(&grouped, w, h), pixels.as_flattened());
        assert_eq!(decode(&encode(&argb, w, h, false), w, h), pixels.as_flattened());
        // The sizes `encode` chooses by are the sizes written.
        assert_eq!(way.bits(&one).div_ceil(8), single.len() as u64);
        assert_eq!(way.bits(&several).div_ceil(8), grouped.len() as u64);
    }

    #[test]
    fn the_cheapest_parse_prefers_near_distances_and_decodes_exactly() {
        // A checkerboard of seven colours, bent here and there: it repeats at many distances,
        // and the longest match is often at one whose code costs far more than a short code's.
        let (w, h) = (200, 150);
        let colours =
            [[20, 60, 90], [200, 180, 40], [240, 240, 240], [10, 10, 10], [90, 30, 30], [30, 90, 30], [60, 60, 160]];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let pixels: Vec<[u8; 3]> = (0..w * h)
            .map(|i| {
                let noise = xorshift(&mut state);
                let (x, y) = (i % w, i / w);
                let bend = if (x / 23 + y / 17) % 3 == 0 { (noise >> 40) as usize % 3 } else { 0 };
                colours[((x + bend) / 6 + y / 6) % 2 * 3 + (x / 40 + y / 50) % 3 + usize::from(bend == 2)]
            })
            .collect();
        let argb: Vec<u32> = pixels.iter().map(|&p| opaque(p)).collect();
        let table = colour_table(&argb).unwrap();
        let greedy = indexed_way(&argb, w, h, false, &table);
        let cheapest = indexed_way(&argb, w, h, false, &table).cheapest();
        let (g, c) = (greedy.bits(&greedy.single()), cheapest.bits(&cheapest.single()));
        assert!(c * 100 < g * 97, "cheapest {c} bits against greedy {g}");
        assert_eq!(decode(&cheapest.bytes(&cheapest.single()), w, h), pixels.as_flattened());
        assert_eq!(decode(&encode(&argb, w, h, false), w, h), pixels.as_flattened());
    }

    /// The next number of a xorshift sequence: noise that is the same on every machine.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    fn opaque([r, g, b]: [u8; 3]) -> u32 {
        0xff00_0000 | u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b)
    }
}
