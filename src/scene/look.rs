//! The `[look]` table: §9's bilinear sampling and light and dark sides of the waves, and the
//! water terms (smoothing, a soft tone, caustics, a sky's reflection; docs/scene-format.md).

use super::background::color_value;
use super::toml_reader::Table;
use super::{DEFAULT_REFLECTION, Look, Sampling, Tone, water::refraction_q8};
use crate::base::error::Result;

pub(super) const KEYS: &[&str] = &[
    "sampling",
    "shading",
    "highlight",
    "light",
    "smooth",
    "tone",
    "caustics",
    "sky",
    "reflection",
    "sky_max",
    "glint",
    "glint_at",
    "glint_size",
    "glint_spread",
    "sun",
    "caustics_depth",
];

/// The keys only the gain tone draws.
const GAIN_KEYS: &[&str] = &["sky_max", "glint", "glint_at", "glint_size", "glint_spread", "sun", "caustics_depth"];

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
        look.tone = match v.choice(&["clamp", "soft", "gain"])? {
            "clamp" => Tone::Clamp,
            "soft" => Tone::Soft,
            _ => Tone::Gain,
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
    if look.tone == Tone::Gain {
        read_gain(t, &mut look)?;
    } else if let Some(v) = GAIN_KEYS.iter().find_map(|key| t.get(key)) {
        return Err(v.error("is drawn by the gain tone only: add tone = \"gain\" to [look]"));
    }
    Ok(look)
}

/// The gain tone's own keys: the sky's cap, the glint and the caustics' depth.
fn read_gain(t: &Table<'_, '_>, look: &mut Look) -> Result<()> {
    if let Some(v) = t.get("highlight").filter(|_| look.highlight > 0) {
        return Err(v.error("is not drawn by tone = \"gain\": its sun glint is `glint` (with glint_at, glint_size)"));
    }
    let int = |key: &str, range: std::ops::RangeInclusive<i64>, default: i64| {
        t.get(key).map(|v| v.int(range)).transpose().map(|v| v.unwrap_or(default))
    };
    look.sky_max = int("sky_max", 0..=256, look.sky_max)?;
    let glint = &mut look.glint;
    glint.peak = int("glint", 0..=256, glint.peak)?;
    glint.at = int("glint_at", 1..=65536, glint.at)?;
    glint.size = int("glint_size", 1..=65535, glint.size)?;
    glint.spread = int("glint_spread", 0..=65536, glint.spread)?;
    if let Some(v) = t.get("sun") {
        glint.sun = color_value(&v)?;
    }
    // A glint of 0 draws nothing, so its lobe may lie anywhere.
    if glint.peak > 0 && !glint.clear_of_calm(look.light) {
        let [tx, ty] = glint.target(look.light);
        let most = (tx * tx + ty * ty).isqrt();
        // Only a glint_size, glint_at or light given can fail it (the defaults pass); tone is
        // there under the gain tone.
        let keys = ["glint_size", "glint_at", "light", "tone"];
        if let Some(v) = keys.iter().find_map(|key| t.get(key)) {
            return Err(v.error(format!(
                "lets calm water glint: with glint_at = {} along light = [{}, {}], glint_size = {} must be at most {most}",
                glint.at, look.light[0], look.light[1], glint.size
            )));
        }
    }
    if let Some(v) = t.get("caustics_depth") {
        look.caustics_depth_q8 = Some(refraction_q8(v.number_in(0.0, 16.0)?));
    }
    Ok(())
}
