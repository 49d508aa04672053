"""The arrays equal the files: for the same spec, seed and index, every key of ``Dataset[i]``
holds what ``ripple-render dataset`` writes for that sequence, in both layouts, and
``render``/``ground_truth`` hold what the program writes for a scene. The files are read here
by their own definitions (NumPy's ``.npy``, PNG through Pillow, Middlebury ``.flo``, KITTI's
PNG), never through the package."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ripple_render as rr
from conftest import REPO, flo, kitti_valid, png, run

SPEC = f"""
[dataset]
pictures = "{(REPO / 'scenes').as_posix()}"
width = [40, 56]
height = [32, 44]
frames = [3, 5]
fps = 25
split = [0.5, 0.25, 0.25]
layout = "LAYOUT"
extras = ["flo", "kitti"]

[water]
model = ["classic", "spring"]
refraction = [0.2, 0.9]
damping_shift = [3, 5]
edges = ["reflect", "absorb", "wrap"]

[stones]
count = [1, 3]
radius = [2, 4]
weight = [300, 900]

[look]
sampling = ["nearest", "bilinear"]
shading = [0, 1200]
"""

COUNT, SEED = 6, 5


def normals(slopes: np.ndarray) -> np.ndarray:
    """Unit normals from a ``normal/`` file's slopes, as docs/python.md defines them: ``(dx,
    dy, 2)`` over its length, every operation in float32."""
    d = slopes.astype(np.float32)
    s = np.sqrt(d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1] + np.float32(4))
    return np.stack([d[..., 0] / s, d[..., 1] / s, np.float32(2) / s], axis=-1)


@pytest.fixture(scope="module", params=["ours", "fsrn"])
def written(request, tmp_path_factory, cli):
    layout = request.param
    folder = tmp_path_factory.mktemp(f"set-{layout}")
    spec = folder / "spec.toml"
    spec.write_text(SPEC.replace("LAYOUT", layout))
    run(cli, "dataset", spec, "--count", COUNT, "--seed", SEED, "-o", folder / "set")
    return layout, spec, folder / "set"


def test_every_key_of_every_item_equals_the_files_of_its_sequence(written, Image):
    layout, spec, root = written
    ds = rr.Dataset(spec, seed=SEED, count=COUNT)
    assert len(ds) == COUNT
    index = json.loads((root / "index.json").read_text())
    looks = set()
    for i in range(COUNT):
        item = ds[i]
        row = index["sequences"][i] if "sequences" in index else index[i]
        folder = root / item["split"] / f"{i:06d}"
        assert item["index"] == i and folder.is_dir(), (i, item["split"], row)
        meta = json.loads((folder / "meta.json").read_text())
        assert item["meta"] == meta
        t, h, w = item["frames"].shape[:3]
        assert (t, h, w) == (meta["frames"], meta["canvas"]["height"], meta["canvas"]["width"])
        assert np.array_equal(item["clean"], np.load(folder / "clean.npy"))
        assert np.array_equal(item["clean"], png(Image, folder / "clean.png"))
        looks.add((meta["water"]["model"], meta["look"]["sampling"]))
        for k in range(t):
            if layout == "ours":
                name = f"{k:05d}"
                frame = png(Image, folder / "frame" / f"{name}.png")
                height = np.load(folder / "height" / f"{name}.npy")
                raw = np.load(folder / "height_raw" / f"{name}.npy")
                warp = np.load(folder / "warp" / f"{name}.npy")
                slopes = np.load(folder / "normal" / f"{name}.npy")
                assert np.array_equal(item["height_raw"][k], raw.astype(np.float32))
                assert np.array_equal(item["warp"][k], warp.astype(np.float32))
                assert np.array_equal(item["normal"][k], normals(slopes))
            else:
                name = f"{k + 1:05d}"
                frame = png(Image, folder / "RGB" / f"{name}.png")
                height = np.load(folder / "depth" / f"{name}.npy")
                side_by_side = np.load(folder / "warp" / f"{name}_warp.npy")
                u, v = side_by_side[:, :w], side_by_side[:, w:]
                assert np.array_equal(item["flow"][k], np.stack([u, v], axis=-1).astype(np.float32))
            assert np.array_equal(item["frames"][k], frame), (i, k)
            assert np.array_equal(item["height"][k], height.astype(np.float32)), (i, k)
            assert np.array_equal(item["flow"][k], flo(folder / "flow" / f"{name}.flo")), (i, k)
            assert np.array_equal(item["valid"][k], kitti_valid(folder / "flow_kitti" / f"{name}.png")), (i, k)
        walls = folder / "walls.npy"
        if walls.exists():
            assert not item["valid"][:, np.load(walls) != 0].any()
    # The spec draws both models and both samplings among its six (else the test proves less).
    assert {m for m, _ in looks} == {"classic", "spring"} and {s for _, s in looks} == {"nearest", "bilinear"}


def test_a_split_keeps_its_sequences_numbered_as_the_dataset_numbers_them(written):
    _, spec, root = written
    for split in ["train", "val", "test"]:
        ds = rr.Dataset(spec, seed=SEED, count=COUNT, split=split)
        on_disk = sorted(int(p.name) for p in (root / split).iterdir()) if (root / split).exists() else []
        assert [ds[k]["index"] for k in range(len(ds))] == on_disk
        assert all(ds[k]["split"] == split for k in range(len(ds)))


def test_render_is_the_png_sequence_the_program_writes(cli, Image, tmp_path):
    scene = REPO / "scenes" / "pond.toml"
    run(cli, scene, "--set", "video.duration=0.4", "-o", f"{tmp_path}/frames/")
    files = sorted((tmp_path / "frames").glob("frame_*.png"))
    frames = rr.render(scene, set={"video.duration": 0.4})
    assert frames.dtype == np.uint8 and frames.shape == (len(files), *png(Image, files[0]).shape)
    for k, path in enumerate(files):
        assert np.array_equal(frames[k], png(Image, path)), k


# pond: a still look; slit: walls; spring: the spring model; loop: a seamless loop's fade.
@pytest.mark.parametrize("name, seconds", [("pond", 0.2), ("slit", 0.2), ("spring", 0.2), ("loop", 1.0)])
def test_ground_truth_of_a_scene_is_its_ground_truth_folder(cli, Image, tmp_path, name, seconds):
    scene = REPO / "scenes" / f"{name}.toml"
    set = {"video.duration": seconds}
    run(cli, scene, "--set", f"video.duration={seconds}", "--ground-truth", tmp_path / "gt", "--ground-truth-extras", "flo,kitti")
    gt = tmp_path / "gt"
    truth = rr.ground_truth(scene, set=set, threads=2)
    meta = json.loads((gt / "meta.json").read_text())
    assert truth["meta"] == meta
    assert np.array_equal(truth["clean"], np.load(gt / "clean.npy"))
    for k in range(meta["frames"]):
        name = f"{k:05d}"
        assert np.array_equal(truth["frames"][k], png(Image, gt / "frame" / f"{name}.png"))
        assert np.array_equal(truth["height"][k], np.load(gt / "height" / f"{name}.npy").astype(np.float32))
        assert np.array_equal(truth["warp"][k], np.load(gt / "warp" / f"{name}.npy").astype(np.float32))
        assert np.array_equal(truth["normal"][k], normals(np.load(gt / "normal" / f"{name}.npy")))
        assert np.array_equal(truth["flow"][k], flo(gt / "flow" / f"{name}.flo"))
        assert np.array_equal(truth["valid"][k], kitti_valid(gt / "flow_kitti" / f"{name}.png"))
    # What render gives is what ground_truth draws.
    assert np.array_equal(rr.render(scene, set=set), truth["frames"])
