//! `ripple-render new PICTURE -o SCENE`: writes a starter scene for a picture.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use ripple_render::output::{Policy, Staged};
use ripple_render::scene::Model;
use ripple_render::scene::starter::{self, Starter};
use ripple_render::{Error, Scene};

pub fn run(picture: &Path, output: &Path, model: Model, force: bool) -> Result<(), Error> {
    let header = ripple_render::base::picture::probe(picture)
        .map_err(|reason| Error::Background { path: picture.to_path_buf(), reason: reason.to_string() })?;
    let image = relative_to_scene(picture, output);
    let text = starter::scene_text(&Starter {
        picture: (header.width, header.height),
        image: &image.to_string_lossy(),
        model,
    });
    // What is written must load as it is: checked before anything appears at the output.
    Scene::from_toml_str(&text, output)?;
    let staged = Staged::begin(output, Policy::File { force }, &[picture])?;
    let mut file = staged.file()?;
    file.write_all(text.as_bytes()).map_err(|source| Error::io(output, source))?;
    staged.commit()?;
    let (w, h) = starter::canvas((header.width, header.height));
    super::say::tell(&format!(
        "wrote {} ({w}×{h}, {} model); render it with: ripple-render {} -o out.gif",
        output.display(),
        if model == Model::Classic { "classic" } else { "spring" },
        output.display()
    ));
    Ok(())
}

/// The picture's path as the scene names it: relative to the scene's folder (a scene's paths
/// are resolved against its folder), or absolute when the two share no folder.
fn relative_to_scene(picture: &Path, scene: &Path) -> PathBuf {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let picture = absolute(picture);
    let folder = absolute(scene).parent().map(Path::to_path_buf).unwrap_or_default();
    let (from, to): (Vec<Component>, Vec<Component>) = (folder.components().collect(), picture.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return picture;
    }
    let mut relative = PathBuf::new();
    for _ in common..from.len() {
        relative.push("..");
    }
    to[common..].iter().for_each(|c| relative.push(c));
    relative
}
