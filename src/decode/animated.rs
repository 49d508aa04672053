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
    if kind == Kind::Png {
        let (width, height, rgb, provenance) = decode_png(path, true)?;
        let info = Info { path: path.into(), kind, width, height, provenance, colours: PixelKind::Rgb, palette: None };
        let frame = Frame { pixels: Pixels::Rgb(rgb), delay: None };
        return Ok((info, Box::new(Decoded::ready(vec![Ok(frame)]))));
    }
    let reader = || {
        File::open(path)
            .map(BufReader::new)
            .map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))
    };
    // The size and provenance first, then the frames on their own thread.
    let (width, height, provenance) = if kind == Kind::Apng {
        let decoder = png::Decoder::new(reader()?);
        let png = decoder.read_info().map_err(|e| Error::input(path, format!("cannot decode it: {e}")))?;
        let info = png.info();
        let provenance = info.uncompressed_latin1_text.iter().find_map(|t| Provenance::parse(&t.text));
        (info.width, info.height, provenance)
    } else {
        let bytes = read_limited(path, MAX_WEBP_BYTES, "WebP files")
            .map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))?;
        let frames = WebpFrames::parse(path, bytes)?;
        let (w, h) = frames.size();
        check_size(path, (w, h))?;
        let info = Info {
            path: path.into(),
            kind,
            width: w,
            height: h,
            provenance: None,
            colours: PixelKind::Rgb,
            palette: None,
        };
        let (tx, rx) = sync_channel(2);
        let path = path.to_path_buf();
        std::thread::spawn(move || {
            let mut frames = frames;
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
                if tx.send(frame).is_err() || stop {
                    return;
                }
            }
        });
        return Ok((info, Box::new(Decoded { frames: Source::Thread(rx) })));
    };
    check_size(path, (width, height))?;
    let info = Info { path: path.into(), kind, width, height, provenance, colours: PixelKind::Rgb, palette: None };
    let (tx, rx) = sync_channel(2);
    let (file, path) = (reader()?, path.to_path_buf());
    std::thread::spawn(move || {
        let send = |frame| tx.send(frame).is_ok();
        let frames = match kind {
            Kind::Apng => image::codecs::png::PngDecoder::with_limits(file, limits())
                .and_then(|d| d.apng())
                .map(|a| a.into_frames()),
            _ => unreachable!("WebPs are composed by diff::webp"),
        };
        let frames = match frames {
            Ok(frames) => frames,
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
    });
    Ok((info, Box::new(Decoded { frames: Source::Thread(rx) })))
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
