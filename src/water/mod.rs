//! The water surface (SPEC §4): an integer height field stepped by one of two models.

mod classic;
mod spring;

pub use classic::Classic;
pub use spring::Spring;

use rayon::ThreadPool;
use rayon::prelude::*;

use crate::scene::Model;
use crate::timeline::Drop;

/// A read-only view of the current heights, row-major, `width·height` cells.
#[derive(Debug, Clone, Copy)]
pub enum Heights<'a> {
    /// The classic model's i16 field.
    I16(&'a [i16]),
    /// The spring model's i32 field.
    I32(&'a [i32]),
}

/// The water of either model.
#[derive(Debug, Clone)]
pub enum Water {
    /// SPEC §4 classic.
    Classic(Classic),
    /// SPEC §4 spring.
    Spring(Spring),
}

impl Water {
    /// Still water of the given model and size.
    pub fn new(model: Model, width: usize, height: usize) -> Self {
        match model {
            Model::Classic => Water::Classic(Classic::new(width, height)),
            Model::Spring => Water::Spring(Spring::new(width, height)),
        }
    }

    /// Still water within `shore`'s walls and edges (SPEC §8); an open shore is [`Water::new`].
    pub fn with_shore(model: Model, shore: &crate::shore::Shore) -> Self {
        let (width, height) = shore.size();
        match model {
            Model::Classic => Water::Classic(Classic::new(width, height).with_shore(shore)),
            Model::Spring => Water::Spring(Spring::new(width, height).with_shore(shore)),
        }
    }

    /// The spring model with damping that lets it come to rest (`[water] settle`); the classic
    /// model is unchanged.
    pub fn settling(self, settle: bool) -> Self {
        match self {
            Water::Spring(w) => Water::Spring(w.settling(settle)),
            classic => classic,
        }
    }

    /// Presses a drop into the current heights, clipped to the interior.
    pub fn drop(&mut self, drop: &Drop) {
        match self {
            Water::Classic(w) => w.drop(drop),
            Water::Spring(w) => w.drop(drop),
        }
    }

    /// One simulation step with the given damping shift, on `pool`'s threads if given (row
    /// bands are independent, so the result is the same).
    pub fn step(&mut self, damping_shift: u32, pool: Option<&ThreadPool>) {
        match self {
            Water::Classic(w) => w.step(damping_shift, pool),
            Water::Spring(w) => w.step(damping_shift, pool),
        }
    }

    /// The current height field.
    pub fn heights(&self) -> Heights<'_> {
        match self {
            Water::Classic(w) => Heights::I16(w.heights()),
            Water::Spring(w) => Heights::I32(w.heights()),
        }
    }
}

/// Rows per band of parallel work: one band per thread, each of at least 16 Ki cells, so that
/// handing a band out costs little beside its work.
pub(crate) fn band_rows(width: usize, rows: usize, pool: &ThreadPool) -> usize {
    let per_thread = rows.div_ceil(pool.current_num_threads().max(1));
    per_thread.max(16_384usize.div_ceil(width.max(1))).max(1)
}

/// Below this many cells a water step is quicker on one thread than handed out.
pub(crate) const PARALLEL_STEP_CELLS: usize = 1 << 20;
/// Below this many pixels refraction stays on one thread.
pub(crate) const PARALLEL_REFRACT_PIXELS: usize = 1 << 16;

/// Runs `f(band, first_row)` over bands of whole rows of `out`, in parallel on `pool` when
/// `out` has at least `min_cells` cells.
pub(crate) fn for_bands<T: Send>(
    out: &mut [T],
    width: usize,
    pool: Option<&ThreadPool>,
    min_cells: usize,
    f: impl Fn(&mut [T], usize) + Sync,
) {
    match pool.filter(|_| out.len() >= min_cells) {
        Some(pool) => pool.install(|| {
            let rows = band_rows(width, out.len() / width.max(1), pool);
            out.par_chunks_mut(rows * width).enumerate().for_each(|(i, band)| f(band, i * rows));
        }),
        None => f(out, 0),
    }
}

/// Like [`for_bands`], over the same bands of two buffers.
pub(crate) fn for_band_pairs<T: Send>(
    a: &mut [T],
    b: &mut [T],
    width: usize,
    pool: Option<&ThreadPool>,
    f: impl Fn(&mut [T], &mut [T], usize) + Sync,
) {
    match pool.filter(|_| a.len() >= PARALLEL_STEP_CELLS) {
        Some(pool) => pool.install(|| {
            let rows = band_rows(width, a.len() / width.max(1), pool);
            a.par_chunks_mut(rows * width)
                .zip(b.par_chunks_mut(rows * width))
                .enumerate()
                .for_each(|(i, (a, b))| f(a, b, i * rows));
        }),
        None => f(a, b, 0),
    }
}

/// Rows a shore's step takes at a time (about 8 Ki cells): the water's step over them, then
/// the shore's finish of just those rows while they are still in the cache.
pub(crate) fn chunk_rows(width: usize) -> usize {
    (8192 / width.max(1)).max(1)
}

/// Calls `set(index)` for every interior cell of a `width`×`height` grid strictly inside the
/// drop's circle: the drop is clipped at the border, never moved.
pub(crate) fn for_each_drop_cell(width: usize, height: usize, drop: &Drop, mut set: impl FnMut(usize)) {
    let (w, h) = (width as i64, height as i64);
    let r = drop.radius;
    let r2 = r * r;
    let y_lo = (drop.y - r + 1).max(1);
    let y_hi = (drop.y + r - 1).min(h - 2);
    let x_lo = (drop.x - r + 1).max(1);
    let x_hi = (drop.x + r - 1).min(w - 2);
    for py in y_lo..=y_hi {
        let dy = py - drop.y;
        for px in x_lo..=x_hi {
            let dx = px - drop.x;
            if dx * dx + dy * dy < r2 {
                set((py * w + px) as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Source;

    fn cells(w: usize, h: usize, x: i64, y: i64, radius: i64) -> Vec<usize> {
        let mut out = Vec::new();
        let drop = Drop { x, y, radius, weight: 1, source: Source::Stone(0) };
        for_each_drop_cell(w, h, &drop, |i| out.push(i));
        out
    }

    #[test]
    fn radius_one_is_one_cell_and_radius_two_a_square() {
        assert_eq!(cells(5, 5, 2, 2, 1), vec![12]);
        // Diagonal neighbours are at squared distance 2 < 4.
        assert_eq!(cells(5, 5, 2, 2, 2), vec![6, 7, 8, 11, 12, 13, 16, 17, 18]);
        // Radius 3: (±2, ±2) is at 8 < 9, so a full 5×5 square; radius 4 adds (±3, 0) and (±3, ±1)
        // and (±3, ±2) (13 < 16) but not (±3, ±3) (18): 49 - 4 = 45 cells in a 9×9 grid.
        assert_eq!(cells(7, 7, 3, 3, 3).len(), 25);
        assert_eq!(cells(9, 9, 4, 4, 4).len(), 45);
    }

    #[test]
    fn drops_are_clipped_at_the_border_not_moved() {
        // A stone on the corner cell: radius 1 covers only the border cell itself, so nothing;
        // radius 2 reaches (1,1) (1+1 < 4); radius 3 reaches (1..=2, 1..=2) (8 < 9).
        assert_eq!(cells(5, 5, 0, 0, 1), Vec::<usize>::new());
        assert_eq!(cells(5, 5, 0, 0, 2), vec![6]);
        assert_eq!(cells(5, 5, 0, 0, 3), vec![6, 7, 11, 12]);
        // Far off the canvas: nothing, and no panic.
        assert_eq!(cells(5, 5, -65536, 65536, 256), Vec::<usize>::new());
    }

    #[test]
    fn the_avx2_and_baseline_steps_agree() {
        let run = |model: Model, baseline: bool| {
            crate::simd::set_baseline_only(baseline);
            // The AVX2 path also runs on three threads, in bands (the canvas is large enough).
            let pool = (!baseline).then(|| rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap());
            let mut water = Water::new(model, 1100, 960);
            for (i, (x, y)) in [(3, 4), (1000, 214), (1099, 959), (10, 425), (700, 300)].into_iter().enumerate() {
                water.drop(&Drop { x, y, radius: 5, weight: 16384 - i as i64, source: Source::Rain });
            }
            for step in 0..12 {
                water.step(1 + step % 15, pool.as_ref());
            }
            crate::simd::set_baseline_only(false);
            match water.heights() {
                Heights::I16(h) => h.iter().map(|&v| i32::from(v)).collect::<Vec<_>>(),
                Heights::I32(h) => h.to_vec(),
            }
        };
        for model in [Model::Classic, Model::Spring] {
            assert_eq!(run(model, true), run(model, false), "{model:?}");
        }
    }
}
