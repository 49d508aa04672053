#!/usr/bin/env python3
"""Draws docs/research.png from a ground truth (NumPy only): a rendered frame, beside its backward
flow drawn on the usual flow colour wheel (hue the direction, saturation the length's square
root, white still), beside its height map (dark troughs, light crests), each at 2x.

Usage: tools/research_figure.py GROUND_TRUTH FRAME OUT.png
"""

import json
import struct
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rewarp import read_png  # noqa: E402


def write_png(path, rgb):
    """An 8-bit RGB PNG, rows unfiltered."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9))
                           + chunk(b"IEND", b""))


def flow_colours(u, v):
    """The flow colour wheel: hue from the direction, saturation from the length (the square
    root of its share of the 99th percentile's, so faint rings show too), value 1."""
    angle = (np.arctan2(-v, -u) / np.pi + 1) / 2  # 0..1
    length = np.hypot(u, v)
    s = np.sqrt(np.clip(length / max(np.percentile(length, 99), 1e-9), 0, 1))
    h6 = angle * 6
    i = np.floor(h6).astype(int) % 6
    f = h6 - np.floor(h6)
    p, q, t = 1 - s, 1 - s * f, 1 - s * (1 - f)
    one = np.ones_like(s)
    r = np.choose(i, [one, q, p, p, t, one])
    g = np.choose(i, [t, one, one, q, p, p])
    b = np.choose(i, [p, p, t, one, one, q])
    return (np.stack([r, g, b], -1) * 255 + 0.5).astype(np.uint8)


def main(folder, frame, out):
    folder = Path(folder)
    name = f"{int(frame):05}"
    meta = json.loads((folder / "meta.json").read_text())
    picture = read_png(folder / "frame" / f"{name}.png")
    warp = np.load(folder / "warp" / f"{name}.npy").astype(np.float64)
    h, w = warp.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w]
    u, v = warp[..., 0] - xs, warp[..., 1] - ys
    # Along a wrapped axis the flow is the difference nearest 0 (docs/research.md).
    if meta["edges"]["left"] == "wrap":
        u = (u + w / 2) % w - w / 2
    if meta["edges"]["top"] == "wrap":
        v = (v + h / 2) % h - h / 2
    flow = flow_colours(u, v)
    heights = np.load(folder / "height" / f"{name}.npy").astype(np.float64)
    span = max(np.percentile(np.abs(heights), 99), 1)
    grey = ((heights / span + 1) / 2 * 255 + 0.5).clip(0, 255).astype(np.uint8)
    height_map = np.stack([grey // 2 + 40, grey // 2 + 80, grey], -1).astype(np.uint8)
    gap = np.full((h, 8, 3), 255, np.uint8)
    figure = np.concatenate([picture, gap, flow, gap, height_map], axis=1)
    figure = figure.repeat(2, axis=0).repeat(2, axis=1)
    write_png(out, figure)
    print(f"{out}: frame {frame} of {meta['scene']['file']}, {figure.shape[1]}x{figure.shape[0]}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
