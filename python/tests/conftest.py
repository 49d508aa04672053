"""What the tests share: the repository, the command-line program, readers of its files.

The program is found through ``RIPPLE_RENDER_BIN`` (the Rust test that runs these sets it to
the build it made) or as ``ripple-render`` on the PATH. Under ``CI=true`` a missing program or
Pillow fails the run instead of skipping.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import struct
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _need(what: str, install: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing, and CI runs every test: {install}")
    pytest.skip(f"{what} is missing ({install})")


@pytest.fixture(scope="session")
def cli() -> str:
    """The ``ripple-render`` program."""
    found = os.environ.get("RIPPLE_RENDER_BIN") or shutil.which("ripple-render")
    if not found or not os.path.exists(found):
        _need("the ripple-render program", "cargo build, then set RIPPLE_RENDER_BIN=target/debug/ripple-render")
    return found


@pytest.fixture(scope="session")
def Image():
    """Pillow's Image module (a test dependency: ``pip install ./python[test]``)."""
    try:
        from PIL import Image as module
    except ImportError:
        _need("Pillow", "pip install pillow")
    return module


def run(cli: str, *args: str, cwd=None) -> None:
    done = subprocess.run([cli, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def png(Image, path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "RGB", path
        return np.asarray(image)


def flo(path) -> np.ndarray:
    """A Middlebury ``.flo`` file, read from its definition: ``PIEH``, width, height, then
    ``u, v`` float32 per pixel."""
    data = pathlib.Path(path).read_bytes()
    assert data[:4] == b"PIEH"
    w, h = struct.unpack("<ii", data[4:12])
    return np.frombuffer(data[12:], dtype="<f4").reshape(h, w, 2)


def kitti_valid(path) -> np.ndarray:
    """The valid mask of a KITTI flow PNG: its third channel, nonzero where the flow is valid.
    (Pillow reads a 16-bit RGB PNG as 8 bits, losing the mask's 1, so it is decoded here.)"""
    return _png16_rgb(path)[..., 2] != 0


def _png16_rgb(path) -> np.ndarray:
    """A 16-bit RGB PNG without interlacing, decoded from the PNG definition (filters 0-4)."""
    import zlib

    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, w = 8, b"", 0
    while at < len(data):
        (n,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, colour, interlace) == (16, 2, 0)
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    raw = zlib.decompress(idat)
    bpp, stride = 6, 6 * w
    rows = np.zeros((h, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(h):
        line = raw[y * (stride + 1) : (y + 1) * (stride + 1)]
        f, cur = line[0], np.frombuffer(line[1:], dtype=np.uint8).astype(np.int32)
        out = np.zeros(stride, dtype=np.int32)
        for x in range(stride):
            a = out[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if f == 0:
                p = 0
            elif f == 1:
                p = a
            elif f == 2:
                p = b
            elif f == 3:
                p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out[x] = (cur[x] + p) & 0xFF
        rows[y], prev = out, out
    return rows.reshape(h, w, 3, 2)[..., 0].astype(np.uint16) << 8 | rows.reshape(h, w, 3, 2)[..., 1]
