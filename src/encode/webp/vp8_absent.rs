//! Lossy WebP in a build without libwebp (`default-features = false` without `native`, such as
//! the WebAssembly build of the page's player): the same names, and an encoder that says it is
//! not here. The render refuses `--quality` before it gets this far in such a build; this keeps
//! every path that names the lossy encoder compiling.

use std::io::Write;
use std::marker::PhantomData;

use crate::base::error::{Error, Result};
use crate::encode::{EncodeTimes, Stream};

/// The quality `--quality` takes when given without one.
pub const DEFAULT_QUALITY: u8 = 75;

/// The widest and tallest frame libwebp's lossy coder takes.
pub const MAX_SIDE: u32 = 16383;

/// The lossy WebP encoder, absent: [`WebpLossy::new`] says so.
pub struct WebpLossy<W: Write> {
    background: Vec<[u8; 3]>,
    out: PhantomData<W>,
}

impl<W: Write> WebpLossy<W> {
    /// Refuses: this build has no libwebp.
    pub fn new(_out: W, _stream: &Stream, _background: Vec<[u8; 3]>) -> Result<Self> {
        Err(Error::usage(
            "a lossy WebP needs libwebp, which this build of ripple-render leaves out",
            Some("use the command-line program's build, or write an exact WebP"),
        ))
    }
}

impl<W: Write> crate::encode::Encoder for WebpLossy<W> {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, _pixels: &[[u8; 3]]) -> Result<()> {
        Ok(())
    }

    fn write_rgb(&mut self, _rgb: &[[u8; 3]]) -> Result<()> {
        Ok(())
    }

    fn finish(self) -> Result<EncodeTimes> {
        Ok(EncodeTimes::default())
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}
