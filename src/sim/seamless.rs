//! What a loop's seam needs (§11): the heights to draw, faded from the water's into the
//! pre-roll's over the last frames ([`Crossfade`]), and how big the jump from the last frame to
//! the first is against the render's ordinary frame-to-frame change ([`Seam`]).

use super::field::{Cell, cell_bytes, distance_and_copy};
use crate::base::threads::Bands;
use crate::scene::Scene;

/// `[seamless] crossfade = O`: the fields of the O pre-roll frames before K0 are kept, and the
/// last O output frames are drawn from `H = floor((h·(O−j) + g·(j+1)) / (O+1))` per cell, h the
/// water of that frame and g the kept field of pre-roll frame K0−O+j. The water itself goes on
/// unchanged.
#[derive(Debug)]
pub struct Crossfade<C: Cell> {
    fade: u64,
    /// K0 − O, the first pre-roll frame kept, and K0 + N − O, the first frame faded.
    first_kept: u64,
    first_faded: u64,
    kept: Vec<Vec<C>>,
    blend: Vec<C>,
    /// Whether the current frame is drawn from `blend`.
    fading: bool,
}

impl<C: Cell> Crossfade<C> {
    /// The scene's crossfade, if it has one.
    pub fn new(scene: &Scene) -> Option<Crossfade<C>> {
        let fade = scene.seamless.crossfade?;
        Some(Crossfade {
            fade,
            first_kept: scene.first_frame - fade,
            first_faded: scene.end_frame() - fade,
            kept: Vec::with_capacity(fade as usize),
            blend: Vec::new(),
            fading: false,
        })
    }

    /// The pre-roll fields kept so far (for a checkpoint).
    pub fn kept(&self) -> &[Vec<C>] {
        &self.kept
    }

    /// Sets the pre-roll fields kept so far (from a checkpoint), which must be as many as the
    /// first `simulated` frames keep, each of `cells`; says whether they were.
    pub fn keep(&mut self, kept: Vec<Vec<C>>, simulated: u64, cells: usize) -> bool {
        let fits = kept.len() as u64 == self.due(simulated) && kept.iter().all(|field| field.len() == cells);
        if fits {
            self.kept = kept;
        }
        fits
    }

    /// How many pre-roll fields the first `simulated` frames keep.
    pub fn due(&self, simulated: u64) -> u64 {
        simulated.saturating_sub(self.first_kept).min(self.fade)
    }

    /// Takes the water's `heights` at frame `k`: keeps them for one of the O pre-roll frames,
    /// blends them for one of the last O output frames.
    pub fn take(&mut self, k: u64, heights: &[C]) {
        self.fading = false;
        if (self.first_kept..self.first_kept + self.fade).contains(&k) {
            self.kept.push(heights.to_vec());
        } else if k >= self.first_faded {
            let j = (k - self.first_faded) as usize;
            let (o, j64) = (self.fade as i64, j as i64);
            let mix = |h: C, g: C| C::narrow((h.into() * (o - j64) + g.into() * (j64 + 1)).div_euclid(o + 1));
            self.blend.resize(heights.len(), C::default());
            for ((out, &h), &g) in self.blend.iter_mut().zip(heights).zip(&self.kept[j]) {
                *out = mix(h, g);
            }
            self.fading = true;
        }
    }

    /// The heights to draw: the blend for a faded frame, else the water's.
    pub fn drawn<'a>(&'a self, water: &'a [C]) -> &'a [C] {
        if self.fading { &self.blend } else { water }
    }
}

/// Bytes the crossfade of a render of `scene` holds at most: the kept fields and the blend.
pub fn crossfade_bytes(scene: &Scene) -> u64 {
    let cells = u64::from(scene.width) * u64::from(scene.height);
    scene.seamless.crossfade.map_or(0, |o| (o + 1) * cell_bytes(scene.water.model) * cells)
}

/// Bytes the seam's meter of a render of `scene` holds at most: the first and the previous
/// field, and a sum a frame.
pub fn seam_bytes(scene: &Scene) -> u64 {
    let cells = u64::from(scene.width) * u64::from(scene.height);
    cell_bytes(scene.water.model) * 2 * cells + scene.frames * BYTES_PER_FRAME
}

/// What the seam's meter keeps for each output frame: its sum.
const BYTES_PER_FRAME: u64 = 8;

/// The seam figure of §11, gathered frame by frame: with D(a, b) the mean over water cells
/// of |F_a − F_b|, F_k the field drawn for output frame k, `D(N−1, 0)` over the median of
/// `D(k, k+1)`. It keeps the first and the previous field, and one sum a frame.
#[derive(Debug)]
pub struct Seam<C: Cell> {
    water_cells: u64,
    first: Vec<C>,
    previous: Vec<C>,
    /// Σ|F_{k+1} − F_k| for each k so far.
    steps: Vec<u64>,
}

impl<C: Cell> Seam<C> {
    /// A meter for `frames` output frames on a canvas of `water_cells` cells that are not
    /// walls (see [`seam_bytes`]).
    pub fn new(water_cells: u64, frames: u64) -> Seam<C> {
        let steps = Vec::with_capacity(frames.saturating_sub(1) as usize);
        Seam { water_cells, first: Vec::new(), previous: Vec::new(), steps }
    }

    /// Takes the field drawn for the next output frame, comparing it with the previous one on
    /// the bands' threads.
    pub fn add(&mut self, drawn: &[C], bands: &Bands) {
        if self.previous.is_empty() {
            self.first = drawn.to_vec();
            self.previous = drawn.to_vec();
        } else {
            self.steps.push(distance_and_copy(drawn, &mut self.previous, bands));
        }
    }

    /// The seam: `None` with fewer than 3 frames or when the median change is 0.
    pub fn value(&self) -> Option<f64> {
        if self.previous.is_empty() || self.steps.len() < 2 || self.water_cells == 0 {
            return None;
        }
        let mean = |sum: u64| sum as f64 / self.water_cells as f64;
        let mut changes: Vec<f64> = self.steps.iter().map(|&s| mean(s)).collect();
        changes.sort_by(f64::total_cmp);
        let middle = changes.len() / 2;
        let median =
            if changes.len() % 2 == 1 { changes[middle] } else { (changes[middle - 1] + changes[middle]) / 2.0 };
        if median == 0.0 {
            return None;
        }
        let mut jump = self.first.clone();
        let seam = mean(distance_and_copy(&self.previous, &mut jump, &Bands::default()));
        Some(seam / median)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(src: &str) -> Scene {
        Scene::from_toml_str(src, std::path::Path::new("s.toml")).unwrap()
    }

    /// O = 3 over 6 frames after 4 of pre-roll: frames 1..=3 are kept (K0 − O = 1), and output
    /// frames 3..=5 (simulation frames 7..=9) are blended, worked by hand.
    #[test]
    fn the_last_frames_blend_into_the_kept_ones_with_floor_division() {
        let mut fade =
            Crossfade::new(&scene("[video]\nframes = 6\nstart = 0.16\n[seamless]\ncrossfade = 3\n")).unwrap();
        let field = |v: i16| [v, -v, 0];
        for k in 0..10u64 {
            let h = field(k as i16 * 10 + 1);
            fade.take(k, &h);
            let drawn: Vec<i64> = fade.drawn(&h).iter().map(|&v| i64::from(v)).collect();
            let expected: [i64; 3] = match k {
                // j = 0: (71·3 + 11·1) / 4 = 224 / 4 = 56; (−71·3 − 11) / 4 = −56.
                7 => [56, -56, 0],
                // j = 1: (81·2 + 21·2) / 4 = 51; −204 / 4 = −51.
                8 => [51, -51, 0],
                // j = 2: (91·1 + 31·3) / 4 = 184 / 4 = 46; −46.
                9 => [46, -46, 0],
                _ => h.map(i64::from),
            };
            assert_eq!(drawn, expected, "frame {k}");
        }
        // Floor, not truncation: (−1·1 + 0·1) / 2 is −1.
        let mut fade =
            Crossfade::new(&scene("[video]\nframes = 2\nstart = 0.04\n[seamless]\ncrossfade = 1\n")).unwrap();
        fade.take(0, &[0i16]);
        fade.take(1, &[0]);
        fade.take(2, &[-1]);
        assert_eq!(fade.drawn(&[-1]), [-1]);
    }

    #[test]
    fn the_seam_is_the_last_jump_over_the_median_step() {
        let mut seam = Seam::new(2, 4);
        // Steps of 2, 4 and 6 a cell (the fields are [v, −v]): the median is 4; the jump from
        // the last field (12) back to the first (0) is 12 a cell: 3.
        for v in [0i32, 2, 6, 12] {
            seam.add(&[v, -v], &Bands::default());
        }
        assert_eq!(seam.value(), Some(3.0));
        // An even count takes the mean of the middle two: steps 1, 2, 3, 5 → 2.5; jump 11 → 4.4.
        let mut seam = Seam::new(1, 5);
        for v in [0i16, 1, 3, 6, 11] {
            seam.add(&[v], &Bands::default());
        }
        assert_eq!(seam.value(), Some(11.0 / 2.5));
        // Fewer than 3 frames, or still water: none.
        let mut seam = Seam::new(1, 2);
        seam.add(&[0i16], &Bands::default());
        seam.add(&[5], &Bands::default());
        assert_eq!(seam.value(), None);
        let mut seam = Seam::new(1, 3);
        (0..3).for_each(|_| seam.add(&[7i16], &Bands::default()));
        assert_eq!(seam.value(), None);
    }
}
