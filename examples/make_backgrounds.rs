//! Draws the background pictures of the example scenes (`scenes/*.png`) and of the benchmark
//! (`bench/photo.png`), so that every asset in the repository is made by the project itself:
//! `cargo run --example make_backgrounds`.

use std::f64::consts::PI;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    save(&dir.join("pool.png"), 256, 192, pool)?;
    save(&dir.join("koi.png"), 96, 64, koi)?;
    // The bundled scenes' picture: a koi pond, smooth and full of colour.
    save(&dir.join("lagoon.png"), 480, 320, lagoon)?;
    println!("wrote {}/pool.png, koi.png and lagoon.png", dir.display());
    // The benchmark's photo-like picture: the pool at 640×480, thousands of colours.
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/photo.png");
    save(&bench, 640, 480, pool)?;
    println!("wrote {}", bench.display());
    Ok(())
}

fn save(
    path: &Path,
    w: u32,
    h: u32,
    draw: fn(u32, u32, u32, u32) -> [u8; 4],
) -> Result<(), Box<dyn std::error::Error>> {
    let pixels: Vec<u8> = (0..h).flat_map(|y| (0..w).flat_map(move |x| draw(x, y, w, h))).collect();
    let mut encoder = png::Encoder::new(std::fs::File::create(path)?, w, h);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::High);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(())
}

/// A sunlit pool floor: sand with a soft gradient, a few pebbles and a band of tiles along the
/// top edge. Smooth shading gives thousands of colours (the GIF palette is quantized).
fn pool(x: u32, y: u32, w: u32, h: u32) -> [u8; 4] {
    let (fx, fy) = (f64::from(x) / f64::from(w), f64::from(y) / f64::from(h));
    // Tiles along the top.
    if y < h / 6 {
        let (tx, ty) = (x % 16, y % 16);
        if tx == 0 || ty == 0 {
            return [226, 232, 236, 255];
        }
        let shade = if (x / 16 + y / 16).is_multiple_of(2) { 0.0 } else { 18.0 };
        return [(20.0 + shade) as u8, (120.0 + shade) as u8, (170.0 + shade) as u8, 255];
    }
    // Sand, lit from the top left, with faint sunlight caustics.
    let light = 0.75 + 0.25 * (1.0 - (fx + fy) / 2.0);
    let caustic = ((fx * 9.0 * PI).sin() * (fy * 7.0 * PI + fx * 3.0).sin()).abs().powf(6.0) * 40.0;
    let mut rgb = [230.0 * light + caustic, 204.0 * light + caustic, 150.0 * light + caustic * 0.8];
    // Pebbles: shaded discs.
    for &(cx, cy, r, tone) in &[(0.3, 0.55, 0.08, 0.55), (0.68, 0.7, 0.11, 0.45), (0.5, 0.35, 0.05, 0.6)] {
        let (dx, dy) = ((fx - cx) * f64::from(w), (fy - cy) * f64::from(h));
        let d = (dx * dx + dy * dy).sqrt() / (r * f64::from(w));
        if d < 1.0 {
            let bulge = (1.0 - d * d).sqrt();
            let k = tone * (0.6 + 0.4 * bulge) * light;
            rgb = [150.0 * k + 20.0, 140.0 * k + 20.0, 130.0 * k + 25.0];
        }
    }
    [rgb[0].min(255.0) as u8, rgb[1].min(255.0) as u8, rgb[2].min(255.0) as u8, 255]
}

/// Pixel art: an orange koi over transparent water, so the scene's colour shows through and
/// alpha flattening is exercised. Few colours: the GIF is exact.
fn koi(x: u32, y: u32, w: u32, h: u32) -> [u8; 4] {
    let (cx, cy) = (f64::from(w) * 0.45, f64::from(h) * 0.5);
    let (dx, dy) = (f64::from(x) - cx, f64::from(y) - cy);
    // Body: an ellipse; tail: a triangle behind it; a half-transparent shadow below.
    let body = (dx / 26.0).powi(2) + (dy / 11.0).powi(2) < 1.0;
    let tail = dx > 20.0 && dx < 38.0 && dy.abs() < (dx - 20.0) * 0.8;
    let shadow = ((dx - 4.0) / 28.0).powi(2) + ((dy - 9.0) / 10.0).powi(2) < 1.0;
    let spot = ((dx + 8.0) / 7.0).powi(2) + ((dy + 2.0) / 5.0).powi(2) < 1.0
        || ((dx - 8.0) / 6.0).powi(2) + ((dy - 3.0) / 4.0).powi(2) < 1.0;
    let eye = (dx + 19.0).abs() < 1.5 && (dy + 3.0).abs() < 1.5;
    if eye {
        [10, 10, 10, 255]
    } else if body && spot {
        [250, 250, 245, 255]
    } else if body || tail {
        let band = ((x + y) / 4) % 2;
        if band == 0 { [240, 110, 30, 255] } else { [225, 90, 25, 255] }
    } else if shadow {
        [0, 20, 40, 96]
    } else if (x * 7 + y * 13).is_multiple_of(29) {
        [120, 200, 120, 160]
    } else {
        [0, 0, 0, 0]
    }
}

/// A koi pond seen from above: a deep green-blue bottom with soft light, pebbles, three koi
/// with their shadows, and lily pads floating on top. Smooth, with thousands of colours.
fn lagoon(x: u32, y: u32, w: u32, h: u32) -> [u8; 4] {
    let (px, py) = (f64::from(x), f64::from(y));
    let (fx, fy) = (px / f64::from(w), py / f64::from(h));
    let scale = f64::from(w) / 480.0;
    // The bottom: darker toward the lower right, with sunlit ripples of caustics.
    let depth = 0.65 + 0.35 * (1.0 - (0.6 * fx + 0.4 * fy));
    let caustic = ((fx * 11.0 * PI + (fy * 5.0 * PI).sin()).sin() * (fy * 9.0 * PI + fx * 4.0).sin()).abs().powf(8.0);
    let mut rgb = [40.0 * depth + 50.0 * caustic, 105.0 * depth + 60.0 * caustic, 100.0 * depth + 45.0 * caustic];
    // Pebbles.
    for &(cx, cy, r, tone) in
        &[(0.12, 0.8, 18.0, 0.8), (0.2, 0.88, 12.0, 0.6), (0.86, 0.18, 16.0, 0.7), (0.55, 0.9, 10.0, 0.9)]
    {
        let d = ((px - cx * f64::from(w)).powi(2) + (py - cy * f64::from(h)).powi(2)).sqrt() / (r * scale);
        if d < 1.0 {
            let k = tone * (0.55 + 0.45 * (1.0 - d * d).sqrt()) * depth;
            rgb = [120.0 * k, 118.0 * k, 105.0 * k];
        }
    }
    // Koi: (centre x, centre y, heading in radians, length), each with a shadow below it.
    let fish = [(0.3, 0.42, 0.35, 110.0), (0.66, 0.55, 2.6, 90.0), (0.5, 0.75, -0.2, 70.0)];
    for &(cx, cy, heading, length) in &fish {
        let length = length * scale;
        let (c, s) = (f64::cos(heading), f64::sin(heading));
        let local = |ox: f64, oy: f64| {
            let (dx, dy) = (px - cx * f64::from(w) - ox, py - cy * f64::from(h) - oy);
            (dx * c + dy * s, -dx * s + dy * c)
        };
        let inside = |(u, v): (f64, f64)| {
            let body = (u / (0.5 * length)).powi(2) + (v / (0.17 * length)).powi(2) < 1.0;
            let tail = u < -0.4 * length && u > -0.68 * length && v.abs() < (-0.4 * length - u) * 0.9;
            body || tail
        };
        if inside(local(0.08 * length, 0.1 * length)) && !inside(local(0.0, 0.0)) {
            rgb = rgb.map(|v| v * 0.6);
        }
        let (u, v) = local(0.0, 0.0);
        if inside((u, v)) {
            let round = (1.0 - (v / (0.17 * length)).powi(2)).max(0.0).sqrt();
            let spot = ((u - 0.1 * length) / (0.14 * length)).powi(2) + ((v + 0.03 * length) / (0.1 * length)).powi(2)
                < 1.0
                || ((u + 0.22 * length) / (0.1 * length)).powi(2) + ((v - 0.04 * length) / (0.08 * length)).powi(2)
                    < 1.0;
            let base = if spot { [250.0, 246.0, 236.0] } else { [240.0, 112.0, 32.0] };
            rgb = base.map(|v| v * (0.7 + 0.3 * round));
            if ((u - 0.4 * length).powi(2) + (v.abs() - 0.07 * length).powi(2)).sqrt() < 0.025 * length {
                rgb = [20.0, 20.0, 20.0];
            }
        }
    }
    // Lily pads: green discs with a notch, lighter at the rim.
    for &(cx, cy, r) in &[(0.8, 0.8, 34.0), (0.9, 0.62, 22.0), (0.1, 0.15, 28.0)] {
        let (dx, dy) = (px - cx * f64::from(w), py - cy * f64::from(h));
        let d = (dx * dx + dy * dy).sqrt() / (r * scale);
        let notch = dx > 0.0 && dy.abs() < dx * 0.25;
        if d < 1.0 && !notch {
            let vein = ((dy.atan2(dx) * 9.0).sin().abs() < 0.08) as u8 as f64;
            rgb = [60.0 + 50.0 * d + 30.0 * vein, 130.0 + 50.0 * d + 30.0 * vein, 50.0 + 20.0 * d];
        }
    }
    [rgb[0].clamp(0.0, 255.0) as u8, rgb[1].clamp(0.0, 255.0) as u8, rgb[2].clamp(0.0, 255.0) as u8, 255]
}
