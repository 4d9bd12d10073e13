"""The buffers of the indexed mode: which are indexed (`indexed_params`), what the verifier
knows of each (`buffer_info`), whether to index from the start (`two_dimensional`), and the
size it refuses past (`size_check`)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from verifier.indexed.cells import NotIndexable
from verifier.indexed_buffer import IndexedBuffer
from verifier.shape_space import ShapeValues
from verifier.spec import type_bits


def indexed_params(spec, role: str, ptx_params) -> dict[str, tuple[str, str]]:
    """PTX parameter -> (access, spec name) for the `role`'s `in` and `out` buffers."""
    side = spec.side(role)
    out = {}
    for name, kp in zip(side.arg_names, ptx_params):
        p = spec.param(name)
        if p.is_buffer and p.access in ("in", "out"):
            out[kp.name] = (p.access, p.name)
    return out


def buffer_info(spec, values: dict, length_term: Callable[[Any], Any],
                shape_values: ShapeValues) -> dict[str, IndexedBuffer]:
    """The verifier's view of every `in` and `out` buffer: `values[name].values` are its
    elements' terms, `length_term(param)` its length in elements (an int or a term)."""
    out = {}
    for p in spec.params:
        if p.is_buffer and p.access in ("in", "out"):
            esz = type_bits(p.type) // 8
            ids = np.array([t.get_id() for t in values[p.name].values], dtype=np.int64)
            n = length_term(p)
            length = np.uint64(n) if isinstance(n, int) else shape_values.grid(n)
            if length is None:
                raise NotIndexable(f"the length of '{p.name}' depends on more than the shape")
            grid = np.asarray(length).astype(np.uint64) * np.uint64(esz)
            out[p.name] = IndexedBuffer(p.name, esz, ids, shape_values.space.full(grid), grid)
    return out


def two_dimensional(spec, names) -> bool:
    """Index the in/out buffers from the start when one is two-dimensional (`rows * cols`):
    its offsets take a value per shape, too many to split (splitting only finds that out
    after running the launch up to the first such access). Either mode is exact."""
    return any(p.is_buffer and p.access in ("in", "out") and len(p.length.names & set(names)) >= 2
               for p in spec.params)


# Shapes x elements of one out buffer compared as codes (int64): 2^25 is the 32^3 matmul claim
# (32768 shapes x 1024 elements), which peaks at about 8 GB in all (the tables, and the values
# of every term the term walk evaluates at every shape). Past it the mode refuses up front.
CELLS = 1 << 25


def size_check(spec, count: int, lengths: dict[str, int]) -> None:
    """Indexed outputs are compared as a shapes x elements table per out buffer: refused by
    name past CELLS (256 MiB a table), before anything runs."""
    for p in spec.buffers:
        if p.access == "out" and count * lengths[p.name] > CELLS:
            raise NotIndexable(f"{count} shapes x {lengths[p.name]} elements of '{p.name}' to "
                               f"compare, more than {CELLS}")


__all__ = ["CELLS", "buffer_info", "indexed_params", "size_check", "two_dimensional"]
