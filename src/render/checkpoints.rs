//! Checkpoints of a long render (`--checkpoints DIR --checkpoint-every K`): the simulation's
//! state at the start of every K-th output frame, each in a file of its own, so that a part
//! (`--frames A..B`) starts from the nearest one at or before A instead of simulating every
//! frame before it. Each file says which render it belongs to (the build, the scene with its
//! overrides, the background and the walls), and a part takes only its own render's.
//!
//! `DIR/frame_NNNNNN.checkpoint`: a line `ripple-render checkpoint`, a line naming the render,
//! the output frame (u64, little-endian), then the state as [`crate::sim::state`] lays it
//! out. A file is written beside its name and renamed into place, so a half-written one never
//! has the name.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use super::Inputs;
use crate::base::error::{Error, Result};
use crate::sim::Surface;
use crate::sim::water::Water;

const MAGIC: &[u8] = b"ripple-render checkpoint\n";

/// Where a render's checkpoints are, and every how many output frames it writes one.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    dir: PathBuf,
    every: Option<u64>,
    /// The line that names the render a checkpoint belongs to.
    identity: String,
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
        let identity = format!("{provenance} canvas={w}x{h} walls={:016x}", walls.digest());
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

    /// Writes the state `surface` goes on from at output frame `frame`.
    pub fn write<W: Water>(&self, frame: u64, surface: &mut Surface<W>) -> Result<()> {
        let path = self.path(frame);
        let temp = self.dir.join(format!(".frame_{frame:06}.checkpoint.{}.tmp", std::process::id()));
        let io = |e| Error::io(&path, e);
        let file = File::create(&temp).map_err(io)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let written = (|| {
            out.write_all(MAGIC)?;
            out.write_all(self.identity.as_bytes())?;
            out.write_all(b"\n")?;
            out.write_all(&frame.to_le_bytes())?;
            surface.save(&mut out)?;
            out.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()
        })();
        let renamed = written.and_then(|()| std::fs::rename(&temp, &path));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        renamed.map_err(io)
    }

    /// Starts `surface` from the nearest checkpoint of this render at or before output frame
    /// `frame`, if there is one; returns its frame. Checkpoints of another render are passed
    /// over; one of this render that cannot be read is an error.
    pub fn resume<W: Water>(&self, frame: u64, surface: &mut Surface<W>) -> Result<Option<u64>> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Ok(None) };
        let mut found: Vec<u64> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_prefix("frame_")?.strip_suffix(".checkpoint")?.parse::<u64>().ok()
            })
            .filter(|&f| f <= frame)
            .collect();
        found.sort_unstable();
        for &at in found.iter().rev() {
            let path = self.path(at);
            let bad = |e: std::io::Error| Error::input(&path, format!("cannot be read: {e}"));
            let mut input = BufReader::with_capacity(1 << 20, File::open(&path).map_err(bad)?);
            let mut head = vec![0u8; MAGIC.len() + self.identity.len() + 1];
            if input.read_exact(&mut head).is_err() || head != [MAGIC, self.identity.as_bytes(), b"\n"].concat() {
                // Another render's (another scene, build or background).
                continue;
            }
            let mut number = [0u8; 8];
            input.read_exact(&mut number).map_err(bad)?;
            if u64::from_le_bytes(number) != at {
                return Err(bad(std::io::Error::other("it names another frame than its file")));
            }
            surface.restore(&mut input).map_err(bad)?;
            return Ok(Some(at));
        }
        Ok(None)
    }
}
