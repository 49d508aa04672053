#!/usr/bin/env python3
"""The water look's cost in one run: the busy scene as a plain GIF (bench/busy.toml), lit as
SPEC §9 draws it (bench/busy-lit.toml) and with the smooth drop and the whole gain look,
caustics on (bench/busy-water.toml), in RUNS rounds of the three back to back (their order
turning each round), with each one's best and median wall time and the median of the rounds'
own ratios to the plain and to the lit GIF (what a drift of the VM's speed between rounds moves
least).

Usage: python3 bench/water_look.py [RUNS] [--threads N]   (from the repository, after
`cargo build --release`; RUNS defaults to 5)
"""
import statistics
import subprocess
import sys
import time

BIN = "target/release/ripple-render"
RENDERS = [("plain GIF", "bench/busy.toml"), ("lit GIF", "bench/busy-lit.toml"), ("water GIF", "bench/busy-water.toml")]


def run(scene, threads):
    args = [BIN, scene, "-o", "/tmp/ripple-water-look.gif", "-f", "-q"] + (["--threads", threads] if threads else [])
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - started


def main():
    args = sys.argv[1:]
    threads = None
    if "--threads" in args:
        at = args.index("--threads")
        threads = args[at + 1]
        del args[at:at + 2]
    runs = int(args[0]) if args else 5
    times = {name: [] for name, _ in RENDERS}
    for scene in (s for _, s in RENDERS):
        run(scene, threads)  # warm the caches
    for round_ in range(runs):
        order = RENDERS[round_ % 3:] + RENDERS[:round_ % 3]
        for name, scene in order:
            times[name].append(run(scene, threads))
    for name, _ in RENDERS:
        print(f"{name:10} best {min(times[name]):.3f} s, median {statistics.median(times[name]):.3f} s")
    water = times["water GIF"]
    for base in ("plain GIF", "lit GIF"):
        ratios = [w / b for w, b in zip(water, times[base])]
        print(f"water / {base}: median of rounds {statistics.median(ratios):.2f}x, "
              f"of bests {min(water) / min(times[base]):.2f}x")


if __name__ == "__main__":
    main()
