//! GIF's LZW compression, written for speed: an open-addressing dictionary that is never
//! cleared (entries carry a generation), codes packed LSB-first into a 64-bit accumulator.
//! The output is a standard GIF code stream, checked by decoding it with the gif crate.

use super::code_stream::MAX_CODES;

/// Bits of a slot's hash. A table 8 times the 4096 codes GIF allows keeps probe sequences
/// short: against 2× (8192 slots), LZW of a differenced frame took 26% less time with 1 << 16
/// slots (`cargo bench --bench kernels -- lzw`), and 1 << 15 is 3% faster again in a whole
/// render, on one thread and on two (`bench/busy.toml`, 25 alternating runs each, 2026-12-04:
/// a 256 KiB table beside a frame stays in a core's cache). The codes do not depend on it.
const HASH_BITS: u32 = 15;
/// Dictionary slots.
const SLOTS: usize = 1 << HASH_BITS;

/// A reusable LZW compressor (its dictionary is 256 KiB, kept between frames).
pub struct Lzw {
    /// Per slot, or 0 for empty: `key << 32 | hash(code) << 12 | code`, where the key is
    /// `generation << 20 | prefix << 8 | byte`. A hit gives the next prefix and its hash in one
    /// load, so no multiply sits on the byte-to-byte dependency chain.
    slots: Vec<u64>,
    generation: u32,
    /// The codes of the run byte repeated 1, 2, 3, … times (see [`Lzw::encode_runs`]).
    run_codes: Vec<u32>,
}

/// A code's hash (Fibonacci hashing), `HASH_BITS` wide.
const fn code_hash(code: u32) -> u32 {
    code.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)
}

/// Per byte, `HASH_BITS` random bits to mix into the prefix's hash.
const BYTE_MIX: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut state = 0x2545_F491u32;
    let mut i = 0;
    while i < 256 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        table[i] = state >> (32 - HASH_BITS);
        i += 1;
    }
    table
};

impl Default for Lzw {
    fn default() -> Self {
        Lzw { slots: vec![0; SLOTS], generation: 0, run_codes: Vec::with_capacity(MAX_CODES as usize) }
    }
}

/// Where a code stream stands: the next code to give, the code size, the current generation's
/// tag and the clear code (`1 << min_code_size`).
struct Codes {
    next: u32,
    size: u32,
    tag: u32,
    clear: u32,
}

/// Bits to a byte stream, least significant first.
struct Bits<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    count: u32,
}

impl Bits<'_> {
    #[inline(always)]
    fn put(&mut self, code: u32, size: u32) {
        self.acc |= u64::from(code) << self.count;
        self.count += size;
        if self.count >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.count -= 32;
        }
    }

    fn flush(&mut self) {
        while self.count > 0 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.count = self.count.saturating_sub(8);
        }
    }
}

impl Lzw {
    /// A fresh dictionary: bump the generation, wiping the table only when it wraps.
    fn reset(&mut self) {
        self.generation += 1;
        if self.generation >= 1 << 12 {
            self.slots.fill(0);
            self.generation = 1;
        }
    }

    /// Appends `min_code_size` and the LZW code stream of `data` to `out`, the form
    /// `gif::Encoder::write_lzw_pre_encoded_frame` takes. Every byte of `data` must be below
    /// `1 << min_code_size`; `min_code_size` is 2..=8.
    pub fn encode(&mut self, data: &[u8], min_code_size: u8, out: &mut Vec<u8>) {
        self.encode_runs(data, min_code_size, None, out);
    }

    /// [`Lzw::encode`], fast through runs of `run_byte` (the transparent index of a differenced
    /// frame, where the water has not changed). The code stream is the same either way.
    ///
    /// A run of one byte b only ever makes the strings b, bb, bbb, …, so their codes are kept in
    /// a list: inside a run, the longest known string is found by arithmetic, with no dictionary
    /// look-up per byte.
    pub fn encode_runs(&mut self, data: &[u8], min_code_size: u8, run_byte: Option<u8>, out: &mut Vec<u8>) {
        let m = u32::from(min_code_size);
        let clear = 1u32 << m;
        let end = clear + 1;
        out.push(min_code_size);
        let mut bits = Bits { out, acc: 0, count: 0 };
        bits.put(clear, m + 1);
        self.reset();
        let mut codes = Codes { next: clear + 2, size: m + 1, tag: self.generation << 20, clear };
        let Some(&first) = data.first() else {
            bits.put(end, codes.size);
            bits.flush();
            return;
        };
        // A byte no input holds when there is no run byte (inputs are below 1 << m ≤ 256).
        let rb = run_byte.map_or(u32::MAX, u32::from);
        // run_codes[k - 1] is the code of rb repeated k times, for every k the dictionary has.
        self.run_codes.clear();
        self.run_codes.push(rb);
        let mut prefix = u32::from(first);
        let mut prefix_hash = code_hash(prefix);
        // The prefix is rb repeated `run` times, or 0 when it is not such a string.
        let mut run = usize::from(prefix == rb);
        let mut i = 1;
        while i < data.len() {
            let byte = data[i];
            if run > 0 && u32::from(byte) == rb {
                // Inside a run: walk the known strings b^k without looking them up.
                let ahead = data[i..].iter().position(|&b| u32::from(b) != rb).unwrap_or(data.len() - i);
                (run, prefix) = self.walk_run(rb, ahead, run, &mut bits, &mut codes);
                i += ahead;
                prefix_hash = code_hash(prefix);
                continue;
            }
            let key = codes.tag | prefix << 8 | u32::from(byte);
            let mut slot = ((prefix_hash ^ BYTE_MIX[usize::from(byte)]) as usize) & (SLOTS - 1);
            loop {
                let entry = self.slots[slot];
                let k = (entry >> 32) as u32;
                if k == key {
                    prefix = (entry & 0xFFF) as u32;
                    prefix_hash = (entry >> 12) as u32 & (SLOTS as u32 - 1);
                    // The prefix was not a run of rb (or the byte is not rb): neither is this.
                    run = 0;
                    break;
                }
                if k < codes.tag {
                    // Empty (or left from an older generation): the string is new.
                    bits.put(prefix, codes.size);
                    let next = codes.next;
                    self.slots[slot] = u64::from(key) << 32 | u64::from(code_hash(next)) << 12 | u64::from(next);
                    self.added(&mut bits, &mut codes);
                    prefix = u32::from(byte);
                    prefix_hash = code_hash(prefix);
                    run = usize::from(prefix == rb);
                    break;
                }
                slot = (slot + 1) & (SLOTS - 1);
            }
            i += 1;
        }
        bits.put(prefix, codes.size);
        bits.put(end, codes.size);
        bits.flush();
    }

    /// Codes `ahead` more bytes `rb` after a prefix of `run` of them (`run` ≥ 1), walking the
    /// strings b, bb, … the dictionary knows (`run_codes`) and adding the next whenever one is
    /// passed; returns the run and the prefix code after them.
    #[inline(always)]
    fn walk_run(
        &mut self,
        rb: u32,
        mut ahead: usize,
        mut run: usize,
        bits: &mut Bits<'_>,
        codes: &mut Codes,
    ) -> (usize, u32) {
        loop {
            let step = (self.run_codes.len() - run).min(ahead);
            run += step;
            ahead -= step;
            let prefix = self.run_codes[run - 1];
            if ahead == 0 {
                return (run, prefix);
            }
            // b^(run+1) is new: emit b^run, add b^(run+1), start again from b.
            bits.put(prefix, codes.size);
            let key = codes.tag | prefix << 8 | rb;
            self.insert(key, code_hash(prefix) ^ BYTE_MIX[rb as usize], codes.next);
            self.run_codes.push(codes.next);
            self.added(bits, codes);
            run = 1;
            ahead -= 1;
            if ahead == 0 {
                return (run, rb);
            }
        }
    }

    /// Counts the code just given to a new string: the code size grows when the next code needs
    /// another bit, and a full table (4096 codes) is announced with a clear code and started afresh.
    #[inline(always)]
    fn added(&mut self, bits: &mut Bits<'_>, codes: &mut Codes) {
        codes.next += 1;
        if codes.next > 1 << codes.size && codes.size < 12 {
            codes.size += 1;
        }
        if codes.next == MAX_CODES {
            bits.put(codes.clear, codes.size);
            self.reset();
            self.run_codes.truncate(1);
            codes.tag = self.generation << 20;
            codes.size = codes.clear.trailing_zeros() + 1;
            codes.next = codes.clear + 2;
        }
    }

    /// Adds a string known to be new: `key` at the first free slot from `hash`, as `code`.
    fn insert(&mut self, key: u32, hash: u32, code: u32) {
        let tag = key & !0xF_FFFF;
        let mut slot = hash as usize & (SLOTS - 1);
        while (self.slots[slot] >> 32) as u32 >= tag {
            slot = (slot + 1) & (SLOTS - 1);
        }
        self.slots[slot] = u64::from(key) << 32 | u64::from(code_hash(code)) << 12 | u64::from(code);
    }
}

thread_local! {
    static DICTIONARY: std::cell::RefCell<Lzw> = std::cell::RefCell::new(Lzw::default());
}

/// Compresses `data` with this thread's dictionary; see [`Lzw::encode_runs`].
pub fn compress(data: &[u8], min_code_size: u8, run_byte: Option<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 2 + 16);
    compress_into(data, min_code_size, run_byte, &mut out);
    out
}

/// [`compress`] into `out` (emptied first), whose room is used again.
pub fn compress_into(data: &[u8], min_code_size: u8, run_byte: Option<u8>, out: &mut Vec<u8>) {
    out.clear();
    DICTIONARY.with(|d| d.borrow_mut().encode_runs(data, min_code_size, run_byte, out));
}

/// The smallest LZW code size for indices below `colors` (at least 2, as GIF requires).
pub fn min_code_size(colors: usize) -> u8 {
    (colors.max(4).next_power_of_two().trailing_zeros() as u8).min(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes with the gif crate's decoder (weezl), independent of this encoder.
    fn roundtrip(data: &[u8], min_code_size: u8) {
        let mut stream = Vec::new();
        Lzw::default().encode(data, min_code_size, &mut stream);
        assert_eq!(stream[0], min_code_size);
        let mut decoder = weezl::decode::Decoder::new(weezl::BitOrder::Lsb, min_code_size);
        let decoded = decoder.decode(&stream[1..]).expect("valid LZW");
        assert_eq!(decoded, data, "min code size {min_code_size}, {} bytes", data.len());
    }

    /// A small deterministic generator for test data (xorshift32).
    fn xorshift(mut seed: u32) -> impl FnMut() -> u32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        }
    }

    #[test]
    fn round_trips_every_code_size_and_shape() {
        let mut random = xorshift(0x1234_5678);
        for m in 2..=8u8 {
            let top = 1u32 << m;
            roundtrip(&[], m);
            roundtrip(&[0], m);
            roundtrip(&vec![(top - 1) as u8; 100_000], m);
            let noise: Vec<u8> = (0..200_000).map(|_| (random() % top) as u8).collect();
            roundtrip(&noise, m);
            // Runs of random lengths: the kind of data frame differencing makes.
            let mut runs = Vec::new();
            while runs.len() < 300_000 {
                let value = (random() % top) as u8;
                runs.extend(std::iter::repeat_n(value, (random() % 40) as usize));
            }
            roundtrip(&runs, m);
        }
    }

    #[test]
    fn the_run_shortcut_gives_the_same_stream() {
        let mut random = xorshift(0x9e37_79b9);
        for m in 2..=8u8 {
            let top = 1u32 << m;
            let t = (top - 1) as u8;
            let mut shapes = vec![vec![t], vec![t, t], vec![0, t, t, t, 0], vec![t; 100_000]];
            // Runs of the run byte, long and short, between other bytes and other runs; enough
            // data to fill the dictionary many times, so resets land inside runs.
            let mut mixed = Vec::new();
            while mixed.len() < 400_000 {
                let long = random().is_multiple_of(4);
                let value = if random().is_multiple_of(2) { t } else { (random() % top) as u8 };
                let length = if long { random() % 3000 } else { random() % 12 };
                mixed.extend(std::iter::repeat_n(value, length as usize));
            }
            shapes.push(mixed);
            for data in &shapes {
                let mut plain = Vec::new();
                Lzw::default().encode(data, m, &mut plain);
                for run_byte in [t, 0] {
                    let mut fast = Vec::new();
                    Lzw::default().encode_runs(data, m, Some(run_byte), &mut fast);
                    assert!(fast == plain, "m = {m}, run byte {run_byte}, {} bytes", data.len());
                }
            }
        }
    }

    #[test]
    fn code_sizes_fit_the_palette() {
        assert_eq!([1, 2, 4, 5, 16, 17, 255, 256].map(min_code_size), [2, 2, 2, 3, 4, 5, 8, 8]);
    }

    #[test]
    fn one_dictionary_serves_many_streams() {
        let mut lzw = Lzw::default();
        let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 13) as u8).collect();
        let mut first = Vec::new();
        lzw.encode(&data, 4, &mut first);
        // Thousands of resets later (the generation wraps), the same input gives the same bytes.
        for _ in 0..5000 {
            let mut scratch = Vec::new();
            lzw.encode(&data[..300], 4, &mut scratch);
        }
        let mut again = Vec::new();
        lzw.encode(&data, 4, &mut again);
        assert_eq!(first, again);
    }
}
