#!/usr/bin/env python3
"""Our APNG, WebP and MP4 against the usual tools on the same frames, for docs/benchmarks.md:

* APNG: `ripple-render -o x.apng` (the whole render) against `ffmpeg -f apng` from the PNG frames
  of the same render;
* WebP: `ripple-render -o x.webp` against `img2webp -lossless` (Debian package webp) from the
  same PNG frames;
* MP4: the whole render to `x.mp4` against ffmpeg encoding the same raw RGB frames, read from a
  file, with the same settings (our part must not be the bottleneck);
* and, with --table, every bundled scene in every format: the table of sizes in docs/cli.md.

Times are wall-clock, best of 3 runs for each side alike (this VM's speed drifts between runs).
Usage: python3 bench/formats.py [SCENE ...] | python3 bench/formats.py --table
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "ripple-render"
RUNS = 3


def best(command, **kwargs):
    """The best wall time of RUNS runs of `command` (a list), in seconds."""
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
        times.append(time.perf_counter() - started)
    return min(times)


def plan(scene):
    out = subprocess.run([str(BIN), "plan", str(scene), "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def mb(path):
    return os.path.getsize(path) / 1e6


def compare(scene, tmp):
    info = plan(scene)
    fps, w, h, n = info["fps"], info["width"], info["height"], info["frames"]
    frames = tmp / "frames"
    subprocess.run([str(BIN), str(scene), "-o", f"{frames}/", "-f", "-q"], check=True)
    pngs = sorted(glob.glob(f"{frames}/frame_*.png"))
    ours = lambda out: best([str(BIN), str(scene), "-o", str(out), "-f", "-q"])
    print(f"## {scene} ({w}×{h}, {n} frames at {fps} fps)\n")
    print("| | ours | theirs | ours / theirs |")
    print("|---|---|---|---|")

    apng, ff_apng = tmp / "ours.apng", tmp / "ffmpeg.apng"
    t_ours = ours(apng)
    t_ff = best(["ffmpeg", "-y", "-v", "error", "-framerate", str(fps), "-i", f"{frames}/frame_%04d.png",
                 "-plays", "0", "-f", "apng", str(ff_apng)])
    print(f"| APNG, time (ours: the whole render; ffmpeg: from PNG frames) | {t_ours:.2f} s | {t_ff:.2f} s "
          f"| {t_ours / t_ff:.2f} ({t_ff / t_ours:.1f}× faster) |")
    print(f"| APNG, size | {mb(apng):.2f} MB | {mb(ff_apng):.2f} MB | {mb(apng) / mb(ff_apng):.2f} |")

    webp, img2webp = tmp / "ours.webp", tmp / "img2webp.webp"
    t_ours = ours(webp)
    t_img = best(["img2webp", "-lossless", "-loop", "0", "-d", str(round(1000 / fps)), *pngs, "-o", str(img2webp)])
    print(f"| WebP, time (img2webp: from PNG frames) | {t_ours:.2f} s | {t_img:.2f} s "
          f"| {t_ours / t_img:.2f} ({t_img / t_ours:.1f}× faster) |")
    print(f"| WebP, size | {mb(webp):.2f} MB | {mb(img2webp):.2f} MB | {mb(webp) / mb(img2webp):.2f} |")

    mp4, raw, ff_mp4 = tmp / "ours.mp4", tmp / "frames.rgb", tmp / "ffmpeg.mp4"
    coded = (w + w % 2, h + h % 2)
    subprocess.run(["ffmpeg", "-y", "-v", "error", "-framerate", str(fps), "-i", f"{frames}/frame_%04d.png",
                    "-vf", f"pad={coded[0]}:{coded[1]}", "-f", "rawvideo", "-pix_fmt", "rgb24", str(raw)], check=True)
    t_ours = ours(mp4)
    t_ff = best(["ffmpeg", "-y", "-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-video_size",
                 f"{coded[0]}x{coded[1]}", "-framerate", str(fps), "-i", str(raw), "-an", "-c:v", "libx264",
                 "-preset", "medium", "-tune", "animation", "-crf", "16", "-pix_fmt", "yuv420p", "-r", str(fps),
                 "-movflags", "+faststart", str(ff_mp4)])
    print(f"| MP4, time (ffmpeg: the same raw frames from a file, same settings) | {t_ours:.2f} s | {t_ff:.2f} s "
          f"| {t_ours / t_ff:.2f} |")
    print(f"| MP4, size | {mb(mp4):.2f} MB | {mb(ff_mp4):.2f} MB | {mb(mp4) / mb(ff_mp4):.2f} |")
    print()


def table(tmp):
    formats = ["gif", "apng", "webp", "mp4", "webm"]
    print("| scene | canvas, frames | " + " | ".join(f".{f}" for f in formats) + " | PNG folder |")
    print("|---|---|" + "---|" * (len(formats) + 1))
    for scene in sorted(glob.glob(str(ROOT / "scenes" / "*.toml"))):
        info = plan(scene)
        sizes = []
        for f in formats:
            out = tmp / f"out.{f}"
            subprocess.run([str(BIN), scene, "-o", str(out), "-f", "-q"], check=True)
            sizes.append(f"{mb(out):.2f} MB")
        folder = tmp / "seq"
        subprocess.run([str(BIN), scene, "-o", f"{folder}/", "-f", "-q"], check=True)
        total = sum(os.path.getsize(p) for p in glob.glob(f"{folder}/*.png")) / 1e6
        name = Path(scene).name
        print(f"| {name} | {info['width']}×{info['height']}, {info['frames']} | " + " | ".join(sizes)
              + f" | {total:.2f} MB |")


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if sys.argv[1:] == ["--table"]:
            table(tmp)
            return
        for scene in sys.argv[1:] or [ROOT / "scenes" / "pond.toml", ROOT / "bench" / "busy.toml"]:
            compare(Path(scene), tmp)


if __name__ == "__main__":
    main()
