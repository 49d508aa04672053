//! The encoder's round trips through image-webp, and the sizes its choices are made by.

use super::prefix::prefix;
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
        // With transparent pixels among them (every third), alpha and all.
        let holed: Vec<u32> = argb.iter().enumerate().map(|(i, &p)| if i % 3 == 1 { 0 } else { p }).collect();
        for (effort, encoder) in EFFORTS {
            let data = encoder(&argb, w, h, false);
            assert_eq!(decode(&data, w, h), pixels.as_flattened(), "{w}×{h} kind {kind}, {effort}");
            // A transparent pixel's colour is the encoder's to choose: only its alpha counts.
            let rgba = decode_rgba(&encoder(&holed, w, h, true), w, h);
            let seen: Vec<u32> = rgba
                .chunks_exact(4)
                .map(|c| if c[3] == 0 { 0 } else { u32::from_be_bytes([c[3], c[0], c[1], c[2]]) })
                .collect();
            assert_eq!(seen, holed, "{w}×{h} kind {kind}, with alpha, {effort}");
        }
    }
}

/// Each effort's encoder, by name.
type Encode = fn(&[u32], usize, usize, bool) -> Vec<u8>;
const EFFORTS: [(&str, Encode); 2] = [("default", encode), ("fast", |p, w, h, a| encode_fast(p.to_vec(), w, h, a))];

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
    let way = green_way(&argb, w, h, false).parsed();
    let (one, several) = (way.single(), way.grouped(way.single()));
    let (single, grouped) = (way.bytes(&one), way.bytes(&several));
    assert!(grouped.len() * 100 < single.len() * 97, "grouped {} against one group {}", grouped.len(), single.len());
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
    let greedy = indexed_way(&argb, w, h, false, &table).parsed();
    let cheapest = indexed_way(&argb, w, h, false, &table).parsed().cheapest();
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
