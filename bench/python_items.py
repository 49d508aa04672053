#!/usr/bin/env python3
"""The Python package in a training loop (docs/python.md, issue #57): how fast items come, beside
the field's own in-process generator and beside reading the same items back from files.

- ``Dataset[i]`` of examples/dataset.toml at 10 frames (128×128), one thread: the median.
- ``ground_truth`` of a 128×128, 100-frame scene, one thread: the median.
- A DataLoader's pattern without torch: 1 and 2 worker processes, each unpickling the dataset
  once, items per second.
- WACV'18's in-process generator (Li et al., zmurez/TurbulentWater ``SynthData``), written again
  here in NumPy from its paper and code's description: a float height and velocity field with
  a 4- and 8-neighbour Laplacian, damping 0.994-0.999, random Gaussian bumps, 10 steps and then
  7-14 motion-blurred sub-frames of 2 steps each, the picture warped bilinearly by the slopes.
  Timed for the same 10 frames at 128×128.
- Reading one sequence back from ``ripple-render dataset``'s files with NumPy and Pillow.
- Resident memory over N items (default 10,000) after the first 100.

Usage: python3 bench/python_items.py [--items N]   (needs ripple_render installed:
pip install ./python, and ripple-render on the PATH or RIPPLE_RENDER_BIN for the files)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pathlib
import pickle
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np

import ripple_render as rr

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPEC = (
    (ROOT / "examples" / "dataset.toml")
    .read_text()
    .replace("frames = [24, 40]", "frames = 10")
    .replace('"../scenes"', f'"{(ROOT / "scenes").as_posix()}"')
)
LONG = """[video]
frames = 100
width = 128
height = 128
[[stone]]
at = 0
x = 64
y = 64
[[stone]]
at = 1.5
x = 30
y = 90
[rain]
drops_per_second = 8
[look]
sampling = "bilinear"
"""


def median_ms(call, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


# --- WACV'18's generator, as its paper and code describe it --------------------------------


class Wacv18:
    """One simulated surface and the frames it warps a picture into."""

    def __init__(self, size: int, rng: np.random.Generator):
        self.rng = rng
        self.h = np.zeros((size + 2, size + 2))
        self.v = np.zeros_like(self.h)
        self.damp = rng.uniform(0.994, 0.999)
        self.blur = int(rng.integers(7, 15))
        self.chance = rng.uniform(0.1, 0.2)
        axis = np.linspace(-1, 1, size + 2)
        self.gx, self.gy = np.meshgrid(axis, -axis)

    def bump(self) -> None:
        if self.rng.random() > self.chance:
            return
        r = self.rng
        width, strength = r.uniform(0.15, 0.65), r.uniform(6, 14)
        cx, cy, squash, angle = r.uniform(-1, 1), r.uniform(-1, 1), r.uniform(0.45, 0.95), r.uniform(0, np.pi)
        u = (self.gx - cx) * np.cos(angle) + (self.gy - cy) * np.sin(angle)
        w = -(self.gx - cx) * np.sin(angle) + (self.gy - cy) * np.cos(angle)
        self.h += r.choice([-1, 1]) * 25 * strength * np.exp(-(u**2 + w**2 / (1 - squash)) / width**2)

    def step(self, n: int, bumps: bool = True) -> None:
        h, v = self.h, self.v
        for _ in range(n):
            if bumps:
                self.bump()
            c = h[1:-1, 1:-1]
            cross = (h[:-2, 1:-1] + h[2:, 1:-1] + h[1:-1, :-2] + h[1:-1, 2:] - 4 * c) / 4
            diagonal = (h[:-2, :-2] + h[2:, :-2] + h[:-2, 2:] + h[2:, 2:] - 4 * c) / 8
            v[1:-1, 1:-1] += cross + diagonal
            v *= self.damp
            h += v
            h[0], h[-1], h[:, 0], h[:, -1] = h[1], h[-2], h[:, 1], h[:, -2]

    def frame(self, picture: np.ndarray) -> np.ndarray:
        """One distorted frame: the average of the motion-blurred sub-frames."""
        size = picture.shape[0]
        ys, xs = np.mgrid[0:size, 0:size].astype(np.float64)
        out = np.zeros_like(picture, dtype=np.float64)
        self.step(10)
        for k in range(self.blur):
            if k:
                self.step(2, bumps=False)
            h = self.h
            sx = np.clip(xs + (h[1:-1, 2:] - h[1:-1, :-2]) / 2, 0, size - 1)
            sy = np.clip(ys + (h[2:, 1:-1] - h[:-2, 1:-1]) / 2, 0, size - 1)
            x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
            x1, y1 = np.minimum(x0 + 1, size - 1), np.minimum(y0 + 1, size - 1)
            fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
            top = picture[y0, x0] * (1 - fx) + picture[y0, x1] * fx
            bottom = picture[y1, x0] * (1 - fx) + picture[y1, x1] * fx
            out += top * (1 - fy) + bottom * fy
        return out / self.blur


def wacv18_sequence(picture: np.ndarray, seed: int, frames: int = 10) -> np.ndarray:
    surface = Wacv18(picture.shape[0], np.random.default_rng(seed))
    return np.stack([surface.frame(picture) for _ in range(frames)])


# --- workers ------------------------------------------------------------------------------

_worker_ds = None


def _open(data: bytes) -> None:
    global _worker_ds
    _worker_ds = pickle.loads(data)


def _item(i: int) -> int:
    return _worker_ds[i]["frames"].shape[0]


def items_per_second(ds, workers: int, n: int) -> float:
    data = pickle.dumps(ds)
    with multiprocessing.get_context("spawn").Pool(workers, initializer=_open, initargs=(data,)) as pool:
        pool.map(_item, range(2 * workers), chunksize=1)  # started, pictures decoded
        start = time.perf_counter()
        pool.map(_item, range(n), chunksize=8)
        return n / (time.perf_counter() - start)


def resident() -> int:
    return int(pathlib.Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000, help="items for the memory figure")
    args = parser.parse_args()

    ds = rr.Dataset(SPEC, seed=0, count=max(args.items, 1000))
    for i in range(20):
        ds[i]
    k = iter(range(20, 10**9))
    print(f"Dataset[i], 128×128×10, one thread: median {median_ms(lambda: ds[next(k)], 300):.2f} ms")
    rr.ground_truth(LONG)
    print(f"ground_truth, 128×128×100, one thread: median {median_ms(lambda: rr.ground_truth(LONG), 30):.1f} ms")

    one = items_per_second(ds, 1, 600)
    two = items_per_second(ds, 2, 600)
    print(f"workers: 1 → {one:.0f} items/s, 2 → {two:.0f} items/s ({two / one:.2f}×)")

    picture = ds[0]["clean"].astype(np.float64) / 255
    seeds = iter(range(10**9))
    ms = median_ms(lambda: wacv18_sequence(picture, next(seeds)), 10)
    print(f"WACV'18's SynthData, re-implemented in NumPy, 128×128×10: median {ms:.1f} ms (no ground truth)")

    cli = os.environ.get("RIPPLE_RENDER_BIN") or shutil.which("ripple-render")
    if cli:
        with tempfile.TemporaryDirectory() as tmp:
            spec = pathlib.Path(tmp) / "spec.toml"
            spec.write_text(SPEC)
            subprocess.run([cli, "dataset", spec, "--count", "40", "--seed", "0", "-o", f"{tmp}/set", "--quiet"], check=True)
            from PIL import Image

            folders = sorted(p for p in pathlib.Path(tmp, "set").glob("*/[0-9]*") if p.is_dir())

            def read(folder: pathlib.Path) -> dict:
                item = {"clean": np.load(folder / "clean.npy")}
                for kind in ["height", "height_raw", "warp", "normal"]:
                    item[kind] = np.stack([np.load(p) for p in sorted((folder / kind).glob("*.npy"))])
                item["frames"] = np.stack([np.asarray(Image.open(p)) for p in sorted((folder / "frame").glob("*.png"))])
                return item

            files = iter(folders * 10)
            print(f"reading one sequence back from dataset's files (NumPy, Pillow): median {median_ms(lambda: read(next(files)), 40):.2f} ms")
    else:
        print("reading back from files: skipped (no ripple-render on the PATH or RIPPLE_RENDER_BIN)")

    if pathlib.Path("/proc/self/statm").exists():
        for i in range(100):
            ds[i]
        before = resident()
        for i in range(100, args.items):
            ds[i % len(ds)]
        print(f"resident memory over {args.items} items: {(resident() - before) / 2**20:+.1f} MiB after the first 100")


if __name__ == "__main__":
    main()
