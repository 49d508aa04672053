//! The `[seamless]` table (§11): a render that loops without a jump, by replaying its own
//! events through the pre-roll (`repeat`) and fading its last frames into the first
//! (`crossfade`).

use super::toml_reader::Table;
use super::{Clock, Seamless};
use crate::base::error::Result;

pub(super) const KEYS: &[&str] = &["crossfade", "repeat"];

/// Seconds for a ripple to fall to 1/1000 of its height at damping `shift` and `steps` steps a
/// second: about ten half-lives of `1.386·2^shift / S` (§10).
pub fn settle_seconds(shift: u32, steps: u64) -> f64 {
    1000f64.log2() * 1.386 * f64::from(1u32 << shift) / steps as f64
}

/// The pre-roll a loop should have, in whole seconds: long enough for the water to forget its
/// still start (`settle` seconds, see [`settle_seconds`]) and for a crossfade of `crossfade`
/// frames at `fps`. The one figure every message about a loop's pre-roll gives.
pub fn loop_preroll(settle: f64, crossfade: Option<u64>, fps: u32) -> u64 {
    let fade = crossfade.map_or(0.0, |o| o as f64 / f64::from(fps));
    settle.max(fade).ceil() as u64
}

/// Reads `[seamless]` for a render of `frames` frames after `first_frame` pre-roll frames, on
/// `clock` at `fps`; `settle` is how long the scene's water takes to forget its start.
pub(super) fn read_seamless(
    t: &Table<'_, '_>,
    (first_frame, frames): (u64, u64),
    clock: Clock,
    fps: u32,
    settle: f64,
) -> Result<Seamless> {
    let repeat_key = t.get("repeat");
    let repeat = repeat_key.as_ref().map(|v| v.bool()).transpose()?.unwrap_or(false);
    let crossfade = match t.get("crossfade") {
        None => None,
        Some(v) if frames < 2 => {
            return Err(v.error("needs at least 2 frames to fade between: the render has 1"));
        }
        Some(v) => {
            let o = v.int(1..=frames as i64 - 1)? as u64;
            if first_frame < o {
                return Err(v.error(format!(
                    "fades from {o} pre-roll frames, but the render has {first_frame}: give the loop a pre-roll, \
                     video.preroll = {} (seconds, for the water to forget its still start; events stay where they \
                     are)",
                    loop_preroll(settle, Some(o), fps)
                )));
            }
            Some(o)
        }
    };
    if let (true, Some(v), Clock::Steps { per_second }) = (repeat, repeat_key, clock) {
        let (n, s, fps) = (frames, u64::from(per_second), u64::from(fps));
        if (n * s) % fps != 0 {
            // N·S must be a multiple of fps: N a multiple of fps / gcd(S, fps) frames.
            let every = fps / gcd(s, fps);
            return Err(v.error(format!(
                "needs a render of whole steps: {n} frames at {fps} fps are {} steps at {s} steps a second; \
                 make video.frames a multiple of {every} (a duration of {:.3} s, {:.3} s, …)",
                n as f64 * s as f64 / fps as f64,
                every as f64 / fps as f64,
                2.0 * every as f64 / fps as f64
            )));
        }
    }
    Ok(Seamless { crossfade, repeat })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}
