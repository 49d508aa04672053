//! Lossy GIF (`--lossy N`): a pixel keeps the colour already on the screen while that stays
//! within `N / 4` of the render's on every channel, and shows the render's own colour once it
//! strays further. Water that moves a little leaves the screen as it is (transparent pixels, the
//! cheapest thing a GIF codes), water that moves more is drawn exactly, and nothing shown ever
//! strays more than `N / 4` from the render. (A step of N / 10 held almost nothing on a photo:
//! neighbouring colours of its 255 lie farther apart than that, so a textured picture's GIF at 80
//! was 0.93 of the plain one; at N / 4 it is 0.56, 6 dB above gifsicle's --lossy=80 at its size,
//! `bench/lossy_photos.py`. Coding strings of near colours in the LZW, as gifsicle does, was
//! tried beside the hold, sharing its step: smaller steps for both made files larger.) A pixel the render leaves unchanged is always
//! near what is shown there, so calm water never flickers.
//!
//! Each pixel is decided alone, from what is shown there and what the render has, before the
//! frame goes to the workers: the frames this leaves are compressed like any others, on every
//! core, the same bytes for any thread count.

/// A lossy level N lets each channel of a shown pixel stray from the render's by N / this.
pub const LEVELS_PER_CHANNEL_STEP: u8 = 4;

/// `--lossy` left without its level.
pub const DEFAULT_LEVEL: u8 = 20;

/// What a lossy GIF shows: the render's frames, held where the screen is near enough.
pub struct Hold {
    /// Per pair `shown << 8 | render` of palette indices, whether the shown colour may stay.
    near: Vec<bool>,
}

impl Hold {
    /// Holds colours of `palette` within `level / LEVELS_PER_CHANNEL_STEP` of each other on every
    /// channel.
    pub fn new(palette: &[[u8; 3]], level: u8) -> Hold {
        let step = level / LEVELS_PER_CHANNEL_STEP;
        let mut near = vec![false; 1 << 16];
        for (a, shown) in palette.iter().enumerate() {
            for (b, render) in palette.iter().enumerate() {
                near[a << 8 | b] = (0..3).all(|c| shown[c].abs_diff(render[c]) <= step);
            }
        }
        Hold { near }
    }

    /// Turns `frame`, the render's palette indices, into what the GIF shows after `shown`, what
    /// the frame before showed (the first frame is shown as it is).
    pub fn apply(&self, frame: &mut [u8], shown: &[u8]) {
        for (pixel, &was) in frame.iter_mut().zip(shown) {
            if self.near[usize::from(was) << 8 | usize::from(*pixel)] {
                *pixel = was;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grey ramp of 64 levels, 4 apart.
    fn ramp() -> Vec<[u8; 3]> {
        (0..64).map(|v| [v * 4, v * 4, v * 4]).collect()
    }

    #[test]
    fn a_pixel_is_held_while_near_enough_and_drawn_exactly_once_it_is_not() {
        // A step of 8: two levels of the ramp either way stay, three do not.
        let hold = Hold::new(&ramp(), 8 * LEVELS_PER_CHANNEL_STEP);
        let shown = [10, 10, 10, 10, 10, 10];
        let mut frame = [10, 12, 8, 13, 7, 40];
        hold.apply(&mut frame, &shown);
        assert_eq!(frame, [10, 10, 10, 13, 7, 40]);
    }

    #[test]
    fn a_channel_past_the_step_is_enough_to_draw_the_pixel() {
        // Two colours alike in red and green, 9 apart in blue.
        let palette = [[100, 100, 100], [100, 100, 109], [104, 96, 108]];
        let hold = Hold::new(&palette, 8 * LEVELS_PER_CHANNEL_STEP);
        let mut frame = [1, 2];
        hold.apply(&mut frame, &[0, 0]);
        assert_eq!(frame, [1, 0], "blue strays 9 for index 1, every channel is within 8 for index 2");
    }

    #[test]
    fn what_is_shown_never_strays_further_than_the_step_over_many_frames() {
        let palette = ramp();
        let hold = Hold::new(&palette, 12 * LEVELS_PER_CHANNEL_STEP);
        // Each pixel a saw: up a level a frame, then back down eleven at once.
        let mut shown: Vec<u8> = vec![20; 8];
        for t in 0..40u8 {
            let render: Vec<u8> = (0..8).map(|i| 20 + (t + i) % 12).collect();
            let mut frame = render.clone();
            hold.apply(&mut frame, &shown);
            for (&s, &r) in frame.iter().zip(&render) {
                assert!(palette[usize::from(s)][0].abs_diff(palette[usize::from(r)][0]) <= 12, "frame {t}");
            }
            shown = frame;
        }
    }
}
