//! Property tests of the validator and the timeline (issue #5), on scenes generated at random:
//!
//! - every swipe point is dropped exactly once, in path order, on the frame §3 gives it,
//!   and none at or after frame K0+N;
//! - each frame's raindrop count is what the format's f64 accumulator gives, every drop on the
//!   interior and in its ranges;
//! - scenes with every value in range are accepted as written; one value out of range is
//!   refused with exactly one message naming its line, key and value.

use std::path::Path;

use proptest::prelude::*;
use ripple_render::Scene;
use ripple_render::scene::frame_of;
use ripple_render::sim::timeline::{Event, Source, Timeline, rasterize};

/// Every event of the scene's timeline, with its frame.
fn events(scene: &Scene) -> Vec<(u64, Event)> {
    let mut timeline = Timeline::new(scene);
    let mut frame = Vec::new();
    let mut all = Vec::new();
    while let Some(k) = timeline.next_unit(&mut frame) {
        all.extend(frame.iter().map(|e| (k, *e)));
    }
    all
}

fn parse(text: &str) -> Scene {
    Scene::from_toml_str(text, Path::new("property.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn point() -> impl Strategy<Value = [i64; 2]> {
    // Mostly near the canvas, sometimes far off it.
    prop_oneof![4 => [-10i64..50, -10i64..40], 1 => [-65536i64..=65536, -65536i64..=65536].prop_map(|[x, y]| [x / 64, y / 64])]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_swipe_point_is_dropped_once_in_order(
        path in prop::collection::vec(point(), 1..8),
        from in 0u32..40,
        length in 0u32..60,
        fps in 1u32..=60,
        start in 0u32..30,
        frames in 1u32..80,
    ) {
        let (from, until) = (f64::from(from) / 10.0, f64::from(from + length) / 10.0);
        let corners: Vec<String> = path.iter().map(|[x, y]| format!("[{x}, {y}]")).collect();
        let text = format!(
            "[video]\nwidth = 40\nheight = 30\nfps = {fps}\nframes = {frames}\nstart = {}\n\
             [[swipe]]\nfrom = {from:?}\nuntil = {until:?}\npath = [{}]\n",
            f64::from(start) / 10.0,
            corners.join(", ")
        );
        let scene = parse(&text);
        let end = scene.end_frame();
        let dropped: Vec<(u64, [i64; 2])> = events(&scene)
            .into_iter()
            .filter_map(|(k, e)| match e {
                Event::Drop(d) if matches!(d.source, Source::Swipe(_)) => Some((k, [d.x, d.y])),
                _ => None,
            })
            .collect();
        let points = rasterize(&path);
        // Point i lands on the first frame k in kf..=kt with idx(k) >= i.
        let (kf, kt) = (frame_of(from, fps), frame_of(until, fps));
        let m = points.len() as u64;
        let frame_of_point = |i: u64| {
            if kt == kf { return kf; }
            // idx(k) = (M-1)(k-kf)/(kt-kf) >= i  <=>  k >= kf + ceil(i(kt-kf)/(M-1)).
            if m == 1 { kf } else { kf + (i * (kt - kf)).div_ceil(m - 1) }
        };
        let expected: Vec<(u64, [i64; 2])> = (0..m)
            .map(|i| (frame_of_point(i), points[i as usize]))
            .filter(|(k, _)| *k < end)
            .collect();
        prop_assert_eq!(dropped, expected);
    }

    #[test]
    fn rain_counts_follow_the_accumulator(
        rate in 0u32..3000,
        fps in 1u32..=100,
        frames in 1u32..120,
        start in 0u32..20,
        from in 0u32..30,
        until in proptest::option::of(0u32..60),
        radius in (1i64..=256, 0i64..5),
        weight in (1i64..=16384, 0i64..300),
        seed in any::<u64>(),
    ) {
        let rate = f64::from(rate) / 7.0;
        let mut text = format!(
            "[video]\nwidth = 17\nheight = 9\nfps = {fps}\nframes = {frames}\nstart = {}\n[rain]\n\
             drops_per_second = {rate:?}\nradius = [{}, {}]\nweight = [{}, {}]\nfrom = {}\nseed = {}\n",
            f64::from(start) / 10.0,
            radius.0, (radius.0 + radius.1).min(256),
            weight.0, (weight.0 + weight.1).min(16384),
            f64::from(from) / 10.0,
            seed >> 1,
        );
        let until = until.map(|u| f64::from(from + u) / 10.0);
        if let Some(until) = until {
            text.push_str(&format!("until = {until:?}\n"));
        }
        let scene = parse(&text);
        let end = scene.end_frame();
        let kf = frame_of(f64::from(from) / 10.0, fps);
        let kt = until.map_or(end, |u| frame_of(u, fps)).min(end);
        let mut counts = vec![0u64; end as usize];
        for (k, e) in events(&scene) {
            if let Event::Drop(d) = e {
                prop_assert_eq!(d.source, Source::Rain);
                prop_assert!((1..=15).contains(&d.x) && (1..=7).contains(&d.y), "{:?}", d);
                prop_assert!(d.radius >= radius.0 && d.radius <= (radius.0 + radius.1).min(256));
                prop_assert!(d.weight >= weight.0 && d.weight <= (weight.0 + weight.1).min(16384));
                counts[k as usize] += 1;
            }
        }
        // §3's accumulator, one division, one addition.
        let per_frame = rate / f64::from(fps);
        let mut acc = 0.0f64;
        for (k, count) in counts.iter().enumerate() {
            let k = k as u64;
            let expected = if (kf..kt).contains(&k) {
                acc += per_frame;
                let n = acc.floor();
                acc -= n;
                n as u64
            } else {
                0
            };
            prop_assert_eq!(*count, expected, "frame {}", k);
        }
    }

    #[test]
    fn in_range_scenes_are_accepted_as_written(
        width in 3u32..=300,
        height in 3u32..=300,
        fps in 1u32..=100,
        frames in 1u32..=1_000_000,
        shift in 1u32..=15,
        steps in 1u32..=16,
        refraction in 0u32..=1600,
        stone in (0u32..1000, 0u32..1000, 1u32..=256, 1u32..=16384),
        spring in any::<bool>(),
    ) {
        let (x, y) = (stone.0 % width, stone.1 % height);
        let model = if spring { "spring" } else { "classic" };
        let text = format!(
            "[video]\nwidth = {width}\nheight = {height}\nfps = {fps}\nframes = {frames}\n\
             [water]\nmodel = \"{model}\"\ndamping_shift = {shift}\nsteps_per_frame = {steps}\nrefraction = {}\n\
             [[stone]]\nat = 0\nx = {x}\ny = {y}\nradius = {}\nweight = {}\n",
            f64::from(refraction) / 100.0, stone.2, stone.3
        );
        let scene = parse(&text);
        prop_assert_eq!((scene.width, scene.height, scene.fps, scene.frames), (width, height, fps, u64::from(frames)));
        let clock = ripple_render::scene::Clock::Frames { steps_per_frame: steps };
        prop_assert_eq!((scene.water.damping_shift, scene.water.clock), (shift, clock));
        let s = &scene.stones[0];
        prop_assert_eq!((s.x, s.y, s.radius, s.weight), (i64::from(x), i64::from(y), i64::from(stone.2), i64::from(stone.3)));
    }

    #[test]
    fn one_value_out_of_range_is_refused_with_its_place(
        (key, line, value) in prop_oneof![
            (3u32..=1000).prop_map(|v| ("width", 3, 16384 + i64::from(v))),
            (0i64..3).prop_map(|v| ("width", 3, v)),
            (101i64..100_000).prop_map(|v| ("fps", 4, v)),
            (-1000i64..=0).prop_map(|v| ("fps", 4, v)),
            (1_000_001i64..i64::MAX).prop_map(|v| ("frames", 5, v)),
            (16i64..1000).prop_map(|v| ("damping_shift", 7, v)),
            (17i64..1000).prop_map(|v| ("steps_per_frame", 8, v)),
        ],
    ) {
        let mut values = vec![("width", 40), ("fps", 25), ("frames", 10), ("damping_shift", 5), ("steps_per_frame", 1)];
        for v in &mut values {
            if v.0 == key {
                v.1 = value;
            }
        }
        let text = format!(
            "[video]\nheight = 30\nwidth = {}\nfps = {}\nframes = {}\n[water]\ndamping_shift = {}\nsteps_per_frame = {}\n",
            values[0].1, values[1].1, values[2].1, values[3].1, values[4].1
        );
        let error = Scene::from_toml_str(&text, Path::new("property.toml")).expect_err("out of range");
        let message = error.to_string();
        let section = if line >= 7 { "water" } else { "video" };
        let at = format!("property.toml:{line}:");
        let named = format!("{section}.{key} = {value}");
        prop_assert!(message.starts_with(&at), "{}", message);
        prop_assert!(message.contains(&named), "{}", message);
        prop_assert_eq!(message.matches("property.toml").count(), 1, "{}", message);
    }
}
