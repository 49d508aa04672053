//! How an entropy-coded image is coded: its symbols parsed once ([`Image`]), their codes in one
//! group or in groups of tiles ([`Coding`], with the bits each takes, so that ways are compared
//! without writing them), and the writing of the codes and symbols.

use super::groups::{Groups, groups};
use super::prefix::{Bits, Code, prefix, write_code};
use super::tokens::{Histograms, Token, alphabet_sizes, cache, histograms, quick_tokens, starts, symbols, tokens};

/// Writes an entropy-coded sub-image (a transform's data): no colour cache, one group of codes.
pub(super) fn write_image(bits: &mut Bits, pixels: &[u32], width: usize) {
    let image = Image::new(pixels, width, 0, false);
    write_tokens(bits, &image, &Coding::single(&image));
}

/// An entropy-coded image (a way's main image, or a transform's sub-image), parsed into
/// symbols once.
pub(super) struct Image {
    /// The symbols.
    pub(super) tokens: Vec<Token>,
    /// The image's width in pixels.
    pub(super) width: usize,
    /// Its height.
    pub(super) height: usize,
    /// The colour cache's size in bits (0: none).
    pub(super) cache_bits: u32,
    /// Whether it is a way's main image, which may group its codes.
    pub(super) main: bool,
}

impl Image {
    /// `pixels` parsed greedily with a colour cache of `cache_bits` (0: none); `main` says it is
    /// a way's main image, which may group its codes.
    pub(super) fn new(pixels: &[u32], width: usize, cache_bits: u32, main: bool) -> Image {
        let mut tokens = tokens(pixels, width);
        cache(&mut tokens, pixels, cache_bits);
        Image { tokens, width, height: pixels.len() / width.max(1), cache_bits, main }
    }
}

impl Image {
    /// `pixels` parsed quickly (see [`quick_tokens`]), as a main image with a colour cache of
    /// `cache_bits`, for the `fast` effort, with its coding in one group of codes (whose bits are
    /// not counted: there is nothing to compare it with).
    pub(super) fn quick(pixels: &[u32], width: usize, cache_bits: u32) -> (Image, Coding) {
        let (tokens, counts) = quick_tokens(pixels, width, cache_bits);
        let image = Image { tokens, width, height: pixels.len() / width.max(1), cache_bits, main: true };
        let coding = Coding { groups: None, of: Vec::new(), histograms: vec![counts], bits: 0, fixed: 0 };
        (image, coding)
    }
}

/// How a main image's symbols are coded, and the bits that takes.
pub(super) struct Coding {
    /// The tiles' groups (none: one group of codes for the whole image).
    pub(super) groups: Option<Groups>,
    /// Each symbol's group (none: all in group 0).
    pub(super) of: Vec<u8>,
    /// Each group's counts.
    pub(super) histograms: Vec<Histograms>,
    /// The image's length in bits: cache and meta flags, meta image, codes, symbols and extra bits.
    pub(super) bits: u64,
    /// Of those, the flags and the extra bits of lengths and distances, the same however the
    /// symbols are grouped.
    pub(super) fixed: u64,
}

impl Coding {
    /// `image` with one group of codes.
    pub(super) fn single(image: &Image) -> Coding {
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
    pub(super) fn grouped(image: &Image, one: Coding) -> Coding {
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
pub(super) fn write_tokens(bits: &mut Bits, image: &Image, coding: &Coding) {
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
                // Green and red, then blue and alpha, together: at most 30 bits each pair.
                let (g, gl) = green.get((p >> 8 & 255) as usize);
                let (r, rl) = red.get((p >> 16 & 255) as usize);
                bits.put(g | r << gl, gl + rl);
                let (b, bl) = blue.get((p & 255) as usize);
                let (a, al) = alpha.get((p >> 24) as usize);
                bits.put(b | a << bl, bl + al);
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
