#!/usr/bin/env python3
"""An independent numpy implementation of SPEC §2–§5, §8 (walls and edges), §9 (looks), §10
(time in seconds) and §11 (seamless loops, and the seam figure), used
two ways:

* as a cross-check: `reference.py check SCENE FRAMES_DIR` re-derives every frame of a scene from
  the SPEC formulas and compares it with the PNG sequence ripple-render wrote;
* as the numpy baseline of the speed comparison in docs/benchmarks.md.

It is written from SPEC.md, not from the Rust code. Two things SPEC leaves to the implementation
come from ripple-render itself: the raindrops (taken from `ripple-render plan --json`) and
procedural background patterns (given as a PNG through REFERENCE_BACKGROUND). The raindrops'
count on every unit is re-derived from the accumulator and checked against the plan.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps


def frame_of(t, fps):
    return math.floor(t * fps + 0.5)


def bresenham(a, b):
    x0, y0 = a
    x1, y1 = b
    dx, dy = abs(x1 - x0), abs(y1 - y0)
    sx = (x1 > x0) - (x1 < x0)
    sy = (y1 > y0) - (y1 < y0)
    out = []
    x, y = x0, y0
    if dx > dy:
        p = 2 * dy - dx
        for _ in range(dx):
            x += sx
            if p < 0:
                p += 2 * dy
            else:
                y += sy
                p += 2 * (dy - dx)
            out.append((x, y))
    else:
        p = 2 * dx - dy
        for _ in range(dy):
            y += sy
            if p < 0:
                p += 2 * dx
            else:
                x += sx
                p += 2 * (dx - dy)
            out.append((x, y))
    return out


def load(scene_path):
    scene_path = Path(scene_path)
    doc = tomllib.loads(scene_path.read_text())
    video = doc.get("video", {})
    bg = doc.get("background", {})
    water = doc.get("water", {})
    fps = video.get("fps", 25)
    image = None
    if "image" in bg:
        # Upright by its EXIF orientation.
        image = ImageOps.exif_transpose(Image.open(scene_path.parent / bg["image"])).convert("RGBA")
    if "pattern" in bg:
        # Patterns are ripple-render's own drawing, not SPEC: take the picture from a file
        # (render the scene with refraction = 0 and use its first frame).
        if "REFERENCE_BACKGROUND" not in os.environ:
            sys.exit("reference.py: set REFERENCE_BACKGROUND to a PNG of the pattern")
        image = Image.open(os.environ["REFERENCE_BACKGROUND"]).convert("RGBA")
    w = video.get("width", image.width if image else 320)
    h = video.get("height", image.height if image else 240)
    # One side given over an image: the other keeps the image's aspect ratio, rounded half up.
    if image is not None and ("width" in video) != ("height" in video):
        if "width" in video:
            h = (2 * w * image.height + image.width) // (2 * image.width)
        else:
            w = (2 * h * image.width + image.height) // (2 * image.height)
    look = doc.get("look", {})
    k0 = frame_of(video.get("start", 0), fps)
    n = video["frames"] if "frames" in video else frame_of(video["duration"], fps)
    model = water.get("model", "classic")
    shift = water.get("damping_shift", 5 if model == "classic" else 6)
    refraction = water.get("refraction", 1.0 if model == "classic" else 0.1)
    # SPEC §10: S steps a second from steps_per_second or speed; None in frame mode.
    S = water.get("steps_per_second")
    if "speed" in water:
        c = 0.7071067811865476 if model == "classic" else 0.5590169943749474
        S = max(1, math.floor(water["speed"] / c + 0.5))
    # Units (frames or steps) a second, and the end unit.
    rate = fps if S is None else S
    end = k0 + n if S is None else (k0 + n) * S // fps
    # SPEC §11: the window [U0, end) of the output frames' units.
    u0 = k0 if S is None else k0 * S // fps
    seamless = doc.get("seamless", {})
    return dict(
        path=scene_path, doc=doc, w=w, h=h, fps=fps, k0=k0, n=n, model=model, shift=shift, S=S, rate=rate, end=end,
        u0=u0, repeat=seamless.get("repeat", False), crossfade=seamless.get("crossfade"),
        steps=water.get("steps_per_frame", 1), R=math.floor(refraction * 256 + 0.5),
        image=image, fit=bg.get("fit", "cover"), color=parse_color(bg.get("color", "#000000")),
        bilinear=look.get("sampling", "nearest") == "bilinear", shading=look.get("shading", 0),
        highlight=look.get("highlight", 0), light=look.get("light", [-1, -1]),
        edges=edges_of(doc.get("edges", {})),
    )


def edges_of(t):
    every = t.get("all", "reflect")
    return {side: t.get(side, every) for side in ("left", "right", "top", "bottom")}


def disc(x, y, r, w, h):
    """Canvas cells strictly inside a circle, as a boolean array (the drop rule, no clipping)."""
    ys, xs = np.ogrid[0:h, 0:w]
    return (xs - x) ** 2 + (ys - y) ** 2 < r * r


def walls(sc):
    """SPEC §8: the union of the obstacles' cells and the mask's; None without either."""
    doc, w, h = sc["doc"], sc["w"], sc["h"]
    if "obstacle" not in doc and "mask" not in doc:
        return None
    out = np.zeros((h, w), bool)
    ys, xs = np.ogrid[0:h, 0:w]
    for o in doc.get("obstacle", []):
        shape = o["shape"]
        if shape == "circle":
            out |= disc(o["x"], o["y"], o["radius"], w, h)
        elif shape == "rect":
            out |= (o["x"] <= xs) & (xs < o["x"] + o["width"]) & (o["y"] <= ys) & (ys < o["y"] + o["height"])
        elif shape == "polygon":
            # The even-odd rule at every cell centre, exactly as SPEC writes it.
            cx, cy = (2 * xs + 1).astype(np.int64), (2 * ys + 1).astype(np.int64)
            odd = np.zeros((h, w), bool)
            pts = o["points"]
            for k in range(len(pts)):
                ax, ay = 2 * pts[k][0], 2 * pts[k][1]
                bx, by = 2 * pts[(k + 1) % len(pts)][0], 2 * pts[(k + 1) % len(pts)][1]
                d = by - ay
                crosses = (ay > cy) != (by > cy)
                side = ((bx - ax) * (cy - ay) - (cx - ax) * d) * (1 if d > 0 else -1 if d < 0 else 0) > 0
                odd ^= crosses & side
            out |= odd
        else:
            pts = [tuple(o["path"][0])]
            for a, b in zip(o["path"], o["path"][1:]):
                pts += bresenham(tuple(a), tuple(b))
            r = o.get("radius", 2)
            for x, y in set(pts):
                if -r < x < w + r and -r < y < h + r:
                    out |= disc(x, y, r, w, h)
    if "mask" in doc:
        m = doc["mask"]
        image = ImageOps.exif_transpose(Image.open(sc["path"].parent / m["image"])).convert("RGBA")
        if image.size != (w, h):
            sys.exit("reference.py: a mask of another size than the canvas is fitted by the implementation's filter")
        c = np.asarray(image).astype(np.int64)
        v = (299 * c[:, :, 0] + 587 * c[:, :, 1] + 114 * c[:, :, 2]) * c[:, :, 3] // 255000
        wall = v < m.get("threshold", 128)
        out |= ~wall if m.get("invert", False) else wall
    return out


def updated(sc, wall):
    """The cells a step updates: not on the border of an axis that does not wrap, not walls."""
    w, h, e = sc["w"], sc["h"], sc["edges"]
    ok = np.ones((h, w), bool)
    if e["left"] != "wrap":
        ok[:, 0] = ok[:, -1] = False
    if e["top"] != "wrap":
        ok[0, :] = ok[-1, :] = False
    if wall is not None:
        ok &= ~wall
    return ok


def around(f, e):
    """The field padded by one cell: across a wrapped axis the opposite side, else zeros (the
    border cells that would read them are never updated)."""
    p = np.pad(f, 1)
    if e["left"] == "wrap":
        p[1:-1, 0], p[1:-1, -1] = f[:, -1], f[:, 0]
    if e["top"] == "wrap":
        p[0, 1:-1], p[-1, 1:-1] = f[-1, :], f[0, :]
    if e["left"] == "wrap" and e["top"] == "wrap":
        p[0, 0], p[0, -1], p[-1, 0], p[-1, -1] = f[-1, -1], f[-1, 0], f[0, -1], f[0, 0]
    return p


def truncating(a, b):
    """a / b rounded toward zero, element-wise, for b > 0."""
    return np.where(a < 0, -((-a) // b), a // b)


def absorbing(sc, wall):
    """(border cells, inward neighbours) of every absorbing edge, as index arrays into the
    flattened field: corners and walls left out."""
    w, h, e = sc["w"], sc["h"], sc["edges"]
    rows = np.arange(h) if e["top"] == "wrap" else np.arange(1, h - 1)
    cols = np.arange(w) if e["left"] == "wrap" else np.arange(1, w - 1)
    b, i = [], []
    if e["left"] == "absorb":
        b.append(rows * w), i.append(rows * w + 1)
    if e["right"] == "absorb":
        b.append(rows * w + w - 1), i.append(rows * w + w - 2)
    if e["top"] == "absorb":
        b.append(cols), i.append(cols + w)
    if e["bottom"] == "absorb":
        b.append((h - 1) * w + cols), i.append((h - 2) * w + cols)
    if not b:
        return None
    b, i = np.concatenate(b), np.concatenate(i)
    if wall is not None:
        keep = ~wall.ravel()[b]
        b, i = b[keep], i[keep]
    return b, i


def classic_step_shore(cur, prev, shift, sc, wall, ok, ab):
    p = around(cur, sc["edges"])
    n = (p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1]) >> 1
    n -= prev
    n -= n >> shift
    new = np.where(ok, np.clip(n, -32768, 32767), 0).astype(np.int32)
    if ab is not None:
        b, i = ab
        c, nf = cur.ravel().astype(np.int64), new.ravel().astype(np.int64)
        new.ravel()[b] = np.clip(c[i] + truncating((nf[i] - c[b]) * -44, 256), -32768, 32767)
    return new, cur


def spring_step_shore(pos, nxt, vel, shift, sc, wall, ok, ab):
    with np.errstate(over="ignore"):
        p = around(pos, sc["edges"])
        orth = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
        diag = p[:-2, :-2] + p[:-2, 2:] + p[2:, :-2] + p[2:, 2:]
        pull = np.int32(16) * pos - (np.int32(3) * orth + diag)
        a = (pull >> 4) + ((pull < 0) & ((pull & 15) != 0))
        v = vel - a.astype(np.int32)
        v -= v >> shift
        vel[ok] = v[ok]
        n = pos + v
        new = np.where(ok, n - (n >> 8), 0).astype(np.int32)
    if ab is not None:
        b, i = ab
        q, nf = pos.ravel().astype(np.int64), new.ravel().astype(np.int64)
        value = q[i] + truncating((nf[i] - q[b]) * -72, 256)
        new.ravel()[b] = ((value + 2**31) % 2**32 - 2**31).astype(np.int32)
    return new, pos


def apply_drop_shore(field, e, sc, wall):
    """A drop with §8's rules: cells of a wrapped axis taken modulo, border cells of the other
    axes skipped, walls skipped."""
    _, x, y, r, weight, _ = e
    w, h, ed = sc["w"], sc["h"], sc["edges"]
    for py in range(y - r + 1, y + r):
        if ed["top"] != "wrap" and not 1 <= py <= h - 2:
            continue
        for px in range(x - r + 1, x + r):
            if ed["left"] != "wrap" and not 1 <= px <= w - 2:
                continue
            if (px - x) ** 2 + (py - y) ** 2 < r * r:
                cx, cy = px % w, py % h
                if wall is None or not wall[cy, cx]:
                    field[cy, cx] = -weight


def heights_around(hf, e):
    """The height field padded by one cell for drawing: 0 across a reflecting edge, the border
    cell's value across an absorbing one, the opposite side's across a wrapped one."""
    p = np.pad(hf.astype(np.int64), 1)
    for side, (dst, src) in {"left": ((slice(1, -1), 0), (slice(None), 0)), "right": ((slice(1, -1), -1), (slice(None), -1)),
                             "top": ((0, slice(1, -1)), (0, slice(None))), "bottom": ((-1, slice(1, -1)), (-1, slice(None)))}.items():
        if e[side] == "absorb":
            p[dst] = hf[src]
        elif e[side] == "wrap":
            opposite = {"left": (slice(None), -1), "right": (slice(None), 0), "top": (-1, slice(None)), "bottom": (0, slice(None))}[side]
            p[dst] = hf[opposite]
    return p


def sample_and_light(b, sx, sy, taps, dx, dy, sc):
    """SPEC §9: the background at (sx, sy) in 1/256 pixel, nearest or bilinear between the pixels
    `taps` = (x0, y0, x1, y1), then shaded and highlighted by the slope (dx, dy); int64, clipped."""
    x0, y0, x1, y1 = taps
    if sc["bilinear"]:
        fx, fy = (sx & 255)[:, :, None], (sy & 255)[:, :, None]
        top = b[y0, x0] * (256 - fx) + b[y0, x1] * fx
        bottom = b[y1, x0] * (256 - fx) + b[y1, x1] * fx
        value = (top * (256 - fy) + bottom * fy + 32768) >> 16
    else:
        value = b[y0, x0]
    lx, ly = sc["light"]
    s = dx * lx + dy * ly
    d = np.clip((s * sc["shading"]) >> 8, -255, 255)
    g = np.clip((np.maximum(s, 0) * sc["highlight"]) >> 8, 0, 255)
    return np.clip(value + (d + ((g * g) >> 8))[:, :, None], 0, 255)


def draw_shore(hf, bg, sc, wall):
    """A frame by §5/§9 with §8's edges and walls, in int64."""
    w, h, R, e = sc["w"], sc["h"], sc["R"], sc["edges"]
    p = heights_around(hf, e)
    dx = p[1:-1, :-2] - p[1:-1, 2:]
    dy = p[:-2, 1:-1] - p[2:, 1:-1]
    xs, ys = np.arange(w, dtype=np.int64)[None, :], np.arange(h, dtype=np.int64)[:, None]
    wx, wy = e["left"] == "wrap", e["top"] == "wrap"
    b = bg.astype(np.int64)
    plain = not sc["bilinear"] and sc["shading"] == 0 and sc["highlight"] == 0
    if plain:
        sx, sy = xs + ((dx * R) >> 8), ys + ((dy * R) >> 8)
        sx = sx % w if wx else np.clip(sx, 0, w - 1)
        sy = sy % h if wy else np.clip(sy, 0, h - 1)
        out = b[sy, sx]
    else:
        sx, sy = 256 * xs + dx * R, 256 * ys + dy * R
        sx = sx % (256 * w) if wx else np.clip(sx, 0, 256 * (w - 1))
        sy = sy % (256 * h) if wy else np.clip(sy, 0, 256 * (h - 1))
        x0, y0 = sx >> 8, sy >> 8
        x1 = (x0 + 1) % w if wx else np.minimum(x0 + 1, w - 1)
        y1 = (y0 + 1) % h if wy else np.minimum(y0 + 1, h - 1)
        out = sample_and_light(b, sx, sy, (x0, y0, x1, y1), dx, dy, sc)
    if wall is not None:
        out[wall] = b[wall]
    return out.astype(np.uint8)


def parse_color(s):
    s = s[1:]
    if len(s) == 3:
        return [int(c, 16) * 17 for c in s]
    return [int(s[i:i + 2], 16) for i in (0, 2, 4)]


def background(sc):
    w, h, color = sc["w"], sc["h"], np.array(sc["color"], dtype=np.int64)
    if sc["image"] is None:
        return np.broadcast_to(color.astype(np.uint8), (h, w, 3)).copy()
    img = np.asarray(sc["image"]).astype(np.int64)
    sh, sw = img.shape[:2]
    rnd = lambda a, b, c: max(1, (2 * a * b + c) // (2 * c))
    wider = w * sh >= h * sw
    fit = sc["fit"]
    if fit == "stretch":
        scw, sch = w, h
    elif fit == "cover":
        scw, sch = (w, rnd(sh, w, sw)) if wider else (rnd(sw, h, sh), h)
    else:
        scw, sch = (rnd(sw, h, sh), h) if wider else (w, rnd(sh, w, sw))
    offx, offy = (w - scw) // 2, (h - sch) // 2
    # Nearest source pixel per canvas row and column, in integers; outside the scaled image
    # (contain's bars) the canvas keeps `color`.
    py, px = np.arange(h) - offy, np.arange(w) - offx
    sy = np.clip(((2 * py + 1) * sh) // (2 * sch), 0, sh - 1)
    sx = np.clip(((2 * px + 1) * sw) // (2 * scw), 0, sw - 1)
    c = img[sy[:, None], sx[None, :]]
    a = c[:, :, 3:4]
    flat = (c[:, :, :3] * a + color * (255 - a) + 127) // 255
    inside = ((py >= 0) & (py < sch))[:, None] & ((px >= 0) & (px < scw))[None, :]
    return np.where(inside[:, :, None], flat, color).astype(np.uint8)


def events(sc, rain_events):
    """Per-unit event lists for units before the end unit, in SPEC order. Rain comes from the
    plan."""
    fps, end = sc["rate"], sc["end"]
    doc = sc["doc"]
    per = {}

    # With repeat, only the window's events are kept; the pre-roll replays them below.
    first = sc["u0"] if sc["repeat"] else 0

    def add(k, e):
        if first <= k < end:
            per.setdefault(k, []).append(e)

    for d in doc.get("damping", []):
        add(frame_of(d["at"], fps), ("damping", d["shift"]))
    for s in doc.get("stone", []):
        add(frame_of(s["at"], fps), ("drop", s["x"], s["y"], s.get("radius", 4), s.get("weight", 64), "stone"))
    # Damping first, then stones: a stable sort by kind keeps file order within each kind.
    swipes = []
    for s in doc.get("swipe", []):
        pts = [tuple(s["path"][0])]
        for a, b in zip(s["path"], s["path"][1:]):
            pts += bresenham(tuple(a), tuple(b))
        swipes.append((frame_of(s["from"], fps), frame_of(s["until"], fps), pts, s.get("radius", 2), s.get("weight", 40)))
    for k in range(end):
        for kf, kt, pts, r, w in swipes:
            if not kf <= k <= kt:
                continue
            m = len(pts)
            idx = lambda j: m - 1 if kt == kf else (m - 1) * (j - kf) // (kt - kf)
            lo = 0 if k == kf else idx(k - 1) + 1
            for x, y in pts[lo: idx(k) + 1]:
                add(k, ("drop", x, y, r, w, "swipe"))
    unit = "frame" if sc["S"] is None else "step"
    for e in rain_events:
        add(e[unit], ("drop", e["x"], e["y"], e["radius"], e["weight"], "rain"))
    order = {"damping": 0, "stone": 1, "swipe": 2, "rain": 3}
    for k in per:
        per[k].sort(key=lambda e: order[e[0] if e[0] == "damping" else e[5]])
    if sc["repeat"]:
        u0, period = sc["u0"], end - sc["u0"]
        for u in range(u0):
            w = u0 + (u - u0) % period
            if w in per:
                per[u] = list(per[w])
    return per


def apply_drop(field, e, w, h):
    """Sets the interior cells strictly inside the circle, working on its bounding box only."""
    _, x, y, r, weight, _ = e
    x0, x1 = max(1, x - r + 1), min(w - 2, x + r - 1)
    y0, y1 = max(1, y - r + 1), min(h - 2, y + r - 1)
    if x0 > x1 or y0 > y1:
        return
    ys, xs = np.ogrid[y0:y1 + 1, x0:x1 + 1]
    mask = (xs - x) ** 2 + (ys - y) ** 2 < r * r
    field[y0:y1 + 1, x0:x1 + 1][mask] = -weight


def classic_step(cur, prev, shift):
    """Classic step on int32 arrays that hold i16 values (clamped every step, so no wrapping)."""
    n = cur[1:-1, :-2] + cur[1:-1, 2:]
    n += cur[:-2, 1:-1]
    n += cur[2:, 1:-1]
    n >>= 1
    n -= prev[1:-1, 1:-1]
    n -= n >> shift
    np.clip(n, -32768, 32767, out=prev[1:-1, 1:-1])
    return prev, cur


def spring_step(pos, nxt, vel, shift):
    with np.errstate(over="ignore"):
        p = pos
        orth = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
        diag = p[:-2, :-2] + p[:-2, 2:] + p[2:, :-2] + p[2:, 2:]
        pull = np.int32(16) * p[1:-1, 1:-1] - (np.int32(3) * orth + diag)
        # Truncating division by 16 in int32: floor division, plus one where negative and inexact.
        a = (pull >> 4) + ((pull < 0) & ((pull & 15) != 0))
        v = vel[1:-1, 1:-1] - a.astype(np.int32)
        v -= v >> shift
        vel[1:-1, 1:-1] = v
        n = p[1:-1, 1:-1] + v
        nxt[1:-1, 1:-1] = n - (n >> 8)
    return nxt, pos


class Refractor:
    """Refraction with everything that does not change between frames computed once."""

    def __init__(self, bg, R, wide):
        """`wide`: spring heights need int64 slopes; classic ones fit int32 (|d·R| < 2^31)."""
        h, w = bg.shape[:2]
        self.w, self.h, self.R = w, h, R
        rgbx = np.zeros((h * w, 4), np.uint8)
        rgbx[:, :3] = bg.reshape(-1, 3)
        self.packed = rgbx.view(np.uint32).ravel()
        kind = np.int64 if wide else np.int32
        self.xs = np.arange(w, dtype=kind)[None, :]
        self.ys = np.arange(h, dtype=kind)[:, None]
        self.pad = np.zeros((h + 2, w + 2), kind)

    def __call__(self, hf):
        w, h, pad = self.w, self.h, self.pad
        pad[1:-1, 1:-1] = hf
        ox = ((pad[1:-1, :-2] - pad[1:-1, 2:]) * self.R) >> 8
        oy = ((pad[:-2, 1:-1] - pad[2:, 1:-1]) * self.R) >> 8
        ox += self.xs
        oy += self.ys
        np.clip(ox, 0, w - 1, out=ox)
        np.clip(oy, 0, h - 1, out=oy)
        oy *= w
        oy += ox
        return self.packed[oy].view(np.uint8).reshape(h, w, 4)[:, :, :3]


class Look:
    """SPEC §9: bilinear sampling of the displaced position in 1/256 pixel, and light from the
    slope (shading and highlight), all in int64."""

    def __init__(self, bg, sc):
        h, w = bg.shape[:2]
        self.w, self.h, self.R, self.sc = w, h, sc["R"], sc
        self.bg = bg.astype(np.int64)
        self.xs = np.arange(w, dtype=np.int64)[None, :]
        self.ys = np.arange(h, dtype=np.int64)[:, None]
        self.pad = np.zeros((h + 2, w + 2), np.int64)

    def __call__(self, hf):
        w, h, R, sc, bg, pad = self.w, self.h, self.R, self.sc, self.bg, self.pad
        pad[1:-1, 1:-1] = hf
        dx = pad[1:-1, :-2] - pad[1:-1, 2:]
        dy = pad[:-2, 1:-1] - pad[2:, 1:-1]
        sx = np.clip(256 * self.xs + dx * R, 0, 256 * (w - 1))
        sy = np.clip(256 * self.ys + dy * R, 0, 256 * (h - 1))
        x0, y0 = sx >> 8, sy >> 8
        x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
        return sample_and_light(bg, sx, sy, (x0, y0, x1, y1), dx, dy, sc).astype(np.uint8)


def frames(sc, rain_events, bg=None, look=None):
    """Yields (k, RGB frame) for every rendered frame. `bg`: the fitted background, if already
    made; `look`: another implementation of `Look` to draw looks with (bench/compare.py times a
    faster one)."""
    w, h = sc["w"], sc["h"]
    bg = background(sc) if bg is None else bg
    wall = walls(sc)
    if wall is not None or any(v != "reflect" for v in sc["edges"].values()):
        # SPEC §8: the same frame loop with the shore's drop, steps and drawing.
        ok, ab = updated(sc, wall), absorbing(sc, wall)
        drop = lambda f, e: apply_drop_shore(f, e, sc, wall)
        classic = lambda a, b, s: classic_step_shore(a, b, s, sc, wall, ok, ab)
        spring = lambda a, b, v, s: spring_step_shore(a, b, v, s, sc, wall, ok, ab)
        draw = lambda hf: draw_shore(hf, bg, sc, wall)
    else:
        plain = not sc["bilinear"] and sc["shading"] == 0 and sc["highlight"] == 0
        draw = Refractor(bg, sc["R"], wide=sc["model"] == "spring") if plain else (look or Look)(bg, sc)
        drop = lambda f, e: apply_drop(f, e, w, h)
        classic, spring = classic_step, spring_step
    per = events(sc, rain_events)
    shift = sc["shift"]
    a, b = np.zeros((h, w), np.int32), np.zeros((h, w), np.int32)
    vel = np.zeros((h, w), np.int32)

    def apply(u):
        nonlocal shift
        for e in per.get(u, []):
            if e[0] == "damping":
                shift = e[1]
            else:
                drop(a, e)

    def step():
        nonlocal a, b
        if sc["model"] == "classic":
            a, b = classic(a, b, shift)
        else:
            a, b = spring(a, b, vel, shift)

    last = sc["k0"] + sc["n"]
    o, kept = sc["crossfade"], {}
    fields = []

    def drawn(k):
        """SPEC §11: the field drawn for frame k (blended over the last O), kept for the seam."""
        field = a
        if o is not None and sc["k0"] - o <= k < sc["k0"]:
            kept[k - (sc["k0"] - o)] = a.copy()
        if o is not None and k >= last - o:
            j = k - (last - o)
            field = (a.astype(np.int64) * (o - j) + kept[j].astype(np.int64) * (j + 1)) // (o + 1)
        if k >= sc["k0"]:
            fields.append(field.copy())
        return field

    def finish():
        sc["seam"] = seam(fields, None if wall is None else ~wall)

    if sc["S"] is None:
        for k in range(last):
            apply(k)
            for _ in range(sc["steps"]):
                step()
            hf = drawn(k)
            if k >= sc["k0"]:
                yield k, draw(hf)
        finish()
        return
    # SPEC §10: frame k is drawn once n(k) = floor((k+1)·S/fps) steps are done, before the
    # events of that step; the events of step s come after s steps.
    k, s = 0, 0
    while k < last:
        while k < last and (k + 1) * sc["S"] // sc["fps"] == s:
            hf = drawn(k)
            if k >= sc["k0"]:
                yield k, draw(hf)
            k += 1
        if k < last:
            apply(s)
            step()
            s += 1
    finish()


def seam(fields, water):
    """SPEC §11: D(N-1, 0) over the median of D(k, k+1), D the mean |difference| over water cells."""
    if len(fields) < 3:
        return None
    mask = np.ones(fields[0].shape, bool) if water is None else water
    d = lambda p, q: np.abs(p.astype(np.int64) - q.astype(np.int64))[mask].sum() / mask.sum()
    steps = sorted(d(fields[k + 1], fields[k]) for k in range(len(fields) - 1))
    m = len(steps) // 2
    median = steps[m] if len(steps) % 2 else (steps[m - 1] + steps[m]) / 2
    return None if median == 0 else d(fields[-1], fields[0]) / median


def plan_json(binary, scene):
    out = subprocess.run([binary, "plan", "--json", str(scene)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def check(binary, scene, frames_dir):
    sc = load(scene)
    plan = plan_json(binary, scene)
    rain = [e for e in plan["events"] if e.get("source") == "rain"]
    unit = "frame" if sc["S"] is None else "step"
    mine = []
    for k, es in sorted(events(sc, rain).items()):
        for e in es:
            if e[0] == "damping":
                mine.append({unit: k, "kind": "damping", "shift": e[1]})
            else:
                mine.append({unit: k, "kind": "drop", "x": e[1], "y": e[2], "radius": e[3], "weight": e[4], "source": e[5]})
    header = {k: plan[k] for k in plan if k != "events"}
    expect = {"width": sc["w"], "height": sc["h"], "fps": sc["fps"], "first_frame": sc["k0"], "frames": sc["n"],
              "model": sc["model"], "damping_shift": sc["shift"]}
    if sc["S"] is None:
        expect["steps_per_frame"] = sc["steps"]
    else:
        expect["steps_per_second"] = sc["S"]
    expect["refraction_q8"] = sc["R"]
    wall = walls(sc)
    if wall is not None:
        expect["walls"] = int(wall.sum())
    if any(v != "reflect" for v in sc["edges"].values()):
        expect["edges"] = sc["edges"]
    ok = True
    counts = rain_counts(sc)
    seen = {}
    for e in rain:
        seen[e[unit]] = seen.get(e[unit], 0) + 1
        if not (1 <= e["x"] <= sc["w"] - 2 and 1 <= e["y"] <= sc["h"] - 2):
            print(f"raindrop off the interior: {e}")
            ok = False
    if seen != counts:
        first = min(u for u in set(seen) | set(counts) if seen.get(u) != counts.get(u))
        print(f"raindrops on {unit} {first}: the plan has {seen.get(first, 0)}, the accumulator gives {counts.get(first, 0)}")
        ok = False
    if header != expect:
        print(f"plan header differs: {header} != {expect}")
        ok = False
    if plan["events"] != mine:
        first = next(i for i, (a, b) in enumerate(zip(plan["events"] + [None], mine + [None])) if a != b)
        print(f"plan events differ at #{first}: {plan['events'][first:first + 1]} != {mine[first:first + 1]}")
        ok = False
    digits = max(4, len(str(sc["n"] - 1)))
    for i, (k, frame) in enumerate(frames(sc, rain)):
        got = np.asarray(Image.open(Path(frames_dir) / f"frame_{i:0{digits}d}.png").convert("RGB"))
        if not np.array_equal(got, frame):
            diff = np.any(got != frame, axis=2).sum()
            print(f"frame {i} (k={k}) differs in {diff} pixels")
            ok = False
            break
    else:
        # The seam the render reports (--stats), against this one's.
        with tempfile.TemporaryDirectory() as tmp:
            run = subprocess.run([binary, str(scene), "-o", tmp + "/out/", "--stats", "--quiet"],
                                 check=True, capture_output=True, text=True)
        reported = json.loads(run.stderr.strip().splitlines()[-1])["seam"]
        expected = sc["seam"]
        if (reported is None) != (expected is None) or (
                expected is not None and abs(reported - expected) > 1e-9 * max(1.0, abs(expected))):
            print(f"seam differs: the render reports {reported}, SPEC gives {expected}")
            ok = False
    print(f"{scene}: {'identical' if ok else 'DIFFERENT'} ({sc['n']} frames, {len(plan['events'])} events)")
    return ok


def rain_counts(sc):
    """Raindrops on each unit from SPEC §3's accumulator (per unit in step mode, §10)."""
    r = sc["doc"].get("rain")
    if r is None:
        return {}
    start = math.floor(r.get("from", 0) * sc["rate"] + 0.5)
    stop = math.floor(r["until"] * sc["rate"] + 0.5) if "until" in r else sc["end"]
    if sc["repeat"]:
        # SPEC §11: over the window only, replayed through the pre-roll.
        start = max(start, sc["u0"])
    acc, counts = 0.0, {}
    for u in range(start, min(stop, sc["end"])):
        acc = acc + r["drops_per_second"] / sc["rate"]
        n = math.floor(acc)
        acc = acc - n
        if n:
            counts[u] = n
    if sc["repeat"]:
        u0, period = sc["u0"], sc["end"] - sc["u0"]
        for u in range(u0):
            w = u0 + (u - u0) % period
            if w in counts:
                counts[u] = counts[w]
    return counts


def bench(scene):
    sc = load(scene)
    start = time.perf_counter()
    count = sum(1 for _ in frames(sc, []))
    elapsed = time.perf_counter() - start
    px = count * sc["w"] * sc["h"]
    print(f"{count} frames {sc['w']}x{sc['h']}: {elapsed:.2f} s, {elapsed / px * 1e9:.1f} ns/pixel")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        sys.exit(0 if check(sys.argv[2], sys.argv[3], sys.argv[4]) else 1)
    if len(sys.argv) == 3 and sys.argv[1] == "bench":
        bench(sys.argv[2])
        sys.exit(0)
    sys.exit("usage: reference.py check BINARY SCENE FRAMES_DIR | reference.py bench SCENE")
