//! Lossy animated WebP (`--quality`), through libwebp itself: its animation encoder
//! (`WebPAnimEncoder`, what gif2webp and ffmpeg's libwebp_anim use), built from libwebp's source
//! by the `libwebp-sys` crate, so no system library is needed. It is fed the render's exact
//! frames and their times, and chooses per frame what to code: the changed rectangle, blended or
//! not, lossy (VP8 with a lossless alpha plane) at the quality asked, with pixels that barely
//! changed left as they were shown. Method 4 (cwebp's default) with sharp RGB to YUV
//! conversion, which keeps the edges of saturated colours (the koi against the water). Everything runs on one thread (`thread_level` 0), so the
//! bytes depend on the frames and the settings alone: the same on every run and for any number
//! of the render's threads.
//!
//! The crate allows `unsafe` in two places, the CPU-feature dispatch of `base::simd` and here:
//! the calls below, each given what libwebp's headers say it wants, every struct made by
//! libwebp's own init function, every allocation freed.

#![allow(unsafe_code)]

use std::io::Write;
use std::time::Instant;

use libwebp_sys as webp;

use crate::base::error::{Error, Result};
use crate::encode::{EncodeTimes, Stream};

/// The quality a bare `--quality` asks for: cwebp's and gif2webp's default.
pub const DEFAULT_QUALITY: u8 = 75;

/// The widest and tallest frame libwebp's lossy coder takes (`WEBP_MAX_DIMENSION`; an exact
/// WebP takes 16384).
pub const MAX_SIDE: u32 = 16383;

/// libwebp's encoder, owned: deleted when dropped.
struct AnimEncoder(*mut webp::WebPAnimEncoder);

impl Drop for AnimEncoder {
    fn drop(&mut self) {
        // SAFETY: made by WebPAnimEncoderNewInternal, deleted once.
        unsafe { webp::WebPAnimEncoderDelete(self.0) }
    }
}

/// Writes a lossy animated WebP of the frames it is given into `out`, when finished.
pub struct WebpLossy<W: Write> {
    out: W,
    background: Vec<[u8; 3]>,
    stream: Stream,
    encoder: AnimEncoder,
    config: webp::WebPConfig,
    /// Output frames added so far.
    added: u64,
    /// When the next frame starts, in milliseconds.
    at_ms: i64,
    times: EncodeTimes,
}

impl<W: Write> WebpLossy<W> {
    /// A lossy WebP of `stream` (at `stream.quality`, 75 if none), whose frames are gathered
    /// from `background` or given whole in RGB.
    pub fn new(out: W, stream: &Stream, background: Vec<[u8; 3]>) -> Result<Self> {
        let failed = |what: &str| Error::Encode(format!("libwebp could not {what}"));
        let quality = stream.quality.unwrap_or(DEFAULT_QUALITY);
        let (width, height) = (
            i32::try_from(stream.width).map_err(|_| failed("take so wide a canvas"))?,
            i32::try_from(stream.height).map_err(|_| failed("take so tall a canvas"))?,
        );
        // SAFETY: each struct is initialised by its init function before it is read; the
        // encoder is owned by `AnimEncoder`, which deletes it.
        unsafe {
            let mut config = std::mem::MaybeUninit::<webp::WebPConfig>::uninit();
            let abi = webp::WEBP_ENCODER_ABI_VERSION as i32;
            let preset = webp::WebPPreset::WEBP_PRESET_DEFAULT;
            if webp::WebPConfigInitInternal(config.as_mut_ptr(), preset, f32::from(quality), abi) == 0 {
                return Err(failed("set up its encoder (a version mismatch)"));
            }
            let mut config = config.assume_init();
            config.lossless = 0;
            // Method 5: a little smaller than cwebp's 4 at the same quality, in about its time
            // (6 takes 18 times as long).
            config.method = 5;
            // Whether RGB goes to YUV 4:2:0 the slower, sharper way is chosen as frames come
            // (`sharp_pays`).
            config.use_sharp_yuv = 0;
            config.thread_level = 0;
            if webp::WebPValidateConfig(&config) == 0 {
                return Err(failed("accept its settings"));
            }
            let mut options = std::mem::MaybeUninit::<webp::WebPAnimEncoderOptions>::uninit();
            let mux_abi = webp::WEBP_MUX_ABI_VERSION as i32;
            if webp::WebPAnimEncoderOptionsInitInternal(options.as_mut_ptr(), mux_abi) == 0 {
                return Err(failed("set up its animation encoder (a version mismatch)"));
            }
            let mut options = options.assume_init();
            // 0 plays forever; 1 plays once. A white background hint, as the exact WebP's.
            options.anim_params.loop_count = i32::from(!stream.looping);
            options.anim_params.bgcolor = 0xffff_ffff;
            options.allow_mixed = 0;
            options.minimize_size = 0;
            let encoder = webp::WebPAnimEncoderNewInternal(width, height, &options, mux_abi);
            if encoder.is_null() {
                return Err(failed("make an animation encoder (out of memory)"));
            }
            Ok(WebpLossy {
                out,
                background,
                stream: stream.clone(),
                encoder: AnimEncoder(encoder),
                config,
                added: 0,
                at_ms: 0,
                times: EncodeTimes::default(),
            })
        }
    }

    /// The libwebp encoder's last error, in words.
    fn error(&self, what: &str) -> Error {
        // SAFETY: the encoder is alive; the string it returns is its own, read at once.
        let said = unsafe {
            let text = webp::WebPAnimEncoderGetError(self.encoder.0);
            if text.is_null() { String::new() } else { std::ffi::CStr::from_ptr(text).to_string_lossy().into_owned() }
        };
        Error::Encode(format!("libwebp could not {what}: {said}"))
    }

    /// Adds the next frame (RGB, the whole canvas) at its time.
    fn add(&mut self, rgb: &[u8]) -> Result<()> {
        let started = Instant::now();
        let (width, height) = (self.stream.width as i32, self.stream.height as i32);
        if rgb.len() != self.stream.width as usize * self.stream.height as usize * 3 {
            return Err(Error::Encode("a frame of another size than the WebP's canvas".into()));
        }
        if self.added.is_multiple_of(TRIAL_EVERY) {
            self.config.use_sharp_yuv = i32::from(sharp_pays(&self.config, rgb, (width, height)));
        }
        let timestamp = i32::try_from(self.at_ms)
            .map_err(|_| Error::usage("the WebP is longer than 24 days, which its timestamps cannot hold", None))?;
        // SAFETY: the picture is initialised by libwebp, imports (copies) `rgb`, which outlives
        // the call, and is freed on every path after its init.
        let added = unsafe {
            let mut picture = std::mem::MaybeUninit::<webp::WebPPicture>::uninit();
            if webp::WebPPictureInitInternal(picture.as_mut_ptr(), webp::WEBP_ENCODER_ABI_VERSION as i32) == 0 {
                return Err(Error::Encode("libwebp could not set up a picture (a version mismatch)".into()));
            }
            let mut picture = picture.assume_init();
            picture.use_argb = 1;
            picture.width = width;
            picture.height = height;
            let ok = webp::WebPPictureImportRGB(&mut picture, rgb.as_ptr(), width * 3) != 0
                && webp::WebPAnimEncoderAdd(self.encoder.0, &mut picture, timestamp, &self.config) != 0;
            webp::WebPPictureFree(&mut picture);
            ok
        };
        if !added {
            return Err(self.error("encode a frame"));
        }
        self.at_ms += i64::from(self.stream.duration_ms(self.added));
        self.added += 1;
        self.times.encode += started.elapsed();
        Ok(())
    }
}

/// How often (in frames) whether sharp YUV pays is judged again, on the frame at hand: the
/// first frame alone (before the water moves) misjudged two golden scenes of flat colours.
const TRIAL_EVERY: u64 = 25;

/// What sharp YUV's PSNR gain must beat, in dB for each doubling of the bytes it adds.
const SHARP_SLOPE_DB: f64 = 4.0;

/// Whether RGB to YUV the sharp way (which keeps the edges of saturated colours against smooth
/// water) pays on the frames from `rgb` on, judged on `rgb` coded alone both ways at `config`'s
/// quality: sharp where its PSNR gain is more than [`SHARP_SLOPE_DB`] for each doubling of the
/// bytes it adds. On the bundled scenes it pays (0.3 to 0.5 dB above the same size without,
/// docs/benchmarks.md); on pixel art with flat colours (the golden pond's koi) it costs bytes and
/// PSNR both. Decided every [`TRIAL_EVERY`] frames, from the frame alone, so the same bytes
/// come of the same frames. Where a trial cannot be made, not.
fn sharp_pays(config: &webp::WebPConfig, rgb: &[u8], size: (i32, i32)) -> bool {
    let trial = |sharp: i32| {
        let config = webp::WebPConfig { use_sharp_yuv: sharp, ..*config };
        still(&config, rgb, size).map(|(bytes, decoded)| (bytes as f64, psnr(rgb, &decoded)))
    };
    let (Some((plain_bytes, plain_db)), Some((sharp_bytes, sharp_db))) = (trial(0), trial(1)) else { return false };
    sharp_db - plain_db > SHARP_SLOPE_DB * (sharp_bytes / plain_bytes).log2()
}

/// `rgb` coded alone as a still lossy WebP at `config`: its size and its pixels decoded.
fn still(config: &webp::WebPConfig, rgb: &[u8], (width, height): (i32, i32)) -> Option<(usize, Vec<u8>)> {
    // SAFETY: the picture and the writer are initialised by libwebp and freed on every path
    // after their init; `rgb` outlives the calls; the decoded buffer is libwebp's, copied out
    // and freed.
    unsafe {
        let mut picture = std::mem::MaybeUninit::<webp::WebPPicture>::uninit();
        if webp::WebPPictureInitInternal(picture.as_mut_ptr(), webp::WEBP_ENCODER_ABI_VERSION as i32) == 0 {
            return None;
        }
        let mut picture = picture.assume_init();
        picture.use_argb = 1;
        picture.width = width;
        picture.height = height;
        let mut writer = std::mem::MaybeUninit::<webp::WebPMemoryWriter>::uninit();
        webp::WebPMemoryWriterInit(writer.as_mut_ptr());
        let mut writer = writer.assume_init();
        picture.writer = Some(webp::WebPMemoryWrite);
        picture.custom_ptr = (&raw mut writer).cast();
        let coded = webp::WebPPictureImportRGB(&mut picture, rgb.as_ptr(), width * 3) != 0
            && webp::WebPEncode(config, &mut picture) != 0;
        webp::WebPPictureFree(&mut picture);
        let mut out = None;
        if coded && !writer.mem.is_null() {
            let (mut w, mut h) = (0, 0);
            let pixels = webp::WebPDecodeRGB(writer.mem, writer.size, &mut w, &mut h);
            if !pixels.is_null() {
                if (w, h) == (width, height) {
                    let decoded = std::slice::from_raw_parts(pixels, rgb.len()).to_vec();
                    out = Some((writer.size, decoded));
                }
                webp::WebPFree(pixels.cast());
            }
        }
        webp::WebPMemoryWriterClear(&mut writer);
        out
    }
}

/// The PSNR of `b` against `a` (8-bit channels), in dB; a large number for equal ones.
fn psnr(a: &[u8], b: &[u8]) -> f64 {
    let sum: u64 = a.iter().zip(b).map(|(&x, &y)| u64::from(x.abs_diff(y)).pow(2)).sum();
    let mse = sum as f64 / a.len().max(1) as f64;
    10.0 * (255.0 * 255.0 / mse.max(1e-6)).log10()
}

/// `file` (a WebP libwebp assembled) with a frame for every frame it was given, lasting
/// `durations`: libwebp merges a frame the same as the one before into that one's time, and
/// each such span is split again, its later frames one transparent pixel that changes nothing,
/// as the exact WebP writes an unchanged frame. So a lossy file has the render's frame count and
/// frame times, and `diff` compares it frame by frame. A file whose frames cannot be matched to
/// `durations` is left as it is.
fn every_frame(file: Vec<u8>, durations: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(file.len() + 64);
    let mut at = 12;
    let mut next = 0;
    out.extend_from_slice(&file[..at.min(file.len())]);
    let nothing = {
        // One transparent pixel, blended: what the exact encoder writes for an unchanged frame.
        let mut image = Vec::new();
        super::chunk(&mut image, b"VP8L", &super::vp8l::encode_fast(vec![0], 1, 1, true));
        image
    };
    while at + 8 <= file.len() {
        let size = u32::from_le_bytes([file[at + 4], file[at + 5], file[at + 6], file[at + 7]]) as usize;
        let end = (at + 8 + size + (size & 1)).min(file.len());
        let mut chunk = file[at..end].to_vec();
        if &chunk[..4] == b"VP8X" && chunk.len() > 8 {
            // The pixels that change nothing are transparent.
            chunk[8] |= 0x10;
        }
        let mut split = Vec::new();
        if &chunk[..4] == b"ANMF" && chunk.len() >= 24 {
            let duration = u32::from_le_bytes([chunk[20], chunk[21], chunk[22], 0]);
            let mut span = 0;
            let first = next;
            while next < durations.len() && span < duration {
                span += durations[next];
                next += 1;
            }
            if span != duration || next == first {
                return file;
            }
            chunk[20..23].copy_from_slice(&durations[first].to_le_bytes()[..3]);
            for &d in &durations[first + 1..next] {
                let mut anmf = vec![0u8; 6];
                anmf.extend([0u8; 6]);
                anmf.extend_from_slice(&d.to_le_bytes()[..3]);
                anmf.push(0);
                anmf.extend_from_slice(&nothing);
                super::chunk(&mut split, b"ANMF", &anmf);
            }
        }
        out.extend_from_slice(&chunk);
        out.extend_from_slice(&split);
        at = end;
    }
    if next != durations.len() {
        return file;
    }
    out
}

/// `file` as an animation of one frame lasting `duration` ms, if libwebp made a still of it (it
/// does when every frame is the same: one frame in all, a simple `VP8 ` file or a `VP8X` one
/// without animation): the still's image chunks (`ALPH`, `VP8 `, `VP8L`) in an `ANMF` over the
/// whole canvas, after a `VP8X` that says animation and alpha and an `ANIM` with the
/// animation's background colour and loop count. A file that is an animation already is left as
/// it is.
fn as_animation(file: Vec<u8>, (width, height): (u32, u32), duration: u32, looping: bool) -> Vec<u8> {
    let mut image = Vec::new();
    let mut at = 12;
    while at + 8 <= file.len() {
        let size = u32::from_le_bytes([file[at + 4], file[at + 5], file[at + 6], file[at + 7]]) as usize;
        let end = (at + 8 + size + (size & 1)).min(file.len());
        match &file[at..at + 4] {
            b"ANIM" | b"ANMF" => return file,
            b"ALPH" | b"VP8 " | b"VP8L" => image.extend_from_slice(&file[at..end]),
            _ => {}
        }
        at = end;
    }
    if image.is_empty() {
        return file;
    }
    let mut out = file[..12].to_vec();
    let canvas = |v: u32| (v - 1).to_le_bytes()[..3].to_vec();
    let mut vp8x = vec![0x02 | 0x10, 0, 0, 0];
    vp8x.extend(canvas(width));
    vp8x.extend(canvas(height));
    super::chunk(&mut out, b"VP8X", &vp8x);
    // The background white and opaque, as libwebp's encoder is set (bgcolor 0xffffffff);
    // 0 loops forever.
    let mut anim = vec![0xff; 4];
    anim.extend(u16::from(!looping).to_le_bytes());
    super::chunk(&mut out, b"ANIM", &anim);
    let mut anmf = vec![0u8; 6];
    anmf.extend(canvas(width));
    anmf.extend(canvas(height));
    anmf.extend_from_slice(&duration.to_le_bytes()[..3]);
    anmf.push(0);
    anmf.extend_from_slice(&image);
    super::chunk(&mut out, b"ANMF", &anmf);
    let size = (out.len() - 8) as u32;
    out[4..8].copy_from_slice(&size.to_le_bytes());
    out
}

/// `file` (a WebP libwebp assembled) with `label` (the provenance, ` quality=Q` among it) in a
/// chunk of its own at the end, which decoders pass over, as a part's label is carried; the RIFF
/// size grows to hold it.
fn labelled(mut file: Vec<u8>, label: &str) -> Result<Vec<u8>> {
    let text = label.as_bytes();
    file.extend_from_slice(super::PART_CHUNK);
    file.extend((text.len() as u32).to_le_bytes());
    file.extend_from_slice(text);
    if text.len() % 2 == 1 {
        file.push(0);
    }
    let size = u32::try_from(file.len() - 8)
        .map_err(|_| Error::usage("the WebP is larger than 4 GiB, which RIFF cannot hold", Some(super::RIFF_HINT)))?;
    file[4..8].copy_from_slice(&size.to_le_bytes());
    Ok(file)
}

impl<W: Write> crate::encode::Encoder for WebpLossy<W> {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[[u8; 3]]) -> Result<()> {
        self.add(pixels.as_flattened())
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        self.add(rgb.as_flattened())
    }

    fn finish(mut self) -> Result<EncodeTimes> {
        let started = Instant::now();
        let end = i32::try_from(self.at_ms)
            .map_err(|_| Error::usage("the WebP is longer than 24 days, which its timestamps cannot hold", None))?;
        // SAFETY: a null frame marks the end; the assembled data is libwebp's allocation, copied
        // out before it is freed.
        let bytes = unsafe {
            if webp::WebPAnimEncoderAdd(self.encoder.0, std::ptr::null_mut(), end, std::ptr::null()) == 0 {
                return Err(self.error("end the animation"));
            }
            let mut data = webp::WebPData { bytes: std::ptr::null(), size: 0 };
            if webp::WebPAnimEncoderAssemble(self.encoder.0, &mut data) == 0 {
                return Err(self.error("assemble the animation"));
            }
            let bytes = std::slice::from_raw_parts(data.bytes, data.size).to_vec();
            webp::WebPFree(data.bytes.cast_mut().cast());
            bytes
        };
        let durations: Vec<u32> = (0..self.added).map(|i| self.stream.duration_ms(i)).collect();
        let canvas = (self.stream.width, self.stream.height);
        let whole = as_animation(bytes, canvas, durations.iter().sum(), self.stream.looping);
        let bytes = labelled(every_frame(whole, &durations), &self.stream.label())?;
        self.times.encode += started.elapsed();
        let started = Instant::now();
        self.out.write_all(&bytes).and_then(|()| self.out.flush()).map_err(Error::output)?;
        self.times.write += started.elapsed();
        Ok(self.times)
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{Effort, Encoder};

    fn stream(quality: u8) -> Stream {
        Stream {
            width: 48,
            height: 32,
            fps: 25,
            step: 1,
            render_frames: 6,
            looping: true,
            comment: "made by a test".into(),
            effort: Effort::Default,
            part: None,
            quality: None,
            lossy: None,
        }
        .with_quality(quality)
    }

    /// Six frames of a gradient with a moving square.
    fn encoded(quality: u8) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = WebpLossy::new(&mut out, &stream(quality), Vec::new()).unwrap();
        for k in 0..6 {
            let frame: Vec<[u8; 3]> = (0..48 * 32)
                .map(|i| {
                    let (x, y) = (i % 48, i / 48);
                    let inside = (k * 5..k * 5 + 10).contains(&x) && (8..18).contains(&y);
                    if inside { [250, 40, 30] } else { [(x * 5) as u8, (y * 7) as u8, 120] }
                })
                .collect();
            encoder.write_frame(&frame).unwrap();
        }
        encoder.finish().unwrap();
        out
    }

    #[test]
    fn an_animation_is_the_same_bytes_every_time_and_smaller_at_lower_quality() {
        let file = encoded(75);
        assert!(file.starts_with(b"RIFF") && &file[8..12] == b"WEBP", "{:?}", &file[..16]);
        assert!(file.windows(4).any(|w| w == b"ANMF") && file.windows(4).any(|w| w == b"VP8 "));
        assert!(!file.windows(4).any(|w| w == b"VP8L"), "lossy frames only");
        // Every frame is there (the six frames all differ here; merging is tested on renders).
        assert_eq!(file.windows(4).filter(|w| *w == b"ANMF").count(), 6);
        // The RIFF size is the file's, its label chunk included.
        assert_eq!(u32::from_le_bytes(file[4..8].try_into().unwrap()) as usize, file.len() - 8);
        assert!(file.ends_with(b"RIPL\x19\0\0\0made by a test quality=75\0"), "{:?}", &file[file.len() - 34..]);
        assert_eq!(encoded(75), file);
        assert!(encoded(20).len() < file.len());
    }
}
