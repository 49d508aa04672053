//! Writes the fuzzers' seed inputs into `fuzz/seeds/<target>/`: small scenes using every key,
//! and small images in every supported format and colour type, all made here.
//!
//! Run: `cargo run --example fuzz_seeds`

use std::io::Cursor;
use std::path::Path;

use image::{DynamicImage, ImageFormat};

/// Small scenes that render quickly and between them use every key and value kind.
const SCENES: &[(&str, &str)] = &[
    ("minimal", "[video]\nframes = 1\n"),
    (
        "stones",
        "[video]\nwidth = 32\nheight = 24\nfps = 10\nduration = 2.5\nloop = false\n[background]\ncolor = \"#3a6\"\n\
         [[stone]]\nat = 0\nx = 16\ny = 12\nradius = 5\nweight = 300\n[[stone]]\nat = 0.5\nx = 0\ny = 23\n",
    ),
    (
        "swipes",
        "[video]\nwidth = 40\nheight = 30\nframes = 30\n[background]\npattern = \"tiles\"\n\
         [[swipe]]\nfrom = 0.1\nuntil = 0.9\npath = [[-5, -5], [20, 15], [45, 2], [45, 2]]\nradius = 3\nweight = 80\n\
         [[swipe]]\nfrom = 1\nuntil = 1\npath = [[3, 3]]\n",
    ),
    (
        "rain",
        "[video]\nwidth = 24\nheight = 24\nfps = 50\nframes = 40\nstart = 0.3\n[background]\npattern = \"checker\"\n\
         [rain]\ndrops_per_second = 90.5\nradius = [1, 4]\nweight = [10, 16384]\nfrom = 0.1\nuntil = 0.7\nseed = 9223372036854775807\n",
    ),
    (
        "spring",
        "[video]\nwidth = 20\nheight = 16\nframes = 20\n[water]\nmodel = \"spring\"\ndamping_shift = 15\n\
         steps_per_frame = 16\nrefraction = 16.0\n[[stone]]\nat = 0\nx = 10\ny = 8\nradius = 256\nweight = 16384\n\
         [[damping]]\nat = 0.2\nshift = 1\n[[damping]]\nat = 0.2\nshift = 3\n",
    ),
    (
        "image",
        "[video]\nwidth = 16\nheight = 16\nframes = 3\n[background]\nimage = \"pool.png\"\nfit = \"contain\"\ncolor = \"#FFF\"\n",
    ),
];

/// Images in each format the renderer reads, in several colour types.
fn images() -> Vec<(String, Vec<u8>)> {
    let rgb = image::RgbImage::from_fn(9, 7, |x, y| image::Rgb([(x * 28) as u8, (y * 36) as u8, 200]));
    let rgba = image::RgbaImage::from_fn(5, 11, |x, y| image::Rgba([200, (x * 50) as u8, 9, (y * 23) as u8]));
    let gray = image::GrayImage::from_fn(8, 3, |x, _| image::Luma([(x * 30) as u8]));
    let wide = DynamicImage::ImageRgba16(image::ImageBuffer::from_fn(3, 2, |x, y| {
        image::Rgba([x as u16 * 9000, y as u16, 65535, 30000])
    }));
    let pictures = [
        ("rgb", DynamicImage::ImageRgb8(rgb)),
        ("rgba", DynamicImage::ImageRgba8(rgba)),
        ("gray", DynamicImage::ImageLuma8(gray)),
        ("rgba16", wide),
    ];
    let formats = [
        (ImageFormat::Png, "png"),
        (ImageFormat::Jpeg, "jpg"),
        (ImageFormat::Gif, "gif"),
        (ImageFormat::Bmp, "bmp"),
        (ImageFormat::WebP, "webp"),
    ];
    let mut out = Vec::new();
    for (name, picture) in &pictures {
        for (format, extension) in formats {
            // Not every format takes every colour type; convert to one it does.
            let picture = match format {
                ImageFormat::Jpeg => DynamicImage::ImageRgb8(picture.to_rgb8()),
                ImageFormat::Png => picture.clone(),
                _ => DynamicImage::ImageRgba8(picture.to_rgba8()),
            };
            let mut bytes = Cursor::new(Vec::new());
            picture.write_to(&mut bytes, format).expect("encode a seed image");
            out.push((format!("{name}.{extension}"), bytes.into_inner()));
        }
    }
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("seed folder");
    std::fs::write(dir.join(name), bytes).expect("write a seed");
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    for (name, text) in SCENES {
        write(&root.join("scene"), &format!("{name}.toml"), text.as_bytes());
        write(&root.join("render"), &format!("{name}.toml"), text.as_bytes());
    }
    for scene in ["pond", "rain", "swipes", "spring"] {
        let text =
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/scenes/{scene}.toml")))
                .expect("a bundled scene");
        write(&root.join("scene"), &format!("bundled-{scene}.toml"), &text);
    }
    // Background seeds: canvas width, height and fit, then the image file.
    for (i, (name, image)) in images().into_iter().enumerate() {
        let mut bytes = vec![(7 * i) as u8, (13 * i) as u8, i as u8];
        bytes.extend(image);
        write(&root.join("background"), &name, &bytes);
    }
    println!("wrote seeds into {}", root.display());
}
