//! The ground floor: what every stage stands on and nothing of ours is imported into. Errors
//! and their messages, sizes in bytes, the limits of every input, image files, the rain's
//! generator, run-time CPU dispatch, every thread the crate starts (the ordered pool of worker
//! threads, the bands of rows), JSON as the tool prints it, and outside names made inert where
//! they are shown.

pub mod error;
pub mod files;
pub mod json;
pub mod limits;
pub mod picture;
pub mod pool;
pub mod rng;
pub mod simd;
pub mod text;
pub mod threads;
pub mod units;
