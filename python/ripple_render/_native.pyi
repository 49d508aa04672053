# The native module's interface, as ripple_render/__init__.py calls it (not a public API:
# use ripple_render.render, ground_truth and Dataset).
from typing import Any, List, Optional, Sequence, Tuple

__version__: str

_Made = Tuple[bytearray, List[Tuple[str, int, str, List[int]]], str]

def render(
    text: Optional[str], path: Optional[str], set: Sequence[Tuple[str, Any]], max_memory: int, threads: int
) -> Tuple[bytearray, List[int]]: ...
def ground_truth(
    text: Optional[str], path: Optional[str], set: Sequence[Tuple[str, Any]], max_memory: int, threads: int
) -> _Made: ...

class Dataset:
    def __init__(
        self,
        text: Optional[str],
        path: Optional[str],
        folder: str,
        seed: int,
        count: int,
        split: Optional[str],
        max_memory: int,
    ) -> None: ...
    def __len__(self) -> int: ...
    def item(self, k: int) -> Tuple[_Made, int, str]: ...
