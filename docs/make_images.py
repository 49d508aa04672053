#!/usr/bin/env python3
"""Makes the pictures of the README and the guides from the bundled scenes (needs pillow and numpy):

    cargo build --release && python3 docs/make_images.py target/release/ripple-render

- docs/pond.gif: scenes/pond.toml as it is;
- docs/gallery-nearest.png, gallery-bilinear.png, gallery-lit.png, gallery-water.png: one frame
  of it drawn four ways (nearest pixels and no light; smooth sampling; smooth and lit by §9
  alone; the gain look as the scene has it: smooth drops, light that multiplies the floor,
  caustics, a sky and glints);
- docs/gallery-pool.png: a frame of scenes/pool.toml, and docs/pool-caustics.png: a crop of it
  at 1:1 and 3x, three frames apart (the net of caustics moves);
- docs/water-before-after.png: 4× crops, the soft look with flat-disc drops above (the look
  before the gain tone) and the scenes as they are below: a stone's first frames (the flat,
  pale octagon), a ring, the spring model's rings and a swipe's wake;
- docs/dither.png: a crop of a sky (bench/make_pictures.py) in a GIF, without and with --dither;
- docs/edges.png: one stone near the left edge, three frames, with that edge reflecting (top row)
  and absorbing (bottom row);
- docs/slit.png: a frame of scenes/slit.toml, the waves spreading behind the two gaps;
- docs/loop.gif: scenes/loop.toml at 15 fps (the water is the same at any frame rate), and
  docs/loop-seam.png: its last three frames and its first three, in the order a viewer plays
  them round the loop.
"""

import io
import os
import subprocess
import sys
import tempfile

from PIL import Image, ImageDraw

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import make_pictures  # noqa: E402


GAIN_KEYS = ("sky_max", "glint", "glint_at", "glint_size", "glint_spread", "sun", "caustics_depth")


def without_gain(scene, tmp):
    """A copy of `scene` in `tmp` without the gain tone's own keys (so that another tone reads
    it), its picture named by full path."""
    folder = os.path.dirname(scene)
    lines = []
    for line in open(scene).read().splitlines():
        key = line.split("=")[0].strip()
        if key in GAIN_KEYS:
            continue
        if key == "image":
            line = f'image = "{os.path.join(folder, line.split(chr(34))[1])}"'
        lines.append(line)
    out = os.path.join(tmp, "plain-" + os.path.basename(scene))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return out


# The look before the gain tone, as the bundled scenes had it.
BEFORE = {
    "pond": ["water.drop=disc", "look.tone=soft", "look.shading=96", "look.highlight=320", "look.caustics=192",
             "look.reflection=128"],
    "spring": ["water.drop=disc", "look.tone=soft", "look.shading=64", "look.highlight=240", "look.caustics=0",
               "look.reflection=0"],
    "swipes": ["water.drop=disc", "look.tone=soft", "look.shading=96", "look.highlight=320", "look.caustics=0",
               "look.reflection=0"],
}


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
    plain = ["look.smooth=0", "look.tone=clamp", "look.caustics=0", "look.reflection=0", "look.shading=96",
             "look.highlight=320", "water.drop=disc"]
    looks = {
        "nearest": ["look.sampling=nearest", *plain, "look.shading=0", "look.highlight=0"],
        "bilinear": [*plain, "look.shading=0", "look.highlight=0"],
        "lit": plain,
        "water": None,
    }
    for name, sets in looks.items():
        folder = os.path.join(tmp, name) + "/"
        render(binary, pond if sets is None else without_gain(pond, tmp), folder, *(sets or []))
        Image.open(os.path.join(folder, "frame_0040.png")).save(os.path.join(docs, f"gallery-{name}.png"))
    pool = os.path.join(tmp, "pool") + "/"
    render(binary, os.path.join(ROOT, "scenes", "pool.toml"), pool)
    Image.open(os.path.join(pool, "frame_0080.png")).save(os.path.join(docs, "gallery-pool.png"))
    pool_caustics(pool, os.path.join(docs, "pool-caustics.png"))
    before_after(binary, tmp, os.path.join(docs, "water-before-after.png"))
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
    edges(binary, tmp, os.path.join(docs, "edges.png"))
    slit = os.path.join(tmp, "slit") + "/"
    render(binary, os.path.join(ROOT, "scenes", "slit.toml"), slit)
    Image.open(os.path.join(slit, "frame_0115.png")).save(os.path.join(docs, "slit.png"))
    loop = os.path.join(ROOT, "scenes", "loop.toml")
    render(binary, loop, os.path.join(docs, "loop.gif"), "video.fps=15")
    seam_strip(binary, loop, tmp, os.path.join(docs, "loop-seam.png"))
    names = ["gallery-pool.png", "pool-caustics.png", "water-before-after.png", "pond.gif", "dither.png", "edges.png", "slit.png", "loop.gif", "loop-seam.png"]
    for name in names + [f"gallery-{n}.png" for n in looks]:
        print(f"docs/{name}: {os.path.getsize(os.path.join(docs, name)) // 1024} KiB")


def before_after(binary, tmp, out):
    """4x crops, nearest-neighbour: columns are pond frames 8 and 12 (a stone's first frames),
    spring frame 30 (fine rings) and swipes frame 40 (a finger's wake); the top row is drawn
    with the look before the gain tone (flat-disc drops, the soft tone), the bottom row as the
    scenes are."""
    shots = [("pond", 8, (150, 78)), ("pond", 12, (150, 78)), ("spring", 30, (120, 60)), ("swipes", 40, (138, 108))]
    rows = []
    for before in [True, False]:
        row = []
        for name, frame, (x, y) in shots:
            folder = os.path.join(tmp, f"ba-{name}-{before}") + "/"
            if not os.path.isdir(folder):
                scene = os.path.join(ROOT, "scenes", f"{name}.toml")
                if before:
                    render(binary, without_gain(scene, tmp), folder, *BEFORE[name])
                else:
                    render(binary, scene, folder)
            image = Image.open(os.path.join(folder, f"frame_{frame:04d}.png")).crop((x, y, x + 60, y + 60))
            row.append(image.resize((240, 240), Image.NEAREST))
        rows.append(row)
    gap, label = 6, 18
    sheet = Image.new("RGB", (4 * 240 + 3 * gap + 60, 2 * (240 + label) + gap), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    for r, (title, row) in enumerate(zip(["before", "gain look"], rows)):
        y = r * (240 + label + gap)
        draw.text((4, y + label + 110), title, fill=(0, 0, 0))
        for k, image in enumerate(row):
            name, frame, _ = shots[k]
            draw.text((60 + k * (240 + gap) + 4, y + 3), f"{name} frame {frame}", fill=(0, 0, 0))
            sheet.paste(image, (60 + k * (240 + gap), y + label))
    sheet.save(out)


def pool_caustics(folder, out):
    """scenes/pool.toml at 1:1 (frame 80) beside 3x crops of the same place in frames 80, 83 and
    86: the caustics' net of lines, moving."""
    x, y, size = 170, 30, 80
    frames = [Image.open(os.path.join(folder, f"frame_{n:04d}.png")) for n in (80, 83, 86)]
    crops = [f.crop((x, y, x + size, y + size)).resize((3 * size, 3 * size), Image.NEAREST) for f in frames]
    full = frames[0].copy()
    ImageDraw.Draw(full).rectangle([x - 1, y - 1, x + size, y + size], outline=(255, 80, 80))
    gap, label = 6, 18
    width = full.width + 3 * (3 * size + gap)
    sheet = Image.new("RGB", (width, label + max(full.height, 3 * size)), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    draw.text((4, 3), "frame 80, 1:1", fill=(0, 0, 0))
    sheet.paste(full, (0, label))
    for k, (n, crop) in enumerate(zip((80, 83, 86), crops)):
        left = full.width + gap + k * (3 * size + gap)
        draw.text((left + 4, 3), f"frame {n}, 3x", fill=(0, 0, 0))
        sheet.paste(crop, (left, label))
    sheet.save(out)


def edges(binary, tmp, out):
    """Reflect | absorb: the same stone, 24 cells from the left edge of a pool floor, at three
    moments; each row labelled with its edge, each column with its frame."""
    scene = os.path.join(tmp, "edges.toml")
    with open(scene, "w") as f:
        f.write(
            f'[video]\nwidth = 240\nheight = 160\nframes = 60\n'
            '[background]\npattern = "tiles"\n'
            '[water]\nsteps_per_frame = 2\ndamping_shift = 9\nrefraction = 0.05\n'
            '[look]\nsampling = "bilinear"\nshading = 128\nhighlight = 320\n'
            '[edges]\nleft = "reflect"\n'
            '[[stone]]\nat = 0\nx = 24\ny = 80\nradius = 6\nweight = 300\n'
        )
    frames = [16, 30, 44]
    label = 18
    rows = []
    for edge in ["reflect", "absorb"]:
        folder = os.path.join(tmp, f"edges-{edge}") + "/"
        render(binary, scene, folder, f"edges.left={edge}")
        rows.append((edge, [Image.open(os.path.join(folder, f"frame_{n:04d}.png")) for n in frames]))
    w, h = rows[0][1][0].size
    gap = 6
    sheet = Image.new("RGB", (label * 4 + 3 * w + 2 * gap, label + 2 * h + gap), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    for k, n in enumerate(frames):
        draw.text((label * 4 + k * (w + gap) + 4, 4), f"frame {n}", fill=(0, 0, 0))
    for r, (edge, images) in enumerate(rows):
        y = label + r * (h + gap)
        draw.text((4, y + h // 2 - 6), edge, fill=(0, 0, 0))
        for k, image in enumerate(images):
            sheet.paste(image, (label * 4 + k * (w + gap), y))
    sheet.save(out)


def seam_strip(binary, scene, tmp, out):
    """The last three frames, then the first three, of a loop: the jump sits in the middle."""
    folder = os.path.join(tmp, "loop") + "/"
    render(binary, scene, folder, "video.fps=15")
    names = sorted(os.listdir(folder))
    picks = names[-3:] + names[:3]
    images = [Image.open(os.path.join(folder, n)) for n in picks]
    images = [i.resize((i.width * 2 // 3, i.height * 2 // 3), Image.LANCZOS) for i in images]
    w, h = images[0].size
    gap, label, seam = 4, 18, 14
    sheet = Image.new("RGB", (6 * w + 4 * gap + seam, label + h), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    x = 0
    for i, (name, image) in enumerate(zip(picks, images)):
        if i == 3:
            draw.line([(x + seam // 2 - gap // 2, 0), (x + seam // 2 - gap // 2, label + h)], fill=(200, 0, 0), width=2)
            x += seam
        draw.text((x + 4, 3), f"frame {int(name[6:10])}", fill=(0, 0, 0))
        sheet.paste(image, (x, label))
        x += w + gap
    sheet.save(out)


if __name__ == "__main__":
    main()
