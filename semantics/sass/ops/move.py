"""Byte permutation in SASS: PRMT, the PTX `prmt.b32` it implements, run through the PTX
semantics (`ptxcall.ptx`).

`PRMT d, a, sel, b` is `prmt.b32 d, a, b, sel`: nvdisasm prints the selector between the two
sources (ptxas lowers the halves-packing `mov.b32 r, {lo, hi}` to `PRMT r, lo, 0x5410, hi`:
bytes 1:0 of `lo`, then bytes 1:0 of `hi` = bytes 5:4 of the pair); translation validation of
the wmma kernels that pack halves checks the order. The byte modes (.F4E, .B4E, .RC8, .ECL,
.ECR, .RC16) have no semantics here: refused by name.
"""

from __future__ import annotations

from semantics.sass.ops import register
from semantics.sass.ops.access import fail, int_src, set_reg
from semantics.sass.ops.ptxcall import ptx


def _prmt(x) -> None:
    ops = x.ins.operands
    if len(ops) != 4:
        fail(x, "expected PRMT d, a, sel, b")
    set_reg(x, ops[0], ptx(x, "prmt.b32", [int_src(x, 1), int_src(x, 3), int_src(x, 2)]))


@register("PRMT")
def _resolve_prmt(form):
    return _prmt if not form.mods else None
