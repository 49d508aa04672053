//! `plan`: what a scene does when, without rendering, as text or JSON; and, with `--walls`, the
//! background with the scene's walls tinted.

use std::io::Write;
use std::path::Path;

use ripple_render::base::error::Target;
use ripple_render::base::picture::ImageHeader;
use ripple_render::base::pool::default_threads;
use ripple_render::draw::background::{Background, image_header_within};
use ripple_render::encode::Effort;
use ripple_render::encode::png::write_png;
use ripple_render::inspect::advice;
use ripple_render::inspect::plan::{self, Detail, Levels, Memory};
use ripple_render::output::Format;
use ripple_render::output::{Policy, Staged};
use ripple_render::render::budget::{Estimate, read_scene};
use ripple_render::sim::shore::Shore;
use ripple_render::{Error, Scene};

use super::say::{hint, tell, warn};

/// Reads the scene at `path` (with its `--set` overrides) within `max_memory`, warns of what
/// would show nothing, and prints its plan; with `walls`, writes the walls picture there.
pub fn run(
    path: &Path,
    overrides: &[String],
    (json, quiet): (bool, bool),
    detail: Detail,
    max_memory: u64,
    walls: Option<&Path>,
) -> Result<(), Error> {
    let scene = read_scene(path, overrides, max_memory)?;
    // What the render would refuse, plan refuses too, before any warning (a refused scene gets
    // its one error alone): the background is checked from its header (without decoding the
    // pixels), so a plan can gate CI.
    let header = image_header_within(&scene, max_memory)?;
    Estimate::for_timeline(&scene).check(max_memory)?;
    advice::for_scene(&scene).iter().for_each(|w| warn(w));
    if quiet {
        return Ok(());
    }
    print_plan(&scene, header, json, detail, (max_memory, walls))?;
    advice::hints(&scene).iter().for_each(|h| hint(h));
    Ok(())
}

/// Writes the background with its wall cells tinted, so that a mask or an obstacle can be
/// checked against the picture before rendering.
fn walls_picture(scene: &Scene, background: &Background, shore: &Shore, path: &Path) -> Result<(), Error> {
    let picture = match shore.walls() {
        Some(walls) => walls.tinted(&background.pixels),
        None => background.pixels.clone(),
    };
    // The picture is a view, replaced on every run; the scene and its pictures are never it.
    let inputs = scene.input_files();
    let staged = Staged::begin(path, Policy::File { force: true }, &inputs)?;
    let file = std::io::BufWriter::new(staged.file()?);
    write_png(file, scene.width, scene.height, &picture, None).map_err(|e| e.writing(staged.name()))?;
    staged.commit()?;
    let count = shore.walls().map_or(0, |w| w.count());
    tell(&format!("wrote {} ({count} wall cells tinted)", path.display()));
    Ok(())
}

/// A render's estimated peak memory, on every core, for each format whose encoder has levels, at
/// each of them.
fn memory(scene: &Scene, image: Option<&ImageHeader>) -> Memory {
    let threads = default_threads();
    let peak = |format, effort| Estimate::for_render(scene, image, (Some(format), effort), threads).total();
    let levels = |format| Levels {
        fast: peak(format, Effort::Fast),
        default: peak(format, Effort::Default),
        max: peak(format, Effort::Max),
    };
    let formats = [(Format::Gif, "gif"), (Format::Apng, "apng"), (Format::Webp, "webp"), (Format::PngSequence, "png")];
    Memory { threads, formats: formats.map(|(format, name)| (name, levels(format))).to_vec() }
}

fn print_plan(
    scene: &Scene,
    header: Option<ImageHeader>,
    json: bool,
    detail: Detail,
    (max_memory, walls): (u64, Option<&Path>),
) -> Result<(), Error> {
    // The walls picture needs the background; a plan alone makes only the shore (without
    // decoding the background's pixels).
    let shore = match walls {
        Some(path) => {
            let background = Background::for_scene_within(scene, max_memory)?;
            let shore = Shore::for_scene_within(scene, max_memory)?;
            walls_picture(scene, &background, &shore, path)?;
            shore
        }
        None => Shore::for_scene_within(scene, max_memory)?,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let memory = memory(scene, header.as_ref());
    let written = if json {
        plan::write_json(scene, &shore, Some(&memory), &mut out)
    } else {
        plan::write_text(scene, &shore, (detail, Some(&memory)), &mut out)
    };
    match written.and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Io { target: Target::Stdout, source }),
        Ok(()) => Ok(()),
    }
}
