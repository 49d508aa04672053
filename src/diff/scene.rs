//! The scene side of a `diff`: the scene rendered in memory, frame by frame, exactly or as its
//! GIF would show it.

use std::borrow::Cow;
use std::path::Path;

use super::palettes::PaletteMap;
use crate::base::error::Result;
use crate::base::limits::DEFAULT_BUDGET;
use crate::decode::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels};
use crate::draw::background::image_header;
use crate::encode::Effort;
use crate::encode::manifest::PixelKind;
use crate::encode::palette::Palette;
use crate::render::Inputs;
use crate::render::budget::{Estimate, read_scene};
use crate::render::player::Player;

/// A scene rendered in memory, frame by frame, shown through a GIF's palette if asked.
struct SceneFrames {
    player: Player<'static>,
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
    let scene = read_scene(path, &[], DEFAULT_BUDGET)?;
    let header = image_header(&scene)?;
    Estimate::for_render(&scene, header.as_ref(), (None, Effort::Default), 1).check(DEFAULT_BUDGET)?;
    let inputs = Inputs::for_scene_within(&scene, DEFAULT_BUDGET)?;
    let provenance = Some(inputs.provenance.clone());
    // As its own GIF shows it: each background pixel replaced by its palette colour. (A look's
    // frames are left exact: such manifests were of GIFs without a look.)
    let gif = through == Through::OwnGif && scene.look.is_gather();
    let pixels = if !scene.look.is_gather() {
        Vec::new()
    } else if gif {
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
    let player = Player::new(Cow::Owned(scene), &inputs, Cow::Owned(pixels), 1);
    let frames: Box<dyn FrameSource> = Box::new(SceneFrames { player, palette });
    Ok((info, frames))
}

impl FrameSource for SceneFrames {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        if self.player.advance().is_none() {
            return Ok(None);
        }
        // Exactly 1/fps: each format's rounding is allowed for when compared.
        let delay = Delay { num: 1, den: self.player.scene().fps };
        let frame = self.player.draw();
        let rgb = match &mut self.palette {
            Some(map) => frame.iter().flat_map(|&p| map.colour(p)).collect(),
            None => frame.as_flattened().to_vec(),
        };
        Ok(Some(Frame { pixels: Pixels::Rgb(rgb), delay: Some(delay) }))
    }
}
