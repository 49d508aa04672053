//! The scene side of a `diff`: the scene rendered in memory, frame by frame, exactly or as its
//! GIF would show it.

use std::path::Path;

use super::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels};
use super::palettes::PaletteMap;
use crate::base::error::Result;
use crate::base::limits::DEFAULT_BUDGET;
use crate::draw::Lens;
use crate::draw::background::image_header;
use crate::draw::look::Backdrop;
use crate::draw::refract::Height;
use crate::encode::manifest::PixelKind;
use crate::encode::palette::Palette;
use crate::encode::provenance::Provenance;
use crate::render::Inputs;
use crate::render::budget::Estimate;
use crate::scene::{Model, Scene};
use crate::sim::field::Threads;
use crate::sim::timeline::Schedule;
use crate::sim::water::{Classic, Spring, Water};
use crate::sim::{Simulation, Surface};

/// A scene rendered in memory, frame by frame.
struct SceneFrames<W: Water> {
    scene: Scene,
    inputs: Inputs,
    surface: Surface<W>,
    /// What frames gather from: the background, or its GIF palette's colours.
    pixels: Vec<[u8; 3]>,
    /// A scene with a `[look]` draws from this, in RGB.
    backdrop: Option<Backdrop>,
    frame: Vec<[u8; 3]>,
    /// The palette a GIF maps each drawn colour to, when the frames are shown through one.
    palette: Option<PaletteMap>,
}

/// How a scene's frames are shown.
#[derive(Debug, Clone, PartialEq)]
pub enum Through {
    /// Exactly, as a PNG shows them.
    Exact,
    /// Through a GIF's palette (before its transparent index), each colour mapped to its
    /// nearest entry as the GIF encoder maps it: what that GIF shows of the scene, if it was made
    /// from it.
    Palette(Vec<[u8; 3]>),
    /// Through the palette the scene's own GIF would have, for a scene without a look (what a
    /// manifest of GIF colours, from earlier versions, hashed).
    OwnGif,
}

/// Opens a scene, rendered in memory and shown as `through` says.
pub fn open(path: &Path, through: Through) -> Result<(Info, Box<dyn FrameSource>)> {
    let bytes = Scene::read_file(path)?;
    Estimate::for_scene_text(crate::scene::parsing_bytes(&bytes, &[])).check(DEFAULT_BUDGET)?;
    let scene = Scene::from_bytes(bytes, path)?;
    let header = image_header(&scene)?;
    Estimate::for_render(&scene, header.as_ref(), None, 1).check(DEFAULT_BUDGET)?;
    let inputs = Inputs::for_scene_within(&scene, DEFAULT_BUDGET)?;
    let provenance = Some(Provenance::of(scene.source_hash, &inputs.background.pixels));
    // As its own GIF shows it: each background pixel replaced by its palette colour. (A look's
    // frames are left exact: such manifests were of GIFs without a look.)
    let backdrop = (!scene.look.is_gather()).then(|| Backdrop::new(&inputs.background.pixels, scene.width as usize));
    let gif = through == Through::OwnGif && backdrop.is_none();
    let pixels = if gif {
        let palette = Palette::for_background(&inputs.background.pixels);
        palette.indices.iter().map(|&i| palette.colors[usize::from(i)]).collect()
    } else {
        inputs.background.pixels.clone()
    };
    let palette = match through {
        Through::Palette(colours) => Some(PaletteMap::new(&colours)),
        _ => None,
    };
    let colours = if gif || palette.is_some() { PixelKind::Gif } else { PixelKind::Rgb };
    let (width, height) = (scene.width, scene.height);
    let info = Info { path: path.into(), kind: Kind::Scene, width, height, provenance, colours, palette: None };
    let frames: Box<dyn FrameSource> = match scene.water.model {
        Model::Classic => Box::new(SceneFrames::<Classic>::new(scene, inputs, pixels, backdrop, palette)),
        Model::Spring => Box::new(SceneFrames::<Spring>::new(scene, inputs, pixels, backdrop, palette)),
    };
    Ok((info, frames))
}

impl<W: Water> SceneFrames<W> {
    fn new(
        scene: Scene,
        inputs: Inputs,
        pixels: Vec<[u8; 3]>,
        backdrop: Option<Backdrop>,
        palette: Option<PaletteMap>,
    ) -> Self {
        let water = Simulation::new(&scene, Schedule::new(&scene), &inputs.shore, Threads::default());
        let surface = Surface::new(&scene, water, &inputs.shore);
        SceneFrames { frame: pixels.clone(), scene, inputs, surface, pixels, backdrop, palette }
    }
}

impl<W: Water> FrameSource for SceneFrames<W>
where
    W::Cell: Height,
{
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        loop {
            match self.surface.advance() {
                None => return Ok(None),
                Some(k) if k >= self.scene.first_frame => break,
                Some(_) => {}
            }
        }
        let lens = Lens::new(&self.scene, &self.inputs.shore, Threads::default());
        match &self.backdrop {
            Some(backdrop) => lens.look(self.surface.heights(), &self.scene.look, backdrop, &mut self.frame),
            None => lens.refract(self.surface.heights(), &self.pixels, &mut self.frame),
        }
        if let Some(map) = &mut self.palette {
            for p in &mut self.frame {
                *p = map.colour(*p);
            }
        }
        // Exactly 1/fps: each format's rounding is allowed for when compared.
        let delay = Delay { num: 1, den: self.scene.fps };
        Ok(Some(Frame { pixels: Pixels::Rgb(self.frame.as_flattened().to_vec()), delay: Some(delay) }))
    }
}
