//! Every thread the crate starts is started here, and named (`ripple-…`, as a debugger or `top
//! -H` shows it): the ordered pool's workers ([`super::pool`]), the threads a render's bands of
//! rows are handed to ([`Bands`]), and the few threads of their own (a decoder running ahead of
//! its reader, a pipe to ffmpeg, `serve`'s watcher and renderer) through [`spawn`] and
//! [`spawn_scoped`].
//!
//! Two kinds of work, two kinds of threads. The pool runs whole jobs (a frame to draw, a frame
//! to compress) and hands their results on in order; [`Bands`] splits one borrowed buffer into
//! bands of rows and waits for every band (a step of the water, a pass of smoothing, a frame's
//! refraction). The second is rayon's fork-join, which lends a band of a buffer the caller owns
//! to each thread without copying or `unsafe`; docs/design.md ("Threads") gives what it buys.
//! Either way, every band and every job is done as it would be on one thread, so no output
//! depends on the thread count.
//!
//! The WebAssembly build (without the `native` feature) has no threads: rayon is left out, and
//! [`Bands`] is always none, every band on the caller's thread.

use std::sync::Arc;
use std::thread::{JoinHandle, Scope, ScopedJoinHandle};

#[cfg(feature = "threads")]
use rayon::ThreadPool;
#[cfg(feature = "threads")]
use rayon::prelude::*;

use super::error::{Error, Result};

/// Starts `work` on a thread of its own named `ripple-NAME`.
pub fn spawn<T: Send + 'static>(name: &str, work: impl FnOnce() -> T + Send + 'static) -> Result<JoinHandle<T>> {
    std::thread::Builder::new().name(format!("ripple-{name}")).spawn(work).map_err(Error::Thread)
}

/// Starts `work` on a thread named `ripple-NAME` within `scope`, which it may borrow from.
pub fn spawn_scoped<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    name: &str,
    work: impl FnOnce() -> T + Send + 'scope,
) -> Result<ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new().name(format!("ripple-{name}")).spawn_scoped(scope, work).map_err(Error::Thread)
}

/// Below this many cells a water step is quicker on one thread than handed out.
pub const PARALLEL_STEP_CELLS: usize = 1 << 20;
/// Below this many pixels refraction (and smoothing, and a seam's sum) stays on one thread.
pub const PARALLEL_REFRACT_PIXELS: usize = 1 << 16;

/// The threads that bands of rows are handed to: some, or none (every band on the caller's
/// thread). Made once per render and shared by the water's steps and the drawing.
#[derive(Clone, Default)]
pub struct Bands(Option<Arc<ThreadPool>>);

/// Without the `native` feature there are no threads to hand bands to: no pool is ever made.
#[cfg(not(feature = "threads"))]
enum ThreadPool {}

impl Bands {
    /// No threads, whatever `threads` asks: this build has none.
    #[cfg(not(feature = "threads"))]
    pub fn new(threads: usize) -> Bands {
        let _ = threads;
        Bands(None)
    }

    /// `threads` threads (1: none beside the caller's; also none if the system will not start
    /// them, and the work then runs on the caller's thread alone).
    #[cfg(feature = "threads")]
    pub fn new(threads: usize) -> Bands {
        let pool = (threads > 1).then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("ripple-band-{i}"))
                .build()
                .ok()
        });
        Bands(pool.flatten().map(Arc::new))
    }

    /// The pool, when there is one and `cells` reach `min_cells`.
    fn pool_for(&self, cells: usize, min_cells: usize) -> Option<&ThreadPool> {
        self.0.as_deref().filter(|_| cells >= min_cells)
    }

    /// Runs `f(band, first_row)` over bands of whole rows of `out` (`width` a row), in parallel
    /// when `out` has at least `min_cells` cells.
    #[cfg_attr(not(feature = "threads"), allow(unused_variables))] // `width` cuts bands
    pub fn for_bands<T: Send>(
        &self,
        out: &mut [T],
        width: usize,
        min_cells: usize,
        f: impl Fn(&mut [T], usize) + Sync,
    ) {
        match self.pool_for(out.len(), min_cells) {
            #[cfg(feature = "threads")]
            Some(pool) => pool.install(|| {
                let rows = band_rows(width, out.len() / width.max(1), pool);
                out.par_chunks_mut(rows * width).enumerate().for_each(|(i, band)| f(band, i * rows));
            }),
            #[cfg(not(feature = "threads"))]
            Some(pool) => match *pool {},
            None => f(out, 0),
        }
    }

    /// Like [`Bands::for_bands`], over the same bands of two buffers, in parallel from
    /// [`PARALLEL_STEP_CELLS`] cells.
    #[cfg_attr(not(feature = "threads"), allow(unused_variables))] // `width` cuts bands
    pub fn for_band_pairs<T: Send>(
        &self,
        a: &mut [T],
        b: &mut [T],
        width: usize,
        f: impl Fn(&mut [T], &mut [T], usize) + Sync,
    ) {
        match self.pool_for(a.len(), PARALLEL_STEP_CELLS) {
            #[cfg(not(feature = "threads"))]
            Some(pool) => match *pool {},
            #[cfg(feature = "threads")]
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

    /// The sum of `f` over `a` and `b` cut alike into chunks of `chunk` items, in parallel from
    /// [`PARALLEL_REFRACT_PIXELS`] items (a sum of integers: the same in any order).
    pub fn sum_chunk_pairs<A: Sync, B: Send>(
        &self,
        a: &[A],
        b: &mut [B],
        chunk: usize,
        f: impl Fn(&[A], &mut [B]) -> u64 + Sync,
    ) -> u64 {
        match self.pool_for(a.len(), PARALLEL_REFRACT_PIXELS) {
            None => a.chunks(chunk).zip(b.chunks_mut(chunk)).map(|(a, b)| f(a, b)).sum(),
            #[cfg(not(feature = "threads"))]
            Some(pool) => match *pool {},
            #[cfg(feature = "threads")]
            Some(pool) => pool.install(|| a.par_chunks(chunk).zip(b.par_chunks_mut(chunk)).map(|(a, b)| f(a, b)).sum()),
        }
    }
}

/// Rows per band of parallel work: one band per thread, each of at least 16 Ki cells, so that
/// handing a band out costs little beside its work.
#[cfg(feature = "threads")]
fn band_rows(width: usize, rows: usize, pool: &ThreadPool) -> usize {
    let per_thread = rows.div_ceil(pool.current_num_threads().max(1));
    per_thread.max(16_384usize.div_ceil(width.max(1))).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_named_and_bands_cover_every_row_once() {
        let name = spawn("test", || std::thread::current().name().map(str::to_owned)).unwrap().join().unwrap();
        assert_eq!(name.as_deref(), Some("ripple-test"));
        let (width, rows) = (300, 1000);
        let mut out = vec![0u32; width * rows];
        Bands::new(3).for_bands(&mut out, width, 0, |band, y0| {
            let named = std::thread::current().name().is_some_and(|n| n.starts_with("ripple-band-"));
            for (i, v) in band.iter_mut().enumerate() {
                *v += (y0 * width + i) as u32 + if named { 0 } else { 1 << 31 };
            }
        });
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == i as u32),
            "a band was missed, doubled or not on a band thread"
        );
    }
}
