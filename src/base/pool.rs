//! The one pool of worker threads: jobs run on workers, results come back in the order the jobs
//! were submitted, and at most a few jobs are in flight, so memory stays flat. Work done this
//! way cannot change an output: each job is done on its own and its result handed on in order.
//!
//! On `threads` threads the pool starts one worker fewer: the caller's thread is the last, and
//! takes a waiting job itself whenever it would otherwise wait for a result. A worker per thread
//! beside a busy caller made three busy threads share two cores, and the caller, on which every
//! result waits, got two thirds of one.
//!
//! A pool's workers are threads of their own ([`Ordered::new`], for work that owns what it
//! needs), or of a scope ([`Ordered::scoped`], for work that borrows from the caller: a render
//! draws its frames from the background and the shore it was handed). When the pool is dropped
//! (at the end, or at the first error) no worker starts another job.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::error::{Error, Result};

/// The work each job is.
type Work<'a, J, R> = Arc<dyn Fn(J) -> Result<R> + Send + Sync + 'a>;

/// The queue of jobs no thread has taken yet, each with its number.
type Queue<J> = Arc<Mutex<Receiver<(u64, J)>>>;

/// Runs `work` on jobs, on `threads` threads: the caller's and `threads - 1` workers (or inline
/// with one thread), handing the results on in the jobs' order.
pub struct Ordered<'a, J, R> {
    work: Work<'a, J, R>,
    /// Threads of the pool's own, joined when it is dropped (a scope joins its own).
    workers: Vec<JoinHandle<()>>,
    jobs: Option<SyncSender<(u64, J)>>,
    /// The jobs no thread has taken yet, shared with the workers so that the caller can take one.
    waiting: Option<Queue<J>>,
    results: Option<Receiver<(u64, Result<R>)>>,
    /// Set when the pool is dropped: workers start no job after it.
    abort: Arc<AtomicBool>,
    pending: BTreeMap<u64, Result<R>>,
    submitted: u64,
    delivered: u64,
    in_flight_limit: u64,
}

impl<J: Send + 'static, R: Send + 'static> Ordered<'static, J, R> {
    /// A pool on `threads` threads, the caller's among them (1 runs every job inline), whose
    /// workers are threads of its own.
    pub fn new(threads: usize, work: impl Fn(J) -> Result<R> + Send + Sync + 'static) -> Self {
        Ordered::with_work(threads, Arc::new(work))
    }

    /// [`Ordered::new`] for work already shared.
    pub(crate) fn with_work(threads: usize, work: Work<'static, J, R>) -> Self {
        let mut workers = Vec::new();
        let mut pool = Ordered::start(threads, work, |worker| workers.push(std::thread::spawn(worker)));
        pool.workers = workers;
        pool
    }
}

impl<'a, J: Send + 'a, R: Send + 'a> Ordered<'a, J, R> {
    /// A pool on `threads` threads, the caller's among them, whose workers are threads of
    /// `scope`: its work may borrow what outlives the scope.
    pub fn scoped<'env>(
        scope: &'a std::thread::Scope<'a, 'env>,
        threads: usize,
        work: impl Fn(J) -> Result<R> + Send + Sync + 'a,
    ) -> Self {
        Ordered::start(threads, Arc::new(work), |worker| {
            scope.spawn(worker);
        })
    }

    /// The pool, its `threads - 1` workers started by `spawn`.
    fn start(threads: usize, work: Work<'a, J, R>, mut spawn: impl FnMut(Box<dyn FnOnce() + Send + 'a>)) -> Self {
        let mut pool = Ordered {
            work: work.clone(),
            workers: Vec::new(),
            jobs: None,
            waiting: None,
            results: None,
            abort: Arc::new(AtomicBool::new(false)),
            pending: BTreeMap::new(),
            submitted: 0,
            delivered: 0,
            in_flight_limit: in_flight(threads),
        };
        if threads > 1 {
            // Each channel can hold every job in flight, so that neither side waits on a full
            // channel while the other waits on it.
            let room = pool.in_flight_limit as usize;
            let (job_tx, job_rx) = sync_channel::<(u64, J)>(room);
            let (result_tx, result_rx) = sync_channel::<(u64, Result<R>)>(room);
            let job_rx = Arc::new(Mutex::new(job_rx));
            for _ in 1..threads {
                let (jobs, results, work, abort) =
                    (job_rx.clone(), result_tx.clone(), work.clone(), pool.abort.clone());
                spawn(Box::new(move || {
                    loop {
                        let next = match jobs.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok((index, job)) = next else { return };
                        if abort.load(Ordering::Relaxed) {
                            return;
                        }
                        let result = run(&work, job);
                        if results.send((index, result)).is_err() {
                            return;
                        }
                    }
                }));
            }
            pool.jobs = Some(job_tx);
            pool.waiting = Some(job_rx);
            pool.results = Some(result_rx);
        }
        pool
    }

    /// Submits a job, then hands every result that is ready, in order, to `each`.
    pub fn submit(&mut self, job: J, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        let Some(jobs) = &self.jobs else {
            return each((self.work)(job)?);
        };
        jobs.send((self.submitted, job)).map_err(|_| lost())?;
        self.submitted += 1;
        // Keep only a few jobs in flight: help, or wait for the oldest, before taking more.
        while self.submitted - self.delivered >= self.in_flight_limit {
            self.help_or_wait(each)?;
        }
        Ok(())
    }

    /// Waits for every job (doing those still waiting) and hands the remaining results to
    /// `each`, in order.
    pub fn finish(mut self, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        while self.delivered < self.submitted {
            self.help_or_wait(each)?;
        }
        Ok(())
    }

    /// Does a job no worker has taken yet on the caller's thread, or else waits for a result;
    /// then hands on every result that is ready, in order.
    fn help_or_wait(&mut self, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        // Only if no worker holds the queue: an idle worker waits for a job holding its lock.
        let job = self.waiting.as_ref().and_then(|queue| queue.try_lock().ok()?.try_recv().ok());
        match job {
            Some((index, job)) => {
                let result = run(&self.work, job);
                self.pending.insert(index, result);
            }
            None if !self.pending.contains_key(&self.delivered) => {
                let (index, result) = self.results.as_ref().ok_or_else(lost)?.recv().map_err(|_| lost())?;
                self.pending.insert(index, result);
            }
            None => {}
        }
        if let Some(results) = &self.results {
            while let Ok((index, result)) = results.try_recv() {
                self.pending.insert(index, result);
            }
        }
        while let Some(result) = self.pending.remove(&self.delivered) {
            self.delivered += 1;
            each(result?)?;
        }
        Ok(())
    }
}

/// The error of a pool whose workers are gone.
fn lost() -> Error {
    Error::Encode("the worker threads stopped".into())
}

/// Runs `work` on `job`; a panicking job becomes an error, so that no one is left waiting.
fn run<J, R>(work: &Work<'_, J, R>, job: J) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job)))
        .unwrap_or_else(|_| Err(Error::Encode("a worker thread failed".into())))
}

impl<J, R> Drop for Ordered<'_, J, R> {
    fn drop(&mut self) {
        // No job starts after this; closing the job queue and the results lets every worker end.
        self.abort.store(true, Ordering::Relaxed);
        self.jobs = None;
        self.waiting = None;
        self.results = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// How many jobs are in flight at most on `threads` threads (each holds its input and result).
pub fn in_flight(threads: usize) -> u64 {
    4 * threads.max(1) as u64
}

/// The number of threads to use when none is asked for: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_the_thread_count() {
        for threads in [1, 2, 5] {
            let mut pool = Ordered::new(threads, |n: u64| {
                // Later jobs finish first.
                std::thread::sleep(std::time::Duration::from_micros(200 - n * 9));
                Ok(n * n)
            });
            let mut seen = Vec::new();
            for n in 0..20 {
                pool.submit(n, &mut |r| {
                    seen.push(r);
                    Ok(())
                })
                .unwrap();
            }
            pool.finish(&mut |r| {
                seen.push(r);
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, (0..20).map(|n| n * n).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn on_two_threads_one_worker_starts_and_the_caller_takes_the_jobs_it_leaves() {
        use std::collections::HashSet;
        use std::sync::mpsc::channel;
        use std::time::Duration;
        // Job 0 holds its thread until job 1 has run, or gives up after 5 s: on two threads
        // (one worker), only the caller can run job 1 while the worker waits in job 0.
        let (done, one_ran) = channel::<()>();
        let one_ran = Mutex::new(one_ran);
        let threads_seen = Arc::new(Mutex::new(HashSet::new()));
        let seen = threads_seen.clone();
        let mut pool = Ordered::new(2, move |n: u32| {
            if let Ok(mut seen) = seen.lock() {
                seen.insert(std::thread::current().id());
            }
            match n {
                0 => match one_ran.lock().map(|rx| rx.recv_timeout(Duration::from_secs(5))) {
                    Ok(Ok(())) => Ok(n),
                    _ => Err(Error::Encode("job 1 never ran beside job 0".into())),
                },
                _ => {
                    let _ = done.send(());
                    Ok(n)
                }
            }
        });
        // Let the worker take job 0 before job 1 is queued.
        pool.submit(0, &mut |_| Ok(())).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        pool.submit(1, &mut |_| Ok(())).unwrap();
        let mut order = Vec::new();
        pool.finish(&mut |n| {
            order.push(n);
            Ok(())
        })
        .unwrap();
        assert_eq!(order, [0, 1]);
        let seen = threads_seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "one worker and the caller");
        assert!(seen.contains(&std::thread::current().id()), "the caller ran a job");
    }

    #[test]
    fn a_failing_or_panicking_job_is_an_error_not_a_hang() {
        let mut pool = Ordered::new(2, |n: u32| {
            if n == 3 {
                panic!("boom");
            }
            Ok(n)
        });
        let mut outcome = Ok(());
        for n in 0..10 {
            outcome = outcome.and_then(|()| pool.submit(n, &mut |_| Ok(())));
        }
        let outcome = outcome.and_then(|()| pool.finish(&mut |_| Ok(())));
        assert!(outcome.is_err());
    }
}
