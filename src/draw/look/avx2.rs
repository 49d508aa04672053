//! The gather and blend of bilinear sampling (§9) in AVX2 intrinsics, eight pixels at a
//! time, for CPUs that have it: the same integers as the portable passes (a test draws every
//! look both ways and compares them with the formula).
//!
//! A pixel's four taps are two 8-byte loads from the padded backdrop, upper pair and lower pair,
//! side by side in one 128-bit lane. A byte shuffle spreads each pair to 16-bit (left, right)
//! couples per channel, and one multiply-add per pair (`vpmaddwd`) with the couple
//! `(256 − fx, fx)` gives the channel's upper and lower sums; the vertical step is
//! `256·top + (bottom − top)·fy`, which equals `top·(256 − fy) + bottom·fy`. The light is added
//! in 32 bits and the two saturating packs clamp to 0..=255, as the formula does.
//!
//! The pixels of a group of eight are paired `q` with `q + 4` (lane 0 and lane 1), so that a
//! per-pixel weight is broadcast with an in-lane shuffle and the packs leave the pixels in order.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi16, _mm256_add_epi32, _mm256_madd_epi16, _mm256_min_epu16, _mm256_mullo_epi16,
    _mm256_mullo_epi32, _mm256_or_si256, _mm256_packus_epi16, _mm256_packus_epi32, _mm256_set_epi16, _mm256_set_epi64x,
    _mm256_set1_epi16, _mm256_set1_epi32, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_shuffle_epi32,
    _mm256_slli_epi32, _mm256_srli_epi16, _mm256_srli_epi32, _mm256_sub_epi16, _mm256_sub_epi32, _mm256_subs_epu16,
};

use super::pen::{TONE_BOTTOM, TONE_TOP};

use bytemuck::cast;

/// Byte shuffles (the same in both lanes) from a lane `[upper left, upper right, lower left,
/// lower right]` of packed pixels to the 16-bit couples (left, right) of red, green, blue and a
/// zero, of the upper pair and of the lower pair; −1 makes a zero byte.
const UPPER: [i8; 32] = couples(0);
const LOWER: [i8; 32] = couples(8);

const fn couples(from: i8) -> [i8; 32] {
    let mut mask = [-1i8; 32];
    let mut i = 0;
    while i < 32 {
        let (channel, side) = ((i % 16) / 4, (i % 4) / 2);
        if i % 2 == 0 && channel < 3 {
            mask[i] = from + channel as i8 + 4 * side as i8;
        }
        i += 1;
    }
    mask
}

/// Byte shuffles (the same in both lanes) that spread a 16-bit half of each of two pixels'
/// words over the four 16-bit channels of those pixels: pixels 0 and 1 of a lane's four
/// (`FIRST_*`) or 2 and 3 (`SECOND_*`), the low half or the high half.
const FIRST_LOW: [i8; 32] = spread(0, 0);
const FIRST_HIGH: [i8; 32] = spread(0, 2);
const SECOND_LOW: [i8; 32] = spread(8, 0);
const SECOND_HIGH: [i8; 32] = spread(8, 2);

const fn spread(from: i8, half: i8) -> [i8; 32] {
    let mut mask = [0i8; 32];
    let mut i = 0;
    while i < 32 {
        let pixel = ((i % 16) / 8) as i8;
        mask[i] = from + 4 * pixel + half + (i % 2) as i8;
        i += 1;
    }
    mask
}

/// Byte shuffle from four packed pixels a lane to their twelve RGB bytes.
const RGB: [i8; 32] = {
    let mut mask = [-1i8; 32];
    let mut i = 0;
    while i < 12 {
        mask[i] = (i / 3 * 4 + i % 3) as i8;
        mask[16 + i] = mask[i];
        i += 1;
    }
    mask
};

/// What the kernel reads for one run of pixels: each pixel's tap index, fractions and light
/// (the arithmetic pass's output), and the padded backdrop `width` pixels wide.
pub(super) struct Run<'a> {
    pub index: &'a [u32],
    pub fx: &'a [u32],
    pub fy: &'a [u32],
    pub add: &'a [i32],
    pub rgbx: &'a [u32],
    pub width: usize,
}

/// The water terms of a run's pixels (`blend_water`'s): the soft tone's fractions toward the
/// top and the bottom, and the weights of the toned colour and the sky, each pair as the two
/// 16-bit halves of a word; and the sky.
pub(super) struct Water<'a> {
    pub tone: &'a [u32],
    pub mix: &'a [u32],
    pub sky: [i32; 3],
}

/// Draws the first pixels of `run` into `out` (RGB), eight at a time, and returns how many it
/// drew (a multiple of eight; the rest is left to the portable passes).
#[target_feature(enable = "avx2")]
pub(super) fn bilinear(run: &Run<'_>, out: &mut [[u8; 3]]) -> usize {
    kernel::<false>(run, None, out)
}

/// [`bilinear`] with the water terms.
#[target_feature(enable = "avx2")]
pub(super) fn bilinear_water(run: &Run<'_>, water: &Water<'_>, out: &mut [[u8; 3]]) -> usize {
    kernel::<true>(run, Some(water), out)
}

#[inline]
#[target_feature(enable = "avx2")]
fn kernel<const WATER: bool>(run: &Run<'_>, water: Option<&Water<'_>>, out: &mut [[u8; 3]]) -> usize {
    let eights = run.index.len() / 8;
    let (upper, lower, rgb) = (cast::<_, __m256i>(UPPER), cast::<_, __m256i>(LOWER), cast::<_, __m256i>(RGB));
    let eight = |v: &[u32], at: usize| -> __m256i { cast::<[u32; 8], _>(v[at..at + 8].try_into().expect("eight")) };
    let signed = |v: &[i32], at: usize| -> __m256i { cast::<[i32; 8], _>(v[at..at + 8].try_into().expect("eight")) };
    let zero = _mm256_setzero_si256();
    // The sky's channels as 16-bit lanes, laid out as two pixels a 128-bit lane are.
    let sky = water.map_or(zero, |w| {
        let [r, g, b] = w.sky.map(|c| c as i16);
        _mm256_set_epi16(0, b, g, r, 0, b, g, r, 0, b, g, r, 0, b, g, r)
    });
    for (at, out) in (0..eights * 8).step_by(8).zip(out.chunks_exact_mut(8)) {
        let index: [u32; 8] = run.index[at..at + 8].try_into().expect("eight");
        let fx = eight(run.fx, at);
        // Each pixel's couple (256 − fx, fx), as a 32-bit word.
        let wx = _mm256_or_si256(_mm256_sub_epi32(_mm256_set1_epi32(256), fx), _mm256_slli_epi32::<16>(fx));
        let group = Group {
            index: &index,
            rgbx: run.rgbx,
            width: run.width,
            wx,
            fy: eight(run.fy, at),
            add: signed(run.add, at),
            upper,
            lower,
            tone: water.map_or(zero, |w| eight(w.tone, at)),
            mix: water.map_or(zero, |w| eight(w.mix, at)),
            sky,
        };
        // Pixels 0 and 4, 1 and 5, 2 and 6, 3 and 7; packed to 16 bits, [0 1 | 4 5] and
        // [2 3 | 6 7]; packed to bytes, [0 1 2 3 | 4 5 6 7].
        let (p04, p15, p26, p37) = (group.two::<0x00>(), group.two::<0x55>(), group.two::<0xaa>(), group.two::<0xff>());
        let (mut p0145, mut p2367) = (_mm256_packus_epi32(p04, p15), _mm256_packus_epi32(p26, p37));
        if WATER {
            p0145 = group.water(p0145, FIRST_LOW, FIRST_HIGH);
            p2367 = group.water(p2367, SECOND_LOW, SECOND_HIGH);
        }
        let bytes = _mm256_packus_epi16(p0145, p2367);
        let bytes: [u8; 32] = cast(_mm256_shuffle_epi8(bytes, rgb));
        let (first, last) = out.split_at_mut(4);
        first.as_flattened_mut().copy_from_slice(&bytes[..12]);
        last.as_flattened_mut().copy_from_slice(&bytes[16..28]);
    }
    eights * 8
}

/// Eight pixels' inputs, in vectors where they are per pixel.
struct Group<'a> {
    index: &'a [u32; 8],
    rgbx: &'a [u32],
    width: usize,
    wx: __m256i,
    fy: __m256i,
    add: __m256i,
    upper: __m256i,
    lower: __m256i,
    /// The water terms (zeros without them).
    tone: __m256i,
    mix: __m256i,
    sky: __m256i,
}

impl Group<'_> {
    /// Pixels `q` (lane 0) and `q + 4` (lane 1), `SPREAD = 0x55·q`, as 32-bit channels
    /// `[r, g, b, ·]` with the light added (not yet clamped).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn two<const SPREAD: i32>(&self) -> __m256i {
        let q = (SPREAD & 3) as usize;
        // The rows of the taps: the backdrop, and the backdrop from one row down. (A tap index
        // is at most the last pixel's, so the clamp changes none; it lets the compiler drop
        // the bounds checks.)
        let (upper, lower) = (&self.rgbx[..self.rgbx.len() - self.width], &self.rgbx[self.width..]);
        let pair = |row: &[u32], i: usize| -> i64 {
            let [left, right]: [u32; 2] = row[i..i + 2].try_into().expect("two taps");
            (u64::from(left) | u64::from(right) << 32) as i64
        };
        let last = upper.len() - 2;
        let (a, b) = ((self.index[q] as usize).min(last), (self.index[q + 4] as usize).min(last));
        let taps = _mm256_set_epi64x(pair(lower, b), pair(upper, b), pair(lower, a), pair(upper, a));
        let wx = _mm256_shuffle_epi32::<SPREAD>(self.wx);
        let top = _mm256_madd_epi16(_mm256_shuffle_epi8(taps, self.upper), wx);
        let bottom = _mm256_madd_epi16(_mm256_shuffle_epi8(taps, self.lower), wx);
        let fy = _mm256_shuffle_epi32::<SPREAD>(self.fy);
        let sum = _mm256_add_epi32(_mm256_slli_epi32::<8>(top), _mm256_mullo_epi32(_mm256_sub_epi32(bottom, top), fy));
        let value = _mm256_srli_epi32::<16>(_mm256_add_epi32(sum, _mm256_set1_epi32(32768)));
        _mm256_add_epi32(value, _mm256_shuffle_epi32::<SPREAD>(self.add))
    }

    /// The water terms of four pixels packed to 16-bit channels (`[0 1 | 4 5]` or
    /// `[2 3 | 6 7]`), their light added and clamped at 0 by the pack: the soft tone's moves
    /// toward 245 and 10 and the mix with the sky, in 16-bit lanes (every product is under
    /// 2^16: 245·256 and 255·256). `low` and `high` spread the low and high halves of each
    /// pixel's words of `tone` and `mix` over its channels.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn water(&self, lit: __m256i, low: [i8; 32], high: [i8; 32]) -> __m256i {
        let (low, high) = (cast::<_, __m256i>(low), cast::<_, __m256i>(high));
        // With the clamp tone the fractions are 0 and this is the clamp; with the soft tone the
        // light is 0 and `lit` the sampled value.
        let value = _mm256_min_epu16(lit, _mm256_set1_epi16(255));
        let (up, down) = (_mm256_shuffle_epi8(self.tone, low), _mm256_shuffle_epi8(self.tone, high));
        let room_up = _mm256_subs_epu16(_mm256_set1_epi16(TONE_TOP as i16), value);
        let room_down = _mm256_subs_epu16(value, _mm256_set1_epi16(TONE_BOTTOM as i16));
        let lighter = _mm256_srli_epi16::<8>(_mm256_mullo_epi16(room_up, up));
        let darker = _mm256_srli_epi16::<8>(_mm256_mullo_epi16(room_down, down));
        let toned = _mm256_sub_epi16(_mm256_add_epi16(value, lighter), darker);
        // toned·(256 − f) + sky·f, under 2^16 as a weighted mean of bytes times 256.
        let (keep, share) = (_mm256_shuffle_epi8(self.mix, low), _mm256_shuffle_epi8(self.mix, high));
        let mixed = _mm256_add_epi16(_mm256_mullo_epi16(toned, keep), _mm256_mullo_epi16(self.sky, share));
        _mm256_srli_epi16::<8>(mixed)
    }
}
