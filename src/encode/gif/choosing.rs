//! GIF's LZW for the `max` effort: where a pixel did not change, the frame may hold either the
//! transparent index or the pixel's own colour (both show the same), and this parse picks, at
//! each code, the longest string the dictionary holds over either; the transparent index tried
//! first and the colour first, the smaller stream kept. A standard code stream (codes, growth of the code size, clear when full) exactly as
//! [`super::lzw`] writes one ([`CodeStream`]), so every decoder reads it; only the strings differ.

use std::collections::HashMap;

use super::code_stream::CodeStream;

/// Dictionary nodes a longest-match search may visit (the search branches at every pixel that
/// may be either; it keeps the longest found when it stops).
const SEARCH_LIMIT: usize = 512;

/// What a frame's pixel may be: `data[i]`, or where `data[i]` is the transparent index,
/// `colours[i]` too.
struct Choices<'a> {
    data: &'a [u8],
    colours: &'a [u8],
    transparent: u8,
    /// Whether the pixel's own colour is tried before the transparent index.
    colour_first: bool,
}

impl Choices<'_> {
    /// The values pixel `i` may take, in the order they are tried.
    fn at(&self, i: usize) -> ([u8; 2], usize) {
        let (d, c) = (self.data[i], self.colours[i]);
        match (d == self.transparent && c != d, self.colour_first) {
            (true, false) => ([d, c], 2),
            (true, true) => ([c, d], 2),
            (false, _) => ([d, d], 1),
        }
    }
}

/// The LZW code stream (after its code size byte, as [`super::lzw::compress`] makes it) of
/// `data`, whose pixels equal to `transparent` may also be read as `colours` at the same place:
/// the smaller of the parses that try the transparent index first and the colour first.
pub fn compress_choosing(data: &[u8], colours: &[u8], transparent: u8, min_code_size: u8) -> Vec<u8> {
    let parse = |colour_first| compress_with(&Choices { data, colours, transparent, colour_first }, min_code_size);
    let (first, second) = (parse(false), parse(true));
    if second.len() < first.len() { second } else { first }
}

/// The parse of `choices`, with the longest match at each code.
fn compress_with(choices: &Choices<'_>, min_code_size: u8) -> Vec<u8> {
    let data = choices.data;
    let mut stream = CodeStream::new(min_code_size);
    let mut dictionary: HashMap<(u32, u8), u32> = HashMap::new();
    let mut previous: Option<u32> = None;
    let mut i = 0;
    while i < data.len() {
        let (mut code, mut length, first) = longest(choices, &dictionary, i, None);
        if let Some(p) = previous {
            // The string before, extended by this one's first pixel: the decoder adds it now.
            dictionary.insert((p, first), stream.next);
            if stream.added() {
                dictionary.clear();
                // The match was found in the dictionary just cleared: a single pixel now.
                (code, length) = (u32::from(first), 1);
            } else {
                // The string just added may extend this one (as in "aaa"): looked for again.
                (code, length, _) = longest(choices, &dictionary, i, Some(first));
            }
        }
        stream.put(code);
        previous = Some(code);
        i += length;
    }
    stream.end()
}

/// The longest string at `i` the dictionary holds, over every value each pixel may take (the
/// first pixel's `start` alone, if given): its code, its length and its first pixel's value
/// (the first found of equals, the values of each pixel tried in their order).
fn longest(
    choices: &Choices<'_>,
    dictionary: &HashMap<(u32, u8), u32>,
    i: usize,
    start: Option<u8>,
) -> (u32, usize, u8) {
    let (values, count) = choices.at(i);
    let starts = match start {
        Some(v) => vec![v],
        None => values[..count].to_vec(),
    };
    let mut best = (u32::from(starts[0]), 1, starts[0]);
    let mut visited = 0;
    for &first in &starts {
        // Depth-first from the single pixel `first` (every single value has its code).
        let mut stack = vec![(u32::from(first), 1usize)];
        while let Some((code, length)) = stack.pop() {
            visited += 1;
            if length > best.1 {
                best = (code, length, first);
            }
            if visited >= SEARCH_LIMIT || i + length >= choices.data.len() {
                continue;
            }
            let (values, count) = choices.at(i + length);
            // Pushed in reverse, so the first value is searched first.
            for &v in values[..count].iter().rev() {
                if let Some(&c) = dictionary.get(&(code, v)) {
                    stack.push((c, length + 1));
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes with weezl (the gif crate's decoder), independent of this encoder.
    fn decode(stream: &[u8], min_code_size: u8) -> Vec<u8> {
        let mut decoder = weezl::decode::Decoder::new(weezl::BitOrder::Lsb, min_code_size);
        decoder.decode(&stream[1..]).expect("valid LZW")
    }

    #[test]
    fn every_pixel_decodes_to_one_of_its_choices() {
        let mut seed = 0x1234_5678u32;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for m in [2u8, 4, 8] {
            let top = 1u32 << m;
            let t = (top - 1) as u8;
            // Runs of colours, some unchanged (transparent), long enough to fill the dictionary.
            let (mut data, mut colours) = (Vec::new(), Vec::new());
            while data.len() < 60_000 {
                let colour = (random() % (top - 1)) as u8;
                let unchanged = random() % 3 == 0;
                for _ in 0..random() % 20 {
                    colours.push(colour);
                    data.push(if unchanged { t } else { colour });
                }
            }
            let stream = compress_choosing(&data, &colours, t, m);
            let decoded = decode(&stream, m);
            assert_eq!(decoded.len(), data.len());
            for (k, &v) in decoded.iter().enumerate() {
                assert!(v == data[k] || (data[k] == t && v == colours[k]), "m {m}, pixel {k}");
            }
            // Without a choice it is plain LZW: the same stream as the fast encoder's.
            let (a, b) = (compress_choosing(&data, &data, t, m), super::super::lzw::compress(&data, m, None));
            let first = a.iter().zip(&b).position(|(x, y)| x != y);
            assert!(a == b, "m {m}: lengths {} {}, first difference at {first:?}", a.len(), b.len());
        }
    }
}
