//! The `[water]` table: the model and its settings.

use super::toml_reader::Table;
use super::{Model, SHIFT, WaterSpec, opt};
use crate::error::Result;

pub(super) fn read_water(t: Option<&Table<'_, '_>>) -> Result<WaterSpec> {
    let model = match opt(t, "model") {
        Some(v) => match v.choice(&["classic", "spring"])? {
            "classic" => Model::Classic,
            _ => Model::Spring,
        },
        None => Model::Classic,
    };
    let (shift, refraction) = match model {
        Model::Classic => (5, 1.0),
        Model::Spring => (6, 0.1),
    };
    let damping_shift = opt(t, "damping_shift").map(|v| v.int(SHIFT)).transpose()?.unwrap_or(shift) as u32;
    let steps_per_frame = opt(t, "steps_per_frame").map(|v| v.int(1..=16)).transpose()?.unwrap_or(1) as u32;
    let refraction = opt(t, "refraction").map(|v| v.number_in(0.0, 16.0)).transpose()?.unwrap_or(refraction);
    let refraction_q8 = (refraction * 256.0 + 0.5).floor() as i64;
    Ok(WaterSpec { model, damping_shift, steps_per_frame, refraction_q8 })
}
