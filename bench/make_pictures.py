#!/usr/bin/env python3
"""Photo-like test pictures for measuring GIF palettes, drawn by code (no downloaded photos).

Each has what makes a photo hard to quantize: smooth gradients (a sky, a sunset, a crema),
sensor-like noise, many hues (a colour wheel, a meadow), highlights and deep shadows.

    python3 bench/make_pictures.py OUT_DIR      # writes OUT_DIR/NAME.png, 480×320 each
"""

import math
import sys
from pathlib import Path

import numpy as np
from PIL import Image

W, H = 480, 320
rng = np.random.default_rng(7)
ys, xs = np.mgrid[0:H, 0:W].astype(np.float64)
u, v = xs / (W - 1), ys / (H - 1)


def noise(sigma):
    """Sensor-like noise: mostly shared by the channels, partly each its own."""
    return rng.normal(0.0, sigma, (H, W, 1)) + rng.normal(0.0, sigma * 0.6, (H, W, 3))


def blur_noise(scale, sigma):
    """Low-frequency noise: random values on a coarse grid, smoothly interpolated."""
    gh, gw = H // scale + 2, W // scale + 2
    grid = rng.normal(0.0, sigma, (gh, gw))
    gy, gx = ys / scale, xs / scale
    y0, x0 = gy.astype(int), gx.astype(int)
    fy, fx = gy - y0, gx - x0
    fy, fx = fy * fy * (3 - 2 * fy), fx * fx * (3 - 2 * fx)
    a, b = grid[y0, x0], grid[y0, x0 + 1]
    c, d = grid[y0 + 1, x0], grid[y0 + 1, x0 + 1]
    return ((a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy)[..., None]


def mix(a, b, t):
    t = np.clip(t, 0, 1)[..., None] if np.ndim(t) == 2 else t
    return np.asarray(a, float) * (1 - t) + np.asarray(b, float) * t


def sky():
    img = mix([40, 90, 180], [190, 215, 240], v ** 0.7)
    img += blur_noise(60, 6) + noise(1.5)
    return img


def gradient():
    # 12,288 and more colours: red along x, green along y, blue a diagonal.
    return np.stack([255 * u, 255 * v, 128 + 127 * np.sin(3 * (u + v))], axis=-1)


def wheel():
    cx, cy = W / 2, H / 2
    angle = np.arctan2(ys - cy, xs - cx)
    radius = np.hypot(xs - cx, ys - cy) / (H / 2)
    hue = (angle / (2 * math.pi)) % 1.0
    rgb = np.stack([np.clip(np.abs(hue * 6 - 3) - 1, 0, 1), np.clip(2 - np.abs(hue * 6 - 2), 0, 1),
                    np.clip(2 - np.abs(hue * 6 - 4), 0, 1)], axis=-1)
    sat = np.clip(radius, 0, 1)[..., None]
    img = 255 * (rgb * sat + (1 - sat))
    return img * np.where(radius > 1, 0.35, 1.0)[..., None] + noise(1.0)


def crema():
    cx, cy = W * 0.5, H * 0.5
    r = np.hypot(xs - cx, (ys - cy) * 1.3) / (H * 0.48)
    swirl = np.sin(10 * r + 3 * np.arctan2(ys - cy, xs - cx)) * 0.06
    t = np.clip(r + swirl + blur_noise(25, 0.05)[..., 0], 0, 1.4)
    img = mix([225, 175, 115], [120, 60, 25], np.clip(t, 0, 1))
    img = np.where((r > 1.0)[..., None], mix([245, 245, 240], [200, 200, 195], np.clip((r - 1) * 3, 0, 1)), img)
    return img + noise(2.0)


def sunset():
    img = mix([255, 190, 90], [70, 40, 110], v ** 0.8)
    sun = np.exp(-(((xs - W * 0.62) ** 2 + (ys - H * 0.55) ** 2) / (2 * 30.0 ** 2)))
    img = img + sun[..., None] * np.array([60.0, 50.0, 20.0])
    sea = ys > H * 0.62
    img = np.where(sea[..., None], img * 0.55 + blur_noise(8, 12), img)
    return img + noise(1.5)


def meadow():
    base = mix([70, 130, 40], [150, 180, 60], blur_noise(30, 0.35)[..., 0] + 0.5)
    flowers = (blur_noise(4, 1.0)[..., 0] > 1.6)[..., None]
    img = np.where(flowers, np.array([230.0, 200, 60]) + noise(10), base + noise(9))
    return img


def landscape():
    img = mix([120, 170, 230], [230, 235, 245], v * 1.6)
    hills = H * (0.45 + 0.08 * np.sin(xs / 70) + blur_noise(40, 0.03)[..., 0])
    img = np.where((ys > hills)[..., None], mix([60, 110, 50], [30, 60, 25], (ys - hills) / H * 2.5), img)
    lake = ys > H * 0.72
    img = np.where(lake[..., None], mix([50, 90, 120], [20, 40, 60], (v - 0.72) * 3) + blur_noise(6, 6), img)
    return img + noise(2.0)


def portrait():
    img = mix([40, 45, 60], [90, 80, 85], u)
    face = np.exp(-(((xs - W * 0.5) / 95) ** 2 + ((ys - H * 0.5) / 125) ** 2) * 2.2)
    skin = mix([120, 70, 50], [245, 200, 170], face ** 0.5 * (0.8 + 0.2 * u))
    img = np.where((face > 0.12)[..., None], skin, img)
    return img + blur_noise(10, 3) + noise(1.5)


def city():
    img = mix([10, 12, 35], [40, 30, 70], 1 - v)
    for i in range(40):
        x0 = rng.integers(0, W - 30)
        w = rng.integers(20, 60)
        top = rng.integers(int(H * 0.3), int(H * 0.8))
        shade = rng.uniform(20, 60)
        img[top:, x0:x0 + w] = [shade, shade, shade * 1.2]
    lights = (rng.random((H, W)) > 0.985) & (ys > H * 0.35)
    img[lights] = [255, 210, 120]
    glow = blur_noise(6, 1)[..., 0]
    return img + np.clip(glow, 0, None)[..., None] * np.array([30.0, 20, 5]) + noise(2.5)


PICTURES = {f.__name__: f for f in [sky, gradient, wheel, crema, sunset, meadow, landscape, portrait, city]}


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "pictures")
    out.mkdir(parents=True, exist_ok=True)
    for name, draw in PICTURES.items():
        img = np.clip(np.rint(draw()), 0, 255).astype(np.uint8)
        Image.fromarray(img, "RGB").save(out / f"{name}.png")
        colours = len(np.unique(img.reshape(-1, 3), axis=0))
        print(f"{name}: {colours} colours")


if __name__ == "__main__":
    main()
