//! Lossy GIF (`--lossy N`): LZW that takes near matches, against what is on the screen. The
//! frames are coded one after another, each knowing what the frames before left showing (near
//! colours and all). At each code the parse looks for the longest string the dictionary holds
//! (walking its tree) whose pixels each show a colour close to the frame's (every channel within
//! `N / 10` of the pixel's palette colour), so strings run longer and the frame takes fewer
//! codes; of strings as long, the one whose squared error is least. A pixel whose shown colour
//! is already close enough may stay transparent. The technique gifsicle's `--lossy` made known,
//! written here from its description.
//!
//! Three rules keep it from being seen:
//!
//! - a pixel the render leaves unchanged keeps what is shown there (the transparent index, or
//!   the shown colour's own index): calm water never flickers;
//! - the error the parse chooses is bounded as it runs, per channel, by the sum of its signed
//!   errors from the frame's start (at most `N` either way), so no string can shift a gradient
//!   into a flat streak: errors of one sign soon stop a string, and the next one must make up
//!   for them;
//! - what is shown never strays more than `N / 10` from the render on any channel, so errors do
//!   not build up from frame to frame.
//!
//! The stream is a standard code stream, exactly as [`super::lzw`] writes one (code size growth,
//! clear when the dictionary is full), so every decoder reads it; only the strings differ.

use super::code_stream::{CodeStream, MAX_CODES};

/// A lossy level N lets each channel of a pixel stray by N / this (and the errors summed from
/// a frame's start by N).
pub const LEVELS_PER_CHANNEL_STEP: u8 = 10;

/// `--lossy` left without its level.
pub const DEFAULT_LEVEL: u8 = 20;

/// Dictionary nodes a longest-match search may visit at one code.
const SEARCH_LIMIT: usize = 384;

/// One frame's rectangle to code lossily, row by row.
pub struct Lossy<'a> {
    /// The render's palette indices.
    pub exact: &'a [u8],
    /// What the frames before left showing (palette indices); `None` for the first frame.
    pub shown: Option<&'a [u8]>,
    /// The render's frame before (palette indices); `None` for the first frame.
    pub before: Option<&'a [u8]>,
    /// The transparent index, if the palette has one.
    pub transparent: Option<u8>,
    /// The palette's colours, by index (the transparent slot's never shown).
    pub palette: &'a [[u8; 3]],
    /// `--lossy N`.
    pub level: u8,
}

/// A lossy frame: its LZW code stream (after its code size byte, as [`super::lzw::compress`]
/// makes it), and per pixel the index it holds (the transparent index where it keeps what was
/// shown).
pub struct Coded {
    /// The code stream.
    pub stream: Vec<u8>,
    /// Each pixel's index in the stream.
    pub indices: Vec<u8>,
}

/// Codes `lossy` at `min_code_size`.
pub fn compress(lossy: &Lossy<'_>, min_code_size: u8) -> Coded {
    let (step, sum) = (i32::from(lossy.level / LEVELS_PER_CHANNEL_STEP), i32::from(lossy.level));
    let parse = Parse::new(lossy, step, sum);
    let mut scratch = Scratch::default();
    let count = lossy.exact.len();
    let mut stream = CodeStream::new(min_code_size);
    let mut trie = Trie::new();
    let mut previous: Option<u32> = None;
    let mut indices = vec![0u8; count];
    let mut i = 0;
    // The signed error, per channel, the parse chose so far.
    let mut carried = [0i32; 3];
    while i < count {
        let mut found = parse.longest(&trie, i, None, carried, &mut scratch);
        if let Some(p) = previous {
            // The string before, extended by this one's first pixel: the decoder adds it now.
            trie.add(p, found.first, stream.next);
            if stream.added() {
                trie.clear();
            }
            // The string just added may extend this one (or, after a clear, the match was in
            // the dictionary just emptied): looked for again from its first pixel.
            found = parse.longest(&trie, i, Some(found.first), carried, &mut scratch);
        }
        stream.put(found.code);
        trie.spell(found.code, &mut indices[i..i + found.length]);
        previous = Some(found.code);
        carried = found.error;
        i += found.length;
    }
    Coded { stream: stream.end(), indices }
}

/// The dictionary as a tree: each code's children by the value that extends it, and each code's
/// prefix and last value, to spell its string.
struct Trie {
    children: Vec<Vec<(u8, u16)>>,
    prefix: Vec<u16>,
    last: Vec<u8>,
}

impl Trie {
    fn new() -> Trie {
        let codes = MAX_CODES as usize;
        // The single values' codes are their own prefix-less strings.
        Trie {
            children: vec![Vec::new(); codes],
            prefix: vec![u16::MAX; codes],
            last: (0..codes).map(|c| c as u8).collect(),
        }
    }

    fn add(&mut self, prefix: u32, value: u8, code: u32) {
        self.children[prefix as usize].push((value, code as u16));
        self.prefix[code as usize] = prefix as u16;
        self.last[code as usize] = value;
    }

    fn clear(&mut self) {
        self.children.iter_mut().for_each(Vec::clear);
    }

    /// Writes the string of `code` into `out` (its length).
    fn spell(&self, mut code: u32, out: &mut [u8]) {
        for slot in out.iter_mut().rev() {
            *slot = self.last[code as usize];
            code = u32::from(self.prefix[code as usize]);
        }
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

/// How pixel `i` may be coded, worked out once per pixel (the search asks of each pixel many
/// times).
#[derive(Clone, Copy)]
struct Rule {
    /// The render's index.
    exact: u8,
    /// What is shown there, where the frame may leave it (the transparent index, or the shown
    /// index itself): always for a pixel the render left unchanged (`forced`), else only when
    /// what is shown is near enough.
    keep: Option<u8>,
    /// The error what is shown has against the render, when it may be kept.
    keep_error: [i32; 3],
    /// Whether the pixel must keep what is shown: the render left it unchanged.
    forced: bool,
}

/// A frame's parse: what each pixel may be, and how far the parse may stray.
struct Parse<'a> {
    lossy: &'a Lossy<'a>,
    near: Vec<Vec<u8>>,
    /// Per pixel of the frame, how it may be coded.
    rules: Vec<Rule>,
    /// Per palette index, the palette's colours as i32.
    colours: Vec<[i32; 3]>,
    /// The most a shown pixel's channel may differ from the render's.
    step: i32,
    /// The most the signed error summed over the pixels coded so far may reach on a channel.
    sum: i32,
}

impl<'a> Parse<'a> {
    fn new(lossy: &'a Lossy<'a>, step: i32, sum: i32) -> Parse<'a> {
        let colours: Vec<[i32; 3]> = lossy.palette.iter().map(|c| c.map(i32::from)).collect();
        let difference = |a: u8, b: u8| {
            let (a, b) = (colours[usize::from(a)], colours[usize::from(b)]);
            [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
        };
        let near_enough = |e: &[i32; 3]| e.iter().all(|x| x.abs() <= step);
        let rules = (0..lossy.exact.len())
            .map(|i| {
                let exact = lossy.exact[i];
                let unchanged = lossy.before.is_some_and(|b| b[i] == exact);
                match lossy.shown.map(|s| s[i]) {
                    Some(shown) if unchanged => {
                        Rule { exact, keep: Some(shown), keep_error: difference(shown, exact), forced: true }
                    }
                    Some(shown) => {
                        let error = difference(shown, exact);
                        let keep = near_enough(&error).then_some(shown);
                        Rule { exact, keep, keep_error: error, forced: false }
                    }
                    None => Rule { exact, keep: None, keep_error: [0; 3], forced: false },
                }
            })
            .collect();
        let near = near_table(lossy.palette, lossy.transparent, step);
        Parse { lossy, near, rules, colours, step, sum }
    }

    /// The error pixel `i` shows as `v`, and whether it is forced (a kept pixel's), if it may
    /// be `v`.
    #[inline(always)]
    fn error(&self, i: usize, v: u8) -> Option<([i32; 3], bool)> {
        let transparent = self.lossy.transparent;
        let rule = self.rules[i];
        if rule.forced {
            let keep = rule.keep.unwrap_or(rule.exact);
            return (Some(v) == transparent || v == keep).then_some((rule.keep_error, true));
        }
        if v == rule.exact {
            return Some(([0; 3], false));
        }
        if let Some(shown) = rule.keep
            && (Some(v) == transparent || v == shown)
        {
            return Some((rule.keep_error, false));
        }
        if Some(v) == transparent {
            return None;
        }
        let (a, b) = (self.colours[usize::from(v)], self.colours[usize::from(rule.exact)]);
        let e = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        e.iter().all(|x| x.abs() <= self.step).then_some((e, false))
    }

    /// The values a string may start with at `i`, the likeliest first, into `out`.
    fn starts(&self, i: usize, out: &mut Vec<u8>) {
        out.clear();
        let transparent = self.lossy.transparent;
        let rule = self.rules[i];
        if rule.forced {
            out.extend(transparent);
            out.extend(rule.keep);
            return;
        }
        out.push(rule.exact);
        if rule.keep.is_some() {
            out.extend(transparent);
        }
        out.extend_from_slice(&self.near[usize::from(rule.exact)]);
    }

    /// The longest string at `i` the dictionary holds over the values each pixel may take, the
    /// error summed from `carried` within bounds all along (starting with `start` alone, if
    /// given); of equals, the one whose squared error is least. `scratch` holds the search's
    /// stack and first values between calls.
    fn longest(&self, trie: &Trie, i: usize, start: Option<u8>, carried: [i32; 3], scratch: &mut Scratch) -> Found {
        let count = self.lossy.exact.len();
        let within = |e: &[i32; 3]| e.iter().all(|s| s.abs() <= self.sum);
        let add = |a: [i32; 3], b: [i32; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
        let squared = |e: [i32; 3]| e.iter().map(|x| x * x).sum::<i32>();
        let Scratch { starts, stack } = scratch;
        match start {
            Some(v) => {
                starts.clear();
                starts.push(v);
            }
            None => self.starts(i, starts),
        }
        let mut best: Option<(Found, i32)> = None;
        let mut visited = 0;
        for (n, &first) in starts.iter().enumerate() {
            let Some((e, forced)) = self.error(i, first) else { continue };
            // A kept pixel's error is not the parse's choice: it does not count.
            let summed = if forced { carried } else { add(carried, e) };
            // The first choice (or the one given) always starts a string; others only within
            // bounds.
            if n > 0 && !forced && e != [0; 3] && !within(&summed) {
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
                if visited >= SEARCH_LIMIT || i + length >= count {
                    continue;
                }
                for &(v, c) in &trie.children[code as usize] {
                    let Some((e, forced)) = self.error(i + length, v) else { continue };
                    let summed = if forced { error } else { add(error, e) };
                    // An exact or kept pixel goes as it must; a near one only within bounds.
                    if !forced && e != [0; 3] && !within(&summed) {
                        continue;
                    }
                    stack.push((u32::from(c), length + 1, summed, cost + squared(e)));
                }
            }
        }
        let exact = self.lossy.exact[i];
        best.map_or(Found { code: u32::from(exact), length: 1, first: exact, error: carried }, |(f, _)| f)
    }
}

/// The search's buffers, kept from one code to the next.
#[derive(Default)]
struct Scratch {
    starts: Vec<u8>,
    /// Per node: its code, length, summed signed error and summed squared error.
    stack: Vec<(u32, usize, [i32; 3], i32)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(stream: &[u8], min_code_size: u8) -> Vec<u8> {
        let mut decoder = weezl::decode::Decoder::new(weezl::BitOrder::Lsb, min_code_size);
        decoder.decode(&stream[1..]).expect("a standard LZW stream")
    }

    /// A grey ramp palette of 63 levels, 4 apart (index 63 the transparent slot), and a noisy
    /// ramp picture over it.
    fn ramp() -> (Vec<[u8; 3]>, Vec<u8>) {
        let palette: Vec<[u8; 3]> = (0..63).map(|v| [v * 4, v * 4, v * 4]).collect();
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

    fn grey(palette: &[[u8; 3]], shown: &[u8], i: usize, under: &[u8]) -> i32 {
        let v = if shown[i] == 63 { under[i] } else { shown[i] };
        i32::from(palette[usize::from(v)][0])
    }

    #[test]
    fn a_first_frame_decodes_near_its_own_and_shrinks_with_the_level() {
        let (palette, data) = ramp();
        let exact = super::super::lzw::compress(&data, 6, None);
        let mut sizes = Vec::new();
        for level in [40u8, 80, 200] {
            let lossy =
                Lossy { exact: &data, shown: None, before: None, transparent: Some(63), palette: &palette, level };
            let coded = compress(&lossy, 6);
            assert_eq!(decode(&coded.stream, 6), coded.indices, "the indices are the stream's");
            let mut run = 0;
            for (i, (&d, &o)) in coded.indices.iter().zip(&data).enumerate() {
                let e = i32::from(palette[usize::from(d)][0]) - i32::from(palette[usize::from(o)][0]);
                assert!(d != 63 && e.abs() <= i32::from(level) / 10, "level {level}: {d} for {o}");
                // The signed error summed from the start never passes the level.
                run += e;
                assert!(run.abs() <= i32::from(level), "level {level}, pixel {i}: the error ran to {run}");
            }
            sizes.push(coded.stream.len());
        }
        // (A greedy parse need not shrink at every step up.)
        assert!(sizes[0] < exact.len() && sizes[2] < sizes[0], "{sizes:?} against {}", exact.len());
        assert!(sizes[2] < exact.len() * 3 / 4, "{sizes:?} against {}", exact.len());
    }

    #[test]
    fn unchanged_pixels_keep_what_is_shown_and_nothing_shown_strays() {
        let (palette, before) = ramp();
        // What an earlier lossy frame left: one level off in places.
        let shown: Vec<u8> = before.iter().enumerate().map(|(i, &b)| if i % 7 == 0 { b + 1 } else { b }).collect();
        // Every fourth pixel changes by a level or two.
        let now: Vec<u8> =
            before.iter().enumerate().map(|(i, &b)| if i % 4 == 0 { (b + 2).min(62) } else { b }).collect();
        for transparent in [Some(63), None] {
            let lossy = Lossy {
                exact: &now,
                shown: Some(&shown),
                before: Some(&before),
                transparent,
                palette: &palette,
                level: 80,
            };
            let coded = compress(&lossy, 6);
            assert_eq!(decode(&coded.stream, 6), coded.indices);
            for i in 0..now.len() {
                let after = grey(&palette, &coded.indices, i, &shown);
                if now[i] == before[i] {
                    assert_eq!(after, grey(&palette, &shown, i, &shown), "pixel {i}: unchanged, yet it changed");
                }
                let e = after - i32::from(palette[usize::from(now[i])][0]);
                assert!(e.abs() <= 8, "pixel {i}: shows {after} for {}", palette[usize::from(now[i])][0]);
            }
        }
    }
}
