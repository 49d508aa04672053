//! Scene parsing and validation, then the timeline of small scenes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ripple_render::fuzzing::scene(data));
