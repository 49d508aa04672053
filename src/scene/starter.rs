//! `ripple-render new PICTURE`: a starter scene for a picture, with values that look like water
//! on it as they are (measured with `bench/looks_good.py`; the guide's table of values gives the
//! ranges).
//!
//! Every size is scaled to the canvas: with `s` its shorter side, stones are about `s/40`
//! pixels across their radius, the swipe crosses the lower third, and the rain falls at one
//! drop a second for every 20,000 pixels of canvas.

use crate::scene::Model;

/// The longest side a starter canvas gets: a larger picture is fitted down to it (keeping its
/// aspect ratio), a smaller one is used at its own size.
pub const LONGEST_SIDE: u32 = 640;

/// What a starter scene is made from.
#[derive(Debug, Clone)]
pub struct Starter<'a> {
    /// The picture's size, upright.
    pub picture: (u32, u32),
    /// The picture's path as the scene should name it (relative to the scene's folder where
    /// possible).
    pub image: &'a str,
    /// The water model.
    pub model: Model,
}

/// The canvas for a picture: its own size, or fitted within `LONGEST_SIDE` with its aspect
/// ratio kept (rounded), never smaller than 3 pixels a side.
pub fn canvas((width, height): (u32, u32)) -> (u32, u32) {
    let longest = width.max(height).max(1);
    let scale = |side: u32| -> u32 {
        if longest <= LONGEST_SIDE {
            side
        } else {
            ((u64::from(side) * u64::from(LONGEST_SIDE) + u64::from(longest) / 2) / u64::from(longest)) as u32
        }
    };
    (scale(width).max(3), scale(height).max(3))
}

/// The water of each model that looks like water with these sizes: a gentle refraction, and
/// weights that make rings a few pixels deep, mid-range of the guide's "Values that look like
/// water" (a smooth drop of radius 1 or 2 holds more water than a disc: rain is lighter).
struct Tuning {
    model: &'static str,
    refraction: f64,
    /// Weight of a stone, per pixel of its radius.
    stone_weight: u32,
    swipe_weight: u32,
    rain_weight: [u32; 2],
    shading: u32,
    /// Passes of the smoothing filter: the spring model's finer rings need two.
    smooth: u32,
    caustics_depth: f64,
    /// The glint's peak, and the slope that mirrors the sun and the lobe's size: the spring
    /// model's slopes are about half the classic one's.
    glint: [u32; 3],
}

const CLASSIC: Tuning = Tuning {
    model: "classic",
    refraction: 0.04,
    stone_weight: 36,
    swipe_weight: 20,
    rain_weight: [6, 14],
    shading: 64,
    smooth: 1,
    caustics_depth: 0.1,
    glint: [200, 80, 40],
};

const SPRING: Tuning = Tuning {
    model: "spring",
    refraction: 0.04,
    stone_weight: 70,
    swipe_weight: 24,
    rain_weight: [10, 20],
    shading: 96,
    smooth: 2,
    caustics_depth: 0.06,
    glint: [160, 40, 20],
};

fn tuning(model: Model) -> &'static Tuning {
    match model {
        Model::Classic => &CLASSIC,
        Model::Spring => &SPRING,
    }
}

/// The refraction and look a starter scene of `model` has, as keys on one line: what a scene
/// that leaves them at their defaults is pointed to.
pub fn suggestion(model: Model) -> String {
    let t = tuning(model);
    format!(
        "[water] refraction = {}, drop = \"smooth\"; [look] sampling = \"bilinear\", smooth = {}, tone = \"gain\", \
         shading = {}, caustics = 64, reflection = 1024, glint = {}",
        t.refraction, t.smooth, t.shading, t.glint[0]
    )
}

/// The scene's TOML text, with comments that say what each part does.
pub fn scene_text(starter: &Starter<'_>) -> String {
    let (w, h) = canvas(starter.picture);
    let tuning = tuning(starter.model);
    let radius = (w.min(h) / 40).clamp(2, 256);
    settings_text(starter, tuning) + &events_text((w, h), tuning, radius)
}

/// The tables before the events: the canvas, the picture, the water and the look.
fn settings_text(starter: &Starter<'_>, tuning: &Tuning) -> String {
    let (w, h) = canvas(starter.picture);
    let picture = format!("{}×{}", starter.picture.0, starter.picture.1);
    let fitted = if (w, h) == starter.picture { String::new() } else { format!(", fitted to {w}×{h}") };
    format!(
        "# A starter scene made by `ripple-render new` for a picture of {picture}{fitted}.\n\
         # Render it with `ripple-render THIS.toml -o out.gif`; docs/scene-format.md has every key.\n\
         \n\
         [video]\n\
         width = {w}\n\
         height = {h}\n\
         fps = 25\n\
         duration = 4.0\n\
         \n\
         [background]\n\
         image = {image}\n\
         fit = \"cover\"\n\
         \n\
         [water]\n\
         model = \"{model}\"\n\
         # Stones and drops land as a smooth crater, not a flat disc.\n\
         drop = \"smooth\"\n\
         # How fast a wave front travels, in pixels a second (an eighth of the shorter side):\n\
         # the water takes a few steps a frame, so a finger moves a few pixels a step and its\n\
         # wake is one band.\n\
         speed = {speed}\n\
         # How far the picture bends: larger is stronger (and past a point, jagged).\n\
         refraction = {refraction}\n\
         \n\
         # Smooth sampling and light from the upper left. The heights are smoothed before they\n\
         # are drawn (no grid in the rings); the light multiplies the picture, brighter and\n\
         # darker, never burnt to white or black.\n\
         [look]\n\
         sampling = \"bilinear\"\n\
         light = [-1, -1]\n\
         smooth = {smooth}\n\
         tone = \"gain\"\n\
         shading = {shading}\n\
         # Sunlight gathered on the floor by the waves: a moving net of bright lines.\n\
         caustics = 64\n\
         caustics_depth = {depth}\n\
         # The sky mirrored where the water tilts, and the sun where a slope catches it.\n\
         reflection = 1024\n\
         glint = {glint}\n\
         glint_at = {glint_at}\n\
         glint_size = {glint_size}\n",
        image = toml::Value::String(starter.image.to_string()),
        speed = (w.min(h) / 8).max(18),
        model = tuning.model,
        refraction = tuning.refraction,
        shading = tuning.shading,
        smooth = tuning.smooth,
        depth = tuning.caustics_depth,
        glint = tuning.glint[0],
        glint_at = tuning.glint[1],
        glint_size = tuning.glint[2],
    )
}

/// The events on a canvas `w`×`h`: three stones of about `radius`, a finger across the lower
/// third and light rain, their weights from the model's `tuning`.
fn events_text((w, h): (u32, u32), tuning: &Tuning, radius: u32) -> String {
    let (wf, hf) = (f64::from(w), f64::from(h));
    let at = |fx: f64, fy: f64| ((wf * fx) as u32, (hf * fy) as u32);
    let stones =
        [(0.2, at(0.5, 0.45), radius + radius / 2), (1.2, at(0.27, 0.3), radius), (2.0, at(0.75, 0.62), radius)];
    let mut text = String::new();
    for (at, (x, y), radius) in stones {
        let weight = (tuning.stone_weight * radius).min(16384);
        text.push_str(&format!("\n[[stone]]\nat = {at:.1}\nx = {x}\ny = {y}\nradius = {radius}\nweight = {weight}\n"));
    }
    let swipe_radius = (radius / 2).max(1);
    let [(sx0, sy0), (sx1, sy1), (sx2, sy2)] = [at(0.12, 0.78), at(0.5, 0.7), at(0.88, 0.8)];
    text.push_str(&format!(
        "\n# A finger drawn across the lower third.\n[[swipe]]\nfrom = 2.6\nuntil = 3.4\n\
         path = [[{sx0}, {sy0}], [{sx1}, {sy1}], [{sx2}, {sy2}]]\nradius = {swipe_radius}\nweight = {sweight}\n\
         # Each point pressed at its moment within a unit: one even wake, however fast.\ntiming = \"spread\"\n",
        sweight = (tuning.swipe_weight * swipe_radius).min(16384),
    ));
    let rain = (wf * hf / 20_000.0).max(0.5);
    let rain_radius = [(radius / 3).max(1), (radius / 2).max(1)];
    let [rw0, rw1] = tuning.rain_weight.map(|weight| (weight * rain_radius[1]).min(16384));
    text.push_str(&format!(
        "\n# Light rain all along.\n[rain]\ndrops_per_second = {rain:.1}\nradius = [{}, {}]\nweight = [{rw0}, {rw1}]\nseed = 1\n",
        rain_radius[0], rain_radius[1],
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Scene;

    #[test]
    fn the_canvas_keeps_the_pictures_shape_within_the_longest_side() {
        assert_eq!(canvas((480, 320)), (480, 320));
        assert_eq!(canvas((640, 640)), (640, 640));
        // 4000×3000 → 640×480; 3000×4000 → 480×640; 1001×3 → 640×2, raised to 3.
        assert_eq!(canvas((4000, 3000)), (640, 480));
        assert_eq!(canvas((3000, 4000)), (480, 640));
        assert_eq!(canvas((1001, 3)), (640, 3));
        assert_eq!(canvas((1, 1)), (3, 3));
    }

    #[test]
    fn every_starter_scene_loads_with_its_events_on_the_canvas() {
        for picture in [(1, 1), (3, 200), (300, 200), (640, 480), (4000, 3000), (9000, 20)] {
            for model in [Model::Classic, Model::Spring] {
                let text = scene_text(&Starter { picture, image: "a \"quoted\" \\ name.png", model });
                let scene = Scene::from_toml_str(&text, std::path::Path::new("starter.toml"))
                    .unwrap_or_else(|e| panic!("{picture:?} {model:?}: {e}\n{text}"));
                assert_eq!((scene.width, scene.height), canvas(picture));
                assert_eq!(scene.water.model, model);
                assert_eq!(scene.stones.len(), 3);
                assert!(scene.stones.iter().all(|s| s.x < i64::from(scene.width) && s.y < i64::from(scene.height)));
                assert_eq!(
                    scene.background.image.as_deref().and_then(|p| p.file_name()).unwrap(),
                    "a \"quoted\" \\ name.png"
                );
            }
        }
    }
}
