//! The animated formats (GIF, APNG, WebP) into any seekable writer, as asked or at a rung of the
//! size ladder, and the ladder itself (`--max-size`).

use std::io::{Seek, Write};

use ripple_render::encode::Stream;
use ripple_render::encode::apng::Apng;
use ripple_render::encode::fit::{self, Capped, Rung};
use ripple_render::encode::gif::GifEncoder;
use ripple_render::encode::reduce::Reduced;
use ripple_render::encode::webp::Webp;
use ripple_render::output::Format;
use ripple_render::{Background, Error, Progress, Run, Scene, Stats, units};

/// How to render: the run's settings, for each attempt.
pub struct Setting<'a> {
    pub background: &'a Background,
    /// Encoder threads.
    pub threads: usize,
    pub dither: bool,
    pub seam: bool,
}

impl Setting<'_> {
    /// A run without a manifest. With an encoder, its threads use the cores (compression is
    /// most of the work) and the simulation runs on one.
    fn run(&self) -> Run<'_> {
        Run { background: self.background, manifest: None, threads: 1, stop: &super::signals::STOP, seam: self.seam }
    }
}

/// Renders `scene` as `format` (GIF, APNG or WebP) into `out`, giving up what `rung` says,
/// in `run` (which may carry a manifest).
pub fn animate<W: Write + Seek>(
    scene: &Scene,
    (format, rung): (Format, Rung),
    out: W,
    setting: &Setting<'_>,
    run: Run<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, Error> {
    use ripple_render::render_with;
    let (background, threads) = (setting.background, setting.threads);
    if rung.as_asked() {
        return match format {
            Format::Gif => {
                let palette = ripple_render::gif_palette(scene, background, setting.dither, threads);
                let gif = GifEncoder::with_palette(out, scene, background, palette)?.threads(threads);
                render_with(scene, gif, run, progress)
            }
            Format::Apng => match Apng::indexed(out, scene, background) {
                Ok(apng) => render_with(scene, apng.threads(threads), run, progress),
                Err(out) => render_with(scene, Apng::new(out, scene, background).threads(threads), run, progress),
            },
            _ => render_with(scene, Webp::new(out, scene, background).threads(threads), run, progress),
        };
    }
    let stream = Stream::of(scene, background).reduced(rung.step, rung.scale, &rung.describe());
    let (step, scale) = (rung.step, rung.scale);
    match format {
        Format::Gif => {
            let palette = ripple_render::gif_palette_within(scene, background, setting.dither, threads, rung.entries);
            let gif = GifEncoder::for_stream(out, &stream, palette)?.threads(threads);
            if rung.step == 1 && rung.scale == 1 {
                // Fewer colours alone: frames gathered from the background's indices, as asked.
                return render_with(scene, gif, run, progress);
            }
            render_with(scene, Reduced::new(gif, &background.pixels, background.width, step, scale), run, progress)
        }
        Format::Apng => {
            let apng = Apng::rgb(out, &stream).threads(threads);
            render_with(scene, Reduced::new(apng, &background.pixels, background.width, step, scale), run, progress)
        }
        _ => {
            let webp = Webp::for_stream(out, &stream).threads(threads);
            render_with(scene, Reduced::new(webp, &background.pixels, background.width, step, scale), run, progress)
        }
    }
}

/// What fitting a size budget made: the file's bytes, the render's stats, and the rung.
pub struct Fitted {
    pub bytes: Vec<u8>,
    pub stats: Stats,
    pub rung: Rung,
}

/// Climbs the ladder of `format` until a rung's file is at most `limit` bytes: each attempt
/// stops as soon as it passes the budget. The last rung is finished whatever its size, so that
/// a budget nothing meets can be answered with the smallest size reached.
pub fn fit(
    scene: &Scene,
    format: Format,
    limit: u64,
    setting: &Setting<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Fitted, Error> {
    let ladder = if format == Format::Gif { &fit::GIF[..] } else { &fit::EXACT[..] };
    let mut rungs = ladder.iter().copied().peekable();
    while let Some(rung) = rungs.next() {
        let last = rungs.peek().is_none();
        let mut capped = Capped::new(if last { u64::MAX } else { limit });
        match animate(scene, (format, rung), &mut capped, setting, setting.run(), progress) {
            Ok(stats) if capped.len() <= limit => return Ok(Fitted { bytes: capped.into_bytes(), stats, rung }),
            Ok(_) => {
                return Err(Error::Output {
                    message: format!(
                        "no rung of the {} size ladder fits --max-size {}: the smallest reached is {} ({})",
                        format.name(),
                        units::show(limit),
                        units::show(capped.len()),
                        rung.describe()
                    ),
                    hint: Some("raise --max-size, or shorten the scene or shrink its canvas".into()),
                });
            }
            Err(e) if fit::is_over_budget(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Err(Error::Encode("the size ladder is empty".into()))
}
