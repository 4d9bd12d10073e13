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

`call(x, "mma.sync...", [Out(4), Vector(a), Vector(b), Vector(c)])` is the general form, for
PTX instructions whose operands are not one destination and scalars: vector operands
(`{a0, a1, a2, a3}`: ptxas assigns them to consecutive SASS registers, so the SASS side
passes those registers' values in order), several or no destinations, addresses (the
SASS side computes the address in the PTX space: a shared-window offset, a global
address) and immediates the PTX semantics reads as such (`cp.async`'s cp-size).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from semantics.errors import KeqError, SourceLoc
from semantics.ir.nodes import Form, Instruction
from semantics.ir.types import TYPES, PtxType
from semantics.ir.operands import Addr, IntImm, Pair, Reg, Vec
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


# -- operands of a call --------------------------------------------------------------------

@dataclass(frozen=True)
class Out:
    """A destination: one register, or (count > 1) a vector `{d0, ..., d(count-1)}`."""

    count: int = 1


@dataclass(frozen=True)
class Vector:
    """A vector source `{v0, v1, ...}`: the values in PTX's order."""

    values: tuple


@dataclass(frozen=True)
class Address:
    """An address operand `[a]`: `value` is the address in the PTX instruction's space."""

    value: Any


@dataclass(frozen=True)
class Imm:
    """An integer constant the PTX semantics requires as an immediate (cp-size, N)."""

    value: int


@dataclass(frozen=True)
class Pred:
    """A predicate source (so the PTX semantics sees a .pred register: `cp.async`'s
    ignore-src)."""

    value: Any


PRED = TYPES["pred"]


class _Kernel:
    """The kernel as the view's registers see it: their types are the call's (a PTX semantics
    may ask `x.k.reg_type`); everything else is the executor's kernel."""

    def __init__(self, k, types: dict[str, PtxType]) -> None:
        self._k, self._types = k, types

    def reg_type(self, reg) -> PtxType:
        t = self._types.get(reg.name) if isinstance(reg, Reg) else None
        return t if t is not None else self._k.reg_type(reg)

    def __getattr__(self, name: str):
        return getattr(self._k, name)


@dataclass
class _View:
    """The part of the executor API PTX semantics use, over given operand values: `env` maps
    each view register's name to its value, `outputs` collects what the semantics writes."""

    x: Any
    form: Form
    env: dict[str, Any]
    ins: Instruction
    outputs: dict
    k: Any = None

    @property
    def d(self):
        return self.x.d

    @property
    def mask(self):
        return self.x.mask

    @property
    def async_copy(self):
        return self.x.async_copy

    @async_copy.setter
    def async_copy(self, serial) -> None:
        # the memory port reads it on the executor: which cp.async a store belongs to
        self.x.async_copy = serial

    def operand(self, i: int):
        return self.ins.operands[i]

    def _op(self, i):
        return self.ins.operands[i] if isinstance(i, int) else i

    def _value(self, i):
        op = self._op(i)
        if isinstance(op, Reg):
            return self.env[op.name]
        if isinstance(op, IntImm):
            return op.value
        raise KeqError(f"operand '{op}' of a PTX call cannot be read (a keq bug in the SASS "
                       f"mapping)", self.ins.loc)

    def read(self, i, t):
        v = self._value(i)
        if isinstance(v, bool):
            return self.x.d.bool_to_bv(self.x.d.pconst(v), t.bits)
        if isinstance(v, int):
            return self.x.d.const(v, t.bits)
        return v

    def read_pred(self, i):
        v = self._value(i)
        if isinstance(v, (bool, int)):
            return self.x.d.pconst(bool(v))
        return v

    def address(self, i: int, width: int = 64):
        op = self._op(i)
        if not isinstance(op, Addr) or not isinstance(op.base, Reg) or op.offset:
            raise KeqError(f"operand '{op}' is not a PTX call's address (a keq bug)",
                           self.ins.loc)
        return self.env[op.base.name]

    def _key(self, i):
        op = self._op(i)
        return op.name if isinstance(op, Reg) else i

    def write(self, i, v, t, mask=None) -> None:
        self.outputs[self._key(i)] = v

    def write_pred(self, i, p, mask=None) -> None:
        self.outputs[self._key(i)] = p

    def effect(self, kind: str, what: str, cond=None) -> None:
        self.x.effect(kind, f"{self.x.ins.form.name} (as {what})", cond)

    def __getattr__(self, name: str):
        return getattr(self.x, name)


def _operand(k: int, arg, env: dict, types: dict, outs: list):
    """The PTX operand standing for call argument `k`, its values entered in `env`."""
    name = f"${k}"
    if isinstance(arg, Out):
        regs = [Reg(name)] if arg.count == 1 else [Reg(f"{name}.{j}") for j in range(arg.count)]
        outs.append([r.name for r in regs])
        return regs[0] if arg.count == 1 else Vec(tuple(regs))
    if isinstance(arg, Vector):
        regs = tuple(Reg(f"{name}.{j}") for j in range(len(arg.values)))
        env.update((r.name, v) for r, v in zip(regs, arg.values))
        return Vec(regs)
    if isinstance(arg, Address):
        env[name] = arg.value
        return Addr(Reg(name))
    if isinstance(arg, Imm):
        return IntImm(arg.value)
    if isinstance(arg, Pred):
        env[name], types[name] = arg.value, PRED
        return Reg(name)
    env[name] = arg
    return Reg(name)


def call(x, name: str, args: Sequence[Any]) -> list:
    """Run PTX `name` on operands `args` (values, `Out`, `Vector`, `Address`, `Imm`, `Pred`,
    in the PTX operand order). Returns, per `Out` in order, its value (count 1) or the list of
    its registers' values (None where the semantics wrote nothing)."""
    form = ptx_form(name)
    fn = ptx_semantics(name)
    env: dict[str, Any] = {}
    types: dict[str, PtxType] = {}
    outs: list[list[str]] = []
    ops = tuple(_operand(k, a, env, types, outs) for k, a in enumerate(args))
    loc = x.ins.loc if x.ins else SourceLoc("<sass>", 0, 0)
    view = _View(x, form, env, Instruction(form, ops, None, None, loc), {},
                 _Kernel(x.k, types))
    fn(view)
    got = [[view.outputs.get(r) for r in regs] for regs in outs]
    return [g[0] if isinstance(a, Out) and a.count == 1 else g
            for g, a in zip(got, (a for a in args if isinstance(a, Out)))]


def ptx(x, name: str, values: Sequence[Any], *, static: dict[int, int] | None = None,
        pair: bool = False):
    """Run PTX `name` with operand 0 the destination and operands 1.. = `values`.

    `static` gives operands that a PTX semantics reads as immediates (by index, from 1).
    `pair`: the destination is `d|p` (setp, shfl); returns (first, second). Otherwise returns
    the destination's value."""
    form = ptx_form(name)
    fn = ptx_semantics(name)
    env: dict[str, Any] = {}
    ops: list[Any] = [Pair(Reg("$0"), Reg("$0p")) if pair else Reg("$0")]
    for k, v in enumerate(values, start=1):
        if static and k in static:
            ops.append(IntImm(static[k]))
        else:
            ops.append(Reg(f"${k}"))
            env[f"${k}"] = v
    loc = x.ins.loc if x.ins else SourceLoc("<sass>", 0, 0)
    view = _View(x, form, env, Instruction(form, tuple(ops), None, None, loc), {}, x.k)
    fn(view)
    if pair:
        return view.outputs.get("$0"), view.outputs.get("$0p")
    return view.outputs.get("$0", view.outputs.get(0))
