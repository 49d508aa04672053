//! A seekable buffer in front of a stream: a format that writes its size at the start last
//! (WebP's RIFF header) is kept in memory and goes to the stream whole when flushed.

use std::io::{Cursor, Seek, SeekFrom, Write};

/// Holds everything written (and lets it be sought and patched) until [`Write::flush`], which
/// sends it all to the stream; what is written after a flush is sent at the next one.
pub struct Spool<W: Write> {
    buffer: Cursor<Vec<u8>>,
    stream: W,
}

impl<W: Write> Spool<W> {
    /// An empty spool in front of `stream`.
    pub fn new(stream: W) -> Self {
        Spool { buffer: Cursor::new(Vec::new()), stream }
    }
}

impl<W: Write> Write for Spool<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.write_all(self.buffer.get_ref())?;
        self.buffer = Cursor::new(Vec::new());
        self.stream.flush()
    }
}

impl<W: Write> Seek for Spool<W> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.buffer.seek(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patched_bytes_reach_the_stream_at_the_flush() {
        let mut out = Vec::new();
        let mut spool = Spool::new(&mut out);
        spool.write_all(b"RIFF????WEBP").unwrap();
        spool.seek(SeekFrom::Start(4)).unwrap();
        spool.write_all(b"size").unwrap();
        spool.seek(SeekFrom::End(0)).unwrap();
        spool.write_all(b"!").unwrap();
        spool.flush().unwrap();
        drop(spool);
        assert_eq!(out, b"RIFFsizeWEBP!");
    }
}
