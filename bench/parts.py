#!/usr/bin/env python3
"""What a part of a render costs (docs/distributed.md): the run-ahead per frame (a run that only
simulates) against the whole GIF render per frame, for both water models; then a late range of
the 1920x1080 scene with and without checkpoints. Best of RUNS wall-clock runs each.

Usage: python3 bench/parts.py [RUNS]   (from the repository, after `cargo build --release`)
"""
import shutil
import subprocess
import sys
import tempfile
import time

BIN = "target/release/ripple-render"
FRAMES = 1200


def best(args, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([BIN, *args, "-q"], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return min(times)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    scratch = tempfile.mkdtemp(prefix="ripple-parts-")
    frames = ["--set", f"video.frames={FRAMES}"]
    print("| scene (bench/) | model | run ahead, per frame | whole GIF render, per frame | share |")
    print("|---|---|---|---|---|")
    for scene in ("busy.toml", "busy1080.toml"):
        for model in ("classic", "spring"):
            common = [f"bench/{scene}", *frames, "--set", f"water.model={model}"]
            # A checkpoint every 10^6 frames: none is written, the scene is only simulated.
            ahead = best([*common, "--checkpoints", f"{scratch}/none", "--checkpoint-every", "1000000"], runs)
            whole = best([*common, "-o", f"{scratch}/whole.gif", "-f"], runs)
            print(f"| {scene} | {model} | {ahead / FRAMES * 1e3:.2f} ms | {whole / FRAMES * 1e3:.2f} ms "
                  f"| {ahead / whole:.0%} |")
    common = ["bench/busy1080.toml", *frames]
    late = f"{FRAMES * 9 // 10}.."
    whole = best([*common, "-o", f"{scratch}/whole.gif", "-f"], runs)
    first = best([*common, "-o", f"{scratch}/part.gif", "-f", "--frames", f"..{FRAMES // 10}"], runs)
    alone = best([*common, "-o", f"{scratch}/part.gif", "-f", "--frames", late], runs)
    write = best([*common, "--checkpoints", f"{scratch}/ck", "--checkpoint-every", "100"], runs)
    resumed = best([*common, "-o", f"{scratch}/part.gif", "-f", "--frames", late, "--checkpoints", f"{scratch}/ck"],
                   runs)
    print()
    print(f"busy1080.toml, {FRAMES} frames, GIF: whole {whole:.2f} s; first tenth {first:.2f} s; last tenth "
          f"{alone:.2f} s, {resumed:.2f} s from a checkpoint every 100 frames (writing them: {write:.2f} s)")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
