"""Texture and surface parameters of a pair spec: a `[[param]]` with `texture = "buf"` or
`surface = "buf"` is a kernel parameter holding a texture or surface object over the buffer
param `buf` (its texels, row-major):

    [[param]]
    name = "tex"
    texture = "img"          # or: surface = "img"
    dims = ["w", "h"]        # width (height, depth: textures) in texels: ints or expressions
    address = "clamp"        # clamp | wrap | mirror | border (textures; default clamp)
    filter = "point"         # point | linear (textures; default point)
    normalized = false       # textures; default false

The kernel is passed the object (a 64-bit handle); `semantics.machine.views` says how keq's
launch makes one. A side passes the object or the buffer, not both (the one allocation would
be two). A surface's boundary mode is in each instruction (.trap .clamp .zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import z3

from semantics.machine.views import ADDRESS_MODES, FILTER_MODES, View
from verifier.spec.expressions import Expr

TEXTURE_KEYS = ("name", "texture", "dims", "address", "filter", "normalized")
SURFACE_KEYS = ("name", "surface", "dims")


@dataclass(frozen=True)
class ViewSpec:
    """A texture or surface parameter: the object `name` over the buffer param `buffer` of
    element type `type` and length `length`."""

    name: str
    kind: str                   # "texture" | "surface"
    buffer: str
    type: str
    length: Expr
    dims: tuple[Expr, ...]
    address: str = "clamp"
    filter: str = "point"
    normalized: bool = False

    def claim_text(self) -> str:
        dims = " x ".join(e.text for e in self.dims)
        if self.kind == "surface":
            return f"{self.name} is a surface over {self.buffer} ({dims})"
        coords = "normalized" if self.normalized else "unnormalized"
        return (f"{self.name} is a texture over {self.buffer} ({dims}, address {self.address}, "
                f"filter {self.filter}, {coords} coordinates)")

    def view(self, dims: tuple[Any, ...]) -> View:
        return View(self.kind, self.name, _ptx_type(self.type), dims, self.address,
                    self.filter, self.normalized)

    def at(self, scalars: Mapping[str, int]) -> View:
        """The object at one launch shape; dimensions that do not fit the buffer are an
        error about the spec."""
        dims = tuple(e.eval(scalars) for e in self.dims)
        env = ", ".join(f"{k}={scalars[k]}" for k in sorted(scalars) if not k.startswith("%"))
        for e, n in zip(self.dims, dims):
            if not 1 <= n < 1 << 24:
                raise e._error(f"{self.kind} {self.name!r}: dimension {e.text!r} is {n} (must "
                               f"be in [1, 2**24))" + (f" at {env}" if env else ""))
        total = 1
        for n in dims:
            total *= n
        if total > self.length.eval(scalars):
            raise self.dims[0]._error(f"{self.kind} {self.name!r} has {total} texels, more "
                                      f"than buffer {self.buffer!r} holds"
                                      + (f" at {env}" if env else ""))
        return self.view(dims)

    def over(self, env64: Mapping[str, Any]) -> View:
        """The object over a symbolic launch (dimensions as 32-bit terms where symbolic)."""
        dims = []
        for e in self.dims:
            v = e.to_z3(env64)
            dims.append(v if isinstance(v, int) else z3.Extract(31, 0, v))
        return self.view(tuple(dims))


def _ptx_type(t: str) -> str:
    return t          # spec element types are PTX type names (f32, s8, bf16, ...)


def load_view(ld, t: dict, path: tuple, name: str) -> tuple[str, dict]:
    """Check a texture or surface param's keys; (kind, the raw table) for `resolve_view`."""
    kind = "texture" if "texture" in t else "surface"
    if "texture" in t and "surface" in t:
        raise ld.err(f"param {name!r} has both 'texture' and 'surface'; give one",
                     path + ("surface",), prefer="key")
    for other in ("buffer", "scalar"):
        if other in t:
            raise ld.err(f"param {name!r} is a {kind}: it takes no {other!r} (the {kind}'s "
                         f"texels are the buffer it names)", path + (other,), prefer="key")
    ld.keys(t, path, TEXTURE_KEYS if kind == "texture" else SURFACE_KEYS,
            f"{kind} param {name!r}")
    ld.need(t, kind, path, f"{kind} param {name!r}", str, "a buffer param name")
    return kind, t


def resolve_view(ld, kind: str, t: dict, path: tuple, name: str, buffers: dict,
                 int_scalars: dict) -> ViewSpec:
    """The `ViewSpec` of a texture or surface param, once every param is known."""
    what = f"{kind} param {name!r}"
    target = t[kind]
    b = buffers.get(target)
    if b is None:
        raise ld.err(f"{kind} {name!r} names {target!r}, which is not a buffer param "
                     f"(buffers: {', '.join(buffers) or 'none'})", path + (kind,))
    most = 3 if kind == "texture" else 2          # (keq models 1-D and 2-D surfaces)
    dims_v = ld.need(t, "dims", path, what, list, f"a list of 1 to {most} ints or expressions")
    if not 1 <= len(dims_v) <= most:
        axes = "width, height, depth" if most == 3 else "width, height"
        raise ld.err(f"dims of {kind} {name!r} must have 1 to {most} entries ({axes}), "
                     f"found {len(dims_v)}", path + ("dims",))
    dims = tuple(ld.expr(x, path + ("dims", j), scalars=int_scalars, what="dims")
                 for j, x in enumerate(dims_v))
    if kind == "surface":
        return ViewSpec(name, kind, target, b.type, b.length, dims)
    address = ld.choice(t, "address", path, what, ADDRESS_MODES) if "address" in t else "clamp"
    filt = ld.choice(t, "filter", path, what, FILTER_MODES) if "filter" in t else "point"
    normalized = False
    if "normalized" in t:
        normalized = ld.typed(t["normalized"], path + ("normalized",), bool, "true or false",
                              "normalized")
    if address in ("wrap", "mirror") and not normalized:
        raise ld.err(f"address {address!r} needs normalized = true (CUDA supports wrap and "
                     f"mirror for normalized coordinates only)", path + ("address",))
    return ViewSpec(name, kind, target, b.type, b.length, dims, address, filt, normalized)


__all__ = ["ViewSpec", "load_view", "resolve_view", "TEXTURE_KEYS", "SURFACE_KEYS"]
