"""`mma.sync.aligned` with floating-point inputs: f16/bf16 (f32 or, for f16, f16
accumulators; m8n8k4 .f16 with every .row/.col), tf32, f64 (m8n8k4; m16n8k4/k8/k16 of sm_90),
and fp8 (e4m3/e5m2, mixed allowed, f32 or f16 accumulators; sm_89+). Layouts:
semantics/ops/mma_layout.py and mma_m8n8k4.py.

The ISA does not say how the products are summed or rounded (9.7.14.5.14 mma: "D = A*B + C"
with no order or intermediate precision). Each D[i][j] is therefore a deterministic
function of row i of A, column j of B and C[i][j] that keq does not claim to know:
symbolically an uninterpreted function per form (`Domain.tensor_fn`, named after the form,
layouts included, `mma.m16n8k16.row.col.f32.f16.f16.f32`, `mma.m8n8k4.col.row.f16.f16.f16.f16`;
two kernels that feed it the same values agree by congruence), concretely keq's model of
sm_80/sm_89 (semantics/tensor_core.py, docs/tensor-cores.md). Every use records an
"unspecified" effect: an emulator run proves nothing about the GPU's bits through it.

The function's arguments are the bits the registers hold: the K elements of the row of A,
the K of the column of B (16 bits for f16/bf16, the whole 32-bit register for tf32, whose
low 13 bits the model ignores, 64 for f64), then C's element (16, 32 or 64 bits).
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops.matrix import converged, split_halves, vector_registers, warp_of
from semantics.ops.mma_layout import Layout, operands
from semantics.tensor_core import mma_model

B32, B64 = TYPES["b32"], TYPES["b64"]
_BITS = {"f16": 16, "f32": 32, "f64": 64}


def _read_acc(x, i: int, fmt: str, count: int) -> list:
    """The `count` elements of accumulator operand `i`: f32/f64 one per register, f16 two
    per .f16x2 register (low half first)."""
    if fmt == "f16":
        return split_halves(x.d, [x.read(e, B32) for e in vector_registers(x, i, count // 2)])
    t = B64 if fmt == "f64" else B32
    return [x.read(e, t) for e in vector_registers(x, i, count)]


def _write_acc(x, regs: tuple, values: list, fmt: str) -> None:
    if fmt == "f16":
        values = [x.d.concat(hi, lo, 16, 16) for lo, hi in zip(values[::2], values[1::2])]
    t = B64 if fmt == "f64" else B32
    for reg, v in zip(regs, values):
        x.write(reg, v, t)


def mma_float(x, lay: Layout) -> None:
    d = x.d
    dt, at, bt, ct = (t.name for t in x.form.types)
    n = lay.c_count
    dst = vector_registers(x, 0, n // 2 if dt == "f16" else n)
    args = operands(x, lay, B64 if at == "f64" else B32)
    c = _read_acc(x, 3, ct, n)
    converged(x, warp_of(x), 32, "matrix fragments")
    # one function per form, layouts included: keq assumes nothing shared between them
    layouts = ".".join(m for m in x.form.mods if m in ("row", "col"))
    name = f"mma.{lay.name[0]}.{layouts}.{dt}.{at}.{bt}.{ct}"
    arch = x.choices.target.arch
    x.effect("unspecified", f"the results of {name} (the PTX ISA does not say how a tensor "
                            f"core sums and rounds; keq models {arch})")
    widths = [lay.reg_bits if at == "tf32" else lay.elem_bits] * (2 * lay.k) + [_BITS[ct]]
    model = mma_model(at, lay.k, ct, dt, bt, arch)
    out = [d.tensor_fn(name, _BITS[dt], row + col + [c[i]], widths, model, x.choices)
           for i, (row, col) in enumerate(args)]
    # (all read before any write: D may name C's or A's registers)
    _write_acc(x, dst, out, dt)
