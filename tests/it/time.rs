//! Time in seconds (§10): the water steps S times a second whatever the frame rate.

use crate::support::render_rgb;
use crate::support::{ripple, scene_dir};

/// A scene over a picture of many colours (the tiles), with stones, damping changes, a swipe
/// and rain, and `water` as its `[water]` keys.
fn scene(fps: u32, frames: u32, water: &str, rest: &str) -> String {
    format!(
        "[video]\nwidth = 96\nheight = 72\nfps = {fps}\nframes = {frames}\nstart = 0.2\n\
         [background]\npattern = \"tiles\"\n[water]\nrefraction = 0.3\n{water}\n\
         [[stone]]\nat = 0.12\nx = 30\ny = 30\nradius = 5\nweight = 600\n\
         [[stone]]\nat = 0.6\nx = 70\ny = 40\nradius = 3\nweight = 400\n\
         [[damping]]\nat = 0.8\nshift = 4\n{rest}"
    )
}

const SWIPE_AND_RAIN: &str = "[[swipe]]\nfrom = 0.32\nuntil = 0.72\npath = [[5, 60], [90, 8]]\nradius = 3\nweight = 300\n\
     [rain]\ndrops_per_second = 30\nradius = [1, 3]\nweight = [100, 300]\nseed = 5\n";

/// §10: with S = fps · steps_per_frame and every event time on a frame boundary, step mode
/// draws the frames of frame mode, byte for byte. Swipes and rain spread over steps, so they
/// agree only at one step a frame.
#[test]
fn steps_per_second_matching_the_frames_renders_the_same_frames() {
    for (model, steps) in [("classic", 3), ("spring", 2)] {
        let frames = scene(25, 30, &format!("model = \"{model}\"\nsteps_per_frame = {steps}"), "");
        let seconds = scene(25, 30, &format!("model = \"{model}\"\nsteps_per_second = {}", 25 * steps), "");
        let (a, b) = (render_rgb(&frames), render_rgb(&seconds));
        assert_eq!(a.len(), 30);
        assert!(a.iter().any(|f| f != &a[0]), "{model}: the water never moved");
        assert!(a == b, "{model}: step mode differs from {steps} steps a frame");
    }
    let frames = scene(25, 30, "steps_per_frame = 1", SWIPE_AND_RAIN);
    let seconds = scene(25, 30, "steps_per_second = 25", SWIPE_AND_RAIN);
    assert!(render_rgb(&frames) == render_rgb(&seconds), "one step a frame, with a swipe and rain");
}

/// §10: the picture does not depend on fps: at 50 fps, simulation frame 2k+1 is
/// simulation frame k at 25 fps (the same start in seconds makes K0 = 10 and 5).
#[test]
fn at_twice_the_frame_rate_every_other_frame_is_the_same() {
    for (water, look) in [
        ("speed = 60", ""),
        ("model = \"spring\"\nsteps_per_second = 90", "[look]\nsampling = \"bilinear\"\nshading = 120\n"),
    ] {
        let rest = format!("{SWIPE_AND_RAIN}{look}");
        let slow = render_rgb(&scene(25, 20, water, &rest));
        let fast = render_rgb(&scene(50, 40, water, &rest));
        assert!(slow.iter().any(|f| f != &slow[0]), "{water}: the water never moved");
        for (k, frame) in slow.iter().enumerate() {
            // Output k at 25 fps is simulation frame 5 + k, which is 50 fps's 11 + 2k: output 1 + 2k.
            assert!(frame == &fast[1 + 2 * k], "{water}: 25 fps frame {k} is not 50 fps frame {}", 1 + 2 * k);
        }
    }
}

#[test]
fn plan_names_steps_in_step_mode() {
    let dir = scene_dir("plan-steps", &scene(25, 10, "speed = 35", ""));
    let run = ripple(&["plan", "--json", "scene.toml"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // speed 35 / (1/√2) = 49.497… → S = 49; the stone at 0.12 s is on step floor(5.88 + 0.5) = 6.
    assert!(run.stdout.contains("\"damping_shift\":5,\"steps_per_second\":49,\"refraction_q8\""), "{}", run.stdout);
    assert!(!run.stdout.contains("steps_per_frame") && !run.stdout.contains("\"frame\""), "{}", run.stdout);
    assert!(run.stdout.contains("{\"step\":6,\"kind\":\"drop\",\"x\":30,"), "{}", run.stdout);
    let run = ripple(&["plan", "scene.toml"], &dir);
    assert!(run.stdout.contains("49 steps per second"), "{}", run.stdout);
    // The events of step 6 come after 6 steps; frame k is drawn after n(k) = floor((k+1)·49/25)
    // steps: 1, 3, 5, 7, …, so frame 3 is the first to show the stone: pre-roll (K0 = 5).
    assert!(run.stdout.contains("       6 pre-roll    0.12s  stone[0]"), "{}", run.stdout);
}

#[test]
fn clock_keys_are_refused_together_and_out_of_range() {
    let cases = [
        ("steps_per_frame = 2\nspeed = 30", "water.speed = 30 conflicts: give at most one of water.steps_per_frame"),
        ("steps_per_second = 6401", "water.steps_per_second = 6401 is out of range: allowed 1..=6400"),
        ("speed = 0.5", "water.speed = 0.5 is out of range: allowed 1..=10000"),
        ("speed = 10000", "water.speed = 10000 needs 14142 steps a second"),
        ("settle = true", "water.settle = true applies to the spring model only"),
        ("model = \"spring\"\nsettle = 1", "water.settle = 1 is an integer: expected true or false"),
    ];
    for (water, expected) in cases {
        let dir = scene_dir("clock-errors", &format!("[video]\nframes = 3\n[water]\n{water}\n"));
        let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
        assert_eq!(run.code, 2, "{water}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{water}: {}", run.stderr);
    }
}
