//! The height field as every stage after the water sees it: a row-major slice of cells of the
//! model's type ([`Cell`]: i16 for the classic model, i32 for the spring model), the distance
//! between two fields, and the rows a shore's step takes at a time.

use crate::base::threads::Bands;
use crate::scene::Model;

/// Bytes a cell of `model`'s height field takes.
pub fn cell_bytes(model: Model) -> u64 {
    match model {
        Model::Classic => std::mem::size_of::<i16>() as u64,
        Model::Spring => std::mem::size_of::<i32>() as u64,
    }
}

/// A cell of a height field: the classic model's i16 or the spring model's i32. Every stage is
/// written once, generic over it, so that a render holds one model's fields throughout.
pub trait Cell: bytemuck::Pod + Default + PartialEq + std::fmt::Debug + Send + Sync + Into<i64> + 'static {
    /// `v` narrowed to the cell type, truncating as `as` does (a blend of two cells fits).
    fn narrow(v: i64) -> Self;

    /// Σ|a − b| over two chunks of at most 65536 cells, written so that it vectorizes.
    fn distance(a: &[Self], b: &[Self]) -> u64;

    /// One row of the [1 2 1] × [1 2 1] filter (`sim::smooth`): `out[x] = (Σ w·h + 8) >> 4`
    /// over the rows `up`, `mid`, `down`, the columns beyond the ends read as `beyond` says,
    /// summed in a type wide enough to be exact.
    fn smooth_row(up: &[Self], mid: &[Self], down: &[Self], beyond: [Beyond; 2], out: &mut [Self]);
}

/// What a row's neighbour one column past its end is, for the smoothing filter: 0 (a
/// reflecting edge), the end cell itself (absorbing) or the far end's (wrapped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beyond {
    /// 0.
    Zero,
    /// The nearest cell of the row.
    Nearest,
    /// The cell at the other end of the row.
    Opposite,
}

/// `smooth_row` for a cell type `$cell`, summing in `$sum` (exact: 16 cells of the type fit).
macro_rules! smooth_row {
    ($cell:ty, $sum:ty) => {
        #[inline(always)]
        fn smooth_row(up: &[$cell], mid: &[$cell], down: &[$cell], beyond: [Beyond; 2], out: &mut [$cell]) {
            let w = mid.len();
            // The columns first, into `out`'s own width of sums, then the rows along them.
            let mut sums = [0 as $sum; SMOOTH_CHUNK + 2];
            let column = |x: usize| <$sum>::from(up[x]) + 2 * <$sum>::from(mid[x]) + <$sum>::from(down[x]);
            let edge = |b: Beyond, near: usize, far: usize| match b {
                Beyond::Zero => 0,
                Beyond::Nearest => column(near),
                Beyond::Opposite => column(far),
            };
            // Chunks of SMOOTH_CHUNK columns, each with one column to either side.
            for start in (0..w).step_by(SMOOTH_CHUNK) {
                let end = (start + SMOOTH_CHUNK).min(w);
                let n = end - start;
                sums[0] = if start == 0 { edge(beyond[0], 0, w - 1) } else { column(start - 1) };
                sums[n + 1] = if end == w { edge(beyond[1], w - 1, 0) } else { column(end) };
                let (u, m, d) = (&up[start..end], &mid[start..end], &down[start..end]);
                for (s, ((&u, &m), &d)) in sums[1..=n].iter_mut().zip(u.iter().zip(m).zip(d)) {
                    *s = <$sum>::from(u) + 2 * <$sum>::from(m) + <$sum>::from(d);
                }
                let rows = sums[..n].iter().zip(&sums[1..=n]).zip(&sums[2..n + 2]);
                for (o, ((&l, &c), &r)) in out[start..end].iter_mut().zip(rows) {
                    *o = ((l + 2 * c + r + 8) >> 4) as $cell;
                }
            }
        }
    };
}

/// Columns the smoothing filter sums at a time (its scratch stays on the stack).
const SMOOTH_CHUNK: usize = 256;

impl Cell for i16 {
    fn narrow(v: i64) -> i16 {
        v as i16
    }

    #[inline(always)]
    fn distance(a: &[i16], b: &[i16]) -> u64 {
        // |a − b| of two i16 is at most 65535: a u16 as max − min, summed in u32.
        let sum: u32 = a.iter().zip(b).map(|(&x, &y)| u32::from(x.max(y).wrapping_sub(x.min(y)) as u16)).sum();
        u64::from(sum)
    }

    // 16 cells of ±2^15 sum within ±2^19: i32 is exact.
    smooth_row!(i16, i32);
}

impl Cell for i32 {
    fn narrow(v: i64) -> i32 {
        v as i32
    }

    #[inline(always)]
    fn distance(a: &[i32], b: &[i32]) -> u64 {
        a.iter().zip(b).map(|(&x, &y)| (i64::from(x) - i64::from(y)).unsigned_abs()).sum()
    }

    // 16 cells of ±2^31 sum within ±2^35: i64.
    smooth_row!(i32, i64);
}

/// Rows a shore's step takes at a time (about 8 Ki cells): the water's step over them, then
/// the shore's finish of just those rows while they are still in the cache.
pub(crate) fn chunk_rows(width: usize) -> usize {
    (8192 / width.max(1)).max(1)
}

crate::base::simd::dispatch! {
    /// Σ|a − b| over a chunk, then `b` becomes `a`.
    fn chunk<C: Cell>(a: &[C], b: &mut [C]) -> u64 => chunk_portable
}

#[inline(always)]
fn chunk_portable<C: Cell>(a: &[C], b: &mut [C]) -> u64 {
    let sum = C::distance(a, b);
    b.copy_from_slice(a);
    sum
}

/// Σ|a − b| over the cells, then `b` becomes `a`: in chunks that stay in the cache between the
/// sum and the copy, on the bands' threads.
pub fn distance_and_copy<C: Cell>(a: &[C], b: &mut [C], bands: &Bands) -> u64 {
    // 4096 i16 differences of at most 65535 each add up within a u32, which vectorizes well.
    const CHUNK: usize = 4096;
    bands.sum_chunk_pairs(a, b, CHUNK, chunk)
}
