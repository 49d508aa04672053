//! Background images as cameras and editors write them: EXIF orientation.

use ripple_render::Scene;
use ripple_render::draw::background::Background;

use crate::support::scratch;

/// A stored picture of 3×2 solid blocks of 8×8 pixels (24×16), each block its own colour, so
/// that every turn and flip of it is told apart even after JPEG's losses.
const BLOCKS: [[u8; 3]; 6] =
    [[230, 20, 20], [20, 200, 20], [20, 20, 230], [240, 240, 30], [30, 230, 230], [250, 250, 250]];

fn stored_pixel(x: u32, y: u32) -> [u8; 3] {
    BLOCKS[(y / 8 * 3 + x / 8) as usize]
}

/// A JPEG of the blocks with an EXIF APP1 segment saying `orientation`, written byte by byte:
/// "Exif\0\0", a big-endian TIFF header and one IFD entry, tag 0x0112 (SHORT).
fn jpeg_with_orientation(orientation: u16) -> Vec<u8> {
    let image = image::RgbImage::from_fn(24, 16, |x, y| image::Rgb(stored_pixel(x, y)));
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 100).encode_image(&image).unwrap();
    let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08".to_vec();
    exif.extend_from_slice(&1u16.to_be_bytes()); // one entry
    exif.extend_from_slice(&[0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1]); // tag, SHORT, count 1
    exif.extend_from_slice(&orientation.to_be_bytes());
    exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // padding, no next IFD
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&(exif.len() as u16 + 2).to_be_bytes());
    segment.extend_from_slice(&exif);
    // Right after SOI, before the encoder's own segments.
    jpeg.splice(2..2, segment);
    jpeg
}

/// Where the upright pixel (x, y) is in the stored 24×16 picture, for each EXIF orientation
/// (TIFF 6.0 / EXIF 2.3: 1 as stored, 2 mirrored, 3 turned 180°, 4 flipped, 5 transposed,
/// 6 turned 90° clockwise, 7 transversed, 8 turned 90° anticlockwise).
fn stored_of(orientation: u16, x: u32, y: u32) -> (u32, u32) {
    let (w, h) = (24, 16);
    match orientation {
        1 => (x, y),
        2 => (w - 1 - x, y),
        3 => (w - 1 - x, h - 1 - y),
        4 => (x, h - 1 - y),
        5 => (y, x),
        6 => (y, h - 1 - x),
        7 => (w - 1 - y, h - 1 - x),
        8 => (w - 1 - y, x),
        _ => unreachable!(),
    }
}

#[test]
fn every_exif_orientation_is_turned_upright() {
    let dir = scratch("exif");
    for orientation in 1..=8u16 {
        let name = format!("photo-{orientation}.jpg");
        std::fs::write(dir.join(&name), jpeg_with_orientation(orientation)).unwrap();
        // No canvas size: it comes from the image, upright.
        let src = format!("[video]\nframes = 1\n[background]\nimage = \"{name}\"\n");
        let scene = Scene::from_toml_str(&src, &dir.join("scene.toml")).unwrap();
        let turned = orientation >= 5;
        let (w, h) = if turned { (16, 24) } else { (24, 16) };
        assert_eq!((scene.width, scene.height), (w, h), "orientation {orientation}: canvas");
        let background = Background::for_scene(&scene).unwrap();
        // The centre of every upright 8×8 block holds the colour of its stored block.
        for by in 0..h / 8 {
            for bx in 0..w / 8 {
                let (x, y) = (bx * 8 + 4, by * 8 + 4);
                let (sx, sy) = stored_of(orientation, x, y);
                let want = stored_pixel(sx, sy);
                let got = background.pixels[(y * w + x) as usize];
                let close = want.iter().zip(got).all(|(a, b)| a.abs_diff(b) <= 12);
                assert!(close, "orientation {orientation}: block ({bx}, {by}) is {got:?}, expected {want:?}");
            }
        }
    }
}

#[test]
fn a_sideways_phone_photo_renders_upright_from_the_command_line() {
    let dir = scratch("exif-cli");
    std::fs::write(dir.join("phone.jpg"), jpeg_with_orientation(6)).unwrap();
    std::fs::write(dir.join("scene.toml"), "[video]\nframes = 1\n[background]\nimage = \"phone.jpg\"\n").unwrap();
    let run = crate::support::ripple(&["scene.toml", "-o", "frames/", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (w, h, _) = crate::support::read_png(&dir.join("frames/frame_0000.png"));
    assert_eq!((w, h), (16, 24), "a portrait photo gives a portrait canvas");
    let plan = crate::support::ripple(&["plan", "scene.toml", "--json"], &dir);
    assert!(plan.stdout.starts_with("{\"width\":16,\"height\":24,"), "{}", plan.stdout);
}
