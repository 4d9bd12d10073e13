"""Warp-level matrix multiply-accumulate, `mma.sync.aligned.<shape>.row.col` (PTX ISA
9.7.14.5.14 mma): the forms of sm_80 to sm_90 below, their fragment layouts in
semantics/ops/mma_layout.py (the ISA's formulas), the arithmetic in mma_float.py (an open
function of the ISA's inputs: the ISA does not fix the summation) and mma_int.py (exact).

| shape | d, a, b, c | module |
|---|---|---|
| m16n8k8, m16n8k16 | {f16,f32}.f16.f16.{f16,f32} (d and c independently), f32.bf16.bf16.f32 | float |
| m16n8k4, m16n8k8 | f32.tf32.tf32.f32 | float |
| m8n8k4 | f64.f64.f64.f64 | float |
| m16n8k32 | {f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16} (sm_89+; d and c alike: ptxas 13 accepts no other) | float |
| m8n8k16, m16n8k16, m16n8k32 | s32.{s8,u8}.{s8,u8}.s32, optional .satfinite | int |
| m8n8k32, m16n8k32, m16n8k64 | s32.{s4,u4}.{s4,u4}.s32, optional .satfinite | int |

`.sync.aligned`: every thread of the warp executes the same mma (undefined behaviour
otherwise, `converged`). Every other mma (m8n8k4 with f16 inputs and its .row/.col layouts,
f64 of the m16n8 shapes, .satfinite on floating-point forms, fp8 m16n8k16, sub-byte float
types,
.b1, block scaling, mixed float input types, `mma.sp`) has no semantics here: the resolver
returns None, and it is refused by name.
"""

from __future__ import annotations

from semantics.ops import register
from semantics.ops.mma_float import mma_float
from semantics.ops.mma_int import mma_int
from semantics.ops.mma_layout import LAYOUTS

# (shape -> layout family) and the type combinations (d, a, b, c) of each family
_FLOAT = {
    "f16": ({"m16n8k8", "m16n8k16"},
            {(d, "f16", "f16", c) for d in ("f16", "f32") for c in ("f16", "f32")} |
            {("f32", "bf16", "bf16", "f32")}),
    "tf32": ({"m16n8k4", "m16n8k8"}, {("f32", "tf32", "tf32", "f32")}),
    "f64": ({"m8n8k4"}, {("f64", "f64", "f64", "f64")}),
    "f8": ({"m16n8k32"}, {(acc, a, b, acc) for a in ("e4m3", "e5m2")
                          for b in ("e4m3", "e5m2") for acc in ("f32", "f16")}),
}
_INT = {
    "i8": ({"m8n8k16", "m16n8k16", "m16n8k32"}, ("s8", "u8")),
    "i4": ({"m8n8k32", "m16n8k32", "m16n8k64"}, ("s4", "u4")),
}
_BASE = {"sync", "aligned", "row", "col"}


def _family(form) -> tuple[str, str, bool] | None:
    """(shape, layout family, integer?) of a supported form, else None."""
    shapes = [f for f in form.flags if f.startswith("m") and "n" in f and "k" in f]
    types = tuple(t.name for t in form.types)
    if len(shapes) != 1 or len(types) != 4 or not _BASE <= form.flags:
        return None
    shape, extra = shapes[0], form.flags - _BASE - {shapes[0]}
    for fam, (ok_shapes, combos) in _FLOAT.items():
        if shape in ok_shapes and types in combos and not extra:
            return shape, fam, False
    for fam, (ok_shapes, elems) in _INT.items():
        if shape in ok_shapes and types[0] == types[3] == "s32" and \
                types[1] in elems and types[2] in elems and extra <= {"satfinite"}:
            return shape, fam, True
    return None


@register("mma")
def _resolve_mma(form):
    found = _family(form)
    if found is None:
        return None
    shape, fam, integer = found
    lay = LAYOUTS[(shape, fam)]
    sem = mma_int if integer else mma_float
    return lambda x: sem(x, lay)
