//! Background decoding and fitting: three bytes choose the canvas and fit, the rest is the image.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

/// One scratch file per fuzzing process, in memory where the system has a tmpfs.
static SCRATCH: LazyLock<PathBuf> = LazyLock::new(|| {
    let dir = std::path::Path::new("/dev/shm");
    let dir = if dir.is_dir() { dir.to_path_buf() } else { std::env::temp_dir() };
    dir.join(format!("ripple-render-fuzz-{}.img", std::process::id()))
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| ripple_render::fuzzing::background(data, &SCRATCH));
