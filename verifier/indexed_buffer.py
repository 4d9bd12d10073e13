"""What the verifier knows of an indexed buffer over the grid of launch shapes, shared by the
indexed comparison (`verifier.indexed`) and the selected-term walk (`verifier.same_at`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# A raw AST of the shape alone -> its value over the grid of shapes (None: not evaluable)
Evaluate = Callable[[Any], "np.ndarray | None"]


@dataclass(frozen=True)
class IndexedBuffer:
    """One indexed buffer: its element size, the ids of its elements' input terms (maximal
    length) and its length in bytes at every shape (and over the grid of shapes, compact:
    `verifier.shape_space`)."""

    name: str
    elem_bytes: int
    ids: np.ndarray
    length_bytes: np.ndarray
    length_grid: Any
