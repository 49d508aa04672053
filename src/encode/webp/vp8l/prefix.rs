//! VP8L's entropy coding: the bit writer (least significant bit first), Huffman code lengths
//! limited to 15 bits, canonical codes, how a code is itself written, the prefix coding of
//! lengths and distances, and the integer logarithms that price symbols.

/// Bits written least significant first, as VP8L reads them.
#[derive(Clone)]
pub(super) struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    pub(super) fn new() -> Bits {
        Bits { out: Vec::new(), acc: 0, n: 0 }
    }

    #[inline]
    pub(super) fn put(&mut self, value: u32, bits: u32) {
        debug_assert!(bits <= 32 && (bits == 32 || value >> bits == 0));
        // Fewer than 32 bits wait in the accumulator, so it never overflows; they leave it four
        // bytes at a time.
        self.acc |= u64::from(value) << self.n;
        self.n += bits;
        if self.n >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.n -= 32;
        }
    }

    /// Bits written so far.
    pub(super) fn len(&self) -> u64 {
        self.out.len() as u64 * 8 + u64::from(self.n)
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        let bytes = self.n.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
        self.out
    }
}

/// Code lengths of a Huffman code for `freqs`, none longer than `limit` (frequencies are halved
/// until the code fits). Unused symbols get 0.
fn code_lengths(freqs: &[u32], limit: u8) -> Vec<u8> {
    let mut scaled: Vec<u64> = freqs.iter().map(|&f| u64::from(f)).collect();
    loop {
        let lengths = huffman(&scaled);
        if lengths.iter().all(|&l| l <= limit) {
            return lengths;
        }
        for f in scaled.iter_mut().filter(|f| **f > 0) {
            *f = (*f >> 1).max(1);
        }
    }
}

/// Plain Huffman code lengths (a single used symbol gets length 1), by the two-queue method:
/// the used symbols sorted by count (then by symbol), and the merged nodes, which come out in
/// order of weight, each merge taking the two lightest fronts (a leaf before a node of the same
/// weight).
fn huffman(freqs: &[u64]) -> Vec<u8> {
    let mut lengths = vec![0u8; freqs.len()];
    let mut leaves: Vec<(u64, usize)> =
        freqs.iter().enumerate().filter(|&(_, &f)| f > 0).map(|(s, &f)| (f, s)).collect();
    match leaves.len() {
        0 => return lengths,
        1 => {
            lengths[leaves[0].1] = 1;
            return lengths;
        }
        _ => {}
    }
    leaves.sort_unstable();
    let n = leaves.len();
    // Node k < n is leaf k; node n + j the j-th merge. A node's parent is always a later node.
    let mut parent = vec![0usize; 2 * n - 1];
    let mut weights: Vec<u64> = Vec::with_capacity(n - 1);
    let (mut leaf, mut merged) = (0, 0);
    for j in 0..n - 1 {
        let mut pair = [(0u64, 0usize); 2];
        for slot in &mut pair {
            *slot = if leaf < n && (merged == weights.len() || leaves[leaf].0 <= weights[merged]) {
                leaf += 1;
                (leaves[leaf - 1].0, leaf - 1)
            } else {
                merged += 1;
                (weights[merged - 1], n + merged - 1)
            };
        }
        parent[pair[0].1] = n + j;
        parent[pair[1].1] = n + j;
        weights.push(pair[0].0 + pair[1].0);
    }
    let mut depth = vec![0u8; 2 * n - 1];
    for k in (0..2 * n - 2).rev() {
        depth[k] = depth[parent[k]].saturating_add(1);
    }
    for (k, &(_, symbol)) in leaves.iter().enumerate() {
        lengths[symbol] = depth[k];
    }
    lengths
}

/// Canonical codes for `lengths`, bit-reversed so they can be written least significant first.
fn canonical(lengths: &[u8]) -> Vec<u16> {
    let mut count = [0u16; 16];
    for &l in lengths.iter().filter(|&&l| l > 0) {
        count[usize::from(l)] += 1;
    }
    let mut next = [0u16; 16];
    let mut code = 0u16;
    for bits in 1..16 {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                return 0;
            }
            let c = next[usize::from(l)];
            next[usize::from(l)] += 1;
            c.reverse_bits() >> (16 - l)
        })
        .collect()
}

/// A prefix code ready to write symbols with: each symbol's code in the low 16 bits, its
/// length above (one load a symbol).
pub(super) struct Code {
    packed: Vec<u32>,
}

impl Code {
    fn new(lengths: &[u8], codes: &[u16]) -> Code {
        Code { packed: lengths.iter().zip(codes).map(|(&l, &c)| u32::from(l) << 16 | u32::from(c)).collect() }
    }

    /// The bits a symbol takes.
    pub(super) fn length(&self, symbol: usize) -> u64 {
        u64::from(self.packed[symbol] >> 16)
    }

    /// The symbol's code and its length.
    #[inline]
    pub(super) fn get(&self, symbol: usize) -> (u32, u32) {
        let p = self.packed[symbol];
        (p & 0xffff, p >> 16)
    }

    #[inline]
    pub(super) fn put(&self, bits: &mut Bits, symbol: usize) {
        let (code, length) = self.get(symbol);
        bits.put(code, length);
    }
}

/// The order code-length code lengths are written in.
const CODE_LENGTH_ORDER: [usize; 19] = [17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// Writes the prefix code for `freqs` and returns it: a simple code for one or two symbols of
/// 8 bits at most, else a normal one.
pub(super) fn write_code(bits: &mut Bits, freqs: &[u32]) -> Code {
    let used: Vec<usize> = (0..freqs.len()).filter(|&s| freqs[s] > 0).collect();
    if used.len() <= 2 && used.iter().all(|&s| s < 256) {
        return write_simple(bits, freqs.len(), used);
    }
    let mut freqs = freqs.to_vec();
    if used.len() == 1 {
        // A normal code needs two symbols: give one more a count.
        let other = if used[0] == 0 { 1 } else { 0 };
        freqs[other] = 1;
    }
    let lengths = code_lengths(&freqs, 15);
    write_lengths(bits, &lengths);
    let codes = canonical(&lengths);
    Code::new(&lengths, &codes)
}

/// A simple code of an alphabet of `size`: one or two `symbols` of 8 bits at most (none used:
/// symbol 0).
fn write_simple(bits: &mut Bits, size: usize, symbols: Vec<usize>) -> Code {
    let mut lengths = vec![0u8; size];
    let symbols = if symbols.is_empty() { vec![0] } else { symbols };
    bits.put(1, 1);
    bits.put(symbols.len() as u32 - 1, 1);
    if symbols[0] < 2 {
        bits.put(0, 1);
        bits.put(symbols[0] as u32, 1);
    } else {
        bits.put(1, 1);
        bits.put(symbols[0] as u32, 8);
    }
    if let Some(&second) = symbols.get(1) {
        bits.put(second as u32, 8);
        lengths[symbols[0]] = 1;
        lengths[second] = 1;
    }
    // One symbol is read with no bits at all.
    let codes = canonical(&lengths);
    Code::new(&lengths, &codes)
}

/// A normal code's code lengths `lengths`, written as RFC 9649 says: run-length coded with 16
/// (repeat the last non-zero length), 17 and 18 (zeros), those tokens in a code of their own
/// whose lengths come first.
fn write_lengths(bits: &mut Bits, lengths: &[u8]) {
    let tokens = length_tokens(lengths);
    let mut token_freqs = [0u32; 19];
    for &(t, ..) in &tokens {
        token_freqs[usize::from(t)] += 1;
    }
    let mut length_lengths = code_lengths(&token_freqs, 7);
    if token_freqs.iter().filter(|&&f| f > 0).count() == 1 {
        // A lone token still needs a code a reader can walk: pair it with an unused one.
        let other = if token_freqs[0] == 0 { 0 } else { 1 };
        length_lengths[other] = 1;
    }
    let length_codes = canonical(&length_lengths);
    let count = CODE_LENGTH_ORDER.iter().rposition(|&s| length_lengths[s] > 0).map_or(4, |p| (p + 1).max(4));
    bits.put(0, 1);
    bits.put(count as u32 - 4, 4);
    for &s in &CODE_LENGTH_ORDER[..count] {
        bits.put(u32::from(length_lengths[s]), 3);
    }
    // Every symbol's length follows (no shorter maximum).
    bits.put(0, 1);
    for (t, extra, extra_bits) in tokens {
        bits.put(u32::from(length_codes[usize::from(t)]), u32::from(length_lengths[usize::from(t)]));
        if extra_bits > 0 {
            bits.put(extra, extra_bits);
        }
    }
}

/// The code lengths as tokens: a length, or 16, 17 or 18 with its extra bits' value and count.
fn length_tokens(lengths: &[u8]) -> Vec<(u8, u32, u32)> {
    let mut tokens = Vec::new();
    let mut previous = 8u8;
    let mut i = 0;
    while i < lengths.len() {
        let l = lengths[i];
        let run = lengths[i..].iter().take_while(|&&x| x == l).count();
        if l == 0 && run >= 3 {
            let take = run.min(138);
            if take >= 11 {
                tokens.push((18, take as u32 - 11, 7));
            } else {
                tokens.push((17, take as u32 - 3, 3));
            }
            i += take;
        } else if l != 0 && l == previous && run >= 3 {
            let take = run.min(6);
            tokens.push((16, take as u32 - 3, 2));
            i += take;
        } else {
            tokens.push((l, 0, 0));
            if l != 0 {
                previous = l;
            }
            i += 1;
        }
    }
    tokens
}

/// A value of 1 or more as a prefix symbol and its extra bits: (symbol, extra bits, their count).
pub(super) fn prefix(value: u32) -> (usize, u32, u32) {
    let v = value - 1;
    if v < 4 {
        return (v as usize, 0, 0);
    }
    let high = 31 - v.leading_zeros();
    let second = (v >> (high - 1)) & 1;
    let extra_bits = high - 1;
    ((2 * high + second) as usize, v & ((1 << extra_bits) - 1), extra_bits)
}

/// `n·log2(n)` in 1/65536 bits, in integers only (the same on every machine).
pub(super) fn nlogn(n: u64) -> u64 {
    n * log2(n)
}

/// `log2(n)` in 1/65536 bits from a table: exact for counts below 4096, and for larger ones the
/// table's value at the count's top 12 bits, shifted (within 1/2048 of a bit). The costs that
/// sort tiles and price symbols take thousands of logs a frame; [`log2_q16`] each time was a
/// fixed cost that small frames felt most.
pub(super) fn log2(n: u64) -> u64 {
    static TABLE: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| (0..4096u64).map(log2_q16).collect());
    if n < 4096 {
        return table[n as usize];
    }
    let shift = 64 - u64::from(n.leading_zeros()) - 12;
    table[(n >> shift) as usize] + (shift << 16)
}

/// `log2(n)` in 1/65536 bits, by repeated squaring.
pub(super) fn log2_q16(n: u64) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_codes_are_a_prefix_code() {
        let lengths = code_lengths(&[5, 9, 12, 13, 16, 45, 0, 1], 15);
        let codes = canonical(&lengths);
        for (a, (&la, &ca)) in lengths.iter().zip(&codes).enumerate() {
            for (b, (&lb, &cb)) in lengths.iter().zip(&codes).enumerate() {
                if a != b && la > 0 && lb > 0 && la <= lb {
                    assert_ne!(cb & ((1 << la) - 1), ca, "{a} is a prefix of {b}");
                }
            }
        }
        // Kraft: a complete code.
        assert_eq!(lengths.iter().filter(|&&l| l > 0).map(|&l| 1.0 / f64::from(1u32 << l)).sum::<f64>(), 1.0);
    }

    #[test]
    fn lengths_stay_within_the_limit() {
        let freqs: Vec<u32> = (0..40).map(|i| 1 << (i % 30)).collect();
        assert!(code_lengths(&freqs, 7).iter().all(|&l| l <= 7));
        assert!(code_lengths(&freqs, 15).iter().all(|&l| l <= 15));
    }
}
