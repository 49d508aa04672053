//! How large anything may be: every limit of the program's inputs and memory in one place,
//! constants only, so that the readers that enforce them and the messages that name them agree.

/// Largest canvas side, in pixels.
pub const MAX_SIDE: i64 = 16384;
/// Largest canvas area in pixels (8192·8192).
pub const MAX_AREA: i64 = 8192 * 8192;
/// Most frames one render may output.
pub const MAX_FRAMES: u64 = 1_000_000;
/// Latest first rendered frame (the length of the pre-roll).
pub const MAX_START_FRAME: u64 = 10_000_000;
/// Scene files larger than this are refused before parsing.
pub const MAX_SCENE_BYTES: u64 = 16 << 20;
/// The largest hash manifest read: far more than a million frames' lines.
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;
/// The largest image decoded, in pixels (as large as the largest canvas): a small file that
/// claims more is refused from its header, before any allocation.
pub const MAX_IMAGE_PIXELS: u64 = 8192 * 8192;
/// The widest or tallest image decoded (as wide as the widest canvas).
pub const MAX_IMAGE_SIDE: u32 = 16384;
/// The memory budget when none is given: 1 GiB.
pub const DEFAULT_BUDGET: u64 = 1 << 30;

/// The decode budget of an image (the background, a mask): a quarter of the memory budget.
pub const fn decode_budget(budget: u64) -> u64 {
    budget / 4
}

/// The largest WebP `diff` reads (it holds the file while composing its frames).
pub const MAX_WEBP_BYTES: u64 = 1 << 30;
