//! ripple-render: integer water ripples over a still image, rendered to an animated GIF, APNG or
//! WebP, a video, a still or a PNG sequence, the same bytes on every machine.
//!
//! The crate is built in layers, each a folder that imports only the layers below it:
//!
//! - [`base`]: errors, sizes, limits, image files, CPU dispatch, JSON;
//! - [`scene`]: the scene file, read and validated;
//! - [`sim`]: the timeline, the water within its shore, the heights each frame is drawn from;
//! - [`draw`]: the background, and a frame drawn from the heights (refraction, looks);
//! - [`encode`]: the codecs, over plain pixels; [`output`]: formats and staged, atomic writes;
//! - [`decode`]: the readers of rendered files, the mirror of `encode`; [`join`]: the parts of
//!   a render split by frame range put back together;
//! - [`render`](mod@render): the pipeline that puts them together, the encoder for each format,
//!   the memory estimate; [`inspect`]: `plan` and warnings; [`diff`]: comparing two renders;
//!   [`check`]: scenes against their references, the CI job; [`live`]: a scene played frame by
//!   frame with a pointer adding to it, as a web page plays it (`web/`); [`truth`]: a scene's
//!   ground truth for research (heights, warp, slopes, frames) and datasets drawn from a seed.
//!
//! The pipeline is [`render::render_with`]: scene → timeline → water (walls, edges) → heights
//! to draw → look → encoder. `docs/design.md` says how the layers are cut, and why.
//!
//! ```no_run
//! use ripple_render::{Inputs, Scene};
//! let scene = Scene::load("scenes/pond.toml".as_ref())?;
//! let inputs = Inputs::for_scene(&scene)?;
//! let mut gif = Vec::new();
//! ripple_render::render::formats::gif(&scene, &inputs, &mut gif, &mut |_| {})?;
//! # Ok::<(), ripple_render::Error>(())
//! ```

// Unsafe code is denied everywhere but the CPU-feature dispatch in `base::simd`, which allows it
// for one call per kernel, and libwebp's calls in `encode::webp::vp8` (lossy WebP), each with its
// SAFETY reason.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod base;
pub mod check;
pub mod decode;
pub mod diff;
pub mod draw;
pub mod encode;
#[doc(hidden)]
pub mod fuzzing;
pub mod inspect;
pub mod join;
pub mod live;
pub mod output;
pub mod render;
pub mod scene;
pub mod sim;
pub mod truth;

pub use base::error::{Error, Result};
pub use encode::Encoder;
pub use output::Format;
pub use render::{Inputs, render};
pub use scene::Scene;
