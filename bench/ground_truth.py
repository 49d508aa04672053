#!/usr/bin/env python3
"""Ground truth speed, for docs/benchmarks.md: `ripple-render --ground-truth DIR` alone on a
128x128, 100-frame scene (one thread), against the NumPy generator a researcher writes today
(what FSRN's and the WACV'18 scripts do, vectorized: a wave equation on wrapped float64 heights,
the warp from the gradient, a bilinear remap of the picture, and per frame the heights and the
warp as .npy and the frame as a PNG); and `dataset` on one and two threads for 200 sequences.

Usage: bench/ground_truth.py [BINARY]      (default target/release/ripple-render)
Writes into /dev/shm when it exists (the page cache, not a disk, is what is measured).
"""

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SCENE = """[video]
width = 128
height = 128
frames = 100
[background]
pattern = "checker"
[water]
refraction = 0.5
[look]
sampling = "bilinear"
[[stone]]
at = 0.0
x = 40
y = 50
radius = 5
[[stone]]
at = 1.0
x = 90
y = 70
radius = 4
[rain]
drops_per_second = 20
seed = 1
"""


def png_bytes(rgb):
    """A PNG as a script writes one without imaging libraries: unfiltered rows, zlib level 1."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    head = w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


def numpy_generator(out, size=128, frames=100, seed=1):
    """Heights, warp, remap and files for one sequence, in float64 NumPy."""
    rng = np.random.default_rng(seed)
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64)
    picture = (((xs // 16 + ys // 16) % 2) * 200 + 30)[..., None].repeat(3, -1)
    cur, prev = np.zeros((size, size)), np.zeros((size, size))
    for folder in ("height", "warp", "frame"):
        (out / folder).mkdir(parents=True)
    for k in range(frames):
        if k in (0, 25) or rng.random() < 0.8:
            x, y = rng.integers(0, size, 2)
            cur[max(y - 4, 0):y + 4, max(x - 4, 0):x + 4] = -64.0
        nxt = (np.roll(cur, 1, 0) + np.roll(cur, -1, 0) + np.roll(cur, 1, 1) + np.roll(cur, -1, 1)) / 2 - prev
        nxt *= 1 - 1 / 32
        prev, cur = cur, nxt
        gx = (np.roll(cur, 1, 1) - np.roll(cur, -1, 1)) * 0.5
        gy = (np.roll(cur, 1, 0) - np.roll(cur, -1, 0)) * 0.5
        sx, sy = np.clip(xs + gx, 0, size - 1), np.clip(ys + gy, 0, size - 1)
        x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
        x1, y1 = np.minimum(x0 + 1, size - 1), np.minimum(y0 + 1, size - 1)
        fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
        top = picture[y0, x0] * (1 - fx) + picture[y0, x1] * fx
        bottom = picture[y1, x0] * (1 - fx) + picture[y1, x1] * fx
        frame = (top * (1 - fy) + bottom * fy + 0.5).astype(np.uint8)
        np.save(out / "height" / f"{k:05}.npy", cur)
        np.save(out / "warp" / f"{k:05}.npy", np.stack([sx, sy], -1))
        (out / "frame" / f"{k:05}.png").write_bytes(png_bytes(frame))


def drop_caches():
    """Empties the page cache first where this may (as root), so no run pays for an earlier one's."""
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
    except OSError:
        pass


def timed(runs, work, prepare):
    """The median seconds of `runs` runs of `work`, each after `prepare` (not timed)."""
    times = []
    for _ in range(runs):
        prepare()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main():
    binary = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target/release/ripple-render"
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
    scratch = Path(tempfile.mkdtemp(prefix="gt-bench-", dir=base))
    try:
        (scratch / "scene.toml").write_text(SCENE)
        out = scratch / "ours"

        def ours():
            subprocess.run([binary, scratch / "scene.toml", "--ground-truth", out, "--threads", "1", "-q"], check=True)

        theirs_out = scratch / "numpy"

        def theirs():
            numpy_generator(theirs_out)

        # The folder a run left is removed before the next, untimed (deleting it is not writing it).
        ours_s = timed(41, ours, lambda: shutil.rmtree(out, ignore_errors=True))
        theirs_s = timed(5, theirs, lambda: shutil.rmtree(theirs_out, ignore_errors=True))
        print(f"ground truth, 128x128, 100 frames: ripple-render {ours_s * 1000:.1f} ms (one thread, whole process), "
              f"NumPy generator {theirs_s * 1000:.1f} ms: {theirs_s / ours_s:.1f}x")
        spec = ROOT / "examples/dataset.toml"
        folder = scratch / "set"

        def dataset(threads):
            shutil.rmtree(folder, ignore_errors=True)
            drop_caches()
            started = time.perf_counter()
            subprocess.run([binary, "dataset", spec, "--count", "200", "--seed", "7", "-o", folder,
                            "--threads", str(threads), "-q"], check=True)
            return time.perf_counter() - started

        # One thread and two in turn, so that the machine's drift falls on both alike.
        pairs = [(dataset(1), dataset(2)) for _ in range(5)]
        one, two = (statistics.median(p[k] for p in pairs) for k in (0, 1))
        ratios = sorted(a / b for a, b in pairs)
        print(f"dataset, 200 sequences of examples/dataset.toml: one thread {one:.2f} s, two {two:.2f} s (medians "
              f"of 5); two over one, pair by pair: {', '.join(f'{r:.2f}' for r in ratios)} (median "
              f"{statistics.median(ratios):.2f}x)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
