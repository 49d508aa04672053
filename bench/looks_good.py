#!/usr/bin/env python3
"""Which values of each scene key look like water: measured, not guessed.

    python3 bench/looks_good.py target/release/ripple-render [--size 320x240 --size 960x640]

For each canvas size and model, makes a starter scene with `ripple-render new` over a picture
whose pixel (x, y) holds its own coordinates (red = x & 255, green = y & 255, blue = the high
bits), renders it with nearest sampling and no light (so each frame says exactly where every
pixel was sampled from), and measures per frame:

- moved: the share of pixels sampled from at least one pixel away;
- shift: the 99th percentile of how far pixels are moved, in pixels;
- folds: the share of pixels whose sample lies 2 or more pixels behind their left or upper
  neighbour's, where the picture is torn and mirrored ("cut glass", ragged streaks).

A value looks like water when the busiest frame moves at least 1% of the pixels with a shift of
at least 1.5 pixels (visible) and no frame has folds on more than 2% of the pixels (smooth).

The light is measured over a mid-grey picture (128) with the look as the starter has it (the
gain tone): lit, the share of pixels the light moves by 8 levels or more; burnt, the share it
drives to 0 or 255. A strength looks right when the busiest frame has lit ≥ 1% and burnt ≤ 2% (a
glint or a crushed shadow on at most one pixel in fifty). For the moves, the look's light, sky,
glint and caustics are turned off, so that each pixel is the one it was sampled from.

Each key is swept alone, the others at the starter's values, and the values that pass on every
size are printed. Needs numpy and pillow.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import tomllib

import numpy as np
from PIL import Image

SWEEPS = {
    "water.refraction": {
        "classic": [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0],
        "spring": [0.005, 0.01, 0.02, 0.04, 0.06, 0.1],
    },
    "stone_weight_per_radius": {
        "classic": [10, 20, 40, 60, 100, 150, 250, 400],
        "spring": [10, 20, 40, 60, 100, 150, 250, 400],
    },
    "water.damping_shift": {"classic": [2, 3, 4, 5, 6, 8], "spring": [3, 4, 5, 6, 8, 10]},
}

# The light, over a mid-grey picture, with the starter's water.
LIGHT_SWEEPS = {
    "look.shading": [0, 16, 32, 64, 96, 160, 256, 512, 1024],
    "look.caustics": [0, 32, 64, 96, 160, 256, 512],
    "look.glint": [0, 100, 160, 200, 230, 256],
}


def coordinates(w, h, path):
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([x & 255, y & 255, (x >> 8) | ((y >> 8) << 4)], axis=-1).astype(np.uint8)
    Image.fromarray(rgb).save(path)


def measure(folder, w, h):
    y, x = np.mgrid[0:h, 0:w]
    worst = {"moved": 0.0, "shift": 0.0, "folds": 0.0}
    for name in sorted(os.listdir(folder)):
        a = np.asarray(Image.open(os.path.join(folder, name)).convert("RGB")).astype(np.int64)
        sx = a[..., 0] | ((a[..., 2] & 15) << 8)
        sy = a[..., 1] | ((a[..., 2] >> 4) << 8)
        dist = np.hypot(sx - x, sy - y)
        folds = (np.diff(sx, axis=1) <= -2).sum() + (np.diff(sy, axis=0) <= -2).sum()
        worst["moved"] = max(worst["moved"], float((dist >= 1).mean()))
        worst["shift"] = max(worst["shift"], float(np.percentile(dist, 99)))
        worst["folds"] = max(worst["folds"], folds / (w * h))
    return worst


def stone_overrides(scene_text, per_radius):
    """--set arguments giving every stone the weight per_radius · its radius."""
    stones = tomllib.loads(scene_text).get("stone", [])
    return [f"stone[{i}].weight={min(per_radius * s.get('radius', 4), 16384)}" for i, s in enumerate(stones)]


def run(binary, scene, sets, out):
    args = [binary, scene, "-o", out + "/", "--force", "--quiet"]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True)


def measure_light(folder):
    worst = {"lit": 0.0, "burnt": 0.0}
    for name in sorted(os.listdir(folder)):
        a = np.asarray(Image.open(os.path.join(folder, name)).convert("L")).astype(np.int64)
        worst["lit"] = max(worst["lit"], float((np.abs(a - 128) >= 8).mean()))
        worst["burnt"] = max(worst["burnt"], float(((a == 0) | (a == 255)).mean()))
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--size", action="append", default=None)
    args = parser.parse_args()
    # A starter canvas is at most 640 pixels a side, whatever the picture.
    sizes = [tuple(map(int, s.split("x"))) for s in (args.size or ["320x240", "480x320", "640x427"])]
    tmp = tempfile.mkdtemp()
    for model in ["classic", "spring"]:
        print(f"\n## {model}")
        passing = {}
        for w, h in sizes:
            picture = os.path.join(tmp, f"coords{w}x{h}.png")
            coordinates(w, h, picture)
            scene = os.path.join(tmp, f"{model}{w}x{h}.toml")
            subprocess.run([args.binary, "new", picture, "-o", scene, "--model", model, "--force"], check=True)
            text = open(scene).read()
            out = os.path.join(tmp, "frames")
            plain = ["look.sampling=nearest", "look.shading=0", "look.caustics=0", "look.reflection=0", "look.glint=0"]
            base = measure_one(args.binary, scene, plain, out, w, h)
            print(f"{w}x{h} starter: {show(base)}")
            for key, values in SWEEPS.items():
                for value in values[model]:
                    if key == "stone_weight_per_radius":
                        sets = stone_overrides(text, value)
                    else:
                        sets = [f"{key}={value}"]
                    m = measure_one(args.binary, scene, sets + plain, out, w, h)
                    ok = m["moved"] >= 0.01 and m["shift"] >= 1.5 and m["folds"] <= 0.02
                    passing.setdefault(key, {}).setdefault(value, []).append(ok)
                    print(f"{w}x{h} {key}={value}: {show(m)}{'' if ok else '  (no)'}")
            grey = os.path.join(tmp, f"grey{w}x{h}.png")
            Image.new("RGB", (w, h), (128, 128, 128)).save(grey)
            for key, values in LIGHT_SWEEPS.items():
                for value in values:
                    run(args.binary, scene, [f"background.image={grey}", f"{key}={value}"], out)
                    m = measure_light(out)
                    ok = m["lit"] >= 0.01 and m["burnt"] <= 0.02
                    passing.setdefault(key, {}).setdefault(value, []).append(ok)
                    lit, burnt = 100 * m["lit"], 100 * m["burnt"]
                    print(f"{w}x{h} {key}={value}: lit {lit:.1f}%, burnt {burnt:.2f}%{'' if ok else '  (no)'}")
        for key, values in passing.items():
            good = [v for v, oks in values.items() if all(oks)]
            print(f"{model} {key}: looks like water at {good}")
    return 0


def measure_one(binary, scene, sets, out, w, h):
    run(binary, scene, sets, out)
    return measure(out, w, h)


def show(m):
    return f"moved {100 * m['moved']:.1f}%, shift {m['shift']:.1f} px, folds {100 * m['folds']:.2f}%"


if __name__ == "__main__":
    sys.exit(main())
