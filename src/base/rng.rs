//! The rain generator, pinned: ChaCha8 seeded from the scene's seed, and our own mapping to ranges,
//! so the same seed gives the same drops on every platform and after dependency updates.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// Uniform integers from a seeded ChaCha8 stream.
pub struct RainRng(ChaCha8Rng);

impl RainRng {
    /// The key is the seed in little-endian bytes followed by zeros. (`seed_from_u64` is avoided:
    /// rand_core does not promise its expansion stays the same across versions.)
    pub fn new(seed: u64) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        RainRng(ChaCha8Rng::from_seed(key))
    }

    /// A uniform integer in `lo..=hi` (requires `lo <= hi`), by Lemire's multiply-and-reject:
    /// exact, and one 64-bit draw in all but a vanishing fraction of calls.
    pub fn in_range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo) as u64 + 1;
        let threshold = span.wrapping_neg() % span;
        loop {
            let product = u128::from(self.0.next_u64()) * u128::from(span);
            if (product as u64) >= threshold {
                return lo + (product >> 64) as i64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_in_range_and_reaches_both_ends() {
        let mut rng = RainRng::new(1);
        let mut seen = [false; 3];
        for _ in 0..200 {
            let v = rng.in_range(5, 7);
            assert!((5..=7).contains(&v));
            seen[(v - 5) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_eq!(rng.in_range(9, 9), 9);
    }

    #[test]
    fn different_seeds_give_different_streams() {
        let a: Vec<i64> = (0..8)
            .map({
                let mut r = RainRng::new(7);
                move |_| r.in_range(0, 1 << 40)
            })
            .collect();
        let b: Vec<i64> = (0..8)
            .map({
                let mut r = RainRng::new(8);
                move |_| r.in_range(0, 1 << 40)
            })
            .collect();
        assert_ne!(a, b);
    }
}
