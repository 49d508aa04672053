//! Fitting an animation into a size budget (`--max-size`): a fixed ladder of ways to make it
//! smaller, tried in order, each written into a [`Capped`] buffer that gives up as soon as it
//! passes the budget. The first rung that fits is the output. The ladder and the render are
//! deterministic, so the same scene and budget give the same bytes.

use std::io::{Cursor, Seek, SeekFrom, Write};

use super::Effort;
use crate::base::error::Error;

/// One rung of the ladder: what is given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rung {
    /// Palette entries of a GIF (256: as asked); other formats keep every colour.
    pub entries: usize,
    /// Render frames per output frame (2: every other frame, each shown twice as long; 3: every
    /// third).
    pub step: u32,
    /// How many times smaller the canvas is, each side.
    pub scale: u32,
    /// The encoder's effort, when not the one asked for (the `max` effort, tried before anything
    /// is given up).
    pub effort: Option<Effort>,
    /// A WebP written lossy at this quality (tried before frames or the canvas are given up).
    pub quality: Option<u8>,
    /// A GIF written lossy at this level (`--lossy N`, tried before frames or the canvas are
    /// given up).
    pub lossy: Option<u8>,
}

const fn rung(entries: usize, step: u32, scale: u32) -> Rung {
    Rung { entries, step, scale, effort: None, quality: None, lossy: None }
}

const fn lossy(quality: u8, step: u32, scale: u32) -> Rung {
    Rung { quality: Some(quality), ..rung(256, step, scale) }
}

const fn lossy_gif(level: u8, entries: usize, step: u32, scale: u32) -> Rung {
    Rung { lossy: Some(level), ..rung(entries, step, scale) }
}

/// Nothing given up, at the `max` effort: the smallest file of the render as asked.
pub const AT_MAX: Rung = Rung { effort: Some(Effort::Max), ..AS_ASKED };

/// Nothing given up: the render as asked.
pub const AS_ASKED: Rung = rung(256, 1, 1);

/// The GIF ladder, best first: lossy at rising levels with every frame, every colour and the
/// whole canvas (a lossy GIF is a fraction of the plain one: pond at 40 is 0.40 of it), then at
/// the highest level fewer colours, then every other frame with fewer colours, then every third,
/// and only then half the canvas. Each rung gives up more than the one before it, so each is
/// smaller.
pub const GIF: [Rung; 12] = [
    AS_ASKED,
    lossy_gif(40, 256, 1, 1),
    lossy_gif(80, 256, 1, 1),
    lossy_gif(120, 256, 1, 1),
    lossy_gif(200, 256, 1, 1),
    lossy_gif(200, 64, 1, 1),
    lossy_gif(200, 32, 1, 1),
    lossy_gif(200, 32, 2, 1),
    lossy_gif(200, 16, 2, 1),
    lossy_gif(200, 16, 3, 1),
    lossy_gif(200, 32, 2, 2),
    lossy_gif(200, 16, 3, 2),
];

/// The APNG and WebP ladder (their colours are exact), best first: every other frame, every
/// third, then half the canvas with every other frame and every third (half the canvas with
/// every frame can be larger than every third frame of the whole: it is left out, so that each
/// rung is smaller than the one before).
pub const EXACT: [Rung; 5] = [AS_ASKED, rung(256, 2, 1), rung(256, 3, 1), rung(256, 2, 2), rung(256, 3, 2)];

/// The WebP ladder, best first: lossy at falling qualities with every frame and the whole canvas
/// (a lossy WebP is a fraction of the exact one's size: pond at quality 75 is 0.14 of it), then
/// at the lowest quality the APNG ladder's frames and canvas.
pub const WEBP: [Rung; 11] = [
    AS_ASKED,
    lossy(90, 1, 1),
    lossy(75, 1, 1),
    lossy(50, 1, 1),
    lossy(30, 1, 1),
    lossy(20, 1, 1),
    lossy(10, 1, 1),
    lossy(10, 2, 1),
    lossy(10, 3, 1),
    lossy(10, 2, 2),
    lossy(10, 3, 2),
];

/// The ladder of a GIF, an APNG or a WebP (`rungs`: [`GIF`], [`EXACT`] or [`WEBP`]) rendered at
/// `effort`: the rungs tried with the budget as the limit (after the render as asked, the same
/// at the `max` effort, unless that was asked), then the last, which is finished whatever its
/// size.
pub fn ladder(rungs: &[Rung], effort: Effort) -> (Vec<Rung>, Rung) {
    let mut tried = vec![AS_ASKED];
    if effort != Effort::Max {
        tried.push(AT_MAX);
    }
    tried.extend_from_slice(&rungs[1..rungs.len() - 1]);
    (tried, rungs[rungs.len() - 1])
}

impl Rung {
    /// Whether this rung keeps the frames as asked (whatever its effort, quality or lossy
    /// level): every frame, the whole canvas, every colour.
    pub fn as_asked(self) -> bool {
        Rung { effort: None, quality: None, lossy: None, ..self } == AS_ASKED
    }

    /// What it gives up, in words: "64 colours, every other frame, half the canvas".
    pub fn describe(self) -> String {
        let mut parts = Vec::new();
        if self.entries < 256 {
            parts.push(format!("{} colours", self.entries));
        }
        match self.step {
            1 => {}
            2 => parts.push("every other frame".to_string()),
            3 => parts.push("every third frame".to_string()),
            n => parts.push(format!("one frame in {n}")),
        }
        if self.scale == 2 {
            parts.push("half the canvas".to_string());
        }
        if let Some(effort) = self.effort {
            parts.push(format!("--effort {}", effort.name()));
        }
        if let Some(quality) = self.quality {
            parts.insert(0, format!("lossy at --quality={quality}"));
        }
        if let Some(level) = self.lossy {
            parts.insert(0, format!("--lossy={level}"));
        }
        if parts.is_empty() { "as asked".to_string() } else { parts.join(", ") }
    }
}

/// The marker inside the I/O error a [`Capped`] buffer gives when the budget is passed.
#[derive(Debug)]
pub struct OverBudget;

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the output passed its size budget")
    }
}

impl std::error::Error for OverBudget {}

/// Whether `error` is a [`Capped`] buffer giving up.
pub fn is_over_budget(error: &Error) -> bool {
    matches!(error, Error::Io { source, .. } if source.get_ref().is_some_and(|e| e.is::<OverBudget>()))
}

/// Bytes kept in memory up to a limit: a write past it fails with [`OverBudget`], which stops
/// the render at once. Without a limit (`u64::MAX`) it holds a file that must seek (a WebP) on
/// its way to a stream.
pub struct Capped {
    bytes: Cursor<Vec<u8>>,
    limit: u64,
}

impl Capped {
    /// An empty buffer that holds at most `limit` bytes (`u64::MAX`: no limit).
    pub fn new(limit: u64) -> Self {
        Capped { bytes: Cursor::new(Vec::new()), limit }
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes.into_inner()
    }

    /// How many bytes were written.
    pub fn len(&self) -> u64 {
        self.bytes.get_ref().len() as u64
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.bytes.get_ref().is_empty()
    }
}

impl Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.bytes.position() + bytes.len() as u64 > self.limit {
            return Err(std::io::Error::other(OverBudget));
        }
        self.bytes.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for Capped {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.bytes.seek(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_buffer_gives_up_past_its_limit_and_says_so() {
        let mut capped = Capped::new(5);
        capped.write_all(b"12345").unwrap();
        let error = capped.write_all(b"6").unwrap_err();
        assert!(is_over_budget(&Error::output(error)));
        let other = std::io::Error::other("disk on fire");
        assert!(!is_over_budget(&Error::output(other)));
        assert_eq!(capped.into_bytes(), b"12345");
    }

    #[test]
    fn rungs_say_what_they_give_up() {
        assert_eq!(GIF[0].describe(), "as asked");
        assert_eq!(GIF[2].describe(), "--lossy=80");
        assert_eq!(GIF[7].describe(), "--lossy=200, 32 colours, every other frame");
        assert_eq!(GIF[9].describe(), "--lossy=200, 16 colours, every third frame");
        assert_eq!(GIF[10].describe(), "--lossy=200, 32 colours, every other frame, half the canvas");
        assert_eq!(EXACT[3].describe(), "every other frame, half the canvas");
        assert_eq!(EXACT[4].describe(), "every third frame, half the canvas");
        assert_eq!(WEBP[2].describe(), "lossy at --quality=75");
        assert_eq!(WEBP[6].describe(), "lossy at --quality=10");
        assert_eq!(WEBP[9].describe(), "lossy at --quality=10, every other frame, half the canvas");
        // After the first, each rung gives up frames, canvas or colours, or goes lossy.
        for ladder in [&GIF[..], &EXACT[..], &WEBP[..]] {
            let lossy = |r: &Rung| r.lossy.is_some() || r.quality.is_some();
            assert!(ladder[0].as_asked() && ladder[1..].iter().all(|r| !r.as_asked() || lossy(r)));
        }
    }
}
