"""Run a PTX instruction's semantic function on values a SASS instruction computed.

Where a SASS instruction computes exactly what a PTX instruction computes (FADD.FTZ is
`add.ftz.f32`, ISETP.GE.U32.AND is `setp.ge.and.u32`, MUFU.EX2 is `ex2.approx.ftz.f32`), the
SASS semantics calls the PTX semantics instead of restating the arithmetic: one definition of
rounding, flushing, NaN canonicalization and comparison, shared by both ISAs (and checked by
the same conformance suite).

`ptx(x, "add.ftz.f32", [a, b])` builds the PTX `Form` (parsed once, by the PTX parser, so the
form is exactly what a PTX listing would give), looks up its semantic function, and runs it
on a view of the executor whose operands are the given values. Effects go to the executor,
under the current SASS instruction's location.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from semantics.errors import KeqError, SourceLoc
from semantics.ir.nodes import Form, Instruction
from semantics.ir.operands import IntImm, Pair, Reg
from semantics.ops import lookup



@cache
def ptx_form(name: str) -> Form:
    """The PTX form of an instruction name such as `setp.ge.and.u32`."""
    from semantics.ptx.parser import parse_ptx
    # Operands do not matter for the form; a minimal kernel makes the PTX parser classify
    # the modifiers exactly as it does for a real listing.
    text = (".version 8.0\n.target sm_90\n.address_size 64\n.entry k() {\n"
            f"  {name} ;\n  ret;\n}}\n")
    try:
        return parse_ptx(text, "<ptx-form>").functions["k"].instructions[0].form
    except KeqError:
        # Parsing without operands can fail for opcodes whose grammar needs them; build the
        # form by hand then (only modifiers and types matter to a resolver).
        from semantics.ir.types import TYPES
        op, *mods = name.split(".")
        types = tuple(TYPES[m] for m in mods if m in TYPES)
        return Form(op, tuple(mods), types)


@cache
def ptx_semantics(name: str):
    fn = lookup(ptx_form(name))
    if fn is None:
        raise KeyError(f"PTX form {name} has no semantics (a keq bug in the SASS mapping)")
    return fn


@dataclass
class _View:
    """The part of the executor API PTX semantics use, over given operand values."""

    x: Any
    form: Form
    values: Sequence[Any]
    ins: Instruction
    outputs: dict

    @property
    def d(self):
        return self.x.d

    @property
    def mask(self):
        return self.x.mask

    def operand(self, i: int):
        return self.ins.operands[i]

    def _index(self, i) -> int:
        if isinstance(i, int):
            return i
        return int(i.name[1:].split("p")[0]) if isinstance(i, Reg) else -1

    def read(self, i, t):
        v = self.values[self._index(i)]
        if isinstance(v, int):
            return self.x.d.const(v, t.bits)
        return v

    def read_pred(self, i):
        v = self.values[self._index(i)]
        if isinstance(v, bool):
            return self.x.d.pconst(v)
        return v

    def write(self, i, v, t, mask=None) -> None:
        self.outputs[i if isinstance(i, int) else i.name] = v

    def write_pred(self, i, p, mask=None) -> None:
        self.outputs[i if isinstance(i, int) else i.name] = p

    def effect(self, kind: str, what: str, cond=None) -> None:
        self.x.effect(kind, f"{self.x.ins.form.name} (as {what})", cond)

    def __getattr__(self, name: str):
        return getattr(self.x, name)


def ptx(x, name: str, values: Sequence[Any], *, static: dict[int, int] | None = None,
        pair: bool = False):
    """Run PTX `name` with operand 0 the destination and operands 1.. = `values`.

    `static` gives operands that a PTX semantics reads as immediates (by index, from 1).
    `pair`: the destination is `d|p` (setp, shfl); returns (first, second). Otherwise returns
    the destination's value."""
    form = ptx_form(name)
    fn = ptx_semantics(name)
    n = len(values) + 1
    ops: list[Any] = [Pair(Reg("$0"), Reg("$0p")) if pair else Reg("$0")]
    for k in range(1, n):
        ops.append(IntImm(static[k]) if static and k in static else Reg(f"${k}"))
    ins = Instruction(form, tuple(ops), None, None, x.ins.loc if x.ins else SourceLoc("<sass>", 0, 0))
    view = _View(x, form, [None, *values], ins, {})
    fn(view)
    if pair:
        return view.outputs.get("$0"), view.outputs.get("$0p")
    out = view.outputs.get(0, view.outputs.get("$0"))
    return out
