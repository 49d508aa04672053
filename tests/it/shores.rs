//! Walls and edges from the command line (§8): errors for the new keys, `plan`'s fields and
//! warnings, and the `--walls` picture.

use crate::support::read_png;
use crate::support::{ripple, scene_dir, temporaries};

const BASE: &str = "[video]\nwidth = 40\nheight = 30\nframes = 5\n[background]\ncolor = \"#336699\"\n";

#[test]
fn bad_shore_keys_get_one_located_message() {
    let cases: &[(&str, &str)] = &[
        (
            "[[obstacle]]\nshape = \"rect\"\nx = 1\ny = 2\nwidth = 3\nheight = 4\nradius = 5\n",
            "scene.toml:13:10: obstacle[0].radius = 5 does not belong to a rect obstacle: a rect takes x, y, width, height",
        ),
        (
            "[[obstacle]]\nshape = \"polygon\"\npoints = [[1, 2], [3, 4]]\n",
            "scene.toml:9:10: obstacle[0].points = [[1, 2], [3, 4]] has 2 points: a polygon needs at least 3 points",
        ),
        ("[[obstacle]]\nshape = \"circel\"\n", "(did you mean \"circle\"?)"),
        (
            "[[obstacle]]\nshape = \"line\"\npath = [[1, 2, 3]]\n",
            "obstacle[0].path[0] = [1, 2, 3] is not an [x, y] pair",
        ),
        ("[edges]\nleft = \"wrap\"\n", "scene.toml:8:8: edges.left = \"wrap\" needs edges.right = \"wrap\" too"),
        (
            "[edges]\nall = \"wrap\"\ntop = \"absorb\"\n",
            "edges.top = \"absorb\" breaks edges.all = \"wrap\" on the y axis",
        ),
        ("[mask]\nimage = \"rocks.png\"\n", "scene.toml:8:9: mask.image = \"rocks.png\": no such file"),
        ("[mask]\nimage = \"scene.toml\"\n", "The image format could not be determined"),
        ("[mask]\nimage = \"m.png\"\nthreshold = 257\n", "mask.threshold = 257 is out of range: allowed 0..=256"),
    ];
    for (i, (tail, expected)) in cases.iter().enumerate() {
        let dir = scene_dir(&format!("shore-bad{i}"), &format!("{BASE}{tail}"));
        let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
        assert_eq!(run.code, 2, "case {i}: {}", run.stderr);
        assert!(
            run.stderr.starts_with("error: ") && run.stderr.contains(expected),
            "case {i}: {expected:?} in\n{}",
            run.stderr
        );
        assert!(!dir.join("out.gif").exists() && temporaries(&dir).is_empty(), "case {i}");
    }
}

#[test]
fn plan_counts_the_walls_and_names_the_edges_only_when_used() {
    // A rect of 4×3 = 12 cells and a circle of radius 2 (9 cells) apart: 21 walls.
    let tail = "[edges]\nleft = \"absorb\"\n[[obstacle]]\nshape = \"rect\"\nx = 2\ny = 2\nwidth = 4\nheight = 3\n\
                [[obstacle]]\nshape = \"circle\"\nx = 30\ny = 20\nradius = 2\n";
    let dir = scene_dir("shore-plan", &format!("{BASE}{tail}"));
    let run = ripple(&["plan", "scene.toml", "--json"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("\"walls\":21,"), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "\"edges\":{\"left\":\"absorb\",\"right\":\"reflect\",\"top\":\"reflect\",\"bottom\":\"reflect\"}"
        ),
        "{}",
        run.stdout
    );
    // Without the keys, neither field.
    let dir = scene_dir("shore-plan-none", BASE);
    let run = ripple(&["plan", "scene.toml", "--json"], &dir);
    assert!(!run.stdout.contains("walls") && !run.stdout.contains("edges"), "{}", run.stdout);
}

#[test]
fn plan_and_render_warn_of_obstacles_off_the_canvas_and_stones_on_walls() {
    let tail = "[[obstacle]]\nshape = \"circle\"\nx = -50\ny = 5\nradius = 3\n\
                [[obstacle]]\nshape = \"rect\"\nx = 10\ny = 10\nwidth = 10\nheight = 10\n\
                [[stone]]\nat = 0\nx = 15\ny = 15\nradius = 2\n";
    let dir = scene_dir("shore-warn", &format!("{BASE}{tail}"));
    let run = ripple(&["plan", "scene.toml"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("obstacle[0] (circle) covers no cell of the canvas"), "{}", run.stdout);
    assert!(run.stdout.contains("stone[0] at (15, 15) falls entirely on walls"), "{}", run.stdout);
    assert!(!run.stdout.contains("obstacle[1]"), "{}", run.stdout);
    // The render warns of the same, once each.
    let run = ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("warning: stone[0] at (15, 15) falls entirely on walls").count(),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.matches("warning: obstacle[0] (circle) covers no cell").count(), 1, "{}", run.stderr);
}

#[test]
fn the_walls_picture_tints_exactly_the_wall_cells() {
    let tail = "[[obstacle]]\nshape = \"rect\"\nx = 2\ny = 2\nwidth = 4\nheight = 3\n";
    let dir = scene_dir("shore-picture", &format!("{BASE}{tail}"));
    let run = ripple(&["plan", "scene.toml", "--walls", "walls.png"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (w, h, rgb) = read_png(&dir.join("walls.png"));
    assert_eq!((w, h), (40, 30));
    let background: [u8; 3] = [0x33, 0x66, 0x99];
    // Half the background, half magenta (255, 0, 170), on the wall; the background elsewhere.
    let tinted: [u8; 3] = [((0x33u16 + 255) / 2) as u8, 0x66 / 2, ((0x99u16 + 170) / 2) as u8];
    for y in 0..h {
        for x in 0..w {
            let pixel = &rgb[(y * w + x) * 3..][..3];
            let wall = (2..6).contains(&x) && (2..5).contains(&y);
            assert_eq!(pixel, if wall { &tinted[..] } else { &background[..] }, "({x}, {y})");
        }
    }
    // The scene itself is never the picture.
    let run = ripple(&["plan", "scene.toml", "--walls", "scene.toml"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// A wrapped render tiles: over a background that repeats every half canvas, a stone on the
/// seam (x = 0) gives the frames of the same stone half a canvas in, shifted back by half a
/// canvas, pixel for pixel. So the pixels either side of the seam are those either side of the
/// middle, where there is no seam; with and without a look, wrapping one axis or both.
#[test]
fn a_wrapped_render_is_the_same_drop_moved_across_the_seam() {
    let (w, h) = (64usize, 48usize);
    let tile: Vec<u8> = (0..w * h)
        .flat_map(|i| {
            let (x, y) = ((i % w) % (w / 2), (i / w) % (h / 2));
            [(x * 8) as u8, (y * 10) as u8, ((x * y) % 251) as u8]
        })
        .collect();
    let looks = ["", "[look]\nsampling = \"bilinear\"\nshading = 128\nhighlight = 320\n"];
    let axes = [("left = \"wrap\"\nright = \"wrap\"\n", 0), ("all = \"wrap\"\n", h / 2)];
    for (look, (edges, dy)) in looks.iter().flat_map(|l| axes.iter().map(move |a| (l, a))) {
        let render = |name: &str, x: usize, y: usize| {
            let scene = format!(
                "[video]\nwidth = {w}\nheight = {h}\nframes = 12\n[background]\nimage = \"tile.png\"\n\
                 [water]\nrefraction = 0.4\n[edges]\n{edges}{look}\
                 [[stone]]\nat = 0\nx = {x}\ny = {y}\nradius = 5\nweight = 400\n"
            );
            let dir = scene_dir(name, &scene);
            crate::support::write_png(&dir.join("tile.png"), w, h, &tile);
            let run = ripple(&["scene.toml", "-o", "frames/", "--quiet"], &dir);
            assert_eq!(run.code, 0, "{}", run.stderr);
            (0..12).map(|n| read_png(&dir.join(format!("frames/frame_{n:04}.png"))).2).collect::<Vec<_>>()
        };
        let on_seam = render("wrap-seam", 0, 10 + h / 2 - dy);
        let inside = render("wrap-inside", w / 2, 10 + h / 2);
        let mut moved = 0;
        for (n, (a, b)) in on_seam.iter().zip(&inside).enumerate() {
            for y in 0..h {
                for x in 0..w {
                    let pixel = &a[(y * w + x) * 3..][..3];
                    let shifted = &b[((y + dy) % h * w + (x + w / 2) % w) * 3..][..3];
                    assert_eq!(pixel, shifted, "{edges:?} {look:?} frame {n} at ({x}, {y})");
                    moved += usize::from(pixel != &tile[(y * w + x) * 3..][..3]);
                }
            }
        }
        assert!(moved > 2000, "{edges:?} {look:?}: the stone moved only {moved} pixels");
    }
}
