"""Warp-level matrix multiply-accumulate, `mma.sync.aligned.<shape>.<alayout>.<blayout>` (PTX
ISA 9.7.14.5.14 mma): the forms of sm_80 to sm_90 below, their fragment layouts in
semantics/ops/mma_layout.py and mma_m8n8k4.py (the ISA's formulas), the arithmetic in
mma_float.py (an open function of the ISA's inputs: the ISA does not fix the summation) and
mma_int.py (exact), the single-bit forms in mma_b1.py (layouts and exact popc arithmetic).

| shape | layouts | d, a, b, c | module |
|---|---|---|---|
| m16n8k8, m16n8k16 | .row.col | f16.f16.f16.f16, f32.f16.f16.f32, f32.bf16.bf16.f32 | float |
| m16n8k4, m16n8k8 | .row.col | f32.tf32.tf32.f32 | float |
| m8n8k4 | .row.col | f64.f64.f64.f64 | float |
| m16n8k4, m16n8k8, m16n8k16 | .row.col | f64.f64.f64.f64 (sm_90) | float |
| m8n8k4 | .{row,col}.{row,col} | f16.f16.f16.f16, f32.f16.f16.f32 (four products per warp) | float |
| m16n8k32 | .row.col | {f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16} (sm_89+; d and c alike: ptxas 13 accepts no other) | float |
| m8n8k16, m16n8k16, m16n8k32 | .row.col | s32.{s8,u8}.{s8,u8}.s32, optional .satfinite | int |
| m8n8k32, m16n8k32, m16n8k64 | .row.col | s32.{s4,u4}.{s4,u4}.s32, optional .satfinite | int |
| m8n8k128, m16n8k128, m16n8k256 | .row.col | s32.b1.b1.s32.{xor,and}.popc (.and: sm_80) | b1 |

`.sync.aligned`: every thread of the warp executes the same mma (undefined behaviour
otherwise, `converged`). Every other mma has no semantics here: the resolver returns None,
and it is refused by name with its location. Among them: d and c of different types on
m16n8k8/m16n8k16 (the ISA: ".dtype must be the same as .ctype"; ptxas 13 agrees), m8n8k4's
`.f16.f16.f16.f32` (the ISA: "When .ctype is .f32, .dtype must also be .f32") and
`.f32.f16.f16.f16` (legal, but the ISA keys the C/D layout on .ctype and does not say which
one an .f32 D takes: mma_m8n8k4.py), other layouts than .row.col on every shape but m8n8k4
.f16, .satfinite on floating-point forms, fp8 m16n8k16, sub-byte float types, .b1 with
another operation than .xor.popc/.and.popc or other types than s32.b1.b1.s32, block scaling, mixed float input types, `mma.sp`.
"""

from __future__ import annotations

from semantics.ops import register
from semantics.ops.mma_b1 import b1_form, mma_b1
from semantics.ops.mma_float import mma_float
from semantics.ops.mma_int import mma_int
from semantics.ops.mma_layout import LAYOUTS, Layout
from semantics.ops.mma_m8n8k4 import m8n8k4_f16

# (shape -> layout family) and the type combinations (d, a, b, c) of each family, .row.col
_FLOAT = {
    "f16": ({"m16n8k8", "m16n8k16"},
            {(acc, "f16", "f16", acc) for acc in ("f16", "f32")} |
            {("f32", "bf16", "bf16", "f32")}),
    "tf32": ({"m16n8k4", "m16n8k8"}, {("f32", "tf32", "tf32", "f32")}),
    "f64": ({"m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"}, {("f64", "f64", "f64", "f64")}),
    "f8": ({"m16n8k32"}, {(acc, a, b, acc) for a in ("e4m3", "e5m2")
                          for b in ("e4m3", "e5m2") for acc in ("f32", "f16")}),
}
_INT = {
    "i8": ({"m8n8k16", "m16n8k16", "m16n8k32"}, ("s8", "u8")),
    "i4": ({"m8n8k32", "m16n8k32", "m16n8k64"}, ("s4", "u4")),
}
# m8n8k4 with .f16 inputs, any .alayout/.blayout: d and c both .f16 or both .f32
_QUAD_PAIR = {(acc, "f16", "f16", acc): acc for acc in ("f16", "f32")}
_BASE = {"sync", "aligned"}
_LAYOUTS = ("row", "col")


def _layout(form) -> tuple[Layout, bool] | None:
    """(fragment layout, integer?) of a supported form, else None."""
    shapes = [f for f in form.flags if f.startswith("m") and "n" in f and "k" in f]
    types = tuple(t.name for t in form.types)
    # .alayout and .blayout in source order (the flag set forgets order and repeats)
    lays = tuple(m for m in form.mods if m in _LAYOUTS)
    if len(shapes) != 1 or len(types) != 4 or len(lays) != 2 or not _BASE <= form.flags:
        return None
    # (a rounding modifier is no flag: .rn/.rz on an f64 mma would otherwise pass)
    if (form.rounding, form.cmp, form.boolop, form.space, form.vec) != (None,) * 4 + (1,):
        return None
    shape, extra = shapes[0], form.flags - _BASE - {shapes[0]} - set(_LAYOUTS)
    if shape == "m8n8k4" and types in _QUAD_PAIR:
        return (m8n8k4_f16(*lays, _QUAD_PAIR[types]), False) if not extra else None
    if lays != ("row", "col"):
        return None
    for fam, (ok_shapes, combos) in _FLOAT.items():
        if shape in ok_shapes and types in combos and not extra:
            return LAYOUTS[(shape, fam)], False
    for fam, (ok_shapes, elems) in _INT.items():
        if shape in ok_shapes and types[0] == types[3] == "s32" and \
                types[1] in elems and types[2] in elems and extra <= {"satfinite"}:
            return LAYOUTS[(shape, fam)], True
    return None


@register("mma")
def _resolve_mma(form):
    if "b1" in form.flags:              # (.b1 is no keq type: a modifier, mma_b1.py)
        single = b1_form(form)
        if single is None:
            return None
        lay, bitop = single
        return lambda x: mma_b1(x, lay, bitop)
    found = _layout(form)
    if found is None:
        return None
    lay, integer = found
    sem = mma_int if integer else mma_float
    return lambda x: sem(x, lay)
