"""Exact synthetic water in process: frames and their ground truth as NumPy arrays.

``ripple_render`` is the Python face of ripple-render's library (the program that renders
water ripples over a picture from a TOML scene). Every array is made in Rust with the
interpreter's lock released and handed over without a copy; it equals, value for value, the
files ``ripple-render --ground-truth`` and ``ripple-render dataset`` write.

- :func:`render` -- a scene's frames, ``T×H×W×3`` uint8.
- :func:`ground_truth` -- a scene's frames with the flow, warp, heights, normals and mask they
  were drawn with.
- :class:`Dataset` -- the sequences of a dataset spec, made on demand, deterministic per
  ``(spec, seed, index)``; a ``torch.utils.data.Dataset`` in all but name (it pickles).

Errors are Python exceptions carrying the program's own message (``file:line:column``, the
key, the value, what is allowed): :class:`ValueError` for a scene or spec it refuses,
:class:`FileNotFoundError` for a file that is not there, :class:`MemoryError` for arrays over
the memory budget (checked before anything is allocated).

The guide is docs/python.md in the repository.
"""

from __future__ import annotations

import json
import operator
import os
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from . import _native

__all__ = ["render", "ground_truth", "Dataset", "DEFAULT_MAX_MEMORY", "__version__"]

__version__: str = _native.__version__

#: The memory a call may ask for by default, in bytes: the program's own ``--max-memory``
#: default (1 GiB). A call over it raises :class:`MemoryError` before allocating.
DEFAULT_MAX_MEMORY: int = 1 << 30

Source = Union[str, "os.PathLike[str]"]
Overrides = Optional[Mapping[str, Any]]

_U64 = (1 << 64) - 1


def _source(value: Source, what: str) -> Tuple[Optional[str], Optional[str]]:
    """Splits a scene or spec argument into ``(text, path)``.

    A :class:`os.PathLike` is a path; a ``str`` is TOML text when it holds a newline, an ``=``
    or a ``[`` (no file name does, in practice) and a path otherwise.
    """
    if isinstance(value, os.PathLike):
        return None, os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{what} is a {type(value).__name__}: give a path or TOML text (str)")
    if "\n" in value or "=" in value or "[" in value:
        return value, None
    return None, value


def _overrides(set: Overrides) -> list:
    if set is None:
        return []
    if not isinstance(set, Mapping):
        raise TypeError(f"set is a {type(set).__name__}: give a dict such as {{'video.frames': 10}}")
    pairs = []
    for key, value in set.items():
        if not isinstance(key, str):
            raise TypeError(f"set's key {key!r} is a {type(key).__name__}: keys are dotted names such as 'water.refraction'")
        pairs.append((key, value))
    return pairs


def _whole(value: Any, what: str, low: int, high: int) -> int:
    """An integer argument, as Python's own functions take one (``bool`` refused)."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an integer, not bool")
    if not isinstance(value, int):
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None
    if not low <= value <= high:
        raise ValueError(f"{what} = {value} is out of range: allowed {low}..={high}")
    return int(value)


def _arrays(made: Tuple[bytearray, list, str]) -> Dict[str, Any]:
    """The native module's buffer as NumPy arrays (views into it, no copy), and ``meta`` parsed."""
    block, places, meta = made
    out: Dict[str, Any] = {}
    for name, offset, dtype, shape in places:
        dtype = np.dtype(dtype)
        count = int(np.prod(shape))
        out[name] = np.frombuffer(block, dtype=dtype, count=count, offset=offset).reshape(shape)
    out["meta"] = json.loads(meta)
    return out


def render(
    scene: Source,
    *,
    set: Overrides = None,
    threads: int = 1,
    max_memory: int = DEFAULT_MAX_MEMORY,
) -> np.ndarray:
    """Renders a scene's frames.

    Parameters
    ----------
    scene : str or os.PathLike
        A scene file's path, or its TOML text (relative paths in text are relative to the
        current folder).
    set : dict, optional
        Overrides, as the command line's ``--set``: ``{"video.frames": 10,
        "water.refraction": 0.4}``. Values are bool, int, float, str or lists of them.
    threads : int, default 1
        Threads to step and draw on. The frames are the same on any number.
    max_memory : int, default ``DEFAULT_MAX_MEMORY``
        Bytes the frames and the water may take; over it, :class:`MemoryError` is raised before
        anything is allocated.

    Returns
    -------
    numpy.ndarray
        ``T×H×W×3`` uint8: byte for byte the PNG sequence ``ripple-render scene.toml -o
        frames/%05d.png`` writes.

    Raises
    ------
    ValueError
        The scene is refused; the message is the program's (``file:line:column``, key, value,
        what is allowed).
    FileNotFoundError
        The scene or its picture is not there.
    MemoryError
        The frames would take more than ``max_memory``.
    """
    text, path = _source(scene, "scene")
    threads = _whole(threads, "threads", 1, 256)
    max_memory = _whole(max_memory, "max_memory", 1, _U64)
    buffer, shape = _native.render(text, path, _overrides(set), max_memory, threads)
    return np.frombuffer(buffer, dtype=np.uint8).reshape(shape)


def ground_truth(
    scene: Source,
    *,
    set: Overrides = None,
    threads: int = 1,
    max_memory: int = DEFAULT_MAX_MEMORY,
) -> Dict[str, Any]:
    """Renders a scene's frames with their ground truth.

    Parameters are those of :func:`render`.

    Returns
    -------
    dict
        NumPy arrays, ``T`` frames of ``H×W``:

        ``frames``
            ``T×H×W×3`` uint8, the frames (as :func:`render` gives them).
        ``clean``
            ``H×W×3`` uint8, the picture under the water, fitted to the canvas.
        ``flow``
            ``T×H×W×2`` float32, the backward flow ``[u, v]`` in pixels: the position each
            pixel was sampled at minus its own (across a wrapped edge, the nearer way).
        ``warp``
            ``T×H×W×2`` float32, the position ``[x, y]`` each pixel was sampled at (whole
            pixels unless the scene samples bilinearly).
        ``height``
            ``T×H×W`` float32, the heights each frame was drawn from.
        ``height_raw``
            ``T×H×W`` float32, the water's own heights (before smoothing and a loop's fade).
        ``normal``
            ``T×H×W×3`` float32, unit normals: ``(dx, dy, 2)`` over its length, with ``dx``,
            ``dy`` the slopes the light used.
        ``valid``
            ``T×H×W`` bool, false on walls and where the sample left the canvas.
        ``meta``
            the sequence's description, the dict ``meta.json`` holds.

    Raises
    ------
    ValueError, FileNotFoundError, MemoryError
        As :func:`render` (the budget counts every array).
    """
    text, path = _source(scene, "scene")
    threads = _whole(threads, "threads", 1, 256)
    max_memory = _whole(max_memory, "max_memory", 1, _U64)
    return _arrays(_native.ground_truth(text, path, _overrides(set), max_memory, threads))


class Dataset:
    """The sequences of a dataset spec, each made when it is asked for.

    ``Dataset(spec, seed=S, count=N)[i]`` holds exactly what ``ripple-render dataset spec
    --seed S --count N`` writes for its sequence ``i``. Items are computed on demand,
    deterministic per ``(spec, seed, index)`` whatever the order, process or thread, with the
    interpreter's lock released. A dataset pickles, so a ``torch.utils.data.DataLoader`` with
    workers (fork or spawn) makes its items in each worker.

    Parameters
    ----------
    spec : str or os.PathLike
        A dataset spec's path, or its TOML text (its ``pictures`` folder then relative to the
        current folder).
    seed : int, default 0
        The seed, 0..=2**64-1.
    count : int
        Sequences in the whole dataset, at least 1 (the split is drawn from it, as ``dataset``
        draws it).
    split : {"train", "val", "test"}, optional
        Only that split's sequences, in the order of their numbers.
    max_memory : int, default ``DEFAULT_MAX_MEMORY``
        Bytes one item's arrays may take.

    Examples
    --------
    >>> ds = Dataset("examples/dataset.toml", seed=1, count=8, split="train")
    >>> item = ds[0]
    >>> item["frames"].shape[1:], item["split"]
    ((128, 128, 3), 'train')
    """

    def __init__(
        self,
        spec: Source,
        *,
        seed: int = 0,
        count: int,
        split: Optional[str] = None,
        max_memory: int = DEFAULT_MAX_MEMORY,
    ) -> None:
        text, path = _source(spec, "spec")
        if path is not None:
            path = os.path.abspath(path)
        self._seed = _whole(seed, "seed", 0, _U64)
        self._count = _whole(count, "count", 1, _U64)
        if split is not None and not isinstance(split, str):
            raise TypeError(f"split must be a str or None, not {type(split).__name__}")
        self._split = split
        self._max_memory = _whole(max_memory, "max_memory", 1, _U64)
        # A spec given as text is kept with the folder it was read in, for a worker to read it
        # again wherever it starts.
        self._text, self._path, self._folder = text, path, os.getcwd()
        self._native = self._open()

    def _open(self) -> Any:
        return _native.Dataset(
            self._text, self._path, self._folder, self._seed, self._count, self._split, self._max_memory
        )

    def __len__(self) -> int:
        return len(self._native)

    def __getitem__(self, index: int) -> Dict[str, Any]:
        """Item ``index`` (negative from the end) of this dataset or split.

        Returns the dict :func:`ground_truth` returns, with ``index`` (the sequence's number in
        the whole dataset, its folder's name) and ``split``.
        """
        if isinstance(index, bool) or not isinstance(index, int):
            try:
                index = operator.index(index)
            except TypeError:
                raise TypeError(f"dataset indices must be integers, not {type(index).__name__}") from None
        n = len(self)
        k = index + n if index < 0 else index
        if not 0 <= k < n:
            raise IndexError(f"dataset index {index} is out of range for {n} items")
        made, number, split = self._native.item(k)
        item = _arrays(made)
        item["index"] = number
        item["split"] = split
        return item

    def __iter__(self):
        for k in range(len(self)):
            yield self[k]

    @property
    def seed(self) -> int:
        """The seed."""
        return self._seed

    @property
    def count(self) -> int:
        """Sequences in the whole dataset."""
        return self._count

    @property
    def split(self) -> Optional[str]:
        """The split kept, or None for all."""
        return self._split

    def __repr__(self) -> str:
        spec = repr(self._path) if self._path is not None else "<spec text>"
        split = f", split={self._split!r}" if self._split is not None else ""
        return f"Dataset({spec}, seed={self._seed}, count={self._count}{split}) with {len(self)} items"

    def __reduce__(self):
        return (_rebuild, (self._text, self._path, self._folder, self._seed, self._count, self._split, self._max_memory))


def _rebuild(text, path, folder, seed, count, split, max_memory) -> Dataset:
    ds = Dataset.__new__(Dataset)
    ds._text, ds._path, ds._folder = text, path, folder
    ds._seed, ds._count, ds._split, ds._max_memory = seed, count, split, max_memory
    ds._native = ds._open()
    return ds
