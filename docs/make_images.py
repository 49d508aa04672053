#!/usr/bin/env python3
"""Makes the README's pictures from the bundled scenes (needs pillow and numpy):

    cargo build --release && python3 docs/make_images.py target/release/ripple-render

- docs/pond.gif: scenes/pond.toml as it is;
- docs/gallery-nearest.png, gallery-bilinear.png, gallery-lit.png: one frame of it drawn three
  ways (nearest pixels and no light; smooth sampling; smooth and lit);
- docs/dither.png: a crop of a sky (bench/make_pictures.py) in a GIF, without and with --dither.
"""

import io
import os
import subprocess
import sys
import tempfile

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import make_pictures  # noqa: E402


def render(binary, scene, out, *sets, extra=()):
    args = [binary, scene, "-o", out, "--force", "--quiet", *extra]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True)


def main():
    binary = sys.argv[1]
    docs = os.path.join(ROOT, "docs")
    pond = os.path.join(ROOT, "scenes", "pond.toml")
    render(binary, pond, os.path.join(docs, "pond.gif"))
    tmp = tempfile.mkdtemp()
    looks = {
        "nearest": ["look.sampling=nearest", "look.shading=0", "look.highlight=0"],
        "bilinear": ["look.shading=0", "look.highlight=0"],
        "lit": [],
    }
    for name, sets in looks.items():
        folder = os.path.join(tmp, name) + "/"
        render(binary, pond, folder, *sets)
        Image.open(os.path.join(folder, "frame_0040.png")).save(os.path.join(docs, f"gallery-{name}.png"))
    # A sky, calm water with one stone far from the crop: the GIF's banding is what shows.
    import numpy as np

    sky = np.clip(np.rint(make_pictures.sky()), 0, 255).astype(np.uint8)
    Image.fromarray(sky, "RGB").save(os.path.join(tmp, "sky.png"))
    scene = os.path.join(tmp, "sky.toml")
    with open(scene, "w") as f:
        f.write('[video]\nframes = 2\n[background]\nimage = "sky.png"\n[[stone]]\nat = 0\nx = 400\ny = 280\n')
    crops = []
    for extra in [(), ("--dither",)]:
        gif = os.path.join(tmp, "sky.gif")
        render(binary, scene, gif, extra=extra)
        frame = Image.open(gif).convert("RGB")
        crops.append(frame.crop((20, 20, 260, 180)))
    side = Image.new("RGB", (crops[0].width * 2 + 8, crops[0].height), (255, 255, 255))
    side.paste(crops[0], (0, 0))
    side.paste(crops[1], (crops[0].width + 8, 0))
    side.save(os.path.join(docs, "dither.png"))
    for name in ["pond.gif", "dither.png"] + [f"gallery-{n}.png" for n in looks]:
        print(f"docs/{name}: {os.path.getsize(os.path.join(docs, name)) // 1024} KiB")


if __name__ == "__main__":
    main()
