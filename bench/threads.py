#!/usr/bin/env python3
"""One thread against two: each busy render of the threads table in docs/benchmarks.md, best of
three wall-clock runs on `--threads 1` and on `--threads 2`, taken in turn in the same run, with
the `--stats` split of the best run of each.

Usage: python3 bench/threads.py [RUNS]   (from the repository, after `cargo build --release`)
"""
import json
import subprocess
import sys
import time

BIN = "target/release/ripple-render"
RENDERS = [
    ("GIF", "bench/busy.toml", "gif"),
    ("lit GIF", "bench/busy-lit.toml", "gif"),
    ("1920x1080 GIF", "bench/busy1080.toml", "gif"),
    ("APNG", "bench/busy.toml", "apng"),
    ("WebP", "bench/busy.toml", "webp"),
]


def run(scene, ext, threads):
    started = time.perf_counter()
    done = subprocess.run(
        [BIN, scene, "-o", f"/tmp/ripple-threads.{ext}", "-f", "--threads", str(threads), "--stats"],
        check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    stats = json.loads(next(line for line in done.stderr.splitlines() if line.startswith("{")))
    return wall, stats


def split(stats):
    return " / ".join(f"{stats[k]:.2f}" for k in ("simulate_s", "refract_s", "encode_s", "write_s"))


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print("| render | 1 thread | 2 threads | ratio | split on 1 (simulate / draw / encode / write, s) | on 2 |")
    print("|---|---|---|---|---|---|")
    for name, scene, ext in RENDERS:
        best = {}
        for _ in range(runs):
            for threads in (1, 2):
                wall, stats = run(scene, ext, threads)
                if threads not in best or wall < best[threads][0]:
                    best[threads] = (wall, stats)
        (one, s1), (two, s2) = best[1], best[2]
        print(f"| {name} (`{scene}`) | {one:.3f} s | {two:.3f} s | **{one / two:.2f}×** | {split(s1)} | {split(s2)} |")


if __name__ == "__main__":
    main()
