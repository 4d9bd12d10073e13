"""Run ONE SASS instruction on a few lanes, in the concrete or the symbolic domain, and check
that the two domains agree bit for bit (the SASS side of `semantics.conformance`).

    execute_sass(line, inputs, "concrete"|"symbolic") -> SassRun (outputs, effects)
    agree_sass(line, inputs) -> SassRun of the concrete side; AssertionError naming the form,
        lane, inputs and both results when the domains differ

`inputs` maps register names ("R1", "UR4", "P0") to one value per lane (ints wrapped to 32
bits; bools for predicates); symbolic inputs may be z3 terms. Outputs are the registers named
in `outputs` (default: every register the line writes, found from its operands).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import z3

from semantics.conformance import allows, is_concrete, z3_value
from semantics.domains.concrete import ConcreteDomain
from semantics.domains.symbolic import SymbolicDomain
from semantics.ir.types import TYPES
from semantics.machine.executor import Executor, Geometry
from semantics.sass.machine import prepare_sass
from semantics.sass.operands import SassReg, Src
from semantics.sass.ops.access import pkey
from semantics.sass.parser import parse_sass

_LISTING = """\t.target\t{arch}
\t.section\t.text.k,"ax",@progbits
        .global         k
        .type           k,@function
        .other          k,@"STO_CUDA_ENTRY STV_DEFAULT"
k:
        /*0000*/                   {line} ;
        /*0010*/                   EXIT ;
"""


@dataclass(frozen=True)
class SassRun:
    outputs: dict[str, list]
    effects: list
    form: str


def _reg(name: str) -> SassReg:
    for kind in ("UR", "UP", "R", "P"):
        if name.startswith(kind) and name[len(kind):].isdigit():
            return SassReg(kind, int(name[len(kind):]))
    raise ValueError(f"not a register name: {name}")


def _written(ins) -> list[str]:
    """Destination registers of a line: leading register operands that are written (the
    convention of nvdisasm: destinations first)."""
    out = []
    op = ins.opcode
    ops = list(ins.operands)
    n_dst = {"ISETP": 2, "FSETP": 2, "PLOP3": 2, "UISETP": 2, "SHFL": 2, "FCHK": 1}.get(op, 1)
    if op in ("IADD3", "UIADD3", "LEA", "ULEA"):
        n_dst = 1 + sum(1 for o in ops[1:3] if isinstance(o, SassReg) and o.is_predicate)
    if op in ("LOP3", "ULOP3") and isinstance(ops[0], SassReg) and ops[0].is_predicate:
        n_dst = 2
    for o in ops[:n_dst]:
        base = o.operand if isinstance(o, Src) else o
        if isinstance(base, SassReg) and base.index is not None:
            out.append(str(base))
            if base.kind in ("R", "UR") and ("WIDE" in ins.form.mods or op == "CS2R"):
                out.append(f"{base.kind}{base.index + 1}")
    return out


def execute_sass(line: str, inputs: dict[str, Sequence], kind: str = "concrete", *,
                 lanes: int | None = None, outputs: Sequence[str] | None = None,
                 arch: str = "sm_90") -> SassRun:
    m = parse_sass(_LISTING.format(arch=arch, line=line), "<sass-form>")
    k = prepare_sass(m, "k")
    n = lanes or (len(next(iter(inputs.values()))) if inputs else 4)
    d = ConcreteDomain(n) if kind == "concrete" else SymbolicDomain(n)
    ex = Executor(k, d, None, Geometry((n, 1, 1), (1, 1, 1), ((0, 0, 0),)), params={})
    for name, values in inputs.items():
        reg = _reg(name)
        if reg.is_predicate:
            vals = [bool(v) if is_concrete(v) else v for v in values]
            ex.regs[pkey(reg)] = np.array(vals, dtype=bool) if kind == "concrete" else vals
        else:
            vals = [int(v) & 0xFFFFFFFF if is_concrete(v) else v for v in values]
            ex.regs[reg] = np.array(vals, dtype=np.uint64) if kind == "concrete" else vals
    ins = k.instrs[0]
    ex.ins = ins
    ex.mask = d.pconst(True)
    k.semantics[0](ex)
    names = list(outputs) if outputs is not None else _written(ins)
    out = {}
    for name in names:
        reg = _reg(name)
        v = ex.regs.get(pkey(reg) if reg.is_predicate else reg)
        if v is None:
            out[name] = [False if reg.is_predicate else 0] * n
        elif kind == "concrete":
            out[name] = [bool(e) if reg.is_predicate else int(e) for e in v]
        else:
            out[name] = list(v)
    return SassRun(out, list(ex.effects), ins.form.name)


def agree_sass(line: str, inputs: dict[str, Sequence], *, outputs: Sequence[str] | None = None,
               arch: str = "sm_90", approx: bool = False) -> SassRun:
    """Concrete run vs symbolic run on fresh variables (substituted afterwards): equal bit for
    bit per destination and lane, and every concrete effect recorded symbolically too.
    `approx`: an approximate function (MUFU): uninterpreted symbolically by design, so only
    the effects are compared."""
    conc = execute_sass(line, inputs, "concrete", outputs=outputs, arch=arch)
    n = len(next(iter(inputs.values()))) if inputs else 4
    sym_in, subst = {}, []
    for name, values in inputs.items():
        pred = _reg(name).is_predicate
        lane_vars = []
        for i, v in enumerate(values):
            if pred:
                var = z3.Bool(f"{name}_l{i}")
                subst.append((var, z3.BoolVal(bool(v))))
            else:
                var = z3.BitVec(f"{name}_l{i}", 32)
                subst.append((var, z3.BitVecVal(int(v) & 0xFFFFFFFF, 32)))
            lane_vars.append(var)
        sym_in[name] = lane_vars
    sym = execute_sass(line, sym_in, "symbolic", lanes=n, outputs=outputs, arch=arch)
    shown = ", ".join(f"{k}=[{', '.join(hex(int(x)) for x in v)}]" for k, v in inputs.items())
    for name, cvals in ({} if approx else conc.outputs).items():
        pred = _reg(name).is_predicate
        t = TYPES["pred"] if pred else TYPES["b32"]
        for lane, (c, s) in enumerate(zip(cvals, sym.outputs[name])):
            if not is_concrete(s):
                s = z3.substitute(s, *subst) if subst else s
            sv = z3_value(s, t)
            if isinstance(sv, z3.ExprRef) and "keq!u" in sv.sexpr():
                # what the ISA leaves open (an unspecified NaN): the emulator's must be one
                ok = allows(sv, c, "pred" if pred else "b32")
            else:
                ok = (isinstance(sv, bool) and sv == bool(c)) if pred else \
                    (isinstance(sv, int) and not isinstance(sv, bool) and sv == int(c))
            if not ok:
                raise AssertionError(f"{conc.form}: {name} lane {lane}: concrete {c!r}, "
                                     f"symbolic {sv!r} (inputs {shown})")
    want = {(e.kind, e.what) for e in conc.effects}
    got = {(e.kind, e.what) for e in sym.effects}
    if not want <= got:
        raise AssertionError(f"{conc.form}: effects {want - got} missing symbolically")
    return conc


__all__ = ["SassRun", "agree_sass", "execute_sass"]
