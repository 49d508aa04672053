#!/usr/bin/env python3
"""Lossy GIF on photo-like pictures: each picture bench/make_pictures.py draws (480×320:
gradients, noise, texture, many hues) under a busy scene of 100 frames (a stone, a swipe, rain),
through bench/lossy_gif.py's table: our --lossy levels against `gifsicle -O3 --lossy` of our
plain GIF, sizes and PSNR, and ours at gifsicle's size.

Usage: python3 bench/lossy_photos.py [NAME…]   (default: every picture; needs what
bench/lossy_gif.py needs)
"""

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from lossy_gif import report  # noqa: E402

SCENE = """[video]
width = 480
height = 320
fps = 25
frames = 100
[background]
image = "{picture}"
[[stone]]
at = 0.3
x = 240
y = 160
radius = 8
weight = 600
[[swipe]]
from = 1.0
until = 3.0
path = [[40, 60], [440, 280], [440, 60]]
radius = 3
[rain]
drops_per_second = 6
seed = 2
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, str(ROOT / "bench/make_pictures.py"), str(tmp)], check=True,
                       stdout=subprocess.DEVNULL)
        names = sys.argv[1:] or sorted(p.stem for p in tmp.glob("*.png"))
        for name in names:
            scene = tmp / f"{name}.toml"
            scene.write_text(SCENE.format(picture=f"{name}.png"))
            report(str(scene))


if __name__ == "__main__":
    main()
