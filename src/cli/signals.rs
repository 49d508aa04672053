//! SIGINT, SIGTERM and SIGHUP, in every phase of a run. The first asks the render to stop before
//! its next frame (so the temporary output is removed and an existing output is left as it
//! was), and the process then ends by the same signal, so a shell sees 130, 143 or 129.
//!
//! A run cannot always reach its next check soon: it may be blocked opening a pipe nobody
//! writes, or deep in a frame of heavy rain. A watcher thread sees to it: with no temporary on
//! disk it ends the process at once; otherwise it allows the run [`GRACE`] to clean up, then
//! removes the temporaries itself and ends the process. A second signal ends the process at
//! once. SIGXFSZ is caught so a file size limit is an error, not a death.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[cfg(unix)]
use signal_hook::consts::{SIGHUP, SIGXFSZ};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// The signals that stop a run: Ctrl-C, a kill, and on Unix a closed terminal. (Windows has
/// no SIGHUP: a console closed is a Ctrl-Break or a kill there.)
#[cfg(unix)]
const STOPPING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];
#[cfg(not(unix))]
const STOPPING: [i32; 2] = [SIGINT, SIGTERM];

/// Set by the first signal; the render checks it before each frame.
pub static STOP: AtomicBool = AtomicBool::new(false);
/// Which signal arrived.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// How long a run has, after a signal, to stop by itself.
const GRACE: Duration = Duration::from_millis(800);

/// Installs the handlers and the watcher (once, before any input is read).
pub fn watch() {
    for signal in STOPPING {
        // Order matters: the "second signal" action must look at STOP before the first sets it.
        let _ = flag::register_conditional_default(signal, &STOP);
        let _ = flag::register_usize(signal, &SIGNAL, signal as usize);
        let _ = flag::register(signal, &STOP);
    }
    // Past a file size limit (`ulimit -f`) the kernel sends SIGXFSZ, whose default action kills
    // the process and so skips the clean-up. Handled, the write fails with EFBIG instead, and
    // the render stops with a clear error (exit 3) like on a full disk.
    #[cfg(unix)]
    {
        let _ = flag::register(SIGXFSZ, &FILE_TOO_LARGE);
        if let Ok(mut signals) = signal_hook::iterator::Signals::new(STOPPING) {
            // Without this thread a stuck run still ends by its first signal's stop flag.
            let _ = ripple_render::base::threads::spawn("signals", move || {
                if signals.forever().next().is_some() {
                    end_when_stuck();
                }
            });
        }
    }
    // Windows has no iterator of signals: the watcher looks at the stop flag.
    #[cfg(not(unix))]
    let _ = ripple_render::base::threads::spawn("signals", || {
        while !STOP.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
        end_when_stuck();
    });
}

/// After the first signal: waits for the run to clean up and end by itself, and if it cannot
/// within [`GRACE`], removes its temporaries and ends the process.
fn end_when_stuck() {
    let deadline = Instant::now() + GRACE;
    while ripple_render::output::temporaries_pending() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    // Held until the process ends, so that no output is committed after its temporary is gone.
    let _removed = ripple_render::output::remove_temporaries();
    ripple_render::encode::video::stop_all();
    die_by_pending_signal();
}

/// Set when a write went past the file size limit (the write itself reports the error).
#[cfg(unix)]
static FILE_TOO_LARGE: AtomicBool = AtomicBool::new(false);

/// Ends the process by the signal that stopped the render (its default action).
pub fn die_by_pending_signal() -> ExitCode {
    let signal = SIGNAL.load(Ordering::SeqCst) as i32;
    #[cfg(unix)]
    if signal != 0 {
        let _ = signal_hook::low_level::emulate_default_handler(signal);
    }
    // Windows ends a process stopped by Ctrl-C with STATUS_CONTROL_C_EXIT, as its console does.
    #[cfg(windows)]
    if signal == SIGINT {
        std::process::exit(0xC000_013Au32 as i32);
    }
    // Not reached when the signal's default action ends the process.
    ExitCode::from(128u8.wrapping_add(signal as u8))
}
