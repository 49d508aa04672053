#!/usr/bin/env python3
"""Lossy GIF (`--lossy N`) against `gifsicle -O3 --lossy=N` of our plain GIF: size, and PSNR
against the exact frames (one MSE over every pixel of every frame, each frame as Pillow composes
the GIF).

Usage: python3 bench/lossy_gif.py [SCENE…]   (default: the bundled pond, rain, swipes)
Needs a release build (cargo build --release), gifsicle and Pillow. Prints, per scene, our
sizes and PSNRs at several levels, gifsicle's, and ours at gifsicle's size (interpolated along
our curve in log size), so "at equal size" is read off one table.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "target/release/ripple-render"
LEVELS = [20, 40, 80, 120, 200]


from lossy_webp import at_size, frames, psnr  # one reading of frames, times and PSNR for both


def main():
    scenes = sys.argv[1:] or [str(ROOT / f"scenes/{n}.toml") for n in ["pond", "rain", "swipes"]]
    for scene in scenes:
        report(scene)


def report(scene):
    """Prints the table of one scene: our levels and gifsicle's, and ours at gifsicle's size."""
    if True:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            run = lambda *args: subprocess.run([str(PROGRAM), scene, *args, "-q", "-f"], check=True)
            run("-o", f"{tmp}/frames/")
            run("-o", str(tmp / "plain.gif"))
            # The exact frames, at the plain GIF's times (its delays are the render's).
            times = [t for t, _ in frames(tmp / "plain.gif")]
            pngs = sorted((tmp / "frames").glob("*.png"))
            exact = [(t, np.asarray(Image.open(p).convert("RGB"), dtype=np.float64)) for t, p in zip(times, pngs)]
            plain = (tmp / "plain.gif").stat().st_size
            ours, theirs = [], []
            for n in LEVELS:
                out = tmp / f"ours{n}.gif"
                run("-o", str(out), f"--lossy={n}")
                ours.append((out.stat().st_size, psnr(exact, frames(out))))
                out = tmp / f"gifsicle{n}.gif"
                subprocess.run(["gifsicle", "-O3", f"--lossy={n}", str(tmp / "plain.gif"), "-o", str(out)], check=True)
                theirs.append((out.stat().st_size, psnr(exact, frames(out))))
            base = psnr(exact, frames(tmp / "plain.gif"))
            print(f"\n{Path(scene).stem}: plain GIF {plain / 1e3:.0f} KB, {base:.2f} dB\n")
            print("| level | ours KB | of the plain GIF | ours PSNR | gifsicle KB | gifsicle PSNR | ours at gifsicle's size |")
            print("|---|---|---|---|---|---|---|")
            for n, (s, p), (gs, gp) in zip(LEVELS, ours, theirs):
                at = at_size(ours, gs)
                shown = "—" if at is None else f"{at:.2f} dB"
                print(f"| {n} | {s / 1e3:.0f} | {s / plain:.2f} | {p:.2f} dB | {gs / 1e3:.0f} | {gp:.2f} dB | {shown} |")


if __name__ == "__main__":
    main()
