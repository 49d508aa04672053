//! `plan`: the resolved timeline as text for people or as JSON for tools (§7).

use std::io::{self, Write};

use serde::Serialize;

use super::advice;
use crate::base::json;
use crate::scene::{Clock, DropShape, Edges, Scene};
use crate::sim::shore::Shore;
use crate::sim::timeline::{Drop, Event, Source, for_each_event, try_for_each_event};

/// The plan as JSON (§7): the settings, then every event in the order applied. `walls` and
/// `edges` (§8) appear only when the scene has walls or an edge that does not reflect; in
/// step mode (§10) `steps_per_second` stands for `steps_per_frame`, and events have a `step`
/// for their `frame`.
#[derive(Serialize)]
struct Plan<'a> {
    width: u32,
    height: u32,
    fps: u32,
    first_frame: u64,
    frames: u64,
    model: &'static str,
    damping_shift: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps_per_frame: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps_per_second: Option<u32>,
    refraction_q8: i64,
    /// `"smooth"` for smooth drops; left out for the flat disc (§4), as before the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    drop: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    walls: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    edges: Option<EdgeNames>,
    /// Each format's estimated peak memory at each effort, by format name.
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<std::collections::BTreeMap<&'static str, Levels>>,
    events: Events<'a>,
}

/// A format's estimated peak memory at each effort, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Levels {
    /// At `--effort fast`.
    pub fast: u64,
    /// At the default effort.
    pub default: u64,
    /// At `--effort max`.
    pub max: u64,
}

/// What a render of the scene would hold at most, per output format and effort, on `threads`
/// threads (the render's estimate, worked out by the caller, which knows the encoders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// The threads the estimate is for.
    pub threads: usize,
    /// Each format's name and its peak at each effort.
    pub formats: Vec<(&'static str, Levels)>,
}

/// What each edge does, by name.
#[derive(Serialize)]
struct EdgeNames {
    left: &'static str,
    right: &'static str,
    top: &'static str,
    bottom: &'static str,
}

/// Every event of a scene, serialized as the timeline yields them (never held all at once: a
/// long render of heavy rain has millions).
struct Events<'a>(&'a Scene);

/// One event: its unit (a frame, or a step in step mode), its kind and its figures.
#[derive(Serialize)]
struct EventLine {
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step: Option<u64>,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    shift: Option<u32>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    drop: Option<DropLine>,
}

/// A drop's figures.
#[derive(Serialize)]
struct DropLine {
    x: i64,
    y: i64,
    radius: i64,
    weight: i64,
    source: &'static str,
    /// The share of the press, /256, where it is not the whole (a smooth swipe's second press).
    #[serde(skip_serializing_if = "Option::is_none")]
    share: Option<i64>,
}

impl Serialize for Events<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let steps = matches!(self.0.water.clock, Clock::Steps { .. });
        let mut events = serializer.serialize_seq(None)?;
        try_for_each_event(self.0, |unit, event| {
            let (frame, step) = if steps { (None, Some(unit)) } else { (Some(unit), None) };
            let line = match event {
                Event::Damping { shift } => EventLine { frame, step, kind: "damping", shift: Some(*shift), drop: None },
                Event::Drop(d) => {
                    let share = (d.share != 256).then_some(d.share);
                    let drop =
                        DropLine { x: d.x, y: d.y, radius: d.radius, weight: d.weight, source: d.source.name(), share };
                    EventLine { frame, step, kind: "drop", shift: None, drop: Some(drop) }
                }
            };
            events.serialize_element(&line)
        })?;
        events.end()
    }
}

/// Writes the plan as one JSON object: the settings, then one event a line.
pub fn write_json(scene: &Scene, shore: &Shore, memory: Option<&Memory>, out: &mut dyn Write) -> io::Result<()> {
    let (steps_per_frame, steps_per_second) = match scene.water.clock {
        Clock::Frames { steps_per_frame } => (Some(steps_per_frame), None),
        Clock::Steps { per_second } => (None, Some(per_second)),
    };
    let edges = shore.edges();
    let plan = Plan {
        width: scene.width,
        height: scene.height,
        fps: scene.fps,
        first_frame: scene.first_frame,
        frames: scene.frames,
        model: scene.water.model.name(),
        damping_shift: scene.water.damping_shift,
        steps_per_frame,
        steps_per_second,
        refraction_q8: scene.water.refraction_q8,
        drop: (scene.water.drop == DropShape::Smooth).then_some("smooth"),
        walls: shore.walls().map(|w| w.count()),
        edges: (edges != Edges::default()).then(|| EdgeNames {
            left: edges.left.name(),
            right: edges.right.name(),
            top: edges.top.name(),
            bottom: edges.bottom.name(),
        }),
        memory: memory.map(|m| m.formats.iter().copied().collect()),
        events: Events(scene),
    };
    json::write_lines(out, &plan)
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

/// Writes the plan for people: the settings, then the events, frame by frame (or step by
/// step), with the output frame that first shows each (the numbers `diff` reports) or
/// "pre-roll".
pub fn write_text(
    scene: &Scene,
    shore: &Shore,
    (detail, memory): (Detail, Option<&Memory>),
    out: &mut dyn Write,
) -> io::Result<()> {
    write_settings(scene, out)?;
    if let Some(memory) = memory {
        let show = crate::base::units::show;
        let formats: Vec<String> = memory
            .formats
            .iter()
            .map(|(name, l)| format!("{name} {} / {} / {}", show(l.fast), show(l.default), show(l.max)))
            .collect();
        writeln!(
            out,
            "memory      peak on {} thread(s), --effort fast / default / max: {}",
            memory.threads,
            formats.join("; ")
        )?;
    }
    write_seamless(scene, out)?;
    write_shore(scene, shore, out)?;
    let clock = scene.water.clock;
    writeln!(out, "\n{:>8} {:>8} {:>8}  event", clock.unit_name(), "output", "time")?;
    let (k0, rate) = (scene.first_frame, f64::from(scene.units_per_second()));
    let output = |unit: u64| clock.frame_showing(unit, scene.fps).checked_sub(k0);
    let when = |k: u64| {
        let output = output(k).map_or("pre-roll".to_string(), |i| i.to_string());
        format!("{k:>8} {output:>8} {:>7.2}s", k as f64 / rate)
    };
    let mut count = 0u64;
    if detail == Detail::Events {
        try_for_each_event(scene, |k, event| {
            count += 1;
            writeln!(out, "{}  {}", when(k), describe(event))
        })?;
        return writeln!(out, "\n{count} event(s)");
    }
    let lines = markers(scene);
    for marker in &lines {
        writeln!(out, "{}  {}", when(marker.first_unit), marker.text)?;
    }
    let count: u64 = lines.iter().map(|m| m.events).sum();
    let hint = if count > 0 { " (every one: plan --events)" } else { "" };
    writeln!(out, "\n{count} event(s){hint}")
}

/// One line of the plan's summary: a stone, a damping change, a swipe's drops or the rain, over
/// the units and output frames it spans (`None`: in the pre-roll), in words.
#[derive(Debug, Clone, Serialize)]
pub struct Marker {
    /// `stone`, `swipe`, `rain` or `damping`.
    pub kind: &'static str,
    /// The unit (a frame, or a step) of its first event.
    pub first_unit: u64,
    /// The unit of its last event.
    pub last_unit: u64,
    /// The output frame that first shows its first event, if that is not in the pre-roll.
    pub first_frame: Option<u64>,
    /// The output frame that first shows its last event, likewise.
    pub last_frame: Option<u64>,
    /// Events it stands for.
    pub events: u64,
    /// The plan's line for it.
    pub text: String,
}

/// The summary of a scene's timeline, a line each (what `plan` prints, and `serve` marks).
pub fn markers(scene: &Scene) -> Vec<Marker> {
    let clock = scene.water.clock;
    let k0 = scene.first_frame;
    let output = |unit: u64| clock.frame_showing(unit, scene.fps).checked_sub(k0);
    let mut lines = Summary::default();
    for_each_event(scene, |k, event| lines.add(scene, k, event));
    lines
        .into_lines()
        .into_iter()
        .map(|line| {
            let (a, b) = (line.first_unit, line.last_unit);
            let (kind, events, text) = match &line.group {
                Group::Single(event) => {
                    let kind = match event {
                        Event::Damping { .. } => "damping",
                        _ => "stone",
                    };
                    (kind, 1, describe(event))
                }
                Group::Drops { name, first, last, count } => {
                    let mut text = format!("{name}: ");
                    if *count == 1 {
                        text += &format!("1 drop at ({}, {})", first.x, first.y);
                    } else {
                        text += &format!("{count} drops over {}s {a}..={b}", clock.unit_name());
                        if k0 > 0 || matches!(clock, Clock::Steps { .. }) {
                            text += &format!(" (output {})", outputs(output(a), output(b)));
                        }
                        // A swipe's drops run along its path; rain falls anywhere, first here,
                        // last there.
                        if name == "rain" {
                            text += &format!(
                                ", the first at ({}, {}), the last at ({}, {})",
                                first.x, first.y, last.x, last.y
                            );
                        } else {
                            text += &format!(", from ({}, {}) to ({}, {})", first.x, first.y, last.x, last.y);
                        }
                    }
                    let kind = if name == "rain" { "rain" } else { "swipe" };
                    (kind, *count, text + &sizes(scene, first))
                }
            };
            Marker { kind, first_unit: a, last_unit: b, first_frame: output(a), last_frame: output(b), events, text }
        })
        .collect()
}

/// The output frames that first show a stretch of events, pre-roll marked.
fn outputs(first: Option<u64>, last: Option<u64>) -> String {
    match (first, last) {
        (Some(first), Some(last)) => format!("{first}..={last}"),
        (None, Some(last)) => format!("pre-roll..={last}"),
        _ => "pre-roll".to_string(),
    }
}

fn write_seamless(scene: &Scene, out: &mut dyn Write) -> io::Result<()> {
    let seamless = scene.seamless;
    if !seamless.repeat && seamless.crossfade.is_none() {
        return Ok(());
    }
    let mut what = Vec::new();
    if seamless.repeat {
        what.push("repeat".to_string());
    }
    if let Some(o) = seamless.crossfade {
        what.push(format!("crossfade {o} frame(s)"));
    }
    writeln!(
        out,
        "seamless    {}; the pre-roll is {:.2} periods of the loop ({} frames)",
        what.join(", "),
        scene.first_frame as f64 / scene.frames as f64,
        scene.first_frame
    )
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
    let steps = match w.clock {
        Clock::Frames { steps_per_frame } => format!("{steps_per_frame} step(s) per frame"),
        Clock::Steps { per_second } => format!("{per_second} steps per second (whatever the fps)"),
    };
    writeln!(
        out,
        "water       {}, damping shift {}{}, {steps}, refraction R = {} ({:.4}){}",
        w.model.name(),
        w.damping_shift,
        if w.settle { " (settles: truncated toward zero)" } else { "" },
        w.refraction_q8,
        w.refraction_q8 as f64 / 256.0,
        if w.drop == DropShape::Smooth { ", smooth drops (a swipe's points pressed over two units)" } else { "" },
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
    for warning in advice::for_shore(scene, shore) {
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
            let share = if d.share == 256 { String::new() } else { format!(", share {}/256", d.share) };
            format!("{name} drop at ({}, {}), radius {}, weight {}{share}", d.x, d.y, d.radius, d.weight)
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
    first_unit: u64,
    last_unit: u64,
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
    /// Adds `event` of unit `k`: a drop of a swipe or of the rain to its line, a swipe's drop to
    /// a line of its own when it starts the swipe again (a seamless loop's repeat: a gap longer
    /// than the swipe takes since its last drop).
    fn add(&mut self, scene: &Scene, k: u64, event: &Event) {
        let key = match event {
            Event::Drop(d) => match d.source {
                Source::Swipe(i) => Some((self.swipes.get(&i).copied(), format!("swipe[{i}]"))),
                Source::Rain => Some((self.rain, "rain".to_string())),
                Source::Stone(_) => None,
            },
            Event::Damping { .. } => None,
        };
        let (Some((at, name)), Event::Drop(drop)) = (key, event) else {
            self.lines.push(Line { first_unit: k, last_unit: k, group: Group::Single(*event) });
            return;
        };
        let again = |last_unit: u64| match drop.source {
            Source::Swipe(i) => {
                scene.swipes.get(i as usize).is_some_and(|s| k - last_unit > s.last_unit - s.first_unit)
            }
            _ => false,
        };
        match at.and_then(|i| self.lines.get_mut(i)).filter(|line| !again(line.last_unit)) {
            Some(Line { last_unit, group: Group::Drops { last, count, .. }, .. }) => {
                *last_unit = k;
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
                self.lines.push(Line { first_unit: k, last_unit: k, group });
            }
        }
    }

    /// The lines by their first frame (events arrive in frame order, so a line is added when its
    /// first event arrives); lines of one frame keep the order events apply in.
    fn into_lines(self) -> Vec<Line> {
        self.lines
    }
}
