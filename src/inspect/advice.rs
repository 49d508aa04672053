//! Warnings for scenes that render but show nothing: the water never moves, or moves over a
//! picture where moving it cannot be seen.

use crate::base::picture::ImageHeader;
use crate::draw::background::Background;
use crate::scene::{Look, Scene, loop_preroll, settle_seconds, starter};
use crate::sim::shore::Shore;
use crate::sim::timeline::{Drop, Event, Source, for_each_event};

/// What would make the render show no water, or a loop jump, or the canvas black by default,
/// from the scene alone (as `plan` sees it).
pub fn for_scene(scene: &Scene) -> Vec<String> {
    let mut warnings = still_water(scene);
    warnings.extend(hidden_in_preroll(scene));
    warnings.extend(for_seamless(scene));
    if !scene.background.given {
        warnings.push(
            "the scene has no background, so the canvas is black: set [background] image = \"picture.png\", \
             color = \"#rrggbb\" or pattern = \"tiles\" (or \"checker\")"
                .to_string(),
        );
    }
    warnings
}

/// A seamless loop's pre-roll (§11), as periods of the render, and what would make the loop
/// jump: a pre-roll too short for the water to forget its still start, and with `repeat`,
/// events before the window, which are left out.
fn for_seamless(scene: &Scene) -> Vec<String> {
    let seamless = scene.seamless;
    if !seamless.repeat && seamless.crossfade.is_none() {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    let fps = f64::from(scene.fps);
    let pre_roll = scene.first_frame as f64 / fps;
    // The slowest damping in force at some point sets how long the water remembers.
    let shift = scene.damping.iter().map(|d| d.shift).chain([scene.water.damping_shift]).max().unwrap_or(1);
    let settle = settle_seconds(shift, scene.water.clock.steps_per_second(scene.fps));
    if pre_roll < settle {
        warnings.push(format!(
            "the pre-roll is {pre_roll:.2} s ({:.1} periods of the loop): at damping shift {shift} a ripple needs about \
             {settle:.1} s to fall to 1/1000 of its height, so the water may not have forgotten its still start; \
             give the loop a pre-roll of {} s (video.preroll keeps the events where they are)",
            scene.first_frame as f64 / scene.frames as f64,
            loop_preroll(settle, seamless.crossfade, scene.fps)
        ));
    }
    if seamless.repeat {
        let window = scene.window();
        let before = scene.stones.iter().filter(|s| s.unit < window.start).count()
            + scene.swipes.iter().filter(|s| s.first_unit < window.start).count()
            + scene.damping.iter().filter(|d| d.unit < window.start).count();
        if before > 0 {
            warnings.push(format!(
                "{before} stone(s), swipe(s) or damping change(s) start before the window at {:.2} s (video.start): \
                 with seamless.repeat only the window's events are kept (a swipe from its first point inside), \
                 and the pre-roll replays them",
                pre_roll
            ));
        }
    }
    warnings
}

/// Events that fall in the pre-roll of a render that does not replay them (no
/// `seamless.repeat`): their time counts from the start of the simulation, so with
/// `video.start` they happen before the first output frame. Names the first few.
fn hidden_in_preroll(scene: &Scene) -> Vec<String> {
    let start = scene.window().start;
    if scene.seamless.repeat || start == 0 {
        return Vec::new();
    }
    let rate = f64::from(scene.units_per_second());
    let at = |unit: u64| unit as f64 / rate;
    let stones = scene.stones.iter().enumerate().map(|(i, s)| (format!("stone[{i}] at"), s.unit));
    let swipes = scene.swipes.iter().enumerate().map(|(i, s)| (format!("swipe[{i}] from"), s.first_unit));
    let damping = scene.damping.iter().enumerate().map(|(i, d)| (format!("damping[{i}] at"), d.unit));
    let mut hidden: Vec<String> = stones
        .chain(swipes)
        .chain(damping)
        .filter(|&(_, unit)| unit < start)
        .map(|(name, unit)| format!("{name} {:.2} s", at(unit)))
        .collect();
    if hidden.is_empty() {
        return Vec::new();
    }
    const SHOWN: usize = 3;
    let count = hidden.len();
    if count > SHOWN {
        hidden.truncate(SHOWN);
        hidden.push(format!("{} more", count - SHOWN));
    }
    let t0 = scene.first_frame as f64 / f64::from(scene.fps);
    vec![format!(
        "{count} event(s) land in the pre-roll, before the first output frame at {t0:.2} s (video.start): {}; event \
         times count from the start of the simulation, so the output opens after they land. If they should be seen, \
         write video.preroll = {t0} instead of video.start (events then count from the first output frame)",
        hidden.join(", ")
    )]
}

/// What would make the render show no water.
fn still_water(scene: &Scene) -> Vec<String> {
    if scene.surface.is_some() {
        // The water starts in motion.
        return Vec::new();
    }
    let end = scene.end_unit();
    let seconds = |unit: u64| unit as f64 / f64::from(scene.units_per_second());
    let stones = scene.stones.iter().any(|s| s.unit < end);
    let swipes = scene.swipes.iter().any(|s| s.first_unit < end);
    let rain = scene.rain.as_ref().is_some_and(|r| r.first_unit < end && r.drops_per_second > 0.0);
    let events = !scene.stones.is_empty() || !scene.swipes.is_empty() || scene.rain.is_some();
    if !events {
        return vec![
            "the scene has no stone, swipe or rain, so nothing touches the water and every frame is the background: \
             add a [[stone]] (at, x, y), a [[swipe]] or [rain]"
                .to_string(),
        ];
    }
    if stones || swipes || rain {
        return Vec::new();
    }
    let first = scene
        .stones
        .iter()
        .map(|s| s.unit)
        .chain(scene.swipes.iter().map(|s| s.first_unit))
        .chain(scene.rain.iter().map(|r| r.first_unit))
        .min()
        .unwrap_or(end);
    vec![format!(
        "nothing touches the water before the render ends at {:.2} s ({} {end}): the first event is at {:.2} s, \
         so every frame is the background",
        seconds(end),
        scene.water.clock.unit_name(),
        seconds(first)
    )]
}

/// Hints for a scene that draws a picture with the default look and refraction, which bend it
/// by whole pixels (speckles, not rings): the values `new` would write.
pub fn hints(scene: &Scene) -> Vec<String> {
    let model = scene.water.model;
    if scene.background.image.is_none()
        || scene.look != Look::default()
        || scene.water.refraction_q8 != model.default_refraction_q8()
    {
        return Vec::new();
    }
    vec![format!(
        "the look and refraction are at their defaults, which move the picture by whole pixels; for rings that \
         read as water try {} (what `ripple-render new` writes)",
        starter::suggestion(model)
    )]
}

/// What would make the water invisible on this background: one flat colour, drawn without light,
/// looks the same however it is bent; and a canvas whose shape keeps one side of the picture
/// (`header`, the picture's as read before the render) and not the other.
pub fn for_background(scene: &Scene, background: &Background, header: Option<&ImageHeader>) -> Vec<String> {
    let mut warnings = header.and_then(|h| one_side_set(scene, h)).into_iter().collect::<Vec<_>>();
    warnings.extend(flat_background(scene, background));
    warnings
}

/// A canvas that keeps one side of its picture and not the other: most likely only
/// `video.width` (or `height`) was set, so the other side stayed the picture's and the picture
/// is cropped, barred or stretched to a shape nobody chose. Says which side to set to keep it.
fn one_side_set(scene: &Scene, header: &ImageHeader) -> Option<String> {
    let (iw, ih, w, h) =
        (u64::from(header.width), u64::from(header.height), u64::from(scene.width), u64::from(scene.height));
    let fit = scene.background.fit.name();
    let (kept, set, other, keep) = match (w == iw, h == ih) {
        (false, true) => ("height", "width", "height", (ih * w + iw / 2) / iw),
        (true, false) => ("width", "height", "width", (iw * h + ih / 2) / ih),
        _ => return None,
    };
    // Within a pixel of the picture's shape, nothing is lost.
    if keep.abs_diff(if other == "height" { h } else { w }) <= 1 {
        return None;
    }
    Some(format!(
        "the canvas is {w}×{h} and the picture {iw}×{ih}: the canvas keeps the picture's {kept}, so the picture is \
         fitted ({fit}) to another shape; if only video.{set} was meant, set video.{other} = {keep} to keep its shape"
    ))
}

/// A background of one flat colour with no light to show the water on it.
fn flat_background(scene: &Scene, background: &Background) -> Vec<String> {
    let chosen = scene.background.image.is_some() || scene.background.color != [0, 0, 0];
    if scene.background.pattern.is_some() {
        return Vec::new();
    }
    let look = &scene.look;
    let light =
        look.shading > 0 || look.highlight > 0 || look.caustics > 0 || look.reflection > 0 || look.glint.peak > 0;
    let flat = background.pixels.split_first().is_some_and(|(first, rest)| rest.iter().all(|p| p == first));
    if chosen && flat && !light {
        let [r, g, b] = background.pixels[0];
        return vec![format!(
            "the background is one flat colour (#{r:02x}{g:02x}{b:02x}), so bending it shows nothing: \
             add a picture or a pattern to [background], or light to [look] (shading, highlight)"
        )];
    }
    Vec::new()
}

/// What the walls make of the scene (§8), as the render warns: obstacles that cover no
/// cell of the canvas, and a mask that walls every cell or none.
pub fn for_walls(scene: &Scene, shore: &Shore) -> Vec<String> {
    let Some(walls) = shore.walls() else { return Vec::new() };
    let mut warnings: Vec<String> = (walls.bare_obstacles().iter())
        .map(|&i| format!("obstacle[{i}] ({}) covers no cell of the canvas", scene.shore.obstacles[i].shape()))
        .collect();
    if let Some(mask) = &scene.shore.mask {
        let (width, height) = shore.size();
        let (count, cells) = (walls.count(), (width * height) as u64);
        let file = mask.image.display();
        if count == cells {
            warnings.push(format!(
                "every cell is a wall: the mask {file} leaves no water (try invert = true, or another threshold)"
            ));
        } else if count == 0 && scene.shore.obstacles.is_empty() {
            warnings.push(format!(
                "the mask {file} makes no wall at threshold {} (try invert = true, or another threshold)",
                mask.threshold
            ));
        }
    }
    warnings
}

/// [`for_walls`], and also the stones and swipe points whose every cell is a wall
/// (they make no ripple), found by walking the timeline.
pub fn for_shore(scene: &Scene, shore: &Shore) -> Vec<String> {
    let mut warnings = for_walls(scene, shore);
    let Some(walls) = shore.walls() else { return warnings };
    let (width, height) = shore.size();
    // The drop's cells as if there were no walls, then whether every one of them is a wall.
    let open = Shore::new(width, height, shore.edges(), None);
    let walled = |drop: &Drop| {
        let (mut cells, mut on_walls) = (0u64, 0u64);
        open.for_each_drop_cell(drop, |i| {
            cells += 1;
            on_walls += u64::from(walls.contains(i));
        });
        cells > 0 && cells == on_walls
    };
    let mut swipe_points = std::collections::BTreeMap::<u32, (u64, u64)>::new();
    for_each_event(scene, |_, event| {
        if let Event::Drop(drop) = event {
            match drop.source {
                Source::Stone(i) if walled(drop) => warnings.push(format!(
                    "stone[{i}] at ({}, {}) falls entirely on walls: it will make no ripple",
                    drop.x, drop.y
                )),
                Source::Swipe(i) => {
                    let entry = swipe_points.entry(i).or_default();
                    entry.0 += 1;
                    entry.1 += u64::from(walled(drop));
                }
                _ => {}
            }
        }
    });
    for (i, (points, on_walls)) in swipe_points {
        if on_walls > 0 {
            warnings.push(format!(
                "swipe[{i}]: {on_walls} of its {points} points fall entirely on walls: they will make no ripple"
            ));
        }
    }
    warnings
}
