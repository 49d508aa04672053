#!/usr/bin/env python3
"""`--effort fast | default | max` against the usual tools, for docs/benchmarks.md: one table per
level, each of our GIF, APNG and WebP (size, wall time of the whole render, and time over the
default GIF's in the same run) beside the tool that does that format's job:

* WebP: `img2webp -lossless` (libwebp's -m 4, its default) and, with --m6, `img2webp -lossless
  -m 6 -q 100`, from the same PNG frames;
* APNG: `ffmpeg -f apng` from the same PNG frames;
* GIF: `gifsicle -O3` run on our default GIF.

The tools' results are cached beside the frames in $CACHE (default /tmp/ripple-effort-bench),
so a rerun after a change of ours times only ours. Times are wall-clock on this machine, the
median of RUNS runs for ours (the best of one for max and the tools, which take long).

Usage: python3 bench/effort.py [--m6] [SCENE ...]   (default: bench/busy.toml; needs img2webp,
ffmpeg, gifsicle on PATH; run from anywhere)
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "ripple-render"
CACHE = Path(os.environ.get("CACHE", "/tmp/ripple-effort-bench"))
RUNS = 3
LEVELS = ("fast", "default", "max")


def timed(command, **kwargs):
    """The wall time of one run of `command`, in seconds."""
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    return time.perf_counter() - started


def cached(path, command):
    """Runs `command` (which writes `path`) once; its time is kept in `path`.time."""
    stamp = Path(str(path) + ".time")
    if not path.exists() or not stamp.exists():
        stamp.write_text(str(timed(command)))
    return float(stamp.read_text()), path.stat().st_size


def ours(scene, out, effort, runs):
    times = [timed([str(BIN), str(scene), "-o", str(out), "-f", "-q", "--effort", effort]) for _ in range(runs)]
    return statistics.median(times), out.stat().st_size


def mb(size):
    return f"{size / 1e6:.2f} MB"


def main():
    args = sys.argv[1:]
    m6 = "--m6" in args
    scenes = [Path(a).resolve() for a in args if a != "--m6"] or [ROOT / "bench" / "busy.toml"]
    for scene in scenes:
        info = json.loads(subprocess.run([str(BIN), "plan", str(scene), "--json"], check=True,
                                         capture_output=True, text=True).stdout)
        fps, n = info["fps"], info["frames"]
        work = CACHE / scene.stem
        work.mkdir(parents=True, exist_ok=True)
        frames = work / "frames"
        if not frames.exists():
            subprocess.run([str(BIN), str(scene), "-o", f"{frames}/", "-q"], check=True)
        pngs = sorted(glob.glob(f"{frames}/frame_*.png"))
        delay = str(round(1000 / fps))
        webp = ["img2webp", "-lossless", "-loop", "0", "-d", delay]
        theirs = {
            "img2webp -lossless": cached(work / "m4.webp", [*webp, *pngs, "-o", str(work / "m4.webp")]),
            "ffmpeg APNG": cached(work / "ffmpeg.apng", ["ffmpeg", "-y", "-v", "error", "-framerate", str(fps), "-i",
                                                         f"{frames}/frame_%04d.png", "-plays", "0", "-f", "apng",
                                                         str(work / "ffmpeg.apng")]),
        }
        if m6:
            theirs["img2webp -lossless -m 6 -q 100"] = cached(
                work / "m6.webp", [*webp, "-m", "6", "-q", "100", *pngs, "-o", str(work / "m6.webp")])
        results = {}
        for effort in LEVELS:
            runs = 1 if effort == "max" else RUNS
            # The default GIF in the same run, for the time ratio the fast level is held to.
            gif_default = ours(scene, work / "ratio.gif", "default", runs)[0]
            for fmt in ("gif", "apng", "webp"):
                t, s = ours(scene, work / f"{effort}.{fmt}", effort, runs)
                results[(effort, fmt)] = (t, s, t / gif_default)
        theirs["gifsicle -O3 (of our default GIF)"] = cached(
            work / "O3.gif", ["gifsicle", "-O3", str(work / "default.gif"), "-o", str(work / "O3.gif")])
        print(f"## {scene.relative_to(ROOT) if scene.is_relative_to(ROOT) else scene} "
              f"({info['width']}×{info['height']}, {n} frames)\n")
        for effort in LEVELS:
            print(f"### --effort {effort}\n")
            print("| format | size | × default | time | × default GIF's time |")
            print("|---|---|---|---|---|")
            for fmt in ("gif", "apng", "webp"):
                t, s, ratio = results[(effort, fmt)]
                d = results[("default", fmt)][1]
                print(f"| {fmt.upper() if fmt != 'webp' else 'WebP'} | {mb(s)} | {s / d:.3f} | {t:.2f} s | {ratio:.1f} |")
            print()
        print("### the tools\n")
        print("| tool | size | time | ours at default / theirs (size) | ours at max / theirs (size) |")
        print("|---|---|---|---|---|")
        for tool, (t, s) in theirs.items():
            fmt = "webp" if "webp" in tool else "apng" if "APNG" in tool else "gif"
            d, m = results[("default", fmt)][1], results[("max", fmt)][1]
            print(f"| {tool} | {mb(s)} | {t:.2f} s | {d / s:.3f} | {m / s:.3f} |")
        print()


if __name__ == "__main__":
    main()
