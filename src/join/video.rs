//! MP4 and WebM parts: joined by ffmpeg's concat demuxer, streams copied, nothing re-encoded.
//! Each part begins with a key frame, so the joined video plays every frame of every part.

use std::path::Path;
use std::process::{Command, Stdio};

use super::Part;
use crate::base::error::{Error, Result, os_reason};
use crate::output::Format;

/// Runs ffmpeg with `args`; its last words on failure.
fn ffmpeg(program: &Path, args: &[&std::ffi::OsStr], stdout: Stdio) -> Result<Vec<u8>> {
    let done = Command::new(program)
        .args(["-hide_banner", "-nostdin", "-loglevel", "error"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Error::Ffmpeg(format!("cannot start {}: {}", program.display(), os_reason(&e))))?;
    if !done.status.success() {
        let said = String::from_utf8_lossy(&done.stderr);
        let last: Vec<&str> = said.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        return Err(Error::Ffmpeg(format!("ffmpeg failed: {}", last[last.len().saturating_sub(3)..].join(" / "))));
    }
    Ok(done.stdout)
}

/// The part's label: its container's comment, as ffmpeg reads it.
pub fn label(path: &Path, program: Option<&Path>) -> Result<Option<String>> {
    let program = program.ok_or_else(|| Error::Ffmpeg("joining videos needs the ffmpeg program".into()))?;
    let args: [&std::ffi::OsStr; 5] =
        ["-i".as_ref(), path.as_os_str(), "-f".as_ref(), "ffmetadata".as_ref(), "-".as_ref()];
    let text =
        ffmpeg(program, &args, Stdio::piped()).map_err(|e| Error::input(path, format!("cannot be read: {e}")))?;
    let text = String::from_utf8_lossy(&text);
    // ffmetadata escapes '=', ';', '#', '\' and line ends with a backslash; Matroska's tag is
    // `COMMENT`, MP4's `comment`.
    fn value(line: &str) -> Option<&str> {
        line.strip_prefix("comment=").or_else(|| line.strip_prefix("COMMENT="))
    }
    let comment = text.lines().find_map(value).map(|value| {
        let mut out = String::new();
        let mut chars = value.chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' { chars.next().unwrap_or('\\') } else { c });
        }
        out
    });
    Ok(comment)
}

/// Joins the parts into `out` with ffmpeg's concat demuxer. Returns the canvas (unknown here:
/// (0, 0)).
pub fn join(parts: &[Part], format: Format, out: std::fs::File, program: &Path) -> Result<(u32, u32)> {
    let mut list = String::from("ffconcat version 1.0\n");
    for part in parts {
        let path = std::fs::canonicalize(&part.path).map_err(|e| Error::input(&part.path, os_reason(&e)))?;
        // A single-quoted path: a quote inside is closed, escaped and reopened.
        list += &format!("file '{}'\n", path.display().to_string().replace('\'', r"'\''"));
    }
    let dir = std::env::temp_dir();
    let name = dir.join(format!(".ripple-render-join-{}.txt", std::process::id()));
    std::fs::write(&name, list).map_err(|e| Error::io(&name, e))?;
    let container: &[&str] = match format {
        Format::Mp4 => &["-movflags", "+faststart", "-f", "mp4"],
        _ => &["-f", "webm"],
    };
    let mut args: Vec<&std::ffi::OsStr> = ["-f", "concat", "-safe", "0", "-i"].iter().map(|s| s.as_ref()).collect();
    args.push(name.as_os_str());
    // The parts' labels are not the whole's: a whole render's video carries none.
    args.extend(["-c", "copy", "-map_metadata", "-1"].iter().copied().map(std::ffi::OsStr::new));
    args.extend(container.iter().copied().map(std::ffi::OsStr::new));
    args.extend(["-y", "/dev/stdout"].iter().copied().map(std::ffi::OsStr::new));
    let done = ffmpeg(program, &args, Stdio::from(out));
    let _ = std::fs::remove_file(&name);
    done.map(|_| (0, 0))
}
