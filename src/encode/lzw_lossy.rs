//! Lossy GIF (`--lossy N`): LZW that takes near matches. At each code the parse looks for the
//! longest string the dictionary holds (walking its tree) whose pixels are each close to the
//! frame's (every channel within `N / 10` of the pixel's palette colour), so strings run longer
//! and the frame takes fewer codes; of strings as long, the one whose squared error is least.
//! The technique gifsicle's `--lossy` made known, written here from its description.
//!
//! Three rules keep it from being seen:
//!
//! - an unchanged pixel (the transparent index, where the frame is a difference) is only ever
//!   the transparent index, which shows what was there: calm water never flickers. (Where the
//!   palette has no room for a transparent index, an unchanged pixel is its own colour, which
//!   puts right a near colour an earlier frame left there, once.)
//! - the error the parse carries is bounded as it runs, per channel, by the sum of its signed
//!   errors from the frame's start (at most `N` either way), so no string can shift a
//!   gradient into a flat streak: errors of one sign soon stop a string, and the next one must
//!   make up for them;
//! - exact values are tried first, so of two strings as long, the exact one is kept.
//!
//! The stream is a standard code stream, exactly as [`super::lzw`] writes one (code size growth,
//! clear when the dictionary is full), so every decoder reads it; only the strings differ.

/// GIF codes are at most 12 bits.
const MAX_CODES: u32 = 4096;

/// Dictionary nodes a longest-match search may visit at one code.
const SEARCH_LIMIT: usize = 384;

/// How a frame's pixels may be coded: each pixel's exact value, and near values for changed
/// pixels. An unchanged pixel (the transparent index) is never anything else: its own colour
/// could differ from what an earlier lossy frame left showing, and would change it.
pub struct Lossy<'a> {
    /// The frame's pixels, palette indices (the transparent index where unchanged).
    pub data: &'a [u8],
    /// The transparent index, if the frame has one.
    pub transparent: Option<u8>,
    /// Without a transparent index, the frame before's pixels at the same places: a pixel equal
    /// to its value there is unchanged, and coded exactly.
    pub before: Option<&'a [u8]>,
    /// The palette's colours, by index (the transparent slot's never shown).
    pub palette: &'a [[u8; 3]],
    /// `--lossy N`.
    pub level: u8,
}

/// The LZW code stream of a frame coded as `lossy` allows (after its code size byte, as
/// [`super::lzw::compress`] makes it).
pub fn compress(lossy: &Lossy<'_>, min_code_size: u8) -> Vec<u8> {
    let (step, sum) = (i32::from(lossy.level) / 10, i32::from(lossy.level));
    let parse = Parse { lossy, near: near_table(lossy.palette, lossy.transparent, step), step, sum };
    let data = lossy.data;
    let m = u32::from(min_code_size);
    let clear = 1u32 << m;
    let end = clear + 1;
    let mut out = vec![min_code_size];
    let mut bits = Bits { out: &mut out, acc: 0, count: 0 };
    let mut trie = Trie { children: vec![Vec::new(); MAX_CODES as usize] };
    let (mut next, mut size) = (clear + 2, m + 1);
    bits.put(clear, size);
    let mut previous: Option<u32> = None;
    let mut i = 0;
    // The signed error, per channel, of every pixel coded so far.
    let mut carried = [0i32; 3];
    while i < data.len() {
        let mut found = parse.longest(&trie, i, None, carried);
        if let Some(p) = previous {
            // The string before, extended by this one's first pixel: the decoder adds it now.
            trie.add(p, found.first, next);
            next += 1;
            if next > 1 << size && size < 12 {
                size += 1;
            }
            if next == MAX_CODES {
                bits.put(clear, size);
                trie.clear();
                next = clear + 2;
                size = m + 1;
            }
            // The string just added may extend this one (or, after a clear, the match was in
            // the dictionary just emptied): looked for again from its first pixel.
            found = parse.longest(&trie, i, Some(found.first), carried);
        }
        bits.put(found.code, size);
        previous = Some(found.code);
        carried = found.error;
        i += found.length;
    }
    bits.put(end, size);
    bits.flush();
    out
}

/// The dictionary as a tree: each code's children, by the value that extends it.
struct Trie {
    children: Vec<Vec<(u8, u16)>>,
}

impl Trie {
    fn add(&mut self, prefix: u32, value: u8, code: u32) {
        self.children[prefix as usize].push((value, code as u16));
    }

    fn clear(&mut self) {
        self.children.iter_mut().for_each(Vec::clear);
    }
}

/// Per palette index, the other indices whose colour is within `step` of it on every channel
/// (the transparent slot never), the closest first (by squared distance, then index).
fn near_table(palette: &[[u8; 3]], transparent: Option<u8>, step: i32) -> Vec<Vec<u8>> {
    (0..palette.len())
        .map(|a| {
            let mut near: Vec<(i32, u8)> = (0..palette.len())
                .filter(|&k| k != a && Some(k as u8) != transparent)
                .filter_map(|k| {
                    let d = [0, 1, 2].map(|c| i32::from(palette[k][c]) - i32::from(palette[a][c]));
                    d.iter().all(|x| x.abs() <= step).then_some((d.iter().map(|x| x * x).sum(), k as u8))
                })
                .collect();
            near.sort_unstable();
            near.into_iter().map(|(_, k)| k).collect()
        })
        .collect()
}

/// A string found: its code, length, first value and the signed error summed at its end.
#[derive(Clone, Copy)]
struct Found {
    code: u32,
    length: usize,
    first: u8,
    error: [i32; 3],
}

/// A frame's parse: what each pixel may be, and how far the parse may stray.
struct Parse<'a> {
    lossy: &'a Lossy<'a>,
    near: Vec<Vec<u8>>,
    /// The most a changed pixel's channel may differ.
    step: i32,
    /// The most the signed error summed over the pixels coded so far may reach on a channel.
    sum: i32,
}

impl Parse<'_> {
    /// The error pixel `i` takes as `v`, if it may be `v`: an unchanged pixel only its own value
    /// (or its colour, for the transparent index), a changed one any colour within `step`.
    fn error(&self, i: usize, v: u8) -> Option<[i32; 3]> {
        let d = self.lossy.data[i];
        if v == d {
            return Some([0; 3]);
        }
        if Some(d) == self.lossy.transparent {
            return None;
        }
        if Some(v) == self.lossy.transparent || self.lossy.before.is_some_and(|b| b[i] == d) {
            return None;
        }
        let (own, other) = (self.lossy.palette[usize::from(d)], self.lossy.palette[usize::from(v)]);
        let e = [0, 1, 2].map(|c| i32::from(other[c]) - i32::from(own[c]));
        e.iter().all(|x| x.abs() <= self.step).then_some(e)
    }

    /// The values a string may start with at `i`: the exact one, then near ones.
    fn starts(&self, i: usize) -> Vec<u8> {
        let d = self.lossy.data[i];
        let mut out = vec![d];
        if Some(d) != self.lossy.transparent && self.lossy.before.is_none_or(|b| b[i] != d) {
            out.extend_from_slice(&self.near[usize::from(d)]);
        }
        out
    }

    /// The longest string at `i` the dictionary holds over the values each pixel may take, the
    /// error summed from `carried` within bounds all along (starting with `start` alone, if
    /// given); of equals, the one whose squared error is least.
    fn longest(&self, trie: &Trie, i: usize, start: Option<u8>, carried: [i32; 3]) -> Found {
        let data = self.lossy.data;
        let within = |e: &[i32; 3]| e.iter().all(|s| s.abs() <= self.sum);
        let add = |a: [i32; 3], b: [i32; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
        let squared = |e: [i32; 3]| e.iter().map(|x| x * x).sum::<i32>();
        let starts = match start {
            Some(v) => vec![v],
            None => self.starts(i),
        };
        let mut best: Option<(Found, i32)> = None;
        let mut visited = 0;
        // Per node: its code, length, summed signed error and summed squared error.
        let mut stack: Vec<(u32, usize, [i32; 3], i32)> = Vec::new();
        for first in starts {
            let e = self.error(i, first).unwrap_or([0; 3]);
            let summed = add(carried, e);
            // The exact value (or the one given) always starts a string; a near one only within
            // bounds.
            if first != data[i] && start.is_none() && !within(&summed) {
                continue;
            }
            stack.clear();
            stack.push((u32::from(first), 1, summed, squared(e)));
            while let Some((code, length, error, cost)) = stack.pop() {
                visited += 1;
                let better = best.is_none_or(|(b, c)| length > b.length || (length == b.length && cost < c));
                if better {
                    best = Some((Found { code, length, first, error }, cost));
                }
                if visited >= SEARCH_LIMIT || i + length >= data.len() {
                    continue;
                }
                for &(v, c) in &trie.children[code as usize] {
                    let Some(e) = self.error(i + length, v) else { continue };
                    let summed = add(error, e);
                    // An exact pixel never adds error; a near one only within bounds.
                    if e != [0; 3] && !within(&summed) {
                        continue;
                    }
                    stack.push((u32::from(c), length + 1, summed, cost + squared(e)));
                }
            }
        }
        best.map_or(Found { code: u32::from(data[i]), length: 1, first: data[i], error: carried }, |(f, _)| f)
    }
}

/// Bits to a byte stream, least significant first.
struct Bits<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    count: u32,
}

impl Bits<'_> {
    fn put(&mut self, code: u32, size: u32) {
        self.acc |= u64::from(code) << self.count;
        self.count += size;
        while self.count >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.count -= 8;
        }
    }

    fn flush(&mut self) {
        if self.count > 0 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.count = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(stream: &[u8], min_code_size: u8) -> Vec<u8> {
        let mut decoder = weezl::decode::Decoder::new(weezl::BitOrder::Lsb, min_code_size);
        decoder.decode(&stream[1..]).expect("a standard LZW stream")
    }

    /// A grey ramp palette of 64 levels, 4 apart, and a noisy ramp picture over it.
    fn ramp() -> (Vec<[u8; 3]>, Vec<u8>) {
        let palette: Vec<[u8; 3]> = (0..64).map(|v| [v * 4, v * 4, v * 4]).collect();
        let mut seed = 7u32;
        let data = (0..4000)
            .map(|i| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                ((i / 100) as u32 % 60 + seed % 3) as u8
            })
            .collect();
        (palette, data)
    }

    #[test]
    fn pixels_decode_near_their_own_and_the_stream_shrinks_with_the_level() {
        let (palette, data) = ramp();
        let exact = super::super::lzw::compress(&data, 6, None);
        let mut sizes = Vec::new();
        for level in [40u8, 80, 200] {
            let lossy = Lossy { data: &data, transparent: None, before: None, palette: &palette, level };
            let stream = compress(&lossy, 6);
            let decoded = decode(&stream, 6);
            assert_eq!(decoded.len(), data.len());
            for (&d, &o) in decoded.iter().zip(&data) {
                let diff = (i32::from(palette[usize::from(d)][0]) - i32::from(palette[usize::from(o)][0])).abs();
                assert!(diff <= i32::from(level) / 10, "level {level}: {d} for {o}");
            }
            sizes.push(stream.len());
        }
        // (A greedy parse need not shrink at every step up.)
        assert!(sizes[0] < exact.len() && sizes[2] < sizes[0], "{sizes:?} against {}", exact.len());
        assert!(sizes[2] < exact.len() * 3 / 4, "{sizes:?} against {}", exact.len());
    }

    #[test]
    fn unchanged_pixels_stay_unchanged_and_errors_do_not_run_one_way() {
        let (palette, data) = ramp();
        // Every fifth pixel unchanged (index 63 is the transparent slot here).
        let data: Vec<u8> = data.iter().enumerate().map(|(i, &d)| if i % 5 == 0 { 63 } else { d.min(62) }).collect();
        let lossy = Lossy { data: &data, transparent: Some(63), before: None, palette: &palette, level: 200 };
        let decoded = decode(&compress(&lossy, 6), 6);
        // The signed error summed from the start never passes the level.
        let mut run = 0i32;
        for (i, (&d, &o)) in decoded.iter().zip(&data).enumerate() {
            if o == 63 {
                assert_eq!(d, 63, "pixel {i}: unchanged became {d}");
                continue;
            }
            run += i32::from(palette[usize::from(d)][0]) - i32::from(palette[usize::from(o)][0]);
            assert!(run.abs() <= 200, "pixel {i}: the error ran to {run}");
        }
    }

    #[test]
    fn without_a_transparent_index_pixels_as_they_were_are_coded_exactly() {
        let (palette, data) = ramp();
        // Every third pixel is as the frame before had it.
        let before: Vec<u8> = data.iter().enumerate().map(|(i, &d)| if i % 3 == 0 { d } else { d ^ 1 }).collect();
        let lossy = Lossy { data: &data, transparent: None, before: Some(&before), palette: &palette, level: 200 };
        let decoded = decode(&compress(&lossy, 6), 6);
        assert!(decoded.iter().zip(&data).step_by(3).all(|(d, o)| d == o));
        assert!(decoded != data, "nothing was coded near");
    }
}
