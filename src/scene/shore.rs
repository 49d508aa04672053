//! The shore tables (§8): `[[obstacle]]`, `[mask]` and `[edges]`, read into the
//! [`ShoreSpec`] that the simulation (`sim::shore`) turns into walls and edge rules.

use std::path::{Path, PathBuf};

use super::toml_reader::{COORD, Document, RADIUS, Table, opt, read_all};
use crate::base::error::{Diagnostic, Result};

pub(super) const OBSTACLE_KEYS: &[&str] = &["shape", "x", "y", "radius", "width", "height", "points", "path"];
pub(super) const MASK_KEYS: &[&str] = &["image", "threshold", "invert"];
pub(super) const EDGES_KEYS: &[&str] = &["all", "left", "right", "top", "bottom"];

/// Where the water ends: walls inside the canvas and what each edge does to a wave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShoreSpec {
    /// Obstacles in file order.
    pub obstacles: Vec<Obstacle>,
    /// A picture whose dark (or, inverted, light) cells are walls.
    pub mask: Option<MaskSpec>,
    /// The four edges.
    pub edges: Edges,
}

impl ShoreSpec {
    /// True when the scene has walls to compute (obstacles or a mask).
    pub fn has_walls(&self) -> bool {
        !self.obstacles.is_empty() || self.mask.is_some()
    }

    /// True when the water is §4's plain rectangle with reflecting edges.
    pub fn is_open(&self) -> bool {
        !self.has_walls() && self.edges == Edges::default()
    }
}

/// One `[[obstacle]]`: a set of wall cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Obstacle {
    /// Cells strictly inside the circle (the drop rule).
    Circle {
        /// Centre column.
        x: i64,
        /// Centre row.
        y: i64,
        /// Radius in cells.
        radius: i64,
    },
    /// Cells `x ≤ px < x + width`, `y ≤ py < y + height`.
    Rect {
        /// Left column.
        x: i64,
        /// Top row.
        y: i64,
        /// Width in cells.
        width: i64,
        /// Height in cells.
        height: i64,
    },
    /// Cells whose centre is inside the polygon by the even-odd rule.
    Polygon {
        /// Vertices; the last joins the first.
        points: Vec<[i64; 2]>,
    },
    /// A path rasterized like a swipe's, each point walling a disc.
    Line {
        /// Corners of the path.
        path: Vec<[i64; 2]>,
        /// Radius of each point's disc.
        radius: i64,
    },
}

impl Obstacle {
    /// The shape's name, as written in scene files.
    pub fn shape(&self) -> &'static str {
        match self {
            Obstacle::Circle { .. } => "circle",
            Obstacle::Rect { .. } => "rect",
            Obstacle::Polygon { .. } => "polygon",
            Obstacle::Line { .. } => "line",
        }
    }
}

/// The `[mask]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskSpec {
    /// The image, resolved against the scene's folder.
    pub image: PathBuf,
    /// Cells whose brightness is below this are walls (0..=256).
    pub threshold: i64,
    /// Walls where the brightness is at least `threshold` instead.
    pub invert: bool,
    /// Where `image` was written, so image errors point into the scene.
    pub(crate) site: Diagnostic,
}

/// What an edge of the canvas does to a wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Edge {
    /// The border cells stay 0: waves bounce back (§4).
    #[default]
    Reflect,
    /// The border cells follow a first-order absorbing rule: waves leave.
    Absorb,
    /// The opposite edge continues this one: the water tiles.
    Wrap,
}

impl Edge {
    /// The name used in scene files and `plan`.
    pub fn name(self) -> &'static str {
        match self {
            Edge::Reflect => "reflect",
            Edge::Absorb => "absorb",
            Edge::Wrap => "wrap",
        }
    }
}

/// The four edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Edges {
    /// x = 0.
    pub left: Edge,
    /// x = W − 1.
    pub right: Edge,
    /// y = 0.
    pub top: Edge,
    /// y = H − 1.
    pub bottom: Edge,
}

impl Edges {
    /// Whether x wraps (left and right both `wrap`).
    pub fn wrap_x(&self) -> bool {
        self.left == Edge::Wrap
    }

    /// Whether y wraps (top and bottom both `wrap`).
    pub fn wrap_y(&self) -> bool {
        self.top == Edge::Wrap
    }
}

pub(super) fn read_obstacle(t: &Table<'_, '_>) -> Result<Obstacle> {
    let shape = t.require("shape", "a shape (\"circle\", \"rect\", \"polygon\" or \"line\")")?;
    let name = shape.choice(&["circle", "rect", "polygon", "line"])?;
    let own: &[&str] = match name {
        "circle" => &["shape", "x", "y", "radius"],
        "rect" => &["shape", "x", "y", "width", "height"],
        "polygon" => &["shape", "points"],
        _ => &["shape", "path", "radius"],
    };
    for key in OBSTACLE_KEYS.iter().filter(|k| !own.contains(k)) {
        if let Some(v) = t.get(key) {
            let takes = own[1..].join(", ");
            return Err(v.error(format!("does not belong to a {name} obstacle: a {name} takes {takes}")));
        }
    }
    let coordinate = |key: &str| t.require(key, "an integer coordinate")?.int(COORD);
    let points = |key: &str, least: usize, what: &str| -> Result<Vec<[i64; 2]>> {
        let v = t.require(key, "an array of [x, y] points")?;
        let items = v.array("an array of [x, y] points")?;
        if items.len() < least {
            let plural = if least == 1 { "point" } else { "points" };
            return Err(v.error(format!("has {} points: {what} needs at least {least} {plural}", items.len())));
        }
        read_all(&items, |p| {
            let xy = p.array("an [x, y] pair of integers")?;
            if xy.len() != 2 {
                return Err(p.error("is not an [x, y] pair of integers"));
            }
            Ok([xy[0].int(COORD)?, xy[1].int(COORD)?])
        })
    };
    Ok(match name {
        "circle" => Obstacle::Circle {
            x: coordinate("x")?,
            y: coordinate("y")?,
            radius: t.require("radius", "a radius in 1..=16384")?.int(1..=16384)?,
        },
        "rect" => Obstacle::Rect {
            x: coordinate("x")?,
            y: coordinate("y")?,
            width: t.require("width", "a width in 1..=65536")?.int(1..=65536)?,
            height: t.require("height", "a height in 1..=65536")?.int(1..=65536)?,
        },
        "polygon" => Obstacle::Polygon { points: points("points", 3, "a polygon")? },
        _ => Obstacle::Line {
            path: points("path", 1, "a line")?,
            radius: t.get("radius").map(|v| v.int(RADIUS)).transpose()?.unwrap_or(2),
        },
    })
}

pub(super) fn read_mask(doc: &Document<'_>, t: &Table<'_, '_>, base: &Path) -> Result<MaskSpec> {
    let v = t.require("image", "the path of a mask image")?;
    let path = v.string("the path of an image file")?;
    if path.is_empty() {
        return Err(v.error("is empty: expected the path of a PNG, JPEG, GIF, BMP or WebP image"));
    }
    let site = doc.diagnostic(v.span.clone(), format!("{} = {}", v.path, v.text()));
    let threshold = t.get("threshold").map(|v| v.int(0..=256)).transpose()?.unwrap_or(128);
    let invert = t.get("invert").map(|v| v.bool()).transpose()?.unwrap_or(false);
    Ok(MaskSpec { image: base.join(path), threshold, invert, site })
}

pub(super) fn read_edges(t: Option<&Table<'_, '_>>) -> Result<Edges> {
    let edge = |key: &str, default: Edge| -> Result<Edge> {
        Ok(match opt(t, key).map(|v| v.choice(&["reflect", "absorb", "wrap"])).transpose()? {
            Some("absorb") => Edge::Absorb,
            Some("wrap") => Edge::Wrap,
            Some(_) => Edge::Reflect,
            None => default,
        })
    };
    let all = edge("all", Edge::Reflect)?;
    let edges = Edges {
        left: edge("left", all)?,
        right: edge("right", all)?,
        top: edge("top", all)?,
        bottom: edge("bottom", all)?,
    };
    let axes = [("left", "right", "x", edges.left, edges.right), ("top", "bottom", "y", edges.top, edges.bottom)];
    for (a, b, axis, ea, eb) in axes {
        if (ea == Edge::Wrap) != (eb == Edge::Wrap) {
            let (wrapped, other, other_edge) = if ea == Edge::Wrap { (a, b, eb) } else { (b, a, ea) };
            let message = match opt(t, wrapped) {
                Some(_) => format!(
                    "needs edges.{other} = \"wrap\" too (it is \"{}\"): wrap joins the two edges of the {axis} axis",
                    other_edge.name()
                ),
                None => format!(
                    "breaks edges.all = \"wrap\" on the {axis} axis: wrap joins its two edges, so edges.{wrapped} and edges.{other} must both wrap or neither"
                ),
            };
            if let Some(v) = opt(t, wrapped).or_else(|| opt(t, other)) {
                return Err(v.error(message));
            }
        }
    }
    Ok(edges)
}
