"""`txq` (texture attributes) and `suq` (surface attributes) of an object handle:
`txq.width.b32 %r, [%rd]`.

Sources (the texture rows of docs/semantics.md, "What the PTX ISA leaves open"): PTX ISA
9.7.10.5 (`txq`) and 9.7.11.4 (`suq`). Exact where the ISA gives the value: `.width`, `.height`,
`.depth` ("value in elements") of the object's axes, `.normalized_coords` (1 or 0),
`.array_size`, `.num_mipmap_levels`, `.num_samples` (0 for an object that is not an array,
mipmapped or multi-sample: keq's never are), and `.filter_mode` ("Integer from enum {
nearest, linear }": 0 and 1, as CUDA's cudaFilterModePoint and cudaFilterModeLinear).
Open, as unknown values fixed per object (`keq!uf!txq/...`, an `unspecified` effect): the
extent of an axis the object lacks (the height of a 1-D texture: the ISA does not say),
`.addr_mode_i` (the ISA lists the enum { wrap, mirror, clamp_ogl, clamp_to_edge,
clamp_to_border } without values, and CUDA's cudaTextureAddressMode numbers them otherwise),
`.channel_data_type` and `.channel_order` (the source language's enumeration, whose encoding
the driver does not document for the hardware), and `suq.memory_layout` (keq's surface may
be either). `.force_unnormalized_coords` (independent-mode samplers only) and `txq.level`
(mipmaps) are refused by name. The emulator's stand-ins for the open values: 0 for a missing
extent, the ISA's list position for an addressing mode (CUDA's clamp as clamp_to_edge,
border as clamp_to_border), 0 for the channel queries and the layout.
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.machine.views import View
from semantics.ops import register
from semantics.ops.texture_sampling import handle_of, view_of

_B32 = TYPES["b32"]
_EXTENTS = ("width", "height", "depth")
_ADDRESS_ORDINAL = {"wrap": 0, "mirror": 1, "clamp": 3, "border": 4}
_TXQ = frozenset(_EXTENTS + ("normalized_coords", "filter_mode", "addr_mode_0",
                             "addr_mode_1", "addr_mode_2", "channel_data_type",
                             "channel_order", "array_size", "num_mipmap_levels",
                             "num_samples"))
_SUQ = frozenset(_EXTENTS + ("channel_data_type", "channel_order", "array_size",
                             "memory_layout"))


def _open(x, view: View, query: str, key: str, default: int, what: str):
    """An attribute the ISA leaves open: fixed per `key` (the same in both kernels of a
    claim), an `unspecified` effect; `default` is the emulator's stand-in."""
    d = x.d
    x.effect("unspecified", f"{x.form.opcode}.{query} of {view.describe()} ({what})")
    return d.unspecified_fn(f"{x.form.opcode}/{query}/{key}", 32, [d.const(0, 32)],
                            d.const(default, 32), x.choices, [32])


def _answer(x, view: View, query: str):
    d = x.d
    if query in _EXTENTS:
        axis = _EXTENTS.index(query)
        if axis < len(view.dims):
            return d.splat(view.dims[axis], 32)
        return _open(x, view, query, view.name, 0,
                     f"the ISA does not say what a {len(view.dims)}-D object answers")
    if query == "normalized_coords":
        return d.const(int(view.normalized), 32)
    if query == "filter_mode":
        return d.const(0 if view.filter == "point" else 1, 32)
    if query in ("array_size", "num_mipmap_levels", "num_samples"):
        return d.const(0, 32)
    if query.startswith("addr_mode_"):
        return _open(x, view, "addr_mode", view.address, _ADDRESS_ORDINAL[view.address],
                     "the ISA lists the modes without their values")
    if query in ("channel_data_type", "channel_order"):
        return _open(x, view, query, view.elem, 0,
                     "the source language's enumeration, not documented for the hardware")
    return _open(x, view, query, view.name, 0, "keq's surface may have either layout")


def _query(kind: str):
    def sem(x) -> None:
        query = next(iter(x.form.flags))
        view, _ = view_of(x, handle_of(x, 1), kind)
        x.write(0, _answer(x, view, query), _B32)
    return sem


def _resolver(kind: str, queries: frozenset):
    def resolve(form):
        if len(form.flags) != 1 or not form.flags <= queries or len(form.types) != 1 or \
                form.type.name != "b32":
            return None
        return _query(kind)
    return resolve


register("txq")(_resolver("texture", _TXQ))
register("suq")(_resolver("surface", _SUQ))

__all__: list[str] = []
