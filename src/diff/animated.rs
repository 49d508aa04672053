//! The APNG and WebP sides of a diff (and a single PNG still): decoded and composed by the
//! image crate, as a viewer composes them, on a thread of their own that runs a few frames
//! ahead.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::mpsc::{Receiver, sync_channel};

use image::{AnimationDecoder, ImageDecoder};

use super::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels, bad, check_size, decode_png};
use crate::base::error::{Result, os_reason};
use crate::base::limits::{MAX_AREA, MAX_FRAMES};
use crate::encode::manifest::PixelKind;
use crate::encode::provenance::Provenance;

/// Whether the PNG at `path` is animated (has an `acTL` chunk before its image data).
pub fn is_apng(path: &Path) -> Result<bool> {
    let file = File::open(path).map_err(|e| bad(path, format!("cannot read it: {}", os_reason(&e))))?;
    let decoder = png::Decoder::new(BufReader::new(file));
    let reader = decoder.read_info().map_err(|e| bad(path, format!("cannot decode it: {e}")))?;
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
    let cannot = |e: image::ImageError| bad(path, format!("cannot decode it: {e}"));
    let reader =
        || File::open(path).map(BufReader::new).map_err(|e| bad(path, format!("cannot read it: {}", os_reason(&e))));
    // The size and provenance first, then the frames on their own thread.
    let (width, height, provenance) = if kind == Kind::Apng {
        let decoder = png::Decoder::new(reader()?);
        let png = decoder.read_info().map_err(|e| bad(path, format!("cannot decode it: {e}")))?;
        let info = png.info();
        let provenance = info.uncompressed_latin1_text.iter().find_map(|t| Provenance::parse(&t.text));
        (info.width, info.height, provenance)
    } else {
        let decoder = image::codecs::webp::WebPDecoder::new(reader()?).map_err(cannot)?;
        let (w, h) = decoder.dimensions();
        (w, h, None)
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
            _ => image::codecs::webp::WebPDecoder::new(file).and_then(|mut d| {
                d.set_limits(limits())?;
                Ok(d.into_frames())
            }),
        };
        let frames = match frames {
            Ok(frames) => frames,
            Err(e) => {
                send(Err(bad(&path, format!("cannot decode it: {e}"))));
                return;
            }
        };
        for (i, frame) in frames.enumerate() {
            if i as u64 == MAX_FRAMES {
                send(Err(bad(&path, format!("it has more than {} frames", MAX_FRAMES))));
                return;
            }
            let frame = frame.map_err(|e| bad(&path, format!("cannot decode frame {i}: {e}"))).map(|frame| {
                let (num, den) = frame.delay().numer_denom_ms();
                // A fraction of milliseconds, as seconds.
                let delay = Delay::fraction(num, den.saturating_mul(1000));
                // What shows where the canvas is transparent is black, as for a GIF.
                let rgba = frame.into_buffer().into_raw();
                let rgb =
                    rgba.chunks_exact(4).flat_map(|p| if p[3] == 0 { [0, 0, 0] } else { [p[0], p[1], p[2]] }).collect();
                Frame { pixels: Pixels::Rgb(rgb), delay: Some(delay) }
            });
            if !send(frame) {
                return;
            }
        }
    });
    Ok((info, Box::new(Decoded { frames: Source::Thread(rx) })))
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
