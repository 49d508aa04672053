//! The `[look]` table: §9's bilinear sampling and light and dark sides of the waves, and the
//! water terms (smoothing, a soft tone, caustics, a sky's reflection; docs/scene-format.md).

use super::background::color_value;
use super::toml_reader::Table;
use super::{DEFAULT_REFLECTION, Look, Sampling, Tone};
use crate::base::error::Result;

pub(super) const KEYS: &[&str] =
    &["sampling", "shading", "highlight", "light", "smooth", "tone", "caustics", "sky", "reflection"];

/// The strength keys' range: 0 (off) to 4096.
const STRENGTH: std::ops::RangeInclusive<i64> = 0..=4096;

pub(super) fn read_look(t: &Table<'_, '_>) -> Result<Look> {
    let mut look = Look::default();
    if let Some(v) = t.get("sampling") {
        look.sampling = match v.choice(&["nearest", "bilinear"])? {
            "nearest" => Sampling::Nearest,
            _ => Sampling::Bilinear,
        };
    }
    look.shading = t.get("shading").map(|v| v.int(STRENGTH)).transpose()?.unwrap_or(0);
    look.highlight = t.get("highlight").map(|v| v.int(STRENGTH)).transpose()?.unwrap_or(0);
    if let Some(v) = t.get("light") {
        let xy = v.array("an [x, y] pair of integers")?;
        if xy.len() != 2 {
            return Err(v.error("is not an [x, y] pair: expected two integers in -256..=256, toward the light"));
        }
        let light = [xy[0].int(-256..=256)?, xy[1].int(-256..=256)?];
        if light == [0, 0] {
            return Err(v.error("points nowhere: at least one of x and y must be non-zero"));
        }
        look.light = light;
    }
    look.smooth = t.get("smooth").map(|v| v.int(0..=4)).transpose()?.unwrap_or(0) as u32;
    if let Some(v) = t.get("tone") {
        look.tone = match v.choice(&["clamp", "soft"])? {
            "clamp" => Tone::Clamp,
            _ => Tone::Soft,
        };
    }
    look.caustics = t.get("caustics").map(|v| v.int(STRENGTH)).transpose()?.unwrap_or(0);
    let sky = t.get("sky");
    if let Some(v) = &sky {
        look.sky = color_value(v)?;
    }
    // A sky named without a reflection is mirrored at a moderate strength: naming it is asking
    // to see it.
    let sky_default = if sky.is_some() { DEFAULT_REFLECTION } else { 0 };
    look.reflection = t.get("reflection").map(|v| v.int(STRENGTH)).transpose()?.unwrap_or(sky_default);
    Ok(look)
}
