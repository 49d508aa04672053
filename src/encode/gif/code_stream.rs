//! The code stream the choosing parse writes (`--effort max`'s): codes packed as GIF's LZW packs
//! them, the code size growing with the dictionary, a clear code when it is full. The parse
//! decides which strings; this decides nothing, so a stream it writes is one every GIF decoder
//! reads.

/// GIF codes are at most 12 bits.
pub(super) const MAX_CODES: u32 = 4096;

/// A GIF code stream as a parse writes it: its code size byte, then codes packed
/// least-significant first, the code size growing as the dictionary does, a clear code when it
/// is full, and the end code. (The parse of [`super::choosing`] differs from [`super::lzw`] only
/// in the strings it chooses.)
pub(super) struct CodeStream {
    out: Vec<u8>,
    acc: u64,
    count: u32,
    /// The next dictionary code.
    pub(super) next: u32,
    size: u32,
    min: u32,
}

impl CodeStream {
    /// A stream of `min_code_size`, begun with its clear code.
    pub(super) fn new(min_code_size: u8) -> CodeStream {
        let min = u32::from(min_code_size);
        let mut stream =
            CodeStream { out: vec![min_code_size], acc: 0, count: 0, next: (1 << min) + 2, size: min + 1, min };
        stream.put(1 << min);
        stream
    }

    /// Writes `code` at the current code size.
    pub(super) fn put(&mut self, code: u32) {
        self.acc |= u64::from(code) << self.count;
        self.count += self.size;
        while self.count >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.count -= 8;
        }
    }

    /// Counts the code the decoder has just added (`next`); when the dictionary is then full,
    /// writes a clear code and starts it again, and says so (the parse clears its own).
    pub(super) fn added(&mut self) -> bool {
        self.next += 1;
        if self.next > 1 << self.size && self.size < 12 {
            self.size += 1;
        }
        if self.next < MAX_CODES {
            return false;
        }
        self.put(1 << self.min);
        self.next = (1 << self.min) + 2;
        self.size = self.min + 1;
        true
    }

    /// The end code, and the stream's bytes.
    pub(super) fn end(mut self) -> Vec<u8> {
        self.put((1 << self.min) + 1);
        if self.count > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}
