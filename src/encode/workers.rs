//! An encoder's worker threads: the work each frame's job is, and the ordered pool
//! ([`Ordered`]) it runs on, started at the first frame. Encoding frames in parallel this way
//! cannot change the output: each frame is encoded on its own and written in order.

use std::sync::Arc;

use crate::base::error::Result;
use crate::base::pool::{Ordered, default_threads};

type Work<J, R> = Arc<dyn Fn(J) -> Result<R> + Send + Sync>;

/// An encoder's workers: the work each job is, how many threads do it, and the pool, started at
/// the first job (an encoder that is given no frame starts no thread).
pub struct Workers<J, R> {
    threads: usize,
    work: Work<J, R>,
    pool: Option<Ordered<'static, J, R>>,
}

impl<J: Send + 'static, R: Send + 'static> Workers<J, R> {
    /// Workers that do `work`, on every core until told otherwise ([`Workers::set_threads`]).
    pub fn new(work: impl Fn(J) -> Result<R> + Send + Sync + 'static) -> Self {
        Workers { threads: default_threads(), work: Arc::new(work), pool: None }
    }

    /// Works on `threads` threads (1: every job on the caller's thread).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Submits a job, then hands every result that is ready, in order, to `each`.
    pub fn submit(&mut self, job: J, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        let (threads, work) = (self.threads, &self.work);
        let pool = self.pool.get_or_insert_with(|| Ordered::with_work(threads, work.clone()));
        pool.submit(job, each)
    }

    /// Waits for every job and hands the remaining results to `each`, in order.
    pub fn finish(&mut self, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        match self.pool.take() {
            Some(pool) => pool.finish(each),
            None => Ok(()),
        }
    }
}
