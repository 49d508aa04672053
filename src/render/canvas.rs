//! How a render's frames are drawn, chosen once, and the frames themselves as they go from the
//! thread that draws them to the encoder. Nearest-pixel sampling without light only moves
//! background pixels, so a frame is a gather in the encoder's own pixels (palette indices for a
//! GIF) from the encoder's copy of the background. A look (bilinear sampling, light) makes
//! colours the background lacks: the frame is drawn in RGB, and the encoder's colour map (a
//! GIF's palette) turns it into its pixels where it has one, or the encoder takes the RGB.
//!
//! A [`Canvas`] is shared by every thread that draws; each frame is a [`Drawn`], which holds its
//! own heights and pixels, so frames can be drawn side by side and handed on in order.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::base::error::Result;
use crate::draw::Lens;
use crate::draw::background::Background;
use crate::draw::look::{Backdrop, Pens};
use crate::draw::refract::Height;
use crate::encode::{Encoder, RgbMap};
use crate::scene::Scene;

/// What every frame of a render is drawn from, and how.
pub(super) struct Canvas<P> {
    way: Way<P>,
    /// Whether frames are drawn apart from the water (see [`Canvas::draws_apart`]).
    apart: bool,
    /// The background in RGB, to draw a frame's exact colours again where the encoder's pixels
    /// do not hold them (a quantized GIF palette) and a manifest wants them.
    exact_from: Option<Arc<Background>>,
}

/// The way frames are drawn.
enum Way<P> {
    /// Gathered, nearest pixel, from the background in the encoder's pixels: the encoder's own
    /// copy of it, or for frames drawn apart this one.
    Gather(Option<Arc<Vec<P>>>),
    /// Drawn with the look in RGB from the background packed for it, then put through the
    /// encoder's colour map if it has one.
    Look { pens: Box<Pens>, backdrop: Backdrop, map: Option<RgbMap<P>> },
}

/// A frame on its way: the heights it is drawn from, then its pixels, and the time drawing took.
pub(super) struct Drawn<P, H> {
    /// The heights of the frame, copied from the water.
    pub heights: Vec<H>,
    /// Whether the encoder takes it (else only a manifest hashes it).
    pub taken: bool,
    /// The frame in the encoder's pixels (gathered, or mapped from `rgb`).
    pixels: Vec<P>,
    /// The frame in RGB: a look's, or the exact colours drawn again for a manifest.
    rgb: Vec<[u8; 3]>,
    /// Whether `pixels` hold the frame (else `rgb` is handed to the encoder).
    in_pixels: bool,
    /// The exact RGB bytes, where the encoder's pixels give them (scratch).
    scratch: Vec<u8>,
    /// Time spent drawing it.
    pub took: Duration,
}

impl<P, H> Default for Drawn<P, H> {
    fn default() -> Self {
        Drawn {
            heights: Vec::new(),
            taken: false,
            pixels: Vec::new(),
            rgb: Vec::new(),
            in_pixels: false,
            scratch: Vec::new(),
            took: Duration::ZERO,
        }
    }
}

impl<P: Copy + Default + Send + Sync> Canvas<P> {
    /// The canvas of a render of `scene` through `lens` over `background` into `encoder`;
    /// `exact` when a manifest hashes every frame's exact colours, `threaded` when frames may be
    /// drawn on other threads than the caller's. A look is resolved here, once.
    pub(super) fn new<E: Encoder<Pixel = P>>(
        scene: &Scene,
        lens: &Lens,
        background: &Arc<Background>,
        encoder: &E,
        exact: bool,
        threaded: bool,
    ) -> Canvas<P> {
        if scene.look.is_gather() {
            // Whether the encoder's pixels hold the exact colours does not change from frame to
            // frame: its background's tell.
            let holds_exact = encoder.exact_rgb(encoder.background(), &mut Vec::new()).is_some();
            let exact_from = (exact && !holds_exact).then(|| background.clone());
            // A gather is light beside the encoder's compression: it is drawn apart only when the
            // encoder leaves the other threads idle.
            let apart = threaded && !encoder.compresses_apart();
            let source = apart.then(|| Arc::new(encoder.background().to_vec()));
            Canvas { way: Way::Gather(source), apart, exact_from }
        } else {
            let backdrop = Backdrop::new(&background.pixels, scene.width as usize);
            let map = encoder.colour_map();
            let pens = Box::new(lens.pens(&scene.look));
            Canvas { way: Way::Look { pens, backdrop, map }, apart: threaded, exact_from: None }
        }
    }

    /// Whether frames are better drawn apart from the water, on the pool's threads, each from
    /// a copy of its heights, while the water steps on: a look's drawing (and colour mapping)
    /// is most of a frame's work beside the encoder's; a gather is light beside it, and is drawn
    /// on the caller's thread from the water's own heights when the encoder keeps the other
    /// threads busy (drawn apart, it measured no faster for the copy and the frame's trip).
    pub(super) fn draws_apart(&self) -> bool {
        self.apart
    }

    /// Draws `frame` from its own heights, on the calling thread: a frame drawn apart
    /// ([`Canvas::draws_apart`]).
    pub(super) fn draw<H: Height>(&self, lens: &Lens, frame: &mut Drawn<P, H>) {
        let heights = std::mem::take(&mut frame.heights);
        let source = match &self.way {
            Way::Gather(Some(source)) => source.as_slice(),
            _ => &[],
        };
        self.draw_from(lens, &heights, source, frame);
        frame.heights = heights;
    }

    /// Draws `frame` from `heights`, on the calling thread; a gather takes its pixels from
    /// `source`, the encoder's background.
    pub(super) fn draw_from<H: Height>(&self, lens: &Lens, heights: &[H], source: &[P], frame: &mut Drawn<P, H>) {
        let started = Instant::now();
        let cells = heights.len();
        match &self.way {
            Way::Gather(_) => {
                frame.pixels.resize(cells, P::default());
                lens.refract(heights, source, &mut frame.pixels);
                frame.in_pixels = true;
                if let Some(background) = &self.exact_from {
                    frame.rgb.resize(cells, [0; 3]);
                    lens.refract(heights, &background.pixels, &mut frame.rgb);
                }
            }
            Way::Look { pens, backdrop, map } => {
                frame.rgb.resize(cells, [0; 3]);
                lens.look(heights, pens, backdrop, &mut frame.rgb);
                frame.in_pixels = map.is_some();
                if let Some(map) = map {
                    frame.pixels.resize(cells, P::default());
                    map(&frame.rgb, &mut frame.pixels);
                }
            }
        }
        frame.took = started.elapsed();
    }

    /// Hands `frame`, drawn, to `encoder`: its pixels given over, the encoder's spare buffer
    /// taken in their place.
    pub(super) fn hand_to<H, E: Encoder<Pixel = P>>(&self, frame: &mut Drawn<P, H>, encoder: &mut E) -> Result<()> {
        if frame.in_pixels {
            frame.pixels = encoder.write_owned(std::mem::take(&mut frame.pixels))?;
            Ok(())
        } else {
            encoder.write_rgb(&frame.rgb)
        }
    }

    /// The exact RGB bytes of `frame`, drawn, for a manifest: its RGB when it has them (a look's,
    /// or drawn again), else its pixels' colours in `encoder`.
    pub(super) fn exact<'f, H, E: Encoder<Pixel = P>>(&self, frame: &'f mut Drawn<P, H>, encoder: &E) -> &'f [u8] {
        let Drawn { pixels, rgb, scratch, .. } = frame;
        match &self.way {
            Way::Gather(_) if self.exact_from.is_none() => encoder.exact_rgb(pixels, scratch).unwrap_or_default(),
            _ => rgb.as_flattened(),
        }
    }
}
