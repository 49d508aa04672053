#!/usr/bin/env python3
"""Checks a ground truth written by `ripple-render --ground-truth DIR` independently, with NumPy
alone (docs/research.md):

1. the warp is recomputed from the exported heights by the documented formula (slopes across the
   edges as meta.json names them, R, the clamp or the wrap, walls sampling themselves) and must
   equal warp/*.npy exactly;
2. for a look without light (meta.json: look.has_light is false) the clean picture re-warped by
   warp/*.npy (nearest or bilinear sampling as documented) must equal every rendered frame
   (frame/*.png) bit for bit.

Usage: tools/rewarp.py DIR            prints one JSON line; exit status 1 on any difference.
"""

import json
import sys
import zlib
from pathlib import Path

import numpy as np


def read_png(path):
    """An 8-bit RGB PNG (non-interlaced) as an H x W x 3 uint8 array: zlib and the five filters."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, width, height = 8, [], 0, 0
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            assert body[8:13] == bytes([8, 2, 0, 0, 0]), f"{path}: not 8-bit RGB, non-interlaced"
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    stride = width * 3
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.uint8)
    for y in range(height):
        kind, row = raw[y, 0], raw[y, 1:].astype(np.int64)
        if kind == 0:
            cur = row
        elif kind == 1:  # Sub: a running sum per channel
            cur = np.cumsum(row.reshape(width, 3), axis=0).reshape(stride)
        elif kind == 2:  # Up
            cur = row + prev
        else:  # Average, Paeth: byte by byte
            cur = np.zeros(stride, np.int64)
            up = prev.astype(np.int64)
            for i in range(stride):
                a = cur[i - 3] if i >= 3 else 0
                b = up[i]
                if kind == 3:
                    cur[i] = (row[i] + (a + b) // 2) & 255
                else:
                    c = up[i - 3] if i >= 3 else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    cur[i] = (row[i] + pred) & 255
        out[y] = prev = (cur & 255).astype(np.uint8)
    return out.reshape(height, width, 3)


def beyond(h, edges):
    """The heights padded by one cell on every side as the edges read them: 0 across a reflecting
    edge, the border cell's across an absorbing one, the far side's across a wrapped one."""
    H, W = h.shape
    p = np.zeros((H + 2, W + 2), np.int64)
    p[1:-1, 1:-1] = h
    for side, col in (("left", 0), ("right", W + 1)):
        kind = edges[side]
        src = {"absorb": 1 if col == 0 else W, "wrap": W if col == 0 else 1}.get(kind)
        if src is not None:
            p[1:-1, col] = p[1:-1, src]
    for side, row in (("top", 0), ("bottom", H + 1)):
        kind = edges[side]
        src = {"absorb": 1 if row == 0 else H, "wrap": H if row == 0 else 1}.get(kind)
        if src is not None:
            p[row, 1:-1] = p[src, 1:-1]
    return p


def warp_from_heights(h, meta, walls):
    """The documented formula: positions in 1/256 pixel."""
    H, W = h.shape
    r = meta["water"]["refraction_q8"]
    edges = meta["edges"]
    p = beyond(h.astype(np.int64), edges)
    dx = p[1:-1, :-2] - p[1:-1, 2:]
    dy = p[:-2, 1:-1] - p[2:, 1:-1]
    ys, xs = np.mgrid[0:H, 0:W].astype(np.int64)
    sx, sy = 256 * xs + dx * r, 256 * ys + dy * r
    wrap_x = edges["left"] == "wrap"
    wrap_y = edges["top"] == "wrap"
    sx = np.mod(sx, 256 * W) if wrap_x else np.clip(sx, 0, 256 * (W - 1))
    sy = np.mod(sy, 256 * H) if wrap_y else np.clip(sy, 0, 256 * (H - 1))
    if walls is not None:
        sx = np.where(walls == 1, 256 * xs, sx)
        sy = np.where(walls == 1, 256 * ys, sy)
    return sx, sy, wrap_x, wrap_y


def rewarp(clean, sx, sy, bilinear, wrap_x, wrap_y):
    """The clean picture sampled at positions in 1/256 pixel, as the look samples it."""
    H, W, _ = clean.shape
    x0, y0 = sx >> 8, sy >> 8
    c = clean.astype(np.int64)
    if not bilinear:
        return clean[y0, x0]
    fx, fy = (sx & 255)[..., None], (sy & 255)[..., None]
    x1 = (x0 + 1) % W if wrap_x else np.minimum(x0 + 1, W - 1)
    y1 = (y0 + 1) % H if wrap_y else np.minimum(y0 + 1, H - 1)
    top = c[y0, x0] * (256 - fx) + c[y0, x1] * fx
    bottom = c[y1, x0] * (256 - fx) + c[y1, x1] * fx
    return ((top * (256 - fy) + bottom * fy + 32768) >> 16).astype(np.uint8)


def main(folder):
    folder = Path(folder)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["layout"] == "ours", "the check reads the default layout"
    clean = np.load(folder / "clean.npy")
    walls = np.load(folder / "walls.npy") if (folder / "walls.npy").exists() else None
    bilinear = meta["look"]["sampling"] == "bilinear"
    light = meta["look"]["has_light"]
    bad_warp, bad_frames, frames = [], [], 0
    for path in sorted((folder / "height").glob("*.npy")):
        h = np.load(path)
        warp = np.load(folder / "warp" / path.name)
        sx, sy, wrap_x, wrap_y = warp_from_heights(h, meta, walls)
        if bilinear:
            assert warp.dtype == np.float32
            same = np.array_equal(warp[..., 0].astype(np.float64) * 256, sx) and np.array_equal(
                warp[..., 1].astype(np.float64) * 256, sy)
        else:
            assert warp.dtype == np.int32
            same = np.array_equal(warp[..., 0], sx >> 8) and np.array_equal(warp[..., 1], sy >> 8)
        if not same:
            bad_warp.append(path.stem)
        if not light:
            # From the exported warp, not the recomputed one.
            if bilinear:
                qx = (warp[..., 0].astype(np.float64) * 256).astype(np.int64)
                qy = (warp[..., 1].astype(np.float64) * 256).astype(np.int64)
            else:
                qx, qy = warp[..., 0].astype(np.int64) * 256, warp[..., 1].astype(np.int64) * 256
            made = rewarp(clean, qx, qy, bilinear, wrap_x, wrap_y)
            if not np.array_equal(made, read_png(folder / "frame" / (path.stem + ".png"))):
                bad_frames.append(path.stem)
        frames += 1
    report = {
        "frames": frames,
        "sampling": meta["look"]["sampling"],
        "warp_differs": bad_warp,
        "frames_compared": 0 if light else frames,
        "frames_differ": bad_frames,
    }
    print(json.dumps(report))
    return 1 if bad_warp or bad_frames or frames == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
