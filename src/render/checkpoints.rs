//! Checkpoints of a long render (`--checkpoints DIR --checkpoint-every K`): the simulation's
//! state at the start of every K-th output frame, each in a file of its own, so that a part
//! (`--frames A..B`) starts from the nearest one at or before A instead of simulating every
//! frame before it. Each file says which render it belongs to (the build, the scene with its
//! overrides, the background and the walls), and a part takes only its own render's.
//!
//! `DIR/frame_NNNNNN.checkpoint`, version 2:
//!
//! ```text
//! "ripple-render checkpoint 2\n"   the render's identity, "\n"   u64 output frame
//! the state, as crate::sim::state lays it out
//! u64 XXH3-64 of every byte before it
//! ```
//!
//! All numbers are little-endian. A checkpoint is used only when everything in it holds: its
//! length is the one this render's state has at its frame, its checksum matches, and its
//! clock and damping are the scene's there. Anything else there (another render's, an older
//! version's, a damaged or cut file, a pipe) is passed over with a note, and the part starts
//! from an earlier checkpoint or from the start. A checkpoint is written as any output is
//! ([`Staged`]): it appears whole or not at all, a signal leaves no temporary behind, and the
//! temporaries of a run that died are removed by the next run that writes checkpoints there.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use super::Inputs;
use crate::base::error::{Error, Result};
use crate::base::files::{hash_into, open_regular};
use crate::output::{Policy, Staged, left_by_dead_run, sweep_dead_runs};
use crate::sim::Surface;
use crate::sim::water::Water;

/// The first line of a checkpoint of this version.
const MAGIC: &[u8] = b"ripple-render checkpoint 2\n";
/// What every version's first line starts with.
const ANY_VERSION: &[u8] = b"ripple-render checkpoint";

/// Where a render's checkpoints are, and every how many output frames it writes one.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    dir: PathBuf,
    every: Option<u64>,
    /// The line that names the render a checkpoint belongs to.
    identity: String,
}

/// Where a part started from, and the checkpoints it passed over on the way, with why.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Resumed {
    /// The output frame of the checkpoint the part started from, if any.
    pub from: Option<u64>,
    /// One line for each reason checkpoints were passed over, naming them.
    pub passed_over: Vec<String>,
}

impl Checkpoints {
    /// The checkpoints of a render over `inputs` (its scene's among them: see
    /// [`Inputs::provenance`]) in `dir`, one written every `every` output frames if given.
    pub fn new(dir: &Path, every: Option<u64>, inputs: &Inputs) -> Checkpoints {
        let provenance = inputs.provenance.to_text();
        let mut walls = Xxh3::new();
        let (w, h) = inputs.shore.size();
        if inputs.shore.walls().is_some() {
            for i in 0..w * h {
                walls.update(&[u8::from(inputs.shore.is_wall(i))]);
            }
        }
        let identity = format!("{provenance} build={} canvas={w}x{h} walls={:016x}", build(), walls.digest());
        Checkpoints { dir: dir.to_path_buf(), every: every.filter(|&k| k > 0), identity }
    }

    /// The file of the checkpoint at output frame `frame`.
    fn path(&self, frame: u64) -> PathBuf {
        self.dir.join(format!("frame_{frame:06}.checkpoint"))
    }

    /// Whether a checkpoint is due after output frame `index` of `frames` has been simulated:
    /// at the start of every K-th frame, but not past the last.
    pub fn due_after(&self, index: u64, frames: u64) -> bool {
        self.every.is_some_and(|k| (index + 1).is_multiple_of(k) && index + 1 < frames)
    }

    /// Removes what runs that died while writing checkpoints here left behind: their
    /// temporaries, and those of versions that named them `.frame_NNNNNN.checkpoint.PID.tmp`.
    pub fn sweep(&self) {
        sweep_dead_runs(&self.dir, |stem| frame_of(stem).is_some());
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")).and_then(|n| n.rsplit_once('.'));
            if let Some((stem, pid)) = pid
                && frame_of(stem).is_some()
                && let Ok(pid) = pid.parse::<u32>()
                && left_by_dead_run(pid, &entry.path())
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Writes the state `surface` goes on from at output frame `frame`.
    pub fn write<W: Water>(&self, frame: u64, surface: &mut Surface<W>) -> Result<()> {
        let path = self.path(frame);
        if let Ok(meta) = std::fs::metadata(&path)
            && !meta.is_file()
        {
            let kind = crate::base::files::file_kind(&meta);
            return Err(Error::usage(
                format!("cannot write the checkpoint {}: it is {kind}", path.display()),
                Some("remove it, or name another folder with --checkpoints"),
            ));
        }
        let staged = Staged::begin(&path, Policy::File { force: true }, &[])?;
        let mut out = Hashing::new(BufWriter::with_capacity(1 << 20, staged.file()?));
        let written = (|| {
            out.write_all(MAGIC)?;
            out.write_all(self.identity.as_bytes())?;
            out.write_all(b"\n")?;
            out.write_all(&frame.to_le_bytes())?;
            surface.save(&mut out)?;
            let sum = out.hash.digest();
            out.inner.write_all(&sum.to_le_bytes())?;
            out.inner.flush()
        })();
        written.map_err(|e| Error::io(&path, e))?;
        staged.commit()
    }

    /// Starts `surface` from the nearest checkpoint of this render at or before output frame
    /// `frame` that holds: see the module's docs for what is passed over.
    pub fn resume<W: Water>(&self, frame: u64, surface: &mut Surface<W>) -> Result<Resumed> {
        let mut resumed = Resumed::default();
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Ok(resumed) };
        let mut found: Vec<u64> = entries
            .flatten()
            .filter_map(|e| frame_of(&e.file_name().to_string_lossy()))
            .filter(|&f| f <= frame)
            .collect();
        found.sort_unstable();
        let mut passed: Vec<(String, Vec<u64>)> = Vec::new();
        for &at in found.iter().rev() {
            let length = self.header_len() + surface.saved_len(at) + 8;
            match self.check(at, length) {
                Ok(()) => {
                    self.restore(at, surface)?;
                    resumed.from = Some(at);
                    break;
                }
                Err(why) => match passed.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, frames)) => frames.push(at),
                    None => passed.push((why, vec![at])),
                },
            }
        }
        resumed.passed_over = passed.into_iter().map(|(why, frames)| self.passed_over(&why, &frames)).collect();
        Ok(resumed)
    }

    /// "ck/frame_000020.checkpoint and ck/frame_000010.checkpoint: WHY".
    fn passed_over(&self, why: &str, frames: &[u64]) -> String {
        const SHOWN: usize = 3;
        let mut names: Vec<String> = frames.iter().take(SHOWN).map(|&f| self.path(f).display().to_string()).collect();
        if frames.len() > SHOWN {
            names.push(format!("{} more", frames.len() - SHOWN));
        }
        let names = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.concat(),
        };
        format!("passed over the checkpoint{} {names}: {why}", if frames.len() > 1 { "s" } else { "" })
    }

    /// Bytes before the state: the first line, the identity line and the frame.
    fn header_len(&self) -> u64 {
        (MAGIC.len() + self.identity.len() + 1 + 8) as u64
    }

    /// Whether the checkpoint at output frame `at` may be used: a regular file of `length`
    /// bytes, of this render, whose checksum holds. Reads it through once; says why not.
    fn check(&self, at: u64, length: u64) -> std::result::Result<(), String> {
        let (file, len) = open_regular(&self.path(at)).map_err(|e| format!("it cannot be read ({e})"))?;
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut head = vec![0u8; MAGIC.len() + self.identity.len() + 1];
        let read = read_up_to(&mut input, &mut head).map_err(|e| format!("it cannot be read ({e})"))?;
        let head = &head[..read];
        if !head.starts_with(ANY_VERSION) {
            return Err("it is not a checkpoint".to_string());
        }
        if !head.starts_with(MAGIC) {
            return Err("it was written by another version of ripple-render".to_string());
        }
        if head != [MAGIC, self.identity.as_bytes(), b"\n"].concat() {
            return Err("it belongs to another render (another scene, build, background or walls)".to_string());
        }
        if len != length {
            return Err(format!("it is damaged (it holds {len} bytes where this render's state takes {length})"));
        }
        let mut hash = Xxh3::new();
        hash.update(head);
        hash_into(&mut hash, (&mut input).take(length - 8 - head.len() as u64))
            .map_err(|e| format!("it cannot be read ({e})"))?;
        let mut sum = [0u8; 8];
        input.read_exact(&mut sum).map_err(|e| format!("it cannot be read ({e})"))?;
        if u64::from_le_bytes(sum) != hash.digest() {
            return Err("it is damaged (its checksum does not match)".to_string());
        }
        Ok(())
    }

    /// Restores `surface` from the checkpoint at output frame `at`, which [`Checkpoints::check`]
    /// passed: read again, its checksum again compared (it may have changed in between).
    fn restore<W: Water>(&self, at: u64, surface: &mut Surface<W>) -> Result<()> {
        let path = self.path(at);
        let bad = |e: std::io::Error| Error::input(&path, format!("cannot be used: {e}"));
        let (file, _) = open_regular(&path).map_err(bad)?;
        let mut input = Hashing::new(BufReader::with_capacity(1 << 20, file));
        let mut head = vec![0u8; MAGIC.len() + self.identity.len() + 1];
        input.read_exact(&mut head).map_err(bad)?;
        let mut number = [0u8; 8];
        input.read_exact(&mut number).map_err(bad)?;
        if u64::from_le_bytes(number) != at {
            return Err(bad(std::io::Error::other("it names another frame than its file")));
        }
        surface.restore(&mut input, at).map_err(bad)?;
        let sum = input.hash.digest();
        let mut stored = [0u8; 8];
        input.inner.read_exact(&mut stored).map_err(bad)?;
        if u64::from_le_bytes(stored) != sum {
            return Err(bad(std::io::Error::other("it changed while it was read")));
        }
        Ok(())
    }
}

/// This build, exactly: the XXH3-64 of the running program's file (read once, a few
/// milliseconds), so that two builds of one version never take each other's checkpoints (a
/// change to the water between them would draw wrong frames). `unknown` where the program
/// cannot be read, and then the version alone tells builds apart.
fn build() -> &'static str {
    static BUILD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BUILD.get_or_init(|| {
        let hashed = std::env::current_exe().and_then(|exe| {
            let mut hash = Xxh3::new();
            hash_into(&mut hash, std::fs::File::open(exe)?)?;
            Ok(format!("{:016x}", hash.digest()))
        });
        hashed.unwrap_or_else(|_| "unknown".to_string())
    })
}

/// The output frame a checkpoint's file name `frame_NNNNNN.checkpoint` names.
fn frame_of(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("frame_")?.strip_suffix(".checkpoint")?;
    digits.bytes().all(|b| b.is_ascii_digit()).then(|| digits.parse().ok()).flatten()
}

/// Reads into `buffer` until it is full or the input ends; returns how much was read.
fn read_up_to(input: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut read = 0;
    while read < buffer.len() {
        match input.read(&mut buffer[read..])? {
            0 => break,
            n => read += n,
        }
    }
    Ok(read)
}

/// A reader or writer that hashes what passes through it.
struct Hashing<T> {
    inner: T,
    hash: Xxh3,
}

impl<T> Hashing<T> {
    fn new(inner: T) -> Hashing<T> {
        Hashing { inner, hash: Xxh3::new() }
    }
}

impl<T: Read> Read for Hashing<T> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buffer)?;
        self.hash.update(&buffer[..n]);
        Ok(n)
    }
}

impl<T: Write> Write for Hashing<T> {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buffer)?;
        self.hash.update(&buffer[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_checkpoint_names_name_frames() {
        assert_eq!(frame_of("frame_000010.checkpoint"), Some(10));
        assert_eq!(frame_of("frame_1234567.checkpoint"), Some(1_234_567));
        assert_eq!(frame_of("frame_+10.checkpoint"), None);
        assert_eq!(frame_of("frame_000010.checkpoint.tmp"), None);
        assert_eq!(frame_of("frame_.checkpoint"), None);
    }

    #[test]
    fn what_passes_through_is_hashed() {
        let mut out = Hashing::new(Vec::new());
        out.write_all(b"water").unwrap();
        assert_eq!(out.hash.digest(), xxhash_rust::xxh3::xxh3_64(b"water"));
        let mut input = Hashing::new(&b"water"[..]);
        std::io::copy(&mut input, &mut std::io::sink()).unwrap();
        assert_eq!(input.hash.digest(), xxhash_rust::xxh3::xxh3_64(b"water"));
    }
}
