//! A lossless WebP (VP8L) encoder for our frames: subtract green, a predictor chosen per 16×16
//! tile, back references found through hash chains, a colour cache, and canonical prefix codes
//! limited to 15 bits. Written from the format's description (RFC 9649); the pixels are opaque
//! RGB, so alpha is always 255.

mod prefix;

use prefix::{Bits, prefix, write_code};

/// One symbol of the pixel stream.
#[derive(Clone, Copy)]
enum Token {
    Literal(u32),
    Cache(u32),
    Copy { length: u32, code: u32 },
}

const CACHE_BITS: u32 = 10;
const MIN_MATCH: usize = 4;
const MAX_MATCH: usize = 4096;
const CHAIN: usize = 24;
const WINDOW: usize = 1 << 18;

fn cache_slot(argb: u32, bits: u32) -> usize {
    (argb.wrapping_mul(0x1e35_a7bd) >> (32 - bits)) as usize
}

/// The distance code of a back reference `distance` pixels back in an image `width` wide:
/// the short codes for the pixel above, left, above-left and above-right, else distance + 120.
fn distance_code(distance: usize, width: usize) -> u32 {
    match distance {
        d if d == width => 1,
        1 => 2,
        d if d == width + 1 => 3,
        d if width > 1 && d == width - 1 => 4,
        d => d as u32 + 120,
    }
}

/// The symbols for `pixels` (`width` wide): back references where at least [`MIN_MATCH`]
/// pixels repeat, else literals (which [`cached`] turns into colour-cache hits).
fn tokens(pixels: &[u32], width: usize) -> Vec<Token> {
    let cache_bits = 0;
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
            out.push(Token::Copy { length: best.0 as u32, code: distance_code(best.1, width) });
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

/// `tokens` (of `pixels`) with each literal found in a colour cache of `cache_bits` (0: none)
/// turned into a hit; the cache learns every pixel, copied ones included.
fn cached(tokens: &[Token], pixels: &[u32], cache_bits: u32) -> Vec<Token> {
    if cache_bits == 0 {
        return tokens.to_vec();
    }
    let mut cache = vec![0u32; 1 << cache_bits];
    let mut at = 0;
    let mut out = Vec::with_capacity(tokens.len());
    for &t in tokens {
        match t {
            Token::Literal(p) => {
                let slot = cache_slot(p, cache_bits);
                out.push(if cache[slot] == p { Token::Cache(slot as u32) } else { t });
                cache[slot] = p;
                at += 1;
            }
            Token::Copy { length, .. } => {
                for &p in &pixels[at..at + length as usize] {
                    cache[cache_slot(p, cache_bits)] = p;
                }
                out.push(t);
                at += length as usize;
            }
            Token::Cache(_) => unreachable!("tokens come without cache hits"),
        }
    }
    out
}

/// The five histograms of a symbol stream with a colour cache of `cache_bits`: green (with
/// lengths and cache slots), red, blue, alpha, distance.
fn histograms(tokens: &[Token], cache_bits: u32) -> [Vec<u32>; 5] {
    let cache_size = if cache_bits > 0 { 1usize << cache_bits } else { 0 };
    let mut green = vec![0u32; 256 + 24 + cache_size];
    let (mut red, mut blue, mut alpha, mut distance) =
        (vec![0u32; 256], vec![0u32; 256], vec![0u32; 256], vec![0u32; 40]);
    for t in tokens {
        match *t {
            Token::Literal(p) => {
                green[(p >> 8 & 255) as usize] += 1;
                red[(p >> 16 & 255) as usize] += 1;
                blue[(p & 255) as usize] += 1;
                alpha[(p >> 24) as usize] += 1;
            }
            Token::Cache(slot) => green[256 + 24 + slot as usize] += 1,
            Token::Copy { length, code } => {
                green[256 + prefix(length).0] += 1;
                distance[prefix(code).0] += 1;
            }
        }
    }
    [green, red, blue, alpha, distance]
}

/// A coding of an image: its size in bits, cache bits, symbols and histograms.
type Choice = (u64, u32, Vec<Token>, [Vec<u32>; 5]);

/// Colour cache sizes tried for a main image (0: none); the one that codes smallest is kept.
const CACHE_CHOICES: [u32; 1] = [CACHE_BITS];

/// Writes an entropy-coded image: its colour cache flag (and, for the main image, no meta
/// codes), its five prefix codes, and its symbols. A main image takes the colour cache of
/// [`CACHE_CHOICES`] whose codes and symbols come to the fewest bits.
fn write_image(bits: &mut Bits, pixels: &[u32], width: usize, main: bool) {
    let plain = tokens(pixels, width);
    let choices: &[u32] = if main { &CACHE_CHOICES } else { &[0] };
    let mut best: Option<Choice> = None;
    for &cache_bits in choices {
        let tokens = cached(&plain, pixels, cache_bits);
        let freqs = histograms(&tokens, cache_bits);
        // The exact size: the codes as written, and each symbol's length (extra bits of lengths
        // and distances are the same whatever the cache).
        let mut scratch = Bits::new();
        let codes = freqs.each_ref().map(|f| write_code(&mut scratch, f));
        let mut size = scratch.len();
        for (code, f) in codes.iter().zip(&freqs) {
            size += f.iter().enumerate().map(|(s, &n)| u64::from(n) * code.length(s)).sum::<u64>();
        }
        if best.as_ref().is_none_or(|b| size < b.0) {
            best = Some((size, cache_bits, tokens, freqs));
        }
    }
    let Some((_, cache_bits, tokens, [green, red, blue, alpha, distance])) = best else { return };
    if cache_bits > 0 {
        bits.put(1, 1);
        bits.put(cache_bits, 4);
    } else {
        bits.put(0, 1);
    }
    if main {
        bits.put(0, 1);
    }
    let codes = [&green, &red, &blue, &alpha, &distance].map(|f| write_code(bits, f));
    let [green, red, blue, alpha, distance] = &codes;
    for t in tokens {
        match t {
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

fn channel(p: u32, shift: u32) -> i32 {
    (p >> shift & 255) as i32
}

fn average(a: u32, b: u32) -> u32 {
    (((a ^ b) & 0xfefe_fefe) >> 1) + (a & b)
}

/// The prediction of predictor `mode` (of [`MODES`]) from the left, top and top-left pixels.
fn predict(mode: u32, l: u32, t: u32, tl: u32) -> u32 {
    match mode {
        1 => l,
        2 => t,
        7 => average(l, t),
        11 => {
            let distance = |a: u32, b: u32| (0..4).map(|c| (channel(a, 8 * c) - channel(b, 8 * c)).abs()).sum::<i32>();
            // Left when the top pixel is further from the gradient's estimate than the left.
            if distance(t, tl) < distance(l, tl) { l } else { t }
        }
        12 => (0..4)
            .map(|c| ((channel(l, 8 * c) + channel(t, 8 * c) - channel(tl, 8 * c)).clamp(0, 255) as u32) << (8 * c))
            .sum(),
        _ => 0xff00_0000,
    }
}

/// Channel-wise `a - b`, each modulo 256.
fn subtract(a: u32, b: u32) -> u32 {
    let mut out = 0;
    for c in 0..4 {
        out |= ((a >> (8 * c)).wrapping_sub(b >> (8 * c)) & 255) << (8 * c);
    }
    out
}

/// How large a residual is: each channel's distance from 0, modulo 256.
fn cost(residual: u32) -> u32 {
    (0..4).map(|c| (residual >> (8 * c) & 255).min(256 - (residual >> (8 * c) & 255))).sum()
}

const TILE_BITS: u32 = 4;
/// The predictors tried for each tile: left, top, their mean, select and the clamped gradient
/// (all fourteen gained 1% on a grainy render and lost on a smooth one, for half again the time).
const MODES: [u32; 5] = [1, 2, 7, 11, 12];

/// Encodes ARGB `pixels` (`width` × `height`, at most 16384 a side) as a VP8L bitstream;
/// `alpha` says whether any is not opaque.
pub fn encode(pixels: &[u32], width: usize, height: usize, alpha: bool) -> Vec<u8> {
    let mut bits = Bits::new();
    bits.put(0x2f, 8);
    bits.put(width as u32 - 1, 14);
    bits.put(height as u32 - 1, 14);
    // Whether alpha is used; version 0.
    bits.put(u32::from(alpha), 1);
    bits.put(0, 3);
    // Subtract green.
    let mut argb: Vec<u32> = pixels
        .iter()
        .map(|&p| {
            let g = p >> 8 & 255;
            let r = (p >> 16).wrapping_sub(g) & 255;
            let b = p.wrapping_sub(g) & 255;
            (p & 0xff00_ff00) | r << 16 | b
        })
        .collect();
    bits.put(1, 1);
    bits.put(2, 2);
    // The predictor: each tile's mode is the one with the smallest residuals.
    let tile = 1usize << TILE_BITS;
    let (tiles_x, tiles_y) = (width.div_ceil(tile), height.div_ceil(tile));
    let at = |x: usize, y: usize| argb[y * width + x];
    let neighbours = |x: usize, y: usize| {
        let i = y * width + x;
        (argb[i - 1], argb[i - width], argb[i - width - 1])
    };
    let mut modes = vec![0u32; tiles_x * tiles_y];
    for ty in 0..tiles_y {
        for tx in 0..tiles_x {
            let mut best = (u64::MAX, 1);
            for mode in MODES {
                let mut total = 0u64;
                for y in (ty * tile).max(1)..((ty + 1) * tile).min(height) {
                    for x in (tx * tile).max(1)..((tx + 1) * tile).min(width) {
                        // A transparent pixel's colour is free (below): it costs nothing.
                        if at(x, y) >> 24 == 0 {
                            continue;
                        }
                        let (l, t, tl) = neighbours(x, y);
                        total += u64::from(cost(subtract(at(x, y), predict(mode, l, t, tl))));
                    }
                }
                if total < best.0 {
                    best = (total, mode);
                }
            }
            modes[ty * tiles_x + tx] = best.1;
        }
    }
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
                    let (l, t, tl) = (argb[i - 1], argb[i - width], argb[i - width - 1]);
                    predict(modes[(y >> TILE_BITS) * tiles_x + (x >> TILE_BITS)], l, t, tl)
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
    write_image(&mut bits, &mode_image, tiles_x, false);
    // No more transforms.
    bits.put(0, 1);
    write_image(&mut bits, &residuals, width, true);
    bits.finish()
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
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (w, h, kind) in
            [(1, 1, 0), (2, 1, 1), (1, 5, 1), (17, 3, 1), (64, 48, 2), (97, 33, 3), (200, 120, 1), (33, 70, 0)]
        {
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
                    _ => [[0, 0, 0], [255, 0, 0], [0, 255, 0], [7, 7, 7]][(i % w / 5 + i / w / 3) % 4],
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

    fn opaque([r, g, b]: [u8; 3]) -> u32 {
        0xff00_0000 | u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b)
    }
}
