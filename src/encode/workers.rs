//! An encoder's worker threads: the work each frame's job is, and the ordered lane
//! ([`Ordered`]) it runs in, on a pool of its own or one it shares with the render that feeds
//! it, opened at the first frame. Encoding frames in parallel this way cannot change the
//! output: each frame is encoded on its own and written in order.

use std::sync::Arc;

use crate::base::error::Result;
use crate::base::pool::{Ordered, Pool, default_threads};

type Work<J, R> = Arc<dyn Fn(J) -> Result<R> + Send + Sync>;

/// An encoder's workers: the work each job is, the pool it runs on, and the lane, opened at the
/// first job (an encoder that is given no frame starts no thread).
pub struct Workers<J, R> {
    pool: Pool,
    work: Work<J, R>,
    lane: Option<Ordered<J, R>>,
    /// What a job holds, for how many may be in flight ([`crate::base::pool::in_flight`]).
    job_bytes: u64,
}

impl<J: Send + 'static, R: Send + 'static> Workers<J, R> {
    /// Workers that do `work`, on every core until told otherwise.
    pub fn new(work: impl Fn(J) -> Result<R> + Send + Sync + 'static) -> Self {
        Workers { pool: Pool::new(default_threads()), work: Arc::new(work), lane: None, job_bytes: 0 }
    }

    /// The same workers, each job holding `job_bytes` (its frame and what it makes of it).
    pub fn holding(mut self, job_bytes: u64) -> Self {
        self.job_bytes = job_bytes;
        self
    }

    /// Works on `threads` threads of a pool of its own (1: every job on the caller's thread).
    pub fn set_threads(&mut self, threads: usize) {
        self.pool = Pool::new(threads);
    }

    /// Works on `pool`'s threads, beside whatever else runs there.
    pub fn set_pool(&mut self, pool: &Pool) {
        self.pool = pool.clone();
    }

    /// Submits a job, then hands every result that is ready, in order, to `each`.
    pub fn submit(&mut self, job: J, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        let (pool, work, bytes) = (&self.pool, &self.work, self.job_bytes);
        self.lane.get_or_insert_with(|| Ordered::on(pool, work.clone()).holding(bytes)).submit(job, each)
    }

    /// Waits for every job and hands the remaining results to `each`, in order.
    pub fn finish(&mut self, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        match self.lane.take() {
            Some(lane) => lane.finish(each),
            None => Ok(()),
        }
    }
}
