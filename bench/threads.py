#!/usr/bin/env python3
"""One thread against two: each busy render of the threads table in docs/benchmarks.md, in RUNS
rounds of a `--threads 1` run and a `--threads 2` run back to back (which goes first alternates),
with the best of each, the ratio of the bests, the median of the rounds' own ratios (what a
drift of the VM's speed between rounds moves least), the machine's ceiling (two one-thread
renders side by side: what two busy cores give here at all), and the `--stats` split of the
best runs.

Usage: python3 bench/threads.py [RUNS [NAME…]]   (from the repository, after `cargo build
--release`; RUNS defaults to 3; NAMEs pick renders whose name contains one, e.g. `GIF`)
"""
import json
import statistics
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


def two_at_once(scene, ext):
    """Two one-thread renders of the scene side by side: how long the pair takes. Two threads
    can be at most 2 x (one alone) / (the pair) times one: what both cores give at once on this
    machine (a VM's two vCPUs share more than they show)."""
    started = time.perf_counter()
    pair = [subprocess.Popen([BIN, scene, "-o", f"/tmp/ripple-threads-{k}.{ext}", "-f", "-q", "--threads", "1"])
            for k in (0, 1)]
    for p in pair:
        if p.wait() != 0:
            raise SystemExit("a render failed")
    return time.perf_counter() - started


def split(stats):
    return " / ".join(f"{stats[k]:.2f}" for k in ("simulate_s", "refract_s", "encode_s", "write_s"))


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    picked = sys.argv[2:]
    print("| render | 1 thread | 2 threads | ratio of bests | median ratio | the machine's ceiling (median) | "
          "split on 1 (simulate / draw / encode / write, s) | on 2 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, scene, ext in RENDERS:
        if picked and not any(p in name for p in picked):
            continue
        best, ratios, ceilings = {}, [], []
        for round_ in range(runs):
            walls = {}
            for threads in ((1, 2) if round_ % 2 == 0 else (2, 1)):
                wall, stats = run(scene, ext, threads)
                walls[threads] = wall
                if threads not in best or wall < best[threads][0]:
                    best[threads] = (wall, stats)
            ratios.append(walls[1] / walls[2])
            ceilings.append(2 * walls[1] / two_at_once(scene, ext))
        (one, s1), (two, s2) = best[1], best[2]
        print(f"| {name} (`{scene}`) | {one:.3f} s | {two:.3f} s | **{one / two:.2f}×** | "
              f"{statistics.median(ratios):.2f}× | {statistics.median(ceilings):.2f}× | {split(s1)} | {split(s2)} |",
              flush=True)


if __name__ == "__main__":
    main()
