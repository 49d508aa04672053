#!/usr/bin/env python3
"""Draws scenes/breakwater.png: scenes/lagoon.png with a stone breakwater across it, with two
gaps, where scenes/slit.toml puts its walls (the rects there and the blocks here must agree).

    python3 bench/draw_breakwater.py        # from the repository's root
"""

import numpy as np
from PIL import Image

lagoon = Image.open("scenes/lagoon.png").convert("RGB").resize((360, 240), Image.LANCZOS)
img = np.asarray(lagoon).astype(np.float64)
H, W = img.shape[:2]
ys, xs = np.mgrid[0:H, 0:W]
# The wall: x = 150..158, leaving y = 90..102 and 138..150 open (as in slit.toml).
wall = (xs >= 150) & (xs < 158) & ~(((ys >= 90) & (ys < 102)) | ((ys >= 138) & (ys < 150)))
# Stone blocks 8 px tall, offset by half a block every other course; mortar lines between.
course = ys // 8
mortar = (ys % 8 == 0) | (((xs - 150 + 4 * (course % 2)) % 8) == 0)
rng = np.random.default_rng(5)
tone = 150 + rng.integers(-25, 25, size=(H // 8 + 1, 3))[course, (xs - 150 + 4 * (course % 2)) // 8 % 3]
stone = np.stack([tone * 1.0, tone * 0.96, tone * 0.9], -1)
# Light from the upper left: the left face lit, the right face in shade.
stone *= np.where(xs[..., None] < 152, 1.15, np.where(xs[..., None] > 155, 0.8, 1.0))
stone = np.where(mortar[..., None], stone * 0.55, stone)
out = np.where(wall[..., None], stone, img)
# A soft shadow on the water right of the wall.
shadow = (xs >= 158) & (xs < 162) & np.roll(wall, 4, axis=1)
out = np.where(shadow[..., None], out * 0.7, out)
Image.fromarray(np.clip(out, 0, 255).astype(np.uint8)).save("scenes/breakwater.png")
