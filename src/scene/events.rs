//! The timed tables: `[[stone]]`, `[[swipe]]`, `[rain]` and `[[damping]]`, their times
//! resolved to units: frames, or steps in step mode (§10). `rate` is units per second.

use super::frame_of;
use super::toml_reader::{COORD, RADIUS, SHIFT, Table, Value, WEIGHT, read_all};
use super::{DampingChange, Interaction, Rain, Stone, Swipe, SwipeTiming};
use crate::base::error::Result;

pub(super) fn read_stone(t: &Table<'_, '_>, rate: u32, width: u32, height: u32) -> Result<Stone> {
    let unit = frame_of(t.require("at", "a time in seconds")?.time()?, rate);
    let on_canvas = |key: &str, size: u32| -> Result<i64> {
        let v = t.require(key, "a pixel coordinate")?;
        let max = i64::from(size) - 1;
        let n = v.integer(&format!("an integer pixel coordinate in 0..={max}"))?;
        if (0..=max).contains(&n) {
            Ok(n)
        } else {
            Err(v.error(format!("is off the canvas: allowed 0..={max} (canvas {width}×{height})")))
        }
    };
    let x = on_canvas("x", width)?;
    let y = on_canvas("y", height)?;
    let radius = t.get("radius").map(|v| v.int(RADIUS)).transpose()?.unwrap_or(4);
    let weight = t.get("weight").map(|v| v.int(WEIGHT)).transpose()?.unwrap_or(64);
    Ok(Stone { unit, x, y, radius, weight })
}

pub(super) fn read_swipe(t: &Table<'_, '_>, rate: u32) -> Result<Swipe> {
    let from = t.require("from", "a time in seconds")?;
    let until = t.require("until", "a time in seconds")?;
    let (from_s, until_s) = (from.time()?, until.time()?);
    if from_s > until_s {
        return Err(until.error(format!(
            "is before {} = {}: a swipe must end after it starts",
            from.path,
            from.text()
        )));
    }
    let path_value = t.require("path", "an array of [x, y] points")?;
    let points = path_value.array("an array of [x, y] points")?;
    if points.is_empty() {
        return Err(path_value.error("is empty: a swipe needs at least one [x, y] point"));
    }
    let path = read_all(&points, |p| {
        let xy = p.array("an [x, y] pair of integers")?;
        if xy.len() != 2 {
            return Err(p.error("is not an [x, y] pair of integers"));
        }
        Ok([xy[0].int(COORD)?, xy[1].int(COORD)?])
    })?;
    let radius = t.get("radius").map(|v| v.int(RADIUS)).transpose()?.unwrap_or(2);
    let weight = t.get("weight").map(|v| v.int(WEIGHT)).transpose()?.unwrap_or(40);
    let timing = match t.get("timing") {
        Some(v) => SwipeTiming::from_name(v.choice(&SwipeTiming::NAMES)?).unwrap_or_default(),
        None => SwipeTiming::Batched,
    };
    let (first_unit, last_unit) = (frame_of(from_s, rate), frame_of(until_s, rate));
    Ok(Swipe { first_unit, last_unit, path, radius, weight, timing })
}

fn read_range(v: Option<Value<'_, '_>>, allowed: std::ops::RangeInclusive<i64>, default: [i64; 2]) -> Result<[i64; 2]> {
    let Some(v) = v else { return Ok(default) };
    if !v.is_array() {
        if !v.is_integer() {
            let expected = format!("an integer in {}..={} or a [lo, hi] range", allowed.start(), allowed.end());
            return Err(v.wrong_type(&expected));
        }
        let n = v.int(allowed)?;
        return Ok([n, n]);
    }
    let items = v.array("an integer or a [lo, hi] range")?;
    if items.len() != 2 {
        return Err(v.error(format!(
            "is not a [lo, hi] range: expected an integer or two integers in {}..={}",
            allowed.start(),
            allowed.end()
        )));
    }
    let lo = items[0].int(allowed.clone())?;
    let hi = items[1].int(allowed)?;
    if lo > hi {
        return Err(v.error("is an empty range: lo must not exceed hi"));
    }
    Ok([lo, hi])
}

pub(super) fn read_rain(t: &Table<'_, '_>, rate: u32) -> Result<Rain> {
    let drops_per_second = t.require("drops_per_second", "a rate in 0..=100000")?.number_in(0.0, 100_000.0)?;
    let radius = read_range(t.get("radius"), RADIUS, [1, 2])?;
    let weight = read_range(t.get("weight"), WEIGHT, [32, 64])?;
    let from = t.get("from").map(|v| v.time()).transpose()?.unwrap_or(0.0);
    let until = match t.get("until") {
        Some(v) => {
            let s = v.time()?;
            if s < from {
                return Err(v.error(format!("is before rain.from = {from}: rain must stop after it starts")));
            }
            Some(frame_of(s, rate))
        }
        None => None,
    };
    let seed = t.get("seed").map(|v| v.int(0..=i64::MAX)).transpose()?.unwrap_or(0) as u64;
    Ok(Rain { drops_per_second, radius, weight, first_unit: frame_of(from, rate), end_unit: until, seed })
}

pub(super) fn read_damping(t: &Table<'_, '_>, rate: u32) -> Result<DampingChange> {
    let unit = frame_of(t.require("at", "a time in seconds")?.time()?, rate);
    let shift = t.require("shift", "a damping shift in 1..=15")?.int(SHIFT)? as u32;
    Ok(DampingChange { unit, shift })
}

pub(super) fn read_interaction(t: &Table<'_, '_>) -> Result<Interaction> {
    let default = Interaction::default();
    let radius = t.get("radius").map(|v| v.int(RADIUS)).transpose()?.unwrap_or(default.radius);
    let weight = t.get("weight").map(|v| v.int(WEIGHT)).transpose()?.unwrap_or(default.weight);
    Ok(Interaction { radius, weight })
}
