//! PNG's row filters (the PNG specification, §9) and zlib streams made by libdeflate, for the
//! frames an APNG compresses at the `fast` and `max` efforts (the default's go through the png
//! crate, as they always have). A filtered image is each row's filter type byte, then the row
//! as that filter leaves it; its zlib stream is what a frame's `IDAT` or `fdAT` carries.

/// How each row is filtered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Every row by the one filter of this type (0 none, 1 sub, 2 up, 3 average, 4 Paeth).
    Fixed(u8),
    /// Each row by the filter whose bytes, read as signed, have the smallest sum of magnitudes
    /// (the usual adaptive heuristic, PNG's "minimum sum of absolute differences"); the first
    /// such filter on a tie.
    MinSum,
}

impl Rows {
    /// Every way the rows can be filtered, each fixed filter then the adaptive choice.
    pub const ALL: [Rows; 6] =
        [Rows::Fixed(0), Rows::Fixed(1), Rows::Fixed(2), Rows::Fixed(3), Rows::Fixed(4), Rows::MinSum];
}

/// Paeth's predictor of a byte from its left (`a`), upper (`b`) and upper-left (`c`) neighbours.
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let (ia, ib, ic) = (i16::from(a), i16::from(b), i16::from(c));
    let p = ia + ib - ic;
    let (pa, pb, pc) = ((p - ia).abs(), (p - ib).abs(), (p - ic).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// Appends `row` filtered by filter `kind` against the row above, `up` (zeros for the first),
/// with `bpp` bytes a pixel, after its type byte.
fn filter_row(kind: u8, row: &[u8], up: &[u8], bpp: usize, out: &mut Vec<u8>) {
    out.push(kind);
    let left = |i: usize| if i >= bpp { row[i - bpp] } else { 0 };
    let up_left = |i: usize| if i >= bpp { up[i - bpp] } else { 0 };
    match kind {
        0 => out.extend_from_slice(row),
        1 => out.extend((0..row.len()).map(|i| row[i].wrapping_sub(left(i)))),
        2 => out.extend(row.iter().zip(up).map(|(&x, &b)| x.wrapping_sub(b))),
        3 => {
            out.extend((0..row.len()).map(|i| row[i].wrapping_sub(((u16::from(left(i)) + u16::from(up[i])) / 2) as u8)))
        }
        _ => out.extend((0..row.len()).map(|i| row[i].wrapping_sub(paeth(left(i), up[i], up_left(i))))),
    }
}

/// The sum of a filtered row's bytes read as signed, by magnitude (its type byte skipped).
fn magnitude(filtered: &[u8]) -> u64 {
    filtered[1..].iter().map(|&b| u64::from((b as i8).unsigned_abs())).sum()
}

/// `raw` (rows of `stride` bytes, `bpp` a pixel) filtered as `rows` says, into `out` (cleared).
pub fn filter(raw: &[u8], stride: usize, bpp: usize, rows: Rows, out: &mut Vec<u8>) {
    out.clear();
    if stride == 0 {
        return;
    }
    out.reserve(raw.len() + raw.len() / stride);
    let zeros = vec![0u8; stride];
    let mut trial = Vec::with_capacity(stride + 1);
    for (y, row) in raw.chunks_exact(stride).enumerate() {
        let up = if y == 0 { &zeros[..] } else { &raw[(y - 1) * stride..y * stride] };
        match rows {
            Rows::Fixed(kind) => filter_row(kind, row, up, bpp, out),
            Rows::MinSum => {
                let mut best = (u64::MAX, 0);
                for kind in 0..5 {
                    trial.clear();
                    filter_row(kind, row, up, bpp, &mut trial);
                    let sum = magnitude(&trial);
                    if sum < best.0 {
                        best = (sum, kind);
                    }
                }
                filter_row(best.1, row, up, bpp, out);
            }
        }
    }
}

/// libdeflate's level the `max` effort ranks the ways of filtering an image at (quick, and ranks
/// them as its slowest level does, but for near ties).
const RANKING_LEVEL: i32 = 6;

/// libdeflate's level for the `max` effort's one stream: its slowest and smallest.
const MAX_LEVEL: i32 = 12;

/// The `max` effort's image data for `raw` (rows of `stride` bytes, `bpp` a pixel): every way of
/// filtering (each filter throughout, and the adaptive choice) ranked by its stream at a quick
/// level, the smallest then compressed at libdeflate's slowest level (the first of equals).
pub fn smallest(raw: &[u8], stride: usize, bpp: usize) -> Vec<u8> {
    let (mut best, mut trial) = (Vec::new(), Vec::new());
    let mut least = usize::MAX;
    for rows in Rows::ALL {
        filter(raw, stride, bpp, rows, &mut trial);
        let size = zlib(&trial, RANKING_LEVEL).len();
        if size < least {
            least = size;
            std::mem::swap(&mut best, &mut trial);
        }
    }
    zlib(&best, MAX_LEVEL)
}

/// The zlib stream of `data` at libdeflate's compression `level` (1–12).
#[cfg(feature = "native")]
pub fn zlib(data: &[u8], level: i32) -> Vec<u8> {
    let level = libdeflater::CompressionLvl::new(level).unwrap_or_default();
    let mut compressor = libdeflater::Compressor::new(level);
    let mut out = vec![0u8; compressor.zlib_compress_bound(data.len())];
    // The bound is libdeflate's own: a stream never outgrows it.
    let written = compressor.zlib_compress(data, &mut out).unwrap_or(0);
    out.truncate(written);
    out
}

/// The zlib stream of `data`, stored (deflate's uncompressed blocks), in a build without
/// libdeflate: valid for every reader, and never written by the program's own build, which has
/// it (`native`).
#[cfg(not(feature = "native"))]
pub fn zlib(data: &[u8], _level: i32) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let mut blocks = data.chunks(65535).peekable();
    if blocks.peek().is_none() {
        out.extend([1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let len = block.len() as u16;
        out.push(u8::from(blocks.peek().is_none()));
        out.extend(len.to_le_bytes());
        out.extend((!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    // Adler-32 of the data, big-endian.
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend((b << 16 | a).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inverse of each filter, as a decoder applies it (written from the specification apart
    /// from the filters above).
    fn unfilter(data: &[u8], stride: usize, bpp: usize) -> Vec<u8> {
        let mut out: Vec<u8> = Vec::new();
        for (y, line) in data.chunks_exact(stride + 1).enumerate() {
            let start = out.len();
            for i in 0..stride {
                let a = if i >= bpp { out[start + i - bpp] } else { 0 };
                let b = if y > 0 { out[start - stride + i] } else { 0 };
                let c = if y > 0 && i >= bpp { out[start - stride + i - bpp] } else { 0 };
                let predicted = match line[0] {
                    0 => 0,
                    1 => a,
                    2 => b,
                    3 => ((u16::from(a) + u16::from(b)) >> 1) as u8,
                    _ => {
                        let p = i32::from(a) + i32::from(b) - i32::from(c);
                        let (pa, pb, pc) =
                            ((p - i32::from(a)).abs(), (p - i32::from(b)).abs(), (p - i32::from(c)).abs());
                        if pa <= pb && pa <= pc {
                            a
                        } else if pb <= pc {
                            b
                        } else {
                            c
                        }
                    }
                };
                out.push(line[1 + i].wrapping_add(predicted));
            }
        }
        out
    }

    #[test]
    fn every_way_of_filtering_undoes_exactly() {
        let (stride, bpp) = (3 * 7, 3);
        let mut seed = 12345u32;
        let raw: Vec<u8> = (0..stride * 5)
            .map(|i| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                // Smooth with noise, so that every filter wins some row.
                (i as u32 * 7 + (seed >> 28)) as u8
            })
            .collect();
        let mut out = Vec::new();
        for rows in Rows::ALL {
            filter(&raw, stride, bpp, rows, &mut out);
            assert_eq!(out.len(), raw.len() + 5);
            assert_eq!(unfilter(&out, stride, bpp), raw, "{rows:?}");
        }
    }

    #[test]
    fn the_adaptive_choice_takes_the_smallest_sum_per_row() {
        // A ramp: sub leaves 1s (sum 1 a byte past the first pixel) where none leaves the ramp.
        let raw: Vec<u8> = (0..12).collect();
        let mut out = Vec::new();
        filter(&raw, 12, 1, Rows::MinSum, &mut out);
        assert_eq!(out[0], 1);
        // Two equal rows: up leaves zeros.
        let raw = [[5u8, 90, 17, 200]; 2].concat();
        filter(&raw, 4, 1, Rows::MinSum, &mut out);
        assert_eq!(&out[5..], [2, 0, 0, 0, 0]);
    }

    #[test]
    fn zlib_streams_inflate_to_their_data() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * i % 251) as u8).collect();
        for level in [1, 6, 12] {
            let stream = zlib(&data, level);
            let mut decompressor = libdeflater::Decompressor::new();
            let mut back = vec![0u8; data.len()];
            assert_eq!(decompressor.zlib_decompress(&stream, &mut back).unwrap(), data.len());
            assert_eq!(back, data);
        }
    }
}
