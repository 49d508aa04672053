"""The package as a Python user meets it: determinism whatever the order, thread or process;
pickling; the lock released while an item is made; memory that stays flat; and errors that are
the exceptions Python users expect, carrying the program's message."""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import struct
import sys
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ripple_render as rr
from conftest import REPO

SPEC = REPO / "examples" / "dataset.toml"
SMALL = f"""
[dataset]
pictures = "{(REPO / 'scenes').as_posix()}"
width = 64
height = 48
frames = [3, 6]
fps = 25

[stones]
count = [1, 3]
radius = [2, 4]
weight = [300, 900]
"""


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k] == b[k] if not isinstance(a[k], np.ndarray) else np.array_equal(a[k], b[k]) for k in a
    )


def test_the_version_and_the_types_are_there():
    assert rr.__version__ == json.loads('"' + rr.__version__ + '"') and rr.__version__.count(".") == 2
    package = pathlib.Path(rr.__file__).parent
    assert (package / "py.typed").exists() and (package / "_native.pyi").exists()


def test_items_are_the_same_whatever_the_order_and_the_thread():
    ds = rr.Dataset(SMALL, seed=11, count=8)
    forward = [ds[i] for i in range(len(ds))]
    backward = [ds[i] for i in reversed(range(len(ds)))][::-1]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(ds.__getitem__, range(len(ds))))
    again = rr.Dataset(SMALL, seed=11, count=8)
    for i in range(len(ds)):
        assert same(forward[i], backward[i]) and same(forward[i], threaded[i]) and same(forward[i], again[i]), i
    # Another seed draws other sequences.
    assert not np.array_equal(rr.Dataset(SMALL, seed=12, count=8)[0]["height"], forward[0]["height"])


def test_negative_indices_count_from_the_end_as_a_sequence_does():
    ds = rr.Dataset(SMALL, seed=3, count=5)
    assert same(ds[-1], ds[4]) and same(ds[-5], ds[0])
    for bad in [5, -6, 1 << 70]:
        with pytest.raises(IndexError):
            ds[bad]
    with pytest.raises(TypeError):
        ds[1.0]
    with pytest.raises(TypeError):
        ds["0"]
    assert same(ds[np.int64(2)], ds[2])
    assert len(list(ds)) == 5


def _items_in_a_worker(args):
    data, indices = args
    ds = pickle.loads(data)
    return [ds[i] for i in indices]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_dataset_pickles_and_each_process_makes_the_same_items(method):
    import multiprocessing

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not a start method here")
    ds = rr.Dataset(SPEC, seed=2, count=6, split="train")
    data = pickle.dumps(ds)
    assert repr(pickle.loads(data)) == repr(ds)
    with multiprocessing.get_context(method).Pool(2) as pool:
        made = pool.map(_items_in_a_worker, [(data, [0, 2]), (data, [1, 3])])
    for got, indices in zip(made, [[0, 2], [1, 3]]):
        for item, i in zip(got, indices):
            assert same(item, ds[i])


def test_a_spec_given_as_text_pickles_with_its_folder(tmp_path, monkeypatch):
    text = SMALL.replace((REPO / "scenes").as_posix(), "scenes")
    monkeypatch.chdir(REPO)
    ds = rr.Dataset(text, seed=4, count=3)
    monkeypatch.chdir(tmp_path)
    assert same(pickle.loads(pickle.dumps(ds))[1], ds[1])


def test_the_lock_is_released_while_an_item_is_made():
    ds = rr.Dataset(SPEC, seed=1, count=4)
    ticks = [0]
    running = threading.Event()
    stop = threading.Event()

    def count():
        running.set()
        while not stop.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    running.wait()
    # The counting thread gets the lock only when the main thread lets it go: within one long
    # native call that held it, it would not count at all.
    try:
        longest = 0
        for _ in range(3):
            before = ticks[0]
            rr.ground_truth(REPO / "scenes" / "pond.toml", set={"video.duration": 1.0})
            longest = max(longest, ticks[0] - before)
    finally:
        stop.set()
        counter.join()
    assert longest > 1000


def test_memory_stays_flat_over_many_items():
    statm = pathlib.Path("/proc/self/statm")
    if not statm.exists():
        pytest.skip("resident memory is read from /proc/self/statm, which this system has not")
    page = os.sysconf("SC_PAGE_SIZE")

    def resident() -> int:
        return int(statm.read_text().split()[1]) * page

    text = SPEC.read_text().replace("frames = [24, 40]", "frames = 10").replace('"../scenes"', f'"{(REPO / "scenes").as_posix()}"')
    ds = rr.Dataset(text, seed=0, count=600)
    for i in range(100):
        ds[i]
    after_100 = resident()
    for i in range(100, 600):
        ds[i]
    grown = resident() - after_100
    assert grown <= 20 << 20, f"resident memory grew {grown / 2**20:.1f} MiB over 500 items after the first 100"


# --- errors -----------------------------------------------------------------------------


def test_a_scene_the_program_refuses_raises_value_error_with_its_message():
    with pytest.raises(ValueError) as caught:
        rr.render("[video]\nframes = 2\nwidth = 40\nheight = 30\n[water]\nrefraction = 70\n")
    message = str(caught.value)
    assert "<scene>:6:14: water.refraction = 70" in message and "allowed" in message, message


def test_a_bad_override_raises_value_error_naming_it():
    with pytest.raises(ValueError, match=r"--set water.refraction=70"):
        rr.render(REPO / "scenes" / "pond.toml", set={"water.refraction": 70})
    with pytest.raises(ValueError, match=r"unknown key `water.nonsense`: allowed keys in \[water\]"):
        rr.render(REPO / "scenes" / "pond.toml", set={"water.nonsense": 1})
    with pytest.raises(TypeError, match=r"set\[.water.refraction.\] is a dict"):
        rr.render(REPO / "scenes" / "pond.toml", set={"water.refraction": {}})
    with pytest.raises(TypeError):
        rr.render(REPO / "scenes" / "pond.toml", set=[("video.frames", 2)])


def test_missing_files_raise_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing-here.toml"):
        rr.render(tmp_path / "nothing-here.toml")
    with pytest.raises(FileNotFoundError, match="nothing-here.toml"):
        rr.Dataset(tmp_path / "nothing-here.toml", count=1)
    scene = tmp_path / "scene.toml"
    scene.write_text('[video]\nframes = 2\n[background]\nimage = "gone.png"\n')
    with pytest.raises(FileNotFoundError, match="gone.png"):
        rr.ground_truth(scene)


def test_counts_seeds_and_splits_are_checked_as_python_checks_them():
    for count in [0, -1]:
        with pytest.raises(ValueError, match="count"):
            rr.Dataset(SPEC, count=count)
    with pytest.raises(TypeError, match="count"):
        rr.Dataset(SPEC, count=2.5)
    with pytest.raises(TypeError, match="count"):
        rr.Dataset(SPEC, count=True)
    for seed in [-1, 1 << 64]:
        with pytest.raises(ValueError, match="seed"):
            rr.Dataset(SPEC, seed=seed, count=1)
    assert len(rr.Dataset(SPEC, seed=(1 << 64) - 1, count=1)) == 1
    with pytest.raises(ValueError, match='"train", "val", "test"'):
        rr.Dataset(SPEC, count=4, split="training")
    with pytest.raises(TypeError):
        rr.Dataset(SPEC)  # count has no default
    with pytest.raises(TypeError, match="scene"):
        rr.render(42)


def _png_header_only(width: int, height: int, depth: int) -> bytes:
    """A PNG's signature and header and no pixels: what a picture's size is read from."""
    body = struct.pack(">IIBBBBB", width, height, depth, 6, 0, 0, 0)
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    # The first row's filter byte, and nothing after it.
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", body) + chunk(b"IDAT", zlib.compress(b"\0")) + chunk(b"IEND", b"")


def test_a_picture_too_large_for_the_default_budget_raises_memory_error_first(tmp_path):
    # 8000×8000 16-bit RGBA decodes to 488 MiB (and its 8-bit copy 244 MiB more), over a
    # quarter of the 1 GiB default. Only its
    # header exists: a decode would fail, so the MemoryError proves nothing was decoded.
    (tmp_path / "huge.png").write_bytes(_png_header_only(8000, 8000, 16))
    scene = tmp_path / "scene.toml"
    scene.write_text('[video]\nframes = 2\nwidth = 64\nheight = 48\n[background]\nimage = "huge.png"\n')
    with pytest.raises(MemoryError, match=r"scene.toml:6:9: background.image = \"huge.png\": .*huge.png: it is 8000×8000 and would take 732 MiB to decode, over the decode budget of 256 MiB"):
        rr.ground_truth(scene)
    with pytest.raises(MemoryError, match="max_memory="):
        rr.render(scene)


def test_arrays_over_the_budget_raise_memory_error_before_allocating():
    with pytest.raises(MemoryError, match=r"4000×4000") as caught:
        rr.ground_truth("[video]\nframes = 400\nwidth = 4000\nheight = 4000\n")
    assert "max_memory=" in str(caught.value)
    with pytest.raises(MemoryError):
        rr.render("[video]\nframes = 2\nwidth = 64\nheight = 48\n", max_memory=1000)


def test_every_hostile_scene_of_the_programs_tests_raises_and_never_crashes(monkeypatch):
    folder = os.environ.get("RIPPLE_HOSTILE")
    if not folder:
        if os.environ.get("CI") == "true":
            pytest.fail("RIPPLE_HOSTILE names no folder: run these tests through cargo test (tests/it/python.rs)")
        pytest.skip("RIPPLE_HOSTILE names no folder of hostile scenes (cargo test writes one)")
    cases = sorted(pathlib.Path(folder).iterdir())
    assert len(cases) > 20
    for case in cases:
        expect = json.loads((case / "expect.json").read_text())
        # The program's tests run in the case's folder, and so do these: messages name the
        # scene as given.
        monkeypatch.chdir(case)
        for call in (rr.render, rr.ground_truth):
            with pytest.raises((ValueError, FileNotFoundError, MemoryError)) as caught:
                call(pathlib.Path("scene.toml"))
            message = str(caught.value)
            at = 0
            for text in expect["texts"]:
                found = message.find(text, at)
                assert found >= 0, f"{expect['name']}: {text!r} not in (after {at}) {message!r}"
                at = found + len(text)
