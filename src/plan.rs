//! `plan`: the resolved timeline as text for people or as JSON for tools (SPEC §7).

use std::io::{self, Write};

use crate::scene::{Edges, Scene};
use crate::shore::Shore;
use crate::timeline::{Drop, Event, Source, Timeline};

/// Calls `each(frame, event)` for every event with frame < K0+N, in the order applied.
pub fn for_each_event(scene: &Scene, mut each: impl FnMut(u64, &Event) -> io::Result<()>) -> io::Result<()> {
    let mut timeline = Timeline::new(scene);
    let mut result = Ok(());
    while result.is_ok()
        && timeline
            .next_frame_each(|k, event| {
                if result.is_ok() {
                    result = each(k, event);
                }
            })
            .is_some()
    {}
    result
}

/// Writes the plan as one JSON object: the settings on the first line, then one event a line.
/// `walls` and `edges` (SPEC §8) appear only when the scene has walls or an edge that does not
/// reflect.
pub fn write_json(scene: &Scene, shore: &Shore, out: &mut dyn Write) -> io::Result<()> {
    write!(
        out,
        "{{\"width\":{},\"height\":{},\"fps\":{},\"first_frame\":{},\"frames\":{},\"model\":\"{}\",\
         \"damping_shift\":{},\"steps_per_frame\":{},\"refraction_q8\":{},",
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
    if let Some(walls) = shore.walls() {
        write!(out, "\"walls\":{},", walls.count())?;
    }
    let edges = shore.edges();
    if edges != Edges::default() {
        write!(
            out,
            "\"edges\":{{\"left\":\"{}\",\"right\":\"{}\",\"top\":\"{}\",\"bottom\":\"{}\"}},",
            edges.left.name(),
            edges.right.name(),
            edges.top.name(),
            edges.bottom.name()
        )?;
    }
    write!(out, "\"events\":[")?;
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

/// How much of the timeline the text plan lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// One line per stone and damping change, one per swipe and one for the rain.
    #[default]
    Summary,
    /// Every event on its own line.
    Events,
}

/// Writes the plan for people: the settings, then the events, frame by frame, with the output
/// frame each falls on (the numbers `diff` reports) or "pre-roll".
pub fn write_text(scene: &Scene, shore: &Shore, detail: Detail, out: &mut dyn Write) -> io::Result<()> {
    write_settings(scene, out)?;
    write_shore(scene, shore, out)?;
    writeln!(out, "\n{:>8} {:>8} {:>8}  event", "frame", "output", "time")?;
    let (k0, fps) = (scene.first_frame, f64::from(scene.fps));
    let when = |k: u64| {
        let output = if k >= k0 { (k - k0).to_string() } else { "pre-roll".to_string() };
        format!("{k:>8} {output:>8} {:>7.2}s", k as f64 / fps)
    };
    let mut count = 0u64;
    if detail == Detail::Events {
        for_each_event(scene, |k, event| {
            count += 1;
            writeln!(out, "{}  {}", when(k), describe(event))
        })?;
        return writeln!(out, "\n{count} event(s)");
    }
    let mut lines = Summary::default();
    for_each_event(scene, |k, event| {
        count += 1;
        lines.add(k, event);
        Ok(())
    })?;
    for line in lines.into_lines() {
        let text = match &line.group {
            Group::Single(event) => describe(event),
            Group::Drops { name, first, last, count } => {
                let mut text = format!("{name}: ");
                if *count == 1 {
                    text += &format!("1 drop at ({}, {})", first.x, first.y);
                } else {
                    text += &format!("{count} drops over frames {}..={}", line.first_frame, line.last_frame);
                    if k0 > 0 {
                        text += &format!(" (output {})", outputs(&line, k0));
                    }
                    text += &format!(", from ({}, {}) to ({}, {})", first.x, first.y, last.x, last.y);
                }
                text + &sizes(scene, first)
            }
        };
        writeln!(out, "{}  {text}", when(line.first_frame))?;
    }
    let hint = if count > 0 { " (every one: plan --events)" } else { "" };
    writeln!(out, "\n{count} event(s){hint}")
}

/// The output frames of a stretch of simulation frames, pre-roll marked.
fn outputs(line: &Line, k0: u64) -> String {
    match (line.first_frame >= k0, line.last_frame >= k0) {
        (true, _) => format!("{}..={}", line.first_frame - k0, line.last_frame - k0),
        (false, true) => format!("pre-roll..={}", line.last_frame - k0),
        (false, false) => "pre-roll".to_string(),
    }
}

fn write_settings(scene: &Scene, out: &mut dyn Write) -> io::Result<()> {
    let fps = f64::from(scene.fps);
    let bg = &scene.background;
    let background = match (&bg.image, bg.pattern) {
        (Some(path), _) => format!("{} ({})", path.display(), bg.fit.name()),
        (None, Some(pattern)) => format!("pattern {pattern:?}").to_lowercase(),
        (None, None) => format!("colour #{:02x}{:02x}{:02x}", bg.color[0], bg.color[1], bg.color[2]),
    };
    let (k0, n) = (scene.first_frame, scene.frames);
    writeln!(out, "scene       {}", scene.file.display())?;
    writeln!(out, "canvas      {}×{}, background {background}", scene.width, scene.height)?;
    writeln!(
        out,
        "video       {n} frames at {} fps ({:.2} s), output frames 0..={} are frames {k0}..={}{}, {}",
        scene.fps,
        n as f64 / fps,
        n - 1,
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
    )
}

/// The walls and edges, and what they make of the scene's obstacles and drops (only for a scene
/// that has them).
fn write_shore(scene: &Scene, shore: &Shore, out: &mut dyn Write) -> io::Result<()> {
    let edges = shore.edges();
    if let Some(walls) = shore.walls() {
        let cells = u64::from(scene.width) * u64::from(scene.height);
        let count = walls.count();
        let mut from = Vec::new();
        if !scene.shore.obstacles.is_empty() {
            from.push(format!("{} obstacle(s)", scene.shore.obstacles.len()));
        }
        if let Some(mask) = &scene.shore.mask {
            let rule = if mask.invert { "at or above" } else { "below" };
            from.push(format!("mask {} (brightness {rule} {})", mask.image.display(), mask.threshold));
        }
        let share = 100.0 * count as f64 / cells as f64;
        writeln!(out, "walls       {count} cells ({share:.1}% of the canvas) from {}", from.join(" and "))?;
    }
    if edges != Edges::default() {
        let names = [("left", edges.left), ("right", edges.right), ("top", edges.top), ("bottom", edges.bottom)];
        let names: Vec<String> = names.iter().map(|(side, edge)| format!("{side} {}", edge.name())).collect();
        writeln!(out, "edges       {}", names.join(", "))?;
    }
    for warning in crate::advice::for_shore(scene, shore) {
        writeln!(out, "warning     {warning}")?;
    }
    Ok(())
}

/// One event in words.
fn describe(event: &Event) -> String {
    match event {
        Event::Damping { shift } => format!("damping shift → {shift}"),
        Event::Drop(d) => {
            let name = match d.source {
                Source::Stone(i) => format!("stone[{i}]"),
                Source::Swipe(i) => format!("swipe[{i}]"),
                Source::Rain => "rain".to_string(),
            };
            format!("{name} drop at ({}, {}), radius {}, weight {}", d.x, d.y, d.radius, d.weight)
        }
    }
}

/// The radius and weight of a group's drops: a swipe's own, or the rain's ranges.
fn sizes(scene: &Scene, drop: &Drop) -> String {
    let range = |[lo, hi]: [i64; 2]| if lo == hi { lo.to_string() } else { format!("{lo}..={hi}") };
    match (&scene.rain, drop.source) {
        (Some(rain), Source::Rain) => format!(", radius {}, weight {}", range(rain.radius), range(rain.weight)),
        _ => format!(", radius {}, weight {}", drop.radius, drop.weight),
    }
}

/// What one line of the summary stands for.
enum Group {
    /// A stone or a damping change.
    Single(Event),
    /// Every drop of one swipe, or all the rain.
    Drops { name: String, first: Drop, last: Drop, count: u64 },
}

struct Line {
    first_frame: u64,
    last_frame: u64,
    group: Group,
}

/// The summary's lines as events arrive: singles in order, drops gathered per swipe and rain.
#[derive(Default)]
struct Summary {
    lines: Vec<Line>,
    /// Where each swipe's line is, by swipe index.
    swipes: std::collections::HashMap<u32, usize>,
    rain: Option<usize>,
}

impl Summary {
    fn add(&mut self, k: u64, event: &Event) {
        let key = match event {
            Event::Drop(d) => match d.source {
                Source::Swipe(i) => Some((self.swipes.get(&i).copied(), format!("swipe[{i}]"))),
                Source::Rain => Some((self.rain, "rain".to_string())),
                Source::Stone(_) => None,
            },
            Event::Damping { .. } => None,
        };
        let (Some((at, name)), Event::Drop(drop)) = (key, event) else {
            self.lines.push(Line { first_frame: k, last_frame: k, group: Group::Single(*event) });
            return;
        };
        match at.and_then(|i| self.lines.get_mut(i)) {
            Some(Line { last_frame, group: Group::Drops { last, count, .. }, .. }) => {
                *last_frame = k;
                *last = *drop;
                *count += 1;
            }
            _ => {
                let index = self.lines.len();
                match drop.source {
                    Source::Swipe(i) => {
                        self.swipes.insert(i, index);
                    }
                    _ => self.rain = Some(index),
                }
                let group = Group::Drops { name, first: *drop, last: *drop, count: 1 };
                self.lines.push(Line { first_frame: k, last_frame: k, group });
            }
        }
    }

    /// The lines by their first frame (events arrive in frame order, so a line is added when its
    /// first event arrives); lines of one frame keep the order events apply in.
    fn into_lines(self) -> Vec<Line> {
        self.lines
    }
}
