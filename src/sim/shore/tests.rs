use super::*;
use crate::base::threads::Bands;
use crate::scene::{Clock, DropShape, Model, Obstacle, WaterSpec};
use crate::sim::timeline::Source;
use crate::sim::water::{Basin, Classic, Spring, Water};

fn cells(walls: &Walls) -> Vec<usize> {
    (0..walls.width * walls.height).filter(|&i| walls.contains(i)).collect()
}

fn one(width: usize, height: usize, obstacle: Obstacle) -> Walls {
    let mut walls = Walls::new(width, height);
    walls.add(&obstacle);
    walls
}

#[test]
fn circles_and_rects_wall_the_cells_the_spec_names() {
    // Radius 2 at (2, 2): the 3×3 square (diagonals at 2 < 4), as a drop of radius 2.
    let walls = one(5, 5, Obstacle::Circle { x: 2, y: 2, radius: 2 });
    assert_eq!(cells(&walls), vec![6, 7, 8, 11, 12, 13, 16, 17, 18]);
    // A circle may sit on the border and off the canvas: only canvas cells are walls.
    let walls = one(5, 5, Obstacle::Circle { x: 0, y: 0, radius: 2 });
    assert_eq!(cells(&walls), vec![0, 1, 5, 6]);
    assert_eq!(one(5, 5, Obstacle::Circle { x: -9, y: 2, radius: 3 }).count(), 0);
    // A rect is x ≤ px < x + width, clipped.
    let walls = one(6, 4, Obstacle::Rect { x: 4, y: -1, width: 5, height: 2 });
    assert_eq!(cells(&walls), vec![4, 5]);
}

#[test]
fn a_radius_one_line_is_one_cell_wide_and_eight_connected() {
    // (0,0) → (4,2): Bresenham gives (1,0)? x-major, p = 2·2 − 4 = 0 → (1,1), p = 0 + 2·(2−4) = −4
    // → (2,1), p = 0 → (3,2), p = −4 → (4,2).
    let walls = one(5, 3, Obstacle::Line { path: vec![[0, 0], [4, 2]], radius: 1 });
    assert_eq!(cells(&walls), vec![0, 6, 7, 13, 14]);
}

/// §8's even-odd rule, cell by cell, as written.
fn polygon_by_the_rule(width: usize, height: usize, points: &[[i64; 2]]) -> Vec<usize> {
    let mut out = Vec::new();
    for py in 0..height as i64 {
        for px in 0..width as i64 {
            let (cx, cy) = (2 * px + 1, 2 * py + 1);
            let mut odd = false;
            for k in 0..points.len() {
                let (a, b) = (points[k].map(|v| 2 * v), points[(k + 1) % points.len()].map(|v| 2 * v));
                let d = b[1] - a[1];
                if (a[1] > cy) != (b[1] > cy) && ((b[0] - a[0]) * (cy - a[1]) - (cx - a[0]) * d) * d.signum() > 0 {
                    odd = !odd;
                }
            }
            if odd {
                out.push((py * width as i64 + px) as usize);
            }
        }
    }
    out
}

#[test]
fn polygons_row_by_row_match_the_even_odd_rule_cell_by_cell() {
    // A triangle worked by hand: (0,0), (4,0), (0,4) on a 5×5 canvas walls the cells whose
    // centre (px + ½, py + ½) lies below the diagonal x + y = 4: px + py ≤ 2.
    let triangle = [[0, 0], [4, 0], [0, 4]];
    let walls = one(5, 5, Obstacle::Polygon { points: triangle.to_vec() });
    assert_eq!(cells(&walls), vec![0, 1, 2, 5, 6, 10]);
    // Random polygons, self-crossing, off the canvas and with horizontal edges.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |range: i64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % (2 * range as u64 + 1)) as i64 - range
    };
    for trial in 0..300 {
        let n = 3 + (trial % 9);
        let points: Vec<[i64; 2]> = (0..n).map(|_| [next(30) + 12, next(30) + 10]).collect();
        let walls = one(23, 19, Obstacle::Polygon { points: points.clone() });
        assert_eq!(cells(&walls), polygon_by_the_rule(23, 19, &points), "{points:?}");
    }
}

#[test]
fn runs_cover_exactly_the_wall_cells_across_word_boundaries() {
    let mut walls = Walls::new(200, 3);
    walls.fill_row(0, 3, 5);
    walls.fill_row(0, 60, 140);
    walls.fill_row(1, 0, 200);
    walls.fill_row(2, 199, 200);
    let mut seen = Vec::new();
    walls.for_each_run(0..600, |run| seen.push(run));
    assert_eq!(seen, vec![3..5, 60..140, 200..400, 599..600]);
    let mut seen = Vec::new();
    walls.for_each_run(100..250, |run| seen.push(run));
    assert_eq!(seen, vec![100..140, 200..250]);
}

/// Runs against the cells one by one, over random walls of every density and random ranges.
#[test]
fn runs_are_the_maximal_runs_of_wall_cells() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut listed = [0; 2];
    for round in 0..300 {
        let (w, h) = (1 + next() as usize % 300, 1 + next() as usize % 5);
        let mut walls = Walls::new(w, h);
        // Long runs, short runs and single cells, depending on the round.
        let longest = [1, 3, 70, 200][round % 4];
        for _ in 0..next() % 40 {
            let (y, x) = ((next() % h as u64) as i64, (next() % w as u64) as i64);
            walls.fill_row(y, x, x + 1 + (next() % longest) as i64);
        }
        let a = next() as usize % (w * h + 1);
        let b = a + next() as usize % (w * h + 1 - a);
        let mut expected: Vec<std::ops::Range<usize>> = Vec::new();
        for i in (a..b).filter(|&i| walls.contains(i)) {
            match expected.last_mut() {
                Some(last) if last.end == i => last.end += 1,
                _ => expected.push(i..i + 1),
            }
        }
        let mut seen = Vec::new();
        walls.for_each_run(a..b, |run| seen.push(run));
        assert_eq!(seen, expected, "round {round}: {w}x{h}, cells {a}..{b}");
        // The shore's runs, listed or scanned, are those of each row.
        let rows = (a / w)..(b / w);
        let expected: Vec<_> = rows
            .clone()
            .flat_map(|y| {
                let mut runs = Vec::new();
                walls.for_each_run(y * w..(y + 1) * w, |run| runs.push(run));
                runs
            })
            .collect();
        let shore = Shore::new(w, h, Edges::default(), Some(Arc::new(walls)));
        listed[usize::from(shore.wall_runs.is_some())] += 1;
        let mut seen = Vec::new();
        shore.for_each_wall_run(rows.start * w..rows.end * w, |run| seen.push(run));
        assert_eq!(seen, expected, "round {round}: {w}x{h}, rows {rows:?}");
    }
    assert!(listed.iter().all(|&n| n > 20), "listed and scanned runs both tried: {listed:?}");
}

/// What looks at the heights after every step, if anything.
type Check<'a> = Option<&'a mut dyn FnMut(&[i64])>;

/// Water of `model` within `shore`: `drops` pressed in, then a step with each of `shifts`, on
/// `bands`; `each` sees the heights after the drops and after every step. The last heights.
fn stepped(
    model: Model,
    shore: &Shore,
    drops: &[Drop],
    shifts: impl Iterator<Item = u32>,
    bands: &Bands,
    each: Check<'_>,
) -> Vec<i64> {
    fn run<W: Water>(
        shore: &Shore,
        drops: &[Drop],
        shifts: impl Iterator<Item = u32>,
        bands: &Bands,
        mut each: Check<'_>,
    ) -> Vec<i64> {
        let spec = WaterSpec {
            model: Model::Classic,
            damping_shift: 5,
            clock: Clock::Frames { steps_per_frame: 1 },
            settle: false,
            refraction_q8: 0,
            drop: DropShape::Disc,
        };
        let mut water = W::still(Basin::within(shore), &spec);
        let field = |water: &W| water.heights().iter().map(|&v| v.into()).collect::<Vec<i64>>();
        drops.iter().for_each(|d| water.drop(d));
        if let Some(each) = each.as_mut() {
            each(&field(&water));
        }
        for shift in shifts {
            water.step(shift, bands);
            if let Some(each) = each.as_mut() {
                each(&field(&water));
            }
        }
        field(&water)
    }
    match model {
        Model::Classic => run::<Classic>(shore, drops, shifts, bands, each),
        Model::Spring => run::<Spring>(shore, drops, shifts, bands, each),
    }
}

fn drop(x: i64, y: i64, radius: i64, weight: i64) -> Drop {
    Drop { x, y, radius, weight, source: Source::Stone(0), share: 256, eased: false }
}

fn edges(all: Edge) -> Edges {
    Edges { left: all, right: all, top: all, bottom: all }
}

#[test]
fn walls_stay_zero_and_drops_skip_them() {
    for model in [Model::Classic, Model::Spring] {
        let mut walls = Walls::new(40, 30);
        walls.add(&Obstacle::Rect { x: 18, y: 0, width: 3, height: 30 });
        let shore = Shore::new(40, 30, Edges::default(), Some(Arc::new(walls)));
        let mut check = |h: &[i64]| {
            assert!(h.iter().enumerate().all(|(i, &v)| v == 0 || !shore.is_wall(i)), "{model:?}");
        };
        let h = stepped(
            model,
            &shore,
            &[drop(19, 15, 6, 900)],
            std::iter::repeat_n(6, 50),
            &Bands::default(),
            Some(&mut check),
        );
        // The drop's cells either side of the wall moved the water on both sides.
        assert!(h[15 * 40 + 10] != 0 && h[15 * 40 + 28] != 0);
    }
}

/// The energy the left edge sends back: a drop 12 cells from it on a 96×96 canvas, against the
/// same drop on a 480×480 canvas where nothing has come back yet; the squared difference over
/// the small canvas after `steps` steps. At 35 steps the front (about 0.7 cells a step) has met
/// the left edge and come 12 cells back, and has not reached another edge.
pub(crate) fn reflected_energy(model: Model, edge: Edge, steps: usize) -> f64 {
    let (small, large, offset) = (96usize, 480usize, 192i64);
    let (x, y, radius) = (12, 48, 6);
    let shift = 12;
    let run = |size: usize, edges: Edges, dx: i64| {
        let shore = Shore::new(size, size, edges, None);
        stepped(
            model,
            &shore,
            &[drop(x + dx, y + dx, radius, 2000)],
            std::iter::repeat_n(shift, steps),
            &Bands::default(),
            None,
        )
    };
    let near = run(small, Edges { left: edge, ..Edges::default() }, 0);
    let far = run(large, Edges::default(), offset);
    let mut energy = 0.0;
    for py in 0..small {
        for px in 0..small {
            let a = near[py * small + px] as f64;
            let b = far[(py + offset as usize) * large + px + offset as usize] as f64;
            energy += (a - b) * (a - b);
        }
    }
    energy
}

#[test]
fn an_absorbing_edge_sends_back_far_less_than_a_reflecting_one() {
    for (model, floor) in [(Model::Classic, 15.0), (Model::Spring, 12.0)] {
        let reflect = reflected_energy(model, Edge::Reflect, 35);
        let absorb = reflected_energy(model, Edge::Absorb, 35);
        let db = 10.0 * (reflect / absorb).log10();
        println!("{model:?}: reflect {reflect:.3e}, absorb {absorb:.3e}: {db:.1} dB");
        assert!(db >= floor, "{model:?}: {db:.1} dB below {floor}");
    }
}

#[test]
fn wrapped_water_tiles_without_a_seam() {
    for model in [Model::Classic, Model::Spring] {
        let (w, h) = (64usize, 48usize);
        let shore = Shore::new(w, h, edges(Edge::Wrap), None);
        let run = |x: i64, y: i64| {
            stepped(model, &shore, &[drop(x, y, 5, 1500)], std::iter::repeat_n(7, 40), &Bands::default(), None)
        };
        // A drop on the seam equals the same drop half a canvas away, shifted back.
        let on_seam = run(0, 0);
        let inside = run(w as i64 / 2, h as i64 / 2);
        for y in 0..h {
            for x in 0..w {
                let shifted = inside[(y + h / 2) % h * w + (x + w / 2) % w];
                assert_eq!(on_seam[y * w + x], shifted, "{model:?} at ({x}, {y})");
            }
        }
        // The water continues across the seam: the left column's neighbours are the right
        // column's, so the wave is there on both sides, and symmetric about x = 0.
        for y in 0..h {
            assert_eq!(on_seam[y * w + 1], on_seam[y * w + w - 1], "{model:?} row {y}");
        }
        assert!(on_seam[w - 1] != 0);
    }
}

/// The shore's step finishes a few rows at a time, inside each thread's band; bands of three
/// threads (a canvas over a million cells) must give the one-thread field, with walls across
/// the bands' seams and every kind of edge.
#[test]
fn a_shore_step_in_bands_matches_one_thread() {
    let (w, h) = (1100usize, 961usize);
    let bands = Bands::new(3);
    let mut walls = Walls::new(w, h);
    walls.add(&Obstacle::Rect { x: 0, y: 300, width: 1100, height: 30 });
    walls.add(&Obstacle::Circle { x: 550, y: 640, radius: 90 });
    walls.add(&Obstacle::Rect { x: 1090, y: 0, width: 10, height: 100 });
    let walls = Some(Arc::new(walls));
    let mixed = Edges { left: Edge::Wrap, right: Edge::Wrap, top: Edge::Absorb, bottom: Edge::Absorb };
    let sideways = Edges { left: Edge::Absorb, right: Edge::Reflect, top: Edge::Wrap, bottom: Edge::Wrap };
    for model in [Model::Classic, Model::Spring] {
        for edges in [mixed, sideways, self::edges(Edge::Wrap), self::edges(Edge::Absorb)] {
            let shore = Shore::new(w, h, edges, walls.clone());
            let drops: Vec<Drop> = [(0, 0), (1099, 960), (3, 480), (700, 322), (550, 1), (1, 641)]
                .map(|(x, y)| drop(x, y, 9, 3000))
                .into();
            let run = |bands| stepped(model, &shore, &drops, (0..30).map(|step| 4 + step % 5), bands, None);
            let single = Bands::default();
            let one = run(&single);
            assert!(one.iter().filter(|&&v| v != 0).count() > 5_000, "{model:?} {edges:?}: too little moved");
            assert_eq!(one, run(&bands), "{model:?} {edges:?}");
        }
    }
}
