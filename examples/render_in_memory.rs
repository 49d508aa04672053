//! Using ripple-render as a library: a scene from a TOML string, rendered to a GIF in memory.
//!
//! `cargo run --example render_in_memory`

use std::path::Path;

use ripple_render::{Inputs, Scene};

const SCENE: &str = r##"
[video]
width = 96
height = 64
fps = 20
duration = 1.5

[background]
pattern = "checker"

[[stone]]
at = 0.1
x = 48
y = 32
radius = 4
weight = 500

[rain]
drops_per_second = 10
seed = 42
"##;

fn main() -> Result<(), ripple_render::Error> {
    // The path only names the scene in error messages and anchors relative image paths.
    let scene = Scene::from_toml_str(SCENE, Path::new("inline.toml"))?;
    // The picture under the water and the shore around it, made once.
    let inputs = Inputs::for_scene(&scene)?;

    let mut gif = Vec::new();
    let mut frames_done = 0;
    ripple_render::render::formats::gif(&scene, &inputs, &mut gif, &mut |progress| frames_done = progress.rendered)?;

    println!("rendered {frames_done} frames of {}×{} into {} bytes of GIF", scene.width, scene.height, gif.len());
    assert!(gif.starts_with(b"GIF89a"));
    Ok(())
}
