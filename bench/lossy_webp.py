#!/usr/bin/env python3
"""Lossy WebP (`--quality`) against ffmpeg's libwebp_anim fed the exact PNG frames, and against
the GIF: size, and PSNR against the exact frames (one MSE over every pixel of every frame, as
libwebp's decoder composes the animation, through Pillow).

Usage: python3 bench/lossy_webp.py [SCENE…]   (default: the bundled pond, rain, pool, swipes)
Needs a release build (cargo build --release), ffmpeg with libwebp_anim, and Pillow with WebP.

For each scene it prints our sizes and PSNRs at several qualities, ffmpeg's, and ours at
ffmpeg's size (PSNR interpolated along our curve), so "at equal size" is read off one table.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageSequence

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "target/release/ripple-render"
QUALITIES = [30, 50, 75, 90]


def frames(path):
    """The frames as shown, each with when it starts (ms): an encoder may merge equal frames."""
    out, start = [], 0
    with Image.open(path) as image:
        for f in ImageSequence.Iterator(image):
            out.append((start, np.asarray(f.convert("RGB"), dtype=np.float64)))
            start += f.info.get("duration", 0)
    return out


def shown_at(frames_, t):
    """The frame shown at time t."""
    current = frames_[0][1]
    for start, frame in frames_:
        if start > t:
            break
        current = frame
    return current


def psnr(exact, other):
    mse = np.mean([np.mean((a - shown_at(other, t)) ** 2) for t, a in exact])
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def fps_of(scene):
    for line in Path(scene).read_text().splitlines():
        if line.replace(" ", "").startswith("fps="):
            return int(line.split("=")[1])
    return 25


def at_size(curve, size):
    """Our PSNR at `size` bytes, interpolated (in log size) along `curve` [(size, psnr)], or None
    outside the curve's sizes."""
    curve = sorted(curve)
    if not curve[0][0] <= size <= curve[-1][0]:
        return None
    return float(np.interp(np.log(size), np.log([s for s, _ in curve]), [p for _, p in curve]))


def main():
    scenes = sys.argv[1:] or [str(ROOT / f"scenes/{n}.toml") for n in ["pond", "rain", "pool", "swipes"]]
    for scene in scenes:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            run = lambda *args: subprocess.run([str(PROGRAM), scene, *args, "-q", "-f"], check=True)
            run("-o", f"{tmp}/frames/")
            run("-o", str(tmp / "exact.webp"))
            run("-o", str(tmp / "plain.gif"))
            exact = frames(tmp / "exact.webp")
            gif = (tmp / "plain.gif").stat().st_size
            ours = []
            for q in QUALITIES:
                out = tmp / f"ours{q}.webp"
                run("-o", str(out), f"--quality={q}")
                ours.append((out.stat().st_size, psnr(exact, frames(out)), q))
            theirs = []
            for q in QUALITIES:
                out = tmp / f"ffmpeg{q}.webp"
                subprocess.run(
                    ["ffmpeg", "-v", "error", "-y", "-framerate", str(fps_of(scene)), "-i", str(tmp / "frames/frame_%04d.png"),
                     "-c:v", "libwebp_anim", "-lossless", "0", "-quality", str(q), "-loop", "0", str(out)],
                    check=True,
                )
                theirs.append((out.stat().st_size, psnr(exact, frames(out)), q))
            name = Path(scene).stem
            print(f"\n{name}: GIF {gif / 1e3:.0f} KB, exact WebP {(tmp / 'exact.webp').stat().st_size / 1e3:.0f} KB\n")
            print("| quality | ours KB | ours PSNR | of the GIF | ffmpeg KB | ffmpeg PSNR | ours at ffmpeg's size |")
            print("|---|---|---|---|---|---|---|")
            curve = [(s, p) for s, p, _ in ours]
            for (s, p, q), (fs, fp, _) in zip(ours, theirs):
                at = at_size(curve, fs)
                shown = "—" if at is None else f"{at:.2f} dB"
                print(f"| {q} | {s / 1e3:.0f} | {p:.2f} dB | {s / gif:.2f} | {fs / 1e3:.0f} | {fp:.2f} dB | {shown} |")


if __name__ == "__main__":
    main()
