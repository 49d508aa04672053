//! The one pool of worker threads, and ordered lanes over it. A [`Pool`] is `threads - 1`
//! worker threads taking tasks from one queue, and the caller's thread, which takes a waiting
//! task itself whenever it would otherwise wait. An [`Ordered`] lane submits jobs to a pool and
//! hands their results on in the order the jobs were submitted, with at most a few in flight,
//! so memory stays flat. Work done this way cannot change an output: each job is done on its
//! own and its result handed on in order.
//!
//! Lanes share their pool: a render draws its frames in one lane and its encoder compresses
//! them in another, on the same threads, so that as many threads are busy as were asked for.
//! (A pool of workers beside each stage made three busy threads share two cores, and the
//! caller, on which every result waits, got two thirds of one.) When a lane is dropped (at the
//! end, or at the first error) none of its waiting jobs starts.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::error::{Error, Result};

/// A task a worker runs: a job and where its result goes.
type Task = Box<dyn FnOnce() + Send>;

/// Threads that take tasks from one queue: `threads - 1` workers, started with the first
/// task, and the caller's. Clones share the threads, which end when the last clone is dropped.
#[derive(Clone)]
pub struct Pool(Arc<Workers>);

/// A pool's workers and their queue.
struct Workers {
    threads: usize,
    queue: Arc<Queue>,
    started: Mutex<Vec<JoinHandle<()>>>,
}

/// Tasks waiting for a thread, and whether the pool is closing.
#[derive(Default)]
struct Queue {
    tasks: Mutex<(VecDeque<Task>, bool)>,
    ready: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, (VecDeque<Task>, bool)> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker's life: the next task, until the pool closes and nothing waits.
    fn serve(&self) {
        loop {
            let task = {
                let mut tasks = self.lock();
                loop {
                    if let Some(task) = tasks.0.pop_front() {
                        break task;
                    }
                    if tasks.1 {
                        return;
                    }
                    tasks = self.ready.wait(tasks).unwrap_or_else(|e| e.into_inner());
                }
            };
            task();
        }
    }
}

impl Pool {
    /// A pool of `threads` threads, the caller's among them (1: every job runs on the caller's
    /// thread, as it is submitted).
    pub fn new(threads: usize) -> Pool {
        let workers = Workers { threads: threads.max(1), queue: Arc::default(), started: Mutex::default() };
        Pool(Arc::new(workers))
    }

    /// The threads the pool works on, the caller's among them.
    pub fn threads(&self) -> usize {
        self.0.threads
    }

    /// Queues `task` for a worker, starting the workers the first time.
    fn push(&self, task: Task) {
        let Workers { threads, queue, started } = &*self.0;
        {
            let mut started = started.lock().unwrap_or_else(|e| e.into_inner());
            while started.len() + 1 < *threads {
                let queue = queue.clone();
                let name = format!("worker-{}", started.len() + 1);
                // A worker the system will not start leaves its tasks to the others and to the
                // caller, which takes every task left waiting.
                let Ok(worker) = super::threads::spawn(&name, move || queue.serve()) else { break };
                started.push(worker);
            }
        }
        queue.lock().0.push_back(task);
        queue.ready.notify_one();
    }

    /// A task no worker has taken yet, for the caller to run.
    fn take(&self) -> Option<Task> {
        self.0.queue.lock().0.pop_front()
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        // Every lane is gone: what is queued is dropped unrun, and the workers end.
        let mut tasks = self.queue.lock();
        tasks.0.clear();
        tasks.1 = true;
        drop(tasks);
        self.queue.ready.notify_all();
        let started = std::mem::take(self.started.get_mut().unwrap_or_else(|e| e.into_inner()));
        for worker in started {
            let _ = worker.join();
        }
    }
}

/// The work each job of a lane is.
type Work<J, R> = Arc<dyn Fn(J) -> Result<R> + Send + Sync>;

/// A job's number in its lane, and its result.
type Numbered<R> = (u64, Result<R>);

/// A lane of a pool: runs `work` on jobs, handing their results on in the jobs' order.
pub struct Ordered<J, R> {
    pool: Pool,
    work: Work<J, R>,
    results: (Sender<Numbered<R>>, Receiver<Numbered<R>>),
    /// Set when the lane is dropped: its waiting jobs do not start.
    abort: Arc<AtomicBool>,
    pending: BTreeMap<u64, Result<R>>,
    submitted: u64,
    delivered: u64,
    in_flight_limit: u64,
}

impl<J: Send + 'static, R: Send + 'static> Ordered<J, R> {
    /// A lane on a pool of its own of `threads` threads, the caller's among them.
    pub fn new(threads: usize, work: impl Fn(J) -> Result<R> + Send + Sync + 'static) -> Self {
        Ordered::on(&Pool::new(threads), Arc::new(work))
    }

    /// A lane on `pool`, which other lanes may share, doing `work`.
    pub fn on(pool: &Pool, work: Work<J, R>) -> Self {
        Ordered {
            pool: pool.clone(),
            work,
            results: channel(),
            abort: Arc::new(AtomicBool::new(false)),
            pending: BTreeMap::new(),
            submitted: 0,
            delivered: 0,
            in_flight_limit: in_flight(pool.threads(), 0),
        }
    }

    /// The same lane, its jobs each holding `job_bytes` (see [`in_flight`]).
    pub fn holding(mut self, job_bytes: u64) -> Self {
        self.in_flight_limit = in_flight(self.pool.threads(), job_bytes);
        self
    }

    /// Submits a job, then hands every result that is ready, in order, to `each`.
    pub fn submit(&mut self, job: J, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        if self.pool.threads() == 1 {
            return each((self.work)(job)?);
        }
        let (work, done, abort, index) =
            (self.work.clone(), self.results.0.clone(), self.abort.clone(), self.submitted);
        self.pool.push(Box::new(move || {
            if !abort.load(Ordering::Relaxed) {
                let _ = done.send((index, run(&work, job)));
            }
        }));
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

    /// Runs a task no worker has taken yet (of this lane or another) on the caller's thread,
    /// or else waits for a result of this lane; then hands on every result that is ready, in
    /// order.
    fn help_or_wait(&mut self, each: &mut dyn FnMut(R) -> Result<()>) -> Result<()> {
        if !self.pending.contains_key(&self.delivered) {
            match self.pool.take() {
                Some(task) => task(),
                None => {
                    // Nothing waits: this lane's jobs are all being done, or done.
                    let (index, result) = self.results.1.recv().map_err(|_| lost())?;
                    self.pending.insert(index, result);
                }
            }
        }
        while let Ok((index, result)) = self.results.1.try_recv() {
            self.pending.insert(index, result);
        }
        while let Some(result) = self.pending.remove(&self.delivered) {
            self.delivered += 1;
            each(result?)?;
        }
        Ok(())
    }
}

impl<J, R> Drop for Ordered<J, R> {
    fn drop(&mut self) {
        self.abort.store(true, Ordering::Relaxed);
    }
}

/// The error of a lane whose results stopped coming.
fn lost() -> Error {
    Error::Encode("the worker threads stopped".into())
}

/// Runs `work` on `job`; a panicking job becomes an error, so that no one is left waiting.
fn run<J, R>(work: &Work<J, R>, job: J) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job)))
        .unwrap_or_else(|_| Err(Error::Encode("a worker thread failed".into())))
}

/// What a lane's jobs in flight may hold together, beyond one a thread and one more: past it,
/// fewer jobs are in flight (a canvas of tens of millions of pixels), which keeps both threads
/// busy as well.
pub const IN_FLIGHT_BYTES: u64 = 256 << 20;

/// How many jobs a lane has in flight at most on `threads` threads, each holding `job_bytes`
/// (its input and result; 0: small): four a thread, fewer where four a thread would hold more
/// than [`IN_FLIGHT_BYTES`], never fewer than one a thread and one more.
pub fn in_flight(threads: usize, job_bytes: u64) -> u64 {
    let threads = threads.max(1) as u64;
    (4 * threads).min((IN_FLIGHT_BYTES / job_bytes.max(1)).max(threads + 1))
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

    #[test]
    fn two_lanes_share_a_pool_and_each_keeps_its_order() {
        // Jobs of both lanes queue on two threads; later jobs finish first.
        let pool = Pool::new(2);
        let slow = |n: u64| {
            std::thread::sleep(std::time::Duration::from_micros(300 - n * 10));
            Ok(n)
        };
        let mut squares = Ordered::on(&pool, Arc::new(move |n: u64| slow(n).map(|n| n * n)));
        let mut doubles = Ordered::on(&pool, Arc::new(move |n: u64| slow(n).map(|n| 2 * n)));
        let (mut seen_squares, mut seen_doubles) = (Vec::new(), Vec::new());
        let keep = |seen: &mut Vec<u64>, r| {
            seen.push(r);
            Ok(())
        };
        for n in 0..25 {
            squares.submit(n, &mut |r| keep(&mut seen_squares, r)).unwrap();
            doubles.submit(n, &mut |r| keep(&mut seen_doubles, r)).unwrap();
        }
        squares.finish(&mut |r| keep(&mut seen_squares, r)).unwrap();
        doubles.finish(&mut |r| keep(&mut seen_doubles, r)).unwrap();
        assert_eq!(seen_squares, (0..25).map(|n| n * n).collect::<Vec<_>>());
        assert_eq!(seen_doubles, (0..25).map(|n| 2 * n).collect::<Vec<_>>());
    }

    #[test]
    fn a_dropped_lane_starts_none_of_its_waiting_jobs() {
        use std::sync::atomic::AtomicUsize;
        // One worker, held by the first job until the lane is gone: the jobs queued behind it
        // must not run.
        let pool = Pool::new(2);
        let (ran, (release, held)) = (Arc::new(AtomicUsize::new(0)), std::sync::mpsc::channel::<()>());
        let held = Mutex::new(held);
        let counted = ran.clone();
        let mut lane = Ordered::on(
            &pool,
            Arc::new(move |n: u32| {
                counted.fetch_add(1, Ordering::SeqCst);
                if n == 0 {
                    let _ = held.lock().map(|h| h.recv_timeout(std::time::Duration::from_secs(5)));
                }
                Ok(n)
            }),
        );
        lane.submit(0, &mut |_| Ok(())).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        for n in 1..6 {
            lane.submit(n, &mut |_| Ok(())).unwrap();
        }
        drop(lane);
        release.send(()).unwrap();
        // Time for the worker to go through the queue, while the pool lives on.
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(pool);
        assert_eq!(ran.load(Ordering::SeqCst), 1, "only the job already running ran");
    }
}
