//! Run-time CPU dispatch for the hot loops. Each kernel is written once, in portable Rust that
//! vectorizes; on x86-64 it is compiled a second time with AVX2 enabled and that copy runs when
//! the CPU has AVX2. Integer arithmetic gives the same bytes on either path (a test compares
//! them).

/// Defines `$name(args)`, which runs `$portable(args)` compiled for AVX2 where the CPU has it.
/// `$portable` must be `#[inline(always)]` so the AVX2 copy really is recompiled.
macro_rules! dispatch {
    ($(#[$meta:meta])* $vis:vis fn $name:ident $(<$($g:ident: $bound:path),*>)? ($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $portable:path) => {
        $(#[$meta])*
        $vis fn $name $(<$($g: $bound),*>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn avx2 $(<$($g: $bound),*>)? ($($arg: $ty),*) $(-> $ret)? {
                    $portable($($arg),*)
                }
                if $crate::base::simd::avx2_enabled() {
                    // SAFETY: `avx2` only uses instructions the CPU reported (checked just above).
                    #[allow(unsafe_code)]
                    return unsafe { avx2($($arg),*) };
                }
            }
            $portable($($arg),*)
        }
    };
}

pub(crate) use dispatch;

/// Proof that the CPU has AVX2 and that the AVX2 paths may run: only [`Avx2::get`] makes one.
/// A kernel written with AVX2 intrinsics (a `#[target_feature(enable = "avx2")]` function)
/// is called through [`avx2_call!`] with it.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// The proof, where the AVX2 paths may run (see [`avx2_enabled`]).
    pub(crate) fn get() -> Option<Avx2> {
        avx2_enabled().then_some(Avx2(()))
    }
}

/// Calls `$kernel($args)`, a function compiled with `#[target_feature(enable = "avx2")]`,
/// given `$token`, an [`Avx2`].
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_call {
    ($token:expr => $($kernel:ident)::+ ($($arg:expr),* $(,)?)) => {{
        let _: $crate::base::simd::Avx2 = $token;
        // SAFETY: an `Avx2` exists only where the CPU reported AVX2 (`Avx2::get`).
        #[allow(unsafe_code)]
        unsafe {
            $($kernel)::+($($arg),*)
        }
    }};
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2_call;

use std::sync::atomic::{AtomicU8, Ordering};

/// 0: not yet known, 1: baseline only, 2: AVX2 allowed.
static MODE: AtomicU8 = AtomicU8::new(0);

/// Whether the AVX2 copies may run: the CPU has AVX2 and `RIPPLE_RENDER_NO_SIMD` is not set.
pub(crate) fn avx2_enabled() -> bool {
    match MODE.load(Ordering::Relaxed) {
        0 => {
            let on = detect();
            MODE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        mode => mode == 2,
    }
}

/// The path the kernels take on this machine, for `--version`: `avx2`, or `portable`.
pub fn path() -> &'static str {
    if avx2_enabled() { "avx2" } else { "portable" }
}

fn detect() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::env::var_os("RIPPLE_RENDER_NO_SIMD").is_none() && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Forces the baseline path (for tests that compare the two).
#[cfg(test)]
pub(crate) fn set_baseline_only(baseline: bool) {
    MODE.store(if baseline { 1 } else { 0 }, Ordering::Relaxed);
}
