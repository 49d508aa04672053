//! `plan`: the resolved timeline as text for people or as JSON for tools (SPEC §7).

use std::io::{self, Write};

use crate::scene::{Fit, Scene};
use crate::timeline::{Event, Timeline};

/// Calls `each(frame, event)` for every event with frame < K0+N, in the order applied.
pub fn for_each_event(scene: &Scene, mut each: impl FnMut(u64, &Event) -> io::Result<()>) -> io::Result<()> {
    let mut timeline = Timeline::new(scene);
    let mut events = Vec::new();
    while let Some(k) = timeline.next_frame(&mut events) {
        for event in &events {
            each(k, event)?;
        }
    }
    Ok(())
}

/// Writes the plan as one JSON object: the settings on the first line, then one event a line.
pub fn write_json(scene: &Scene, out: &mut dyn Write) -> io::Result<()> {
    write!(
        out,
        "{{\"width\":{},\"height\":{},\"fps\":{},\"first_frame\":{},\"frames\":{},\"model\":\"{}\",\
         \"damping_shift\":{},\"steps_per_frame\":{},\"refraction_q8\":{},\"events\":[",
        scene.width,
        scene.height,
        scene.fps,
        scene.first_frame,
        scene.frames,
        scene.water.model.name(),
        scene.water.damping_shift,
        scene.water.steps_per_frame,
        scene.water.refraction_q8,
    )?;
    let mut first = true;
    for_each_event(scene, |k, event| {
        let comma = if first { "" } else { "," };
        first = false;
        match event {
            Event::Damping { shift } => {
                write!(out, "{comma}\n{{\"frame\":{k},\"kind\":\"damping\",\"shift\":{shift}}}")
            }
            Event::Drop(d) => write!(
                out,
                "{comma}\n{{\"frame\":{k},\"kind\":\"drop\",\"x\":{},\"y\":{},\"radius\":{},\"weight\":{},\"source\":\"{}\"}}",
                d.x,
                d.y,
                d.radius,
                d.weight,
                d.source.name()
            ),
        }
    })?;
    writeln!(out, "{}]}}", if first { "" } else { "\n" })
}

/// Writes the plan for people: the settings, then one line per event.
pub fn write_text(scene: &Scene, out: &mut dyn Write) -> io::Result<()> {
    let fps = f64::from(scene.fps);
    let bg = &scene.background;
    let background = match (&bg.image, bg.pattern) {
        (Some(path), _) => {
            let fit = match bg.fit {
                Fit::Cover => "cover",
                Fit::Contain => "contain",
                Fit::Stretch => "stretch",
            };
            format!("{} ({fit})", path.display())
        }
        (None, Some(pattern)) => format!("pattern {pattern:?}").to_lowercase(),
        (None, None) => format!("colour #{:02x}{:02x}{:02x}", bg.color[0], bg.color[1], bg.color[2]),
    };
    let (k0, n) = (scene.first_frame, scene.frames);
    writeln!(out, "scene       {}", scene.file.display())?;
    writeln!(out, "canvas      {}×{}, background {background}", scene.width, scene.height)?;
    writeln!(
        out,
        "video       {n} frames at {} fps ({:.2} s), frames {k0}..={}{}, {}",
        scene.fps,
        n as f64 / fps,
        k0 + n - 1,
        if k0 > 0 { format!(" after {k0} pre-roll frames") } else { String::new() },
        if scene.looping { "loops" } else { "plays once" },
    )?;
    let w = &scene.water;
    writeln!(
        out,
        "water       {}, damping shift {}, {} step(s) per frame, refraction R = {} ({:.4})",
        w.model.name(),
        w.damping_shift,
        w.steps_per_frame,
        w.refraction_q8,
        w.refraction_q8 as f64 / 256.0
    )?;
    writeln!(out, "\n   frame    time  event")?;
    let mut count = 0u64;
    for_each_event(scene, |k, event| {
        count += 1;
        let time = k as f64 / fps;
        match event {
            Event::Damping { shift } => writeln!(out, "{k:>8} {time:>7.2}s  damping shift → {shift}"),
            Event::Drop(d) => writeln!(
                out,
                "{k:>8} {time:>7.2}s  {:<5} drop at ({}, {}), radius {}, weight {}",
                d.source.name(),
                d.x,
                d.y,
                d.radius,
                d.weight
            ),
        }
    })?;
    writeln!(out, "\n{count} event(s)")
}
