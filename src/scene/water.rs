//! The `[water]` table: the model, its settings, and how its steps follow time (§4, §10).

use super::toml_reader::{SHIFT, Table, Value, opt};
use super::{Clock, DropShape, Model, StartSurface, WaterSpec};
use crate::base::error::Result;

/// Cells a wave crosses per step: 1/√2 for the classic stencil, √5/4 for the spring one
/// (§10, pinned to these f64 values).
pub const CLASSIC_CELLS_PER_STEP: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// See [`CLASSIC_CELLS_PER_STEP`].
pub const SPRING_CELLS_PER_STEP: f64 = 0.5590169943749474;

pub(super) fn read_water(t: Option<&Table<'_, '_>>, fps: u32) -> Result<WaterSpec> {
    let model = match opt(t, "model") {
        Some(v) => match v.choice(&["classic", "spring"])? {
            "classic" => Model::Classic,
            _ => Model::Spring,
        },
        None => Model::Classic,
    };
    let shift = match model {
        Model::Classic => 5,
        Model::Spring => 6,
    };
    let damping_shift = opt(t, "damping_shift").map(|v| v.int(SHIFT)).transpose()?.unwrap_or(shift) as u32;
    // Free waves (Tian's generator's): the classic step without its damping, a shift of 0 inside.
    let damping_shift = match opt(t, "undamped") {
        Some(v) if v.bool()? && model == Model::Spring => {
            return Err(v.error("applies to the classic model only: the spring model is always damped by its shift"));
        }
        Some(v) if v.bool()? => match opt(t, "damping_shift") {
            Some(shift) => return Err(shift.error("conflicts with water.undamped = true: give one of them")),
            None => 0,
        },
        _ => damping_shift,
    };
    let clock = read_clock(t, model, fps)?;
    let refraction =
        opt(t, "refraction").map(|v| v.number_in(0.0, 16.0)).transpose()?.unwrap_or(model.default_refraction());
    let refraction_q8 = refraction_q8(refraction);
    let settle = match opt(t, "settle") {
        Some(v) if model == Model::Classic && v.bool()? => {
            return Err(v.error(
                "applies to the spring model only: the classic model's damping is its fixed shift; set water.model = \"spring\"",
            ));
        }
        Some(v) => v.bool()?,
        None => false,
    };
    let drop = match opt(t, "drop") {
        Some(v) => match v.choice(&["disc", "smooth"])? {
            "disc" => DropShape::Disc,
            _ => DropShape::Smooth,
        },
        None => DropShape::Disc,
    };
    Ok(WaterSpec { model, damping_shift, clock, settle, refraction_q8, drop })
}

/// `steps_per_frame`, `steps_per_second` or `speed`: at most one of them.
fn read_clock(t: Option<&Table<'_, '_>>, model: Model, fps: u32) -> Result<Clock> {
    let given: Vec<Value<'_, '_>> =
        ["steps_per_frame", "steps_per_second", "speed"].iter().filter_map(|key| opt(t, key)).collect();
    if let [first, .., later] = given.as_slice() {
        let later = if later.span.start > first.span.start { later } else { first };
        return Err(
            later.error("conflicts: give at most one of water.steps_per_frame, water.steps_per_second and water.speed")
        );
    }
    let most = 256 * i64::from(fps);
    if let Some(v) = opt(t, "steps_per_second") {
        return Ok(Clock::Steps { per_second: v.int(1..=most)? as u32 });
    }
    if let Some(v) = opt(t, "speed") {
        let speed = v.number_in(1.0, 10_000.0)?;
        let per_step = match model {
            Model::Classic => CLASSIC_CELLS_PER_STEP,
            Model::Spring => SPRING_CELLS_PER_STEP,
        };
        let s = (speed / per_step + 0.5).floor().max(1.0) as i64;
        if s > most {
            return Err(v.error(format!(
                "needs {s} steps a second ({} waves cross {per_step:.3} pixels a step): allowed at most 256·fps = {most} \
                 at {fps} fps; raise video.fps or lower the speed",
                model.name()
            )));
        }
        return Ok(Clock::Steps { per_second: s as u32 });
    }
    let steps_per_frame = opt(t, "steps_per_frame").map(|v| v.int(1..=16)).transpose()?.unwrap_or(1) as u32;
    Ok(Clock::Frames { steps_per_frame })
}

/// `[surface]`: the peak height, the blur's radius and the seed.
pub(super) fn read_surface(t: &Table<'_, '_>) -> Result<StartSurface> {
    let height = t.require("height", "the peak |height| in 1..=16384")?.int(1..=16384)?;
    let blur = t.get("blur").map(|v| v.int(1..=64)).transpose()?.unwrap_or(6);
    let seed = t.get("seed").map(|v| v.int(0..=i64::MAX)).transpose()?.unwrap_or(0) as u64;
    Ok(StartSurface { height, blur, seed })
}

/// R, a refraction in 1/256: `floor(refraction·256 + 0.5)` (§5).
pub(super) fn refraction_q8(refraction: f64) -> i64 {
    (refraction * 256.0 + 0.5).floor() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cells_per_step_are_the_pinned_values() {
        // §10 pins them as these decimal f64s.
        assert_eq!(CLASSIC_CELLS_PER_STEP, "0.7071067811865476".parse::<f64>().unwrap());
        assert_eq!(SPRING_CELLS_PER_STEP, "0.5590169943749474".parse::<f64>().unwrap());
        assert_eq!(SPRING_CELLS_PER_STEP, 5f64.sqrt() / 4.0);
    }
}
