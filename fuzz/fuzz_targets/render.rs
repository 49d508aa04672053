//! A tiny end-to-end render: scene text to a GIF in memory.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ripple_render::fuzzing::render(data));
