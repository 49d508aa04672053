//! What a loop's seam needs (SPEC §11): the heights to draw, faded from the water's into the
//! pre-roll's over the last frames ([`Crossfade`]), and how big the jump from the last frame to
//! the first is against the render's ordinary frame-to-frame change ([`Seam`]).

use crate::scene::Scene;
use crate::water::Heights;

/// A height field kept aside, of either model's type.
#[derive(Debug, Clone)]
enum Field {
    I16(Vec<i16>),
    I32(Vec<i32>),
}

impl Field {
    fn copy_of(heights: Heights<'_>) -> Field {
        match heights {
            Heights::I16(h) => Field::I16(h.to_vec()),
            Heights::I32(h) => Field::I32(h.to_vec()),
        }
    }

    fn heights(&self) -> Heights<'_> {
        match self {
            Field::I16(h) => Heights::I16(h),
            Field::I32(h) => Heights::I32(h),
        }
    }
}

/// `[seamless] crossfade = O`: the fields of the O pre-roll frames before K0 are kept, and the
/// last O output frames are drawn from `H = floor((h·(O−j) + g·(j+1)) / (O+1))` per cell, h the
/// water of that frame and g the kept field of pre-roll frame K0−O+j. The water itself goes on
/// unchanged.
#[derive(Debug)]
pub struct Crossfade {
    fade: u64,
    /// K0 − O, the first pre-roll frame kept, and K0 + N − O, the first frame faded.
    first_kept: u64,
    first_faded: u64,
    kept: Vec<Field>,
    blend: Option<Field>,
    /// Whether the current frame is drawn from `blend`.
    fading: bool,
}

impl Crossfade {
    /// The scene's crossfade, if it has one.
    pub fn new(scene: &Scene) -> Option<Crossfade> {
        let fade = scene.seamless.crossfade?;
        Some(Crossfade {
            fade,
            first_kept: scene.first_frame - fade,
            first_faded: scene.end_frame() - fade,
            kept: Vec::with_capacity(fade as usize),
            blend: None,
            fading: false,
        })
    }

    /// Takes the water's `heights` at frame `k`: keeps them for one of the O pre-roll frames,
    /// blends them for one of the last O output frames.
    pub fn take(&mut self, k: u64, heights: Heights<'_>) {
        self.fading = false;
        if (self.first_kept..self.first_kept + self.fade).contains(&k) {
            self.kept.push(Field::copy_of(heights));
        } else if k >= self.first_faded {
            let j = (k - self.first_faded) as usize;
            let (o, j64) = (self.fade as i64, j as i64);
            let mix = |h: i64, g: i64| (h * (o - j64) + g * (j64 + 1)).div_euclid(o + 1);
            let blend = self.blend.get_or_insert_with(|| Field::copy_of(heights));
            match (blend, heights, &self.kept[j]) {
                (Field::I16(out), Heights::I16(h), Field::I16(g)) => {
                    for ((o, &h), &g) in out.iter_mut().zip(h).zip(g) {
                        *o = mix(i64::from(h), i64::from(g)) as i16;
                    }
                }
                (Field::I32(out), Heights::I32(h), Field::I32(g)) => {
                    for ((o, &h), &g) in out.iter_mut().zip(h).zip(g) {
                        *o = mix(i64::from(h), i64::from(g)) as i32;
                    }
                }
                _ => unreachable!("one model's fields throughout a render"),
            }
            self.fading = true;
        }
    }

    /// The heights to draw: the blend for a faded frame, else the water's.
    pub fn drawn<'a>(&'a self, water: Heights<'a>) -> Heights<'a> {
        match (&self.blend, self.fading) {
            (Some(blend), true) => blend.heights(),
            _ => water,
        }
    }
}

/// The seam figure of SPEC §11, gathered frame by frame: with D(a, b) the mean over water cells
/// of |F_a − F_b|, F_k the field drawn for output frame k, `D(N−1, 0)` over the median of
/// `D(k, k+1)`. It keeps the first and the previous field, and one sum a frame.
#[derive(Debug)]
pub struct Seam {
    water_cells: u64,
    first: Option<Field>,
    previous: Option<Field>,
    /// Σ|F_{k+1} − F_k| for each k so far.
    steps: Vec<u64>,
}

impl Seam {
    /// A meter for `frames` output frames on a canvas of `water_cells` cells that are not
    /// walls. It holds two fields and 8 bytes a frame ([`Seam::BYTES_PER_FRAME`]).
    pub fn new(water_cells: u64, frames: u64) -> Seam {
        let steps = Vec::with_capacity(frames.saturating_sub(1) as usize);
        Seam { water_cells, first: None, previous: None, steps }
    }

    /// What the meter keeps for each output frame.
    pub const BYTES_PER_FRAME: u64 = 8;

    /// Takes the field drawn for the next output frame, comparing it with the previous one on
    /// `pool`'s threads if given.
    pub fn add(&mut self, drawn: Heights<'_>, pool: Option<&rayon::ThreadPool>) {
        match &mut self.previous {
            None => {
                self.first = Some(Field::copy_of(drawn));
                self.previous = Some(Field::copy_of(drawn));
            }
            Some(previous) => self.steps.push(distance_and_copy(drawn, previous, pool)),
        }
    }

    /// The seam: `None` with fewer than 3 frames or when the median change is 0.
    pub fn value(&self) -> Option<f64> {
        let (Some(first), Some(last)) = (&self.first, &self.previous) else { return None };
        if self.steps.len() < 2 || self.water_cells == 0 {
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
        let mut jump = first.clone();
        let seam = mean(distance_and_copy(last.heights(), &mut jump, None));
        Some(seam / median)
    }
}

crate::simd::dispatch! {
    /// Σ|a − b| over a chunk of i16 fields (at most 65536 cells), then `b` becomes `a`.
    fn chunk16(a: &[i16], b: &mut [i16]) -> u64 => chunk16_portable
}

crate::simd::dispatch! {
    /// Σ|a − b| over a chunk of i32 fields, then `b` becomes `a`.
    fn chunk32(a: &[i32], b: &mut [i32]) -> u64 => chunk32_portable
}

#[inline(always)]
fn chunk16_portable(a: &[i16], b: &mut [i16]) -> u64 {
    // |a − b| of two i16 is at most 65535: a u16 as max − min, summed in u32.
    let sum: u32 = a.iter().zip(b.iter()).map(|(&x, &y)| u32::from(x.max(y).wrapping_sub(x.min(y)) as u16)).sum();
    b.copy_from_slice(a);
    u64::from(sum)
}

#[inline(always)]
fn chunk32_portable(a: &[i32], b: &mut [i32]) -> u64 {
    let sum: u64 = a.iter().zip(b.iter()).map(|(&x, &y)| (i64::from(x) - i64::from(y)).unsigned_abs()).sum();
    b.copy_from_slice(a);
    sum
}

/// Σ|a − b| over the cells, then `b` becomes `a`: in chunks that stay in the cache between
/// the sum and the copy, on `pool`'s threads if given.
fn distance_and_copy(a: Heights<'_>, b: &mut Field, pool: Option<&rayon::ThreadPool>) -> u64 {
    use rayon::prelude::*;
    // 4096 i16 differences of at most 65535 each add up within a u32, which vectorizes well.
    const CHUNK: usize = 4096;
    let len = match a {
        Heights::I16(a) => a.len(),
        Heights::I32(a) => a.len(),
    };
    let pool = pool.filter(|_| len >= crate::water::PARALLEL_REFRACT_PIXELS);
    match (a, b, pool) {
        (Heights::I16(a), Field::I16(b), None) => {
            a.chunks(CHUNK).zip(b.chunks_mut(CHUNK)).map(|(a, b)| chunk16(a, b)).sum()
        }
        (Heights::I32(a), Field::I32(b), None) => {
            a.chunks(CHUNK).zip(b.chunks_mut(CHUNK)).map(|(a, b)| chunk32(a, b)).sum()
        }
        (Heights::I16(a), Field::I16(b), Some(pool)) => {
            pool.install(|| a.par_chunks(CHUNK).zip(b.par_chunks_mut(CHUNK)).map(|(a, b)| chunk16(a, b)).sum())
        }
        (Heights::I32(a), Field::I32(b), Some(pool)) => {
            pool.install(|| a.par_chunks(CHUNK).zip(b.par_chunks_mut(CHUNK)).map(|(a, b)| chunk32(a, b)).sum())
        }
        _ => unreachable!("one model's fields throughout a render"),
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
            fade.take(k, Heights::I16(&h));
            let drawn: Vec<i64> = match fade.drawn(Heights::I16(&h)) {
                Heights::I16(d) => d.iter().map(|&v| i64::from(v)).collect(),
                Heights::I32(_) => unreachable!(),
            };
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
        fade.take(0, Heights::I16(&[0]));
        fade.take(1, Heights::I16(&[0]));
        fade.take(2, Heights::I16(&[-1]));
        assert!(matches!(fade.drawn(Heights::I16(&[-1])), Heights::I16([-1])));
    }

    #[test]
    fn the_seam_is_the_last_jump_over_the_median_step() {
        let mut seam = Seam::new(2, 4);
        // Steps of 2, 4 and 6 a cell (the fields are [v, −v]): the median is 4; the jump from
        // the last field (12) back to the first (0) is 12 a cell: 3.
        for v in [0i32, 2, 6, 12] {
            seam.add(Heights::I32(&[v, -v]), None);
        }
        assert_eq!(seam.value(), Some(3.0));
        // An even count takes the mean of the middle two: steps 1, 2, 3, 5 → 2.5; jump 11 → 4.4.
        let mut seam = Seam::new(1, 5);
        for v in [0i16, 1, 3, 6, 11] {
            seam.add(Heights::I16(&[v]), None);
        }
        assert_eq!(seam.value(), Some(11.0 / 2.5));
        // Fewer than 3 frames, or still water: none.
        let mut seam = Seam::new(1, 2);
        seam.add(Heights::I16(&[0]), None);
        seam.add(Heights::I16(&[5]), None);
        assert_eq!(seam.value(), None);
        let mut seam = Seam::new(1, 3);
        (0..3).for_each(|_| seam.add(Heights::I16(&[7]), None));
        assert_eq!(seam.value(), None);
    }
}
