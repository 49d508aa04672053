//! MP4 and WebM output (§12): frames piped as raw RGB into an `ffmpeg` program found on
//! PATH, which encodes H.264 or VP9 into the staged output.
//!
//! ffmpeg writes into the output file it is handed as its standard output (reopened by name as
//! `/dev/stdout`, so that an MP4 can seek back and put its index first); a stream (`-o -`, a
//! pipe) gets a fragmented MP4, which needs no seeking, through a pipe of ours that counts the
//! bytes. An output still empty when ffmpeg exits is a failure, whatever its exit code. The end
//! of its messages is kept, and the last lines explain a failure. A failed or interrupted render
//! kills its process group (a wrapper script's encoder too), and the staged output goes with
//! the rest.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Instant;

use super::{EncodeTimes, Stream};
use crate::base::error::{Error, Result, os_reason};
use crate::base::threads::spawn;

/// The video codecs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// H.264, yuv420p, in MP4.
    H264,
    /// VP9, yuv420p, in WebM.
    Vp9,
}

impl Codec {
    fn container(self) -> &'static str {
        match self {
            Codec::H264 => "MP4",
            Codec::Vp9 => "WebM",
        }
    }
}

/// The process ids of ffmpeg programs running for this process, so that a process about to end
/// by a signal can end them first: see [`stop_all`].
static RUNNING: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<u32>> {
    RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills every ffmpeg this process started that is still running: for a process about to end
/// by a signal without reaching its own clean-up (an ffmpeg left behind would go on encoding).
pub fn stop_all() {
    for pid in running().drain(..) {
        #[cfg(not(any(unix, windows)))]
        let _ = pid;
        #[cfg(unix)]
        if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
            // The group ffmpeg leads, and ffmpeg itself should it have left it.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        // Windows: the process and those it started, by taskkill.
        #[cfg(windows)]
        let _ = std::process::Command::new("taskkill")
            .args(["/F", "/T", "/PID", &pid.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// The `ffmpeg` program on PATH, if there is one (`ffmpeg.exe` on Windows).
pub fn find_ffmpeg() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let name = format!("ffmpeg{}", std::env::consts::EXE_SUFFIX);
    std::env::split_paths(&path).map(|dir| dir.join(&name)).find(|p| is_executable(p))
}

fn is_executable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// The error for a video asked for on a machine without ffmpeg.
pub fn missing_ffmpeg(codec: Codec) -> Error {
    Error::usage(
        format!("writing {} needs the ffmpeg program, and there is none on PATH", codec.container()),
        Some(
            "install ffmpeg (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg); .apng, .webp and \
             .gif need nothing else",
        ),
    )
}

/// The canvas a codec is given: H.264 in yuv420p needs even sides, so an odd side gets its last
/// column or row once more; VP9 takes any size.
pub fn coded_size(codec: Codec, width: u32, height: u32) -> (u32, u32) {
    match codec {
        Codec::H264 => (width + width % 2, height + height % 2),
        Codec::Vp9 => (width, height),
    }
}

/// The codec's CRF (constant rate factor: lower is better and larger) for `--quality Q`, 1–100:
/// quality 75 is the encoder's own default (x264's 23, libvpx-vp9's 31), 100 is CRF 0, 1 the
/// codec's worst (51, 63), straight lines between. With no quality: 16 and 24, differences a
/// viewer does not see.
pub fn crf(codec: Codec, quality: Option<u8>) -> u32 {
    let (default, at_75, worst) = match codec {
        Codec::H264 => (16, 23, 51),
        Codec::Vp9 => (24, 31, 63),
    };
    let Some(q) = quality.map(|q| u32::from(q.clamp(1, 100))) else { return default };
    // Rounded to the nearest whole CRF, halves up.
    if q >= 75 { (at_75 * (100 - q) * 2 + 25) / 50 } else { at_75 + ((worst - at_75) * (75 - q) * 2 + 74) / 148 }
}

/// ffmpeg's arguments after the program name.
///
/// A part of a split render (`label`) carries its provenance as the container's comment, for
/// `join`; a whole render carries none.
fn arguments(
    (codec, crf): (Codec, u32),
    (width, height): (u32, u32),
    fps: u32,
    stream: bool,
    label: Option<&str>,
) -> Vec<String> {
    let mut args: Vec<String> = [
        "-hide_banner",
        "-nostdin",
        "-loglevel",
        "error",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-video_size",
        &format!("{width}x{height}"),
        "-framerate",
        &fps.to_string(),
        "-i",
        "pipe:0",
        "-an",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let crf = crf.to_string();
    let codec_args: &[&str] = match codec {
        // The `animation` tune keeps flat areas flat.
        Codec::H264 => {
            &["-c:v", "libx264", "-preset", "medium", "-tune", "animation", "-crf", &crf, "-pix_fmt", "yuv420p"]
        }
        Codec::Vp9 => &[
            "-c:v",
            "libvpx-vp9",
            "-crf",
            &crf,
            "-b:v",
            "0",
            "-deadline",
            "good",
            "-cpu-used",
            "4",
            "-row-mt",
            "1",
            "-pix_fmt",
            "yuv420p",
        ],
    };
    args.extend(codec_args.iter().map(|s| s.to_string()));
    args.extend(["-r".to_string(), fps.to_string()]);
    if let Some(label) = label {
        args.extend(["-metadata".to_string(), format!("comment={label}")]);
    }
    let container: &[&str] = match (codec, stream) {
        (Codec::H264, false) => &["-movflags", "+faststart", "-f", "mp4", "-y", "/dev/stdout"],
        (Codec::H264, true) => &["-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", "pipe:1"],
        (Codec::Vp9, false) => &["-f", "webm", "-y", "/dev/stdout"],
        (Codec::Vp9, true) => &["-f", "webm", "pipe:1"],
    };
    args.extend(container.iter().map(|s| s.to_string()));
    args
}

/// Bytes a video encoder holds per canvas pixel: its copy of the background and a frame with
/// its repeated column or row (ffmpeg's own memory is its own).
pub const BYTES_PER_PIXEL: u64 = 3;

/// The most of ffmpeg's last messages kept to explain a failure (it may say megabytes).
const MESSAGES: usize = 4096;

/// What ffmpeg wrote into.
enum Sink {
    /// The staged file (another handle on it), measured when ffmpeg is done.
    File(std::fs::File),
    /// A stream, which cannot be measured: ffmpeg writes into a pipe copied into it on a thread
    /// that counts the bytes.
    Copied(JoinHandle<u64>),
}

impl Sink {
    /// The bytes written.
    fn written(self) -> u64 {
        match self {
            Sink::File(file) => file.metadata().map_or(0, |m| m.len()),
            Sink::Copied(copy) => copy.join().unwrap_or(0),
        }
    }
}

/// Ends ffmpeg and everything it started: it leads a process group of its own (a wrapper
/// script's encoder is in it too).
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
}

/// Frames piped into a running ffmpeg.
pub struct Video {
    codec: Codec,
    child: Child,
    stdin: Option<ChildStdin>,
    /// The last of ffmpeg's messages (at most [`MESSAGES`] bytes), read on a thread of their own
    /// so it never blocks on them.
    messages: Option<JoinHandle<Vec<u8>>>,
    /// How to tell what ffmpeg wrote: an output that is empty at the end is a failure.
    sink: Option<Sink>,
    background: Vec<[u8; 3]>,
    width: usize,
    coded: (u32, u32),
    /// A frame with its repeated column or row, for an odd side.
    row: Vec<u8>,
    /// The output frames it takes (a part of a split render takes some).
    held: std::ops::Range<u64>,
    times: EncodeTimes,
}

impl Video {
    /// Starts `ffmpeg` (at `program`) writing `stream`'s frames as `codec` into `out`, frames
    /// gathered from `background` or given whole in RGB; `pipe` says `out` is a pipe or device,
    /// which cannot seek.
    pub fn start(
        program: &std::path::Path,
        codec: Codec,
        out: std::fs::File,
        pipe: bool,
        stream: &Stream,
        background: Vec<[u8; 3]>,
    ) -> Result<Video> {
        let coded = coded_size(codec, stream.width, stream.height);
        let mut command = Command::new(program);
        let label = stream.part.is_some().then(|| stream.label());
        command.args(arguments((codec, crf(codec, stream.quality)), coded, stream.fps, pipe, label.as_deref()));
        let mut out = Some(out);
        let sink = match pipe {
            true => None,
            false => out.as_ref().and_then(|f| f.try_clone().ok()).map(Sink::File),
        };
        let stdout = if pipe { Stdio::piped() } else { Stdio::from(out.take().expect("the output, not yet given")) };
        command.stdin(Stdio::piped()).stdout(stdout).stderr(Stdio::piped());
        // A group of its own: a Ctrl-C at the terminal reaches the render alone, which then
        // stops ffmpeg itself (and removes the output) instead of racing it.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| Error::Ffmpeg(format!("cannot start {}: {}", program.display(), os_reason(&e))))?;
        running().push(child.id());
        let stdin = child.stdin.take();
        let messages = child.stderr.take().map(|mut stderr| {
            spawn("ffmpeg-messages", move || {
                let (mut text, mut chunk) = (Vec::new(), [0u8; 8192]);
                while let Ok(n @ 1..) = stderr.read(&mut chunk) {
                    text.extend_from_slice(&chunk[..n]);
                    if text.len() > 2 * MESSAGES {
                        text.drain(..text.len() - MESSAGES);
                    }
                }
                text
            })
        });
        let sink = match (sink, child.stdout.take(), out) {
            (Some(sink), ..) => Ok(Some(sink)),
            (None, Some(mut from), Some(mut to)) => spawn("ffmpeg-output", move || {
                let mut written = 0u64;
                let mut chunk = vec![0u8; 1 << 16];
                while let Ok(n @ 1..) = from.read(&mut chunk) {
                    if to.write_all(&chunk[..n]).is_err() {
                        break;
                    }
                    written += n as u64;
                }
                written
            })
            .map(|copy| Some(Sink::Copied(copy))),
            _ => Ok(None),
        };
        // A thread the system would not start: ffmpeg is stopped, and the render fails.
        let (messages, sink) = match (messages.transpose(), sink) {
            (Ok(messages), Ok(sink)) => (messages, sink),
            (Err(e), _) | (_, Err(e)) => {
                let _ = child.kill();
                let _ = child.wait();
                running().retain(|&pid| pid != child.id());
                return Err(e);
            }
        };
        Ok(Video {
            codec,
            child,
            stdin,
            messages,
            sink,
            background,
            width: stream.width as usize,
            coded,
            row: Vec::new(),
            held: stream.held(),
            times: EncodeTimes::default(),
        })
    }

    /// Waits for ffmpeg to end and turns a failure into one message with its last words.
    fn wait(&mut self) -> Result<()> {
        self.stdin = None;
        let status = self.child.wait();
        running().retain(|&pid| pid != self.child.id());
        let status = status.map_err(|e| Error::Ffmpeg(format!("waiting for ffmpeg: {e}")))?;
        let messages = self.messages.take().and_then(|t| t.join().ok()).unwrap_or_default();
        let written = self.sink.take().map_or(0, Sink::written);
        let text = String::from_utf8_lossy(&messages);
        let last: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let mut said = last[last.len().saturating_sub(3)..].join(" / ");
        if said.len() > 600 {
            let cut = (said.len() - 600..said.len()).find(|&i| said.is_char_boundary(i)).unwrap_or(0);
            said = format!("…{}", &said[cut..]);
        }
        if status.success() && written == 0 {
            let said = if said.is_empty() { String::new() } else { format!(": {said}") };
            return Err(Error::Ffmpeg(format!(
                "ffmpeg could not make the {} (it exited with code 0 but wrote nothing){said}",
                self.codec.container()
            )));
        }
        if status.success() {
            return Ok(());
        }
        let how = match status.code() {
            Some(code) => format!("exited with code {code}"),
            None => {
                #[cfg(unix)]
                let signal = std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0);
                #[cfg(not(unix))]
                let signal = 0;
                format!("was killed by signal {signal}")
            }
        };
        let said = if said.is_empty() { String::new() } else { format!(": {said}") };
        Err(Error::Ffmpeg(format!("ffmpeg could not make the {} (it {how}){said}", self.codec.container())))
    }
}

impl super::Encoder for Video {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[[u8; 3]]) -> Result<()> {
        let started = Instant::now();
        let (coded_width, coded_height) = (self.coded.0 as usize, self.coded.1 as usize);
        let Some(stdin) = self.stdin.as_mut() else { return self.wait() };
        // One write a frame (a write a row costs a system call each): the frame itself, or with
        // an odd side its last column or row once more.
        let bytes = if (coded_width, coded_height) == (self.width, pixels.len() / self.width) {
            pixels.as_flattened()
        } else {
            self.row.clear();
            for y in 0..coded_height {
                let row = &pixels[y.min(pixels.len() / self.width - 1) * self.width..][..self.width];
                self.row.extend_from_slice(row.as_flattened());
                if coded_width > self.width {
                    self.row.extend_from_slice(&row[self.width - 1]);
                }
            }
            &self.row
        };
        let written = stdin.write_all(bytes);
        self.times.write += started.elapsed();
        match written {
            Ok(()) => Ok(()),
            // ffmpeg stopped reading: its own message says why.
            Err(source) => self.wait().and(Err(Error::output(source))),
        }
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        self.write_frame(rgb)
    }

    fn wanted(&self) -> std::ops::Range<u64> {
        self.held.clone()
    }

    fn finish(mut self) -> Result<EncodeTimes> {
        let started = Instant::now();
        self.wait()?;
        // ffmpeg encodes while frames arrive; what is left after the last is its own time.
        self.times.encode += started.elapsed();
        Ok(self.times)
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}

impl Drop for Video {
    fn drop(&mut self) {
        // A render that failed or was interrupted: ffmpeg must not outlive it.
        if self.messages.is_some() {
            kill_group(&mut self.child);
            let _ = self.child.wait();
            running().retain(|&pid| pid != self.child.id());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h264_gets_even_sides_and_vp9_any() {
        assert_eq!(coded_size(Codec::H264, 101, 75), (102, 76));
        assert_eq!(coded_size(Codec::H264, 100, 76), (100, 76));
        assert_eq!(coded_size(Codec::Vp9, 101, 75), (101, 75));
    }

    #[test]
    fn a_stream_gets_a_fragmented_mp4() {
        let args = arguments((Codec::H264, 16), (64, 48), 30, true, None).join(" ");
        assert!(args.contains("frag_keyframe+empty_moov") && args.ends_with("pipe:1"), "{args}");
        let args = arguments((Codec::H264, 16), (64, 48), 30, false, None).join(" ");
        assert!(args.contains("+faststart") && args.ends_with("/dev/stdout"), "{args}");
        assert!(args.contains("-framerate 30") && args.contains("-video_size 64x48"), "{args}");
    }

    #[test]
    fn quality_maps_onto_the_codecs_crf() {
        // No quality: today's settings; 75: the encoder's own default; 100: CRF 0; 1: the worst.
        assert_eq!([None, Some(75), Some(100), Some(1), Some(50)].map(|q| crf(Codec::H264, q)), [16, 23, 0, 51, 32]);
        assert_eq!([None, Some(75), Some(100), Some(1), Some(50)].map(|q| crf(Codec::Vp9, q)), [24, 31, 0, 63, 42]);
        // Lower quality, higher CRF, all along.
        for codec in [Codec::H264, Codec::Vp9] {
            assert!((1..100).all(|q| crf(codec, Some(q)) >= crf(codec, Some(q + 1))));
        }
        let args = arguments((Codec::Vp9, 42), (64, 48), 30, false, None).join(" ");
        assert!(args.contains("-crf 42"), "{args}");
    }
}
