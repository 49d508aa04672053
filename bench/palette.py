#!/usr/bin/env python3
"""GIF colours against ffmpeg: renders each picture of `bench/make_pictures.py` as exact PNG
frames, as our GIF, and as ffmpeg's GIF of those frames (palettegen + paletteuse=dither=none),
and compares each GIF with the exact frames: PSNR over all frames and channels, and size.

    python3 bench/make_pictures.py /tmp/pictures
    python3 bench/palette.py target/release/ripple-render /tmp/pictures [--look] [--other BIN] [--dither]

`--look` renders with a lit, bilinear look (a look's frames hold colours the background lacks);
`--other BIN` adds another build's GIF (say, the previous release) as a column; `--dither`
adds our `--dither` GIF. Needs ffmpeg on PATH.
"""

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

FRAMES = 60


def scene(image, look):
    text = f"""[video]
fps = 25
frames = {FRAMES}
[background]
image = "{image}"
[[stone]]
at = 0.1
x = 120
y = 100
radius = 8
weight = 900
[[stone]]
at = 0.8
x = 330
y = 210
radius = 6
weight = 700
[rain]
drops_per_second = 20
radius = [2, 5]
weight = [200, 500]
seed = 3
"""
    if look:
        text += "[look]\nsampling = \"bilinear\"\nshading = 256\nhighlight = 512\n"
    return text


def psnr(binary, gif, exact):
    """PSNR of a GIF against the exact PNG frames over every frame, from diff's per-frame figures."""
    run = subprocess.run([binary, "diff", str(gif), str(exact), "--json"], capture_output=True, text=True)
    report = json.loads(run.stdout)
    samples = report["a"]["width"] * report["a"]["height"] * 3
    squares = 0.0
    for f in report["frames"]:
        if f["psnr"] is not None:
            squares += samples * 255.0 ** 2 / 10 ** (f["psnr"] / 10)
    mse = squares / (samples * len(report["frames"]))
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def main():
    args = sys.argv[1:]
    binary, pictures = args[0], Path(args[1])
    look, dither = "--look" in args, "--dither" in args
    other = args[args.index("--other") + 1] if "--other" in args else None
    names = sorted(p.stem for p in pictures.glob("*.png"))
    header = "picture     ffmpeg dB   ours dB   Δ dB    ffmpeg KB   ours KB   size"
    if other:
        header += "   other dB  other KB"
    if dither:
        header += "   dither dB  dither KB"
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in names:
            toml = tmp / f"{name}.toml"
            toml.write_text(scene((pictures / f"{name}.png").resolve(), look))
            exact, ours, ff = tmp / f"{name}-exact", tmp / f"{name}-ours.gif", tmp / f"{name}-ffmpeg.gif"
            subprocess.run([binary, toml, "-o", f"{exact}/", "-q", "-f"], check=True)
            subprocess.run([binary, toml, "-o", ours, "-q", "-f"], check=True)
            subprocess.run(
                ["ffmpeg", "-v", "error", "-y", "-framerate", "25", "-i", f"{exact}/frame_%04d.png",
                 "-vf", "split[a][b];[a]palettegen[p];[b][p]paletteuse=dither=none", ff],
                check=True,
            )
            p_ff, p_ours = psnr(binary, ff, exact), psnr(binary, ours, exact)
            s_ff, s_ours = ff.stat().st_size / 1024, ours.stat().st_size / 1024
            line = (f"{name:<10} {p_ff:9.2f} {p_ours:9.2f} {p_ours - p_ff:+6.2f} {s_ff:11.0f} {s_ours:9.0f}"
                    f"   {s_ours / s_ff:4.2f}")
            if other:
                theirs = tmp / f"{name}-other.gif"
                subprocess.run([other, toml, "-o", theirs, "-q", "-f"], check=True)
                line += f" {psnr(binary, theirs, exact):10.2f} {theirs.stat().st_size / 1024:9.0f}"
            if dither:
                dithered = tmp / f"{name}-dither.gif"
                subprocess.run([binary, toml, "-o", dithered, "-q", "-f", "--dither"], check=True)
                line += f" {psnr(binary, dithered, exact):11.2f} {dithered.stat().st_size / 1024:10.0f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
