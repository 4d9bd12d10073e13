"""Texture and surface objects: what a `cudaTextureObject_t` / `cudaSurfaceObject_t` kernel
parameter stands for.

The kernel sees an opaque 64-bit handle. keq's launch passes, as that handle, the base address
of the global buffer holding the texels (row-major, `dims[0]` texels a row, `dims[1]` rows
a slice), and records the object's descriptor (`View`) under that address; `tex`, `tld4`,
`txq`, `suld`, `sust` and `suq` (`semantics.ops.texture`) resolve the handle to it. The texels are then read and written
through the memory port like any load and store, so bounds, races, indexed buffers and
symbolic addresses work as they do for `ld`/`st`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ADDRESS_MODES = ("clamp", "wrap", "mirror", "border")
FILTER_MODES = ("point", "linear")
VIEW_KINDS = ("texture", "surface")


@dataclass(frozen=True)
class View:
    """One texture or surface object of a launch.

    `elem`: the texel type (a PTX type name: f32, s8, ...; one channel); `dims`: the width
    (height, depth) in texels, x fastest, each a 32-bit value: an int, or a z3 term in a symbolic launch
    whose shape is symbolic. `address`, `filter`, `normalized`: the texture's sampling
    state (a surface has none: its boundary mode is in the instruction)."""

    kind: str
    name: str
    elem: str
    dims: tuple[Any, ...]
    address: str = "clamp"
    filter: str = "point"
    normalized: bool = False

    def describe(self) -> str:
        dims = " x ".join(str(d) for d in self.dims)
        if self.kind == "surface":
            return f"surface '{self.name}' ({self.elem}, {dims})"
        coords = "normalized" if self.normalized else "unnormalized"
        return (f"texture '{self.name}' ({self.elem}, {dims}, address {self.address}, "
                f"filter {self.filter}, {coords} coordinates)")


def view_key(handle: int) -> tuple[str, int]:
    """The key of the view whose handle is `handle` in an executor's `params`."""
    return ("view", int(handle))


__all__ = ["View", "view_key", "ADDRESS_MODES", "FILTER_MODES", "VIEW_KINDS"]
