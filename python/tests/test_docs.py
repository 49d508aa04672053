"""docs/python.md as printed: its API example runs, and what its training loop asserts of
``grid_sample`` holds (checked here with NumPy's own bilinear sampling, since torch is not a
dependency)."""

from __future__ import annotations

import re

import numpy as np

import ripple_render as rr
from conftest import REPO

GUIDE = (REPO / "docs" / "python.md").read_text()


def blocks(language: str) -> list:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE, flags=re.S)


def test_the_api_example_runs_as_printed(monkeypatch):
    monkeypatch.chdir(REPO)
    names: dict = {}
    exec(compile(blocks("python")[0], "docs/python.md", "exec"), names)
    assert names["frames"].shape == (10, 240, 360, 3)
    assert names["item"]["split"] == "train" and names["item"]["frames"].dtype == np.uint8
    assert set(names["truth"]) >= {"frames", "clean", "flow", "warp", "height", "height_raw", "normal", "valid", "meta"}


def test_the_frames_are_the_clean_picture_sampled_at_the_warp_within_grid_samples_rounding(monkeypatch):
    # The guide's loop: examples/dataset.toml samples bilinearly and has no light, so
    # grid_sample(clean, warp) (align_corners=True: -1 and 1 are the first and last pixel
    # centres) is each frame to within 1.5/255.
    monkeypatch.chdir(REPO)
    ds = rr.Dataset("examples/dataset.toml", seed=1, count=12, split="train")
    for i in range(3):
        item = ds[i]
        clean = item["clean"].astype(np.float64) / 255
        h, w = clean.shape[:2]
        x = np.clip(item["warp"][..., 0].astype(np.float64), 0, w - 1)
        y = np.clip(item["warp"][..., 1].astype(np.float64), 0, h - 1)
        x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
        x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
        fx, fy = (x - x0)[..., None], (y - y0)[..., None]
        top = clean[y0, x0] * (1 - fx) + clean[y0, x1] * fx
        bottom = clean[y1, x0] * (1 - fx) + clean[y1, x1] * fx
        redrawn = top * (1 - fy) + bottom * fy
        assert np.abs(redrawn - item["frames"] / 255).max() <= 1.5 / 255, i
