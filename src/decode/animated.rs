//! The APNG and WebP sides of a diff (and a single PNG still), decoded and composed as a viewer
//! composes them on a thread of their own that runs a few frames ahead: APNGs by the image
//! crate, WebPs by [`super::webp`] as libwebp composes them.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::mpsc::{Receiver, sync_channel};

use image::AnimationDecoder;

use super::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels, check_size, decode_png};
use super::webp::WebpFrames;
use crate::base::error::{Error, Result, os_reason};
use crate::base::files::read_limited;
use crate::base::limits::{MAX_AREA, MAX_FRAMES, MAX_WEBP_BYTES};
use crate::encode::manifest::PixelKind;
use crate::encode::provenance::Provenance;

/// Whether the PNG at `path` is animated (has an `acTL` chunk before its image data).
pub fn is_apng(path: &Path) -> Result<bool> {
    let file = File::open(path).map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))?;
    let decoder = png::Decoder::new(BufReader::new(file));
    let reader = decoder.read_info().map_err(|e| Error::input(path, format!("cannot decode it: {e}")))?;
    Ok(reader.info().animation_control.is_some())
}

/// The most a decoder may allocate: a few canvases of the largest render, in RGBA.
fn limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(16 * MAX_AREA as u64);
    limits
}

/// Opens an APNG, a WebP or a PNG still.
pub fn open(path: &Path, kind: Kind) -> Result<(Info, Box<dyn FrameSource>)> {
    match kind {
        Kind::Png => open_png(path),
        Kind::Apng => open_apng(path),
        _ => open_webp(path),
    }
}

/// A PNG still: its one frame, decoded now.
fn open_png(path: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let (width, height, rgb, provenance) = decode_png(path, true)?;
    let info =
        Info { path: path.into(), kind: Kind::Png, width, height, provenance, colours: PixelKind::Rgb, palette: None };
    let frame = Frame { pixels: Pixels::Rgb(rgb), delay: None };
    Ok((info, Box::new(Decoded::ready(vec![Ok(frame)]))))
}

/// A WebP: its size now, its frames composed as libwebp composes them ([`WebpFrames`]) on a
/// thread of their own.
fn open_webp(path: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let bytes = read_limited(path, MAX_WEBP_BYTES, "WebP files")
        .map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))?;
    let mut frames = WebpFrames::parse(path, bytes)?;
    let (width, height) = frames.size();
    check_size(path, (width, height))?;
    let kind = Kind::Webp;
    let info =
        Info { path: path.into(), kind, width, height, provenance: None, colours: PixelKind::Rgb, palette: None };
    let path = path.to_path_buf();
    let rx = decoding("webp-frames", move |send| {
        loop {
            let frame = match frames.next_frame(&path) {
                Ok(None) => return,
                Ok(Some(c)) => Ok(Frame {
                    pixels: Pixels::Rgb(visible(&c.rgba)),
                    delay: Some(Delay::fraction(c.duration_ms, 1000)),
                }),
                Err(e) => Err(e),
            };
            let stop = frame.is_err();
            if !send(frame) || stop {
                return;
            }
        }
    })?;
    Ok((info, Box::new(Decoded { frames: Source::Thread(rx) })))
}

/// An APNG: its size and provenance now, its frames composed by the image crate on a thread
/// of their own.
fn open_apng(path: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let reader = || {
        File::open(path)
            .map(BufReader::new)
            .map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))
    };
    let decoder = png::Decoder::new(reader()?);
    let png = decoder.read_info().map_err(|e| Error::input(path, format!("cannot decode it: {e}")))?;
    let (width, height) = (png.info().width, png.info().height);
    let provenance = png.info().uncompressed_latin1_text.iter().find_map(|t| Provenance::parse(&t.text));
    check_size(path, (width, height))?;
    let kind = Kind::Apng;
    let info = Info { path: path.into(), kind, width, height, provenance, colours: PixelKind::Rgb, palette: None };
    let (file, path) = (reader()?, path.to_path_buf());
    let rx = decoding("apng-frames", move |send| {
        let frames = image::codecs::png::PngDecoder::with_limits(file, limits()).and_then(|d| d.apng());
        let frames = match frames {
            Ok(apng) => apng.into_frames(),
            Err(e) => {
                send(Err(Error::input(&path, format!("cannot decode it: {e}"))));
                return;
            }
        };
        for (i, frame) in frames.enumerate() {
            if i as u64 == MAX_FRAMES {
                send(Err(Error::input(&path, format!("it has more than {} frames", MAX_FRAMES))));
                return;
            }
            let frame = frame.map_err(|e| Error::input(&path, format!("cannot decode frame {i}: {e}"))).map(|frame| {
                let (num, den) = frame.delay().numer_denom_ms();
                // A fraction of milliseconds, as seconds.
                let delay = Delay::fraction(num, den.saturating_mul(1000));
                Frame { pixels: Pixels::Rgb(visible(&frame.into_buffer().into_raw())), delay: Some(delay) }
            });
            if !send(frame) {
                return;
            }
        }
    })?;
    Ok((info, Box::new(Decoded { frames: Source::Thread(rx) })))
}

/// Runs `decode` on a thread named `name`, a few frames ahead of the reader: it hands each
/// frame to its `send`, which says whether the reader still wants more.
fn decoding(
    name: &str,
    decode: impl FnOnce(&dyn Fn(Result<Frame>) -> bool) + Send + 'static,
) -> Result<Receiver<Result<Frame>>> {
    let (tx, rx) = sync_channel(2);
    crate::base::threads::spawn(name, move || decode(&|frame| tx.send(frame).is_ok()))?;
    Ok(rx)
}

/// RGBA as RGB: what shows where the canvas is transparent is black, as for a GIF.
fn visible(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4).flat_map(|p| if p[3] == 0 { [0, 0, 0] } else { [p[0], p[1], p[2]] }).collect()
}

enum Source {
    Ready(std::vec::IntoIter<Result<Frame>>),
    Thread(Receiver<Result<Frame>>),
}

/// Frames decoded elsewhere (or all at once), handed out in order.
struct Decoded {
    frames: Source,
}

impl Decoded {
    fn ready(frames: Vec<Result<Frame>>) -> Self {
        Decoded { frames: Source::Ready(frames.into_iter()) }
    }
}

impl FrameSource for Decoded {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        match &mut self.frames {
            Source::Ready(frames) => frames.next().transpose(),
            Source::Thread(rx) => rx.recv().ok().transpose(),
        }
    }
}
