"""Run ONE PTX instruction on a few lanes, in the concrete or the symbolic domain.

Shared by every test of `tests/semantics/` (integer, bit, float, convert families and the
conformance suite). Stable API:

    run_instruction(ptx_line, reg_decls, inputs, domain_kind) -> {dest register: [per lane]}
    execute(ptx_line, reg_decls, inputs, domain_kind) -> Run (outputs, effects, executor)
    agree(ptx_line, reg_decls, inputs) -> Run of the concrete side; raises AssertionError naming
        the form, lane, inputs (hex) and both results when concrete and symbolic differ

`reg_decls` maps register names to PTX type names: {"%r1": "b32", "%p1": "pred"}.
`inputs` maps input register names to one value per lane (ints: any Python int, wrapped to the
register's width; predicates: bools). For the symbolic domain an input lane may also be a z3
term (z3.BitVec / z3.Bool). Every input list has the same length: the number of lanes.
Destinations are the registers of operand 0 (a `%p|%q` pair, a `{...}` vector too); pass
`outputs=[...]` to read other registers. Concrete outputs are ints (bools for predicates);
symbolic ones are ints/bools or z3 terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import z3

from semantics.domains.concrete import ConcreteDomain
from semantics.domains.symbolic import SymbolicDomain
from semantics.ir.operands import Pair, Reg, Vec
from semantics.ir.types import TYPES
from semantics.machine.executor import Executor, Geometry
from semantics.machine.kernel import prepare
from semantics.ptx import parse_ptx

__all__ = ["Run", "ptx_kernel", "parse_line_form", "execute", "run_instruction", "agree", "to_hex"]

_HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


@dataclass
class Run:
    outputs: dict[str, list]
    effects: list = field(default_factory=list)   # semantics.machine.executor.Effect
    executor: Any = None
    form: Any = None

    def effect_whats(self) -> set[tuple[str, str]]:
        return {(e.kind, e.what) for e in self.effects}


def ptx_kernel(ptx_line: str, reg_decls: dict[str, str]) -> str:
    """The PTX text of a minimal `.entry k()` holding the instruction and its registers."""
    decls = "".join(f"    .reg .{t} {name};\n" for name, t in reg_decls.items())
    line = ptx_line.strip()
    if not line.endswith(";"):
        line += ";"
    return f"{_HEADER}.visible .entry k()\n{{\n{decls}    {line}\n    ret;\n}}\n"


@lru_cache(maxsize=4096)
def _parsed(text: str):
    return parse_ptx(text, "<harness>")


@lru_cache(maxsize=4096)
def _prepared(text: str):
    return prepare(_parsed(text), "k")


def parse_line_form(ptx_line: str, reg_decls: dict[str, str]):
    """The static `Form` of the instruction (parsed, not prepared: works for unsupported
    forms too)."""
    return _parsed(ptx_kernel(ptx_line, reg_decls)).functions["k"].instructions[0].form


def _lanes(inputs: dict[str, Sequence], lanes: int | None) -> int:
    ns = {len(v) for v in inputs.values()}
    if len(ns) > 1:
        raise ValueError(f"input lists have different lengths: { {k: len(v) for k, v in inputs.items()} }")
    if lanes is not None:
        if ns and ns != {lanes}:
            raise ValueError(f"lanes={lanes} but inputs have {ns.pop()} lanes")
        return lanes
    return ns.pop() if ns else 1


def _dest_regs(ins) -> list[Reg]:
    if not ins.operands:
        return []
    op = ins.operands[0]
    ops = [op.first, op.second] if isinstance(op, Pair) else \
        list(op.elems) if isinstance(op, Vec) else [op]
    return [o for o in ops if isinstance(o, Reg)]


def _is_concrete(x) -> bool:
    return isinstance(x, (int, bool, np.integer, np.bool_))


def _seed(d, kind: str, values: Sequence, t) -> Any:
    if t.kind == "pred":
        if kind == "concrete":
            return np.array([bool(v) for v in values], dtype=bool)
        return [bool(v) if _is_concrete(v) else v for v in values]
    m = (1 << t.bits) - 1
    if kind == "concrete":
        return np.array([int(v) & m for v in values], dtype=np.uint64)
    return [int(v) & m if _is_concrete(v) else v for v in values]


def _out(kind: str, v, t, n: int) -> list:
    if v is None:
        return [False] * n if t.kind == "pred" else [0] * n
    if kind == "concrete":
        return [bool(e) for e in v] if t.kind == "pred" else [int(e) for e in v]
    out = []
    for e in v:
        if isinstance(e, (bool, np.bool_)):
            out.append(bool(e))
        elif _is_concrete(e):
            out.append(int(e))
        else:
            out.append(e)
    return out


def execute(ptx_line: str, reg_decls: dict[str, str], inputs: dict[str, Sequence],
            domain_kind: str = "concrete", *, lanes: int | None = None,
            outputs: Sequence[str] | None = None, mask: Sequence[bool] | None = None) -> Run:
    """Run the instruction once over `lanes` threads (one CTA of n threads) and return its
    destination registers, the effects it recorded and the executor."""
    if domain_kind not in ("concrete", "symbolic"):
        raise ValueError(f"domain_kind must be 'concrete' or 'symbolic', not {domain_kind!r}")
    for name in inputs:
        if name not in reg_decls:
            raise ValueError(f"input {name} is not declared in reg_decls")
    n = _lanes(inputs, lanes)
    kernel = _prepared(ptx_kernel(ptx_line, reg_decls))
    d = ConcreteDomain(n) if domain_kind == "concrete" else SymbolicDomain(n)
    ex = Executor(kernel, d, None, Geometry((n, 1, 1), (1, 1, 1), ((0, 0, 0),)), params={})
    for name, values in inputs.items():
        t = TYPES[reg_decls[name]]
        ex.regs[Reg(name, 0)] = _seed(d, domain_kind, values, t)
    ins = kernel.instrs[0]
    ex.ins = ins
    ex.mask = d.pconst(True) if mask is None else _seed(d, domain_kind, mask, TYPES["pred"])
    kernel.semantics[0](ex)
    names = list(outputs) if outputs is not None else [r.name for r in _dest_regs(ins)]
    out = {}
    for name in names:
        t = TYPES[reg_decls[name]]
        out[name] = _out(domain_kind, ex.regs.get(Reg(name, 0)), t, n)
    return Run(out, list(ex.effects), ex, ins.form)


def run_instruction(ptx_line: str, reg_decls: dict[str, str], inputs: dict[str, Sequence],
                    domain_kind: str = "concrete", **kw) -> dict[str, list]:
    """{destination register: [value per lane]} after running the instruction."""
    return execute(ptx_line, reg_decls, inputs, domain_kind, **kw).outputs


def to_hex(v, t=None) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if _is_concrete(v):
        return hex(int(v))
    return str(v)


def _z3_value(e, t):
    """A symbolic output lane (after substitution and simplification) as int/bool."""
    if _is_concrete(e):
        return bool(e) if t.kind == "pred" else int(e)
    s = z3.simplify(e)
    if z3.is_true(s):
        return True
    if z3.is_false(s):
        return False
    if z3.is_bv_value(s):
        return s.as_long()
    # Not folded: typically fp.to_ieee_bv(NaN), which SMT-LIB leaves as *some* NaN pattern
    # (ops canonicalize it). Ask the solver whether the term has exactly one value.
    solver = z3.Solver()
    solver.set("timeout", 20_000)
    probe = z3.Bool("_probe") if t.kind == "pred" else z3.BitVec("_probe", t.bits)
    solver.add(probe == s)
    if solver.check() != z3.sat:
        return s
    v = solver.model()[probe]
    if v is None:
        return s
    solver.add(probe != v)
    if solver.check() == z3.unsat:
        return _z3_value(v, t)
    return s                                          # not a constant: reported as a mismatch


def agree(ptx_line: str, reg_decls: dict[str, str], inputs: dict[str, Sequence], *,
          lanes: int | None = None, outputs: Sequence[str] | None = None) -> Run:
    """Run concretely, and symbolically with a fresh z3 variable for every input lane; substitute
    the concrete inputs into the symbolic results and require bit-for-bit equality per lane and
    per destination (bool equality for predicates). Also: every effect the concrete run records
    is recorded by the symbolic run (which may record more: it cannot rule a symbolic condition
    out). Returns the concrete run."""
    conc = execute(ptx_line, reg_decls, inputs, "concrete", lanes=lanes, outputs=outputs)
    n = _lanes(inputs, lanes)
    sym_inputs: dict[str, list] = {}
    subst: list[tuple] = []
    for name, values in inputs.items():
        t = TYPES[reg_decls[name]]
        lane_vars = []
        for i, v in enumerate(values):
            tag = f"{name.lstrip('%')}_l{i}"
            if t.kind == "pred":
                var = z3.Bool(tag)
                subst.append((var, z3.BoolVal(bool(v))))
            else:
                var = z3.BitVec(tag, t.bits)
                subst.append((var, z3.BitVecVal(int(v) & ((1 << t.bits) - 1), t.bits)))
            lane_vars.append(var)
        sym_inputs[name] = lane_vars
    sym = execute(ptx_line, reg_decls, sym_inputs, "symbolic", lanes=n, outputs=outputs)
    form = conc.form.name
    shown = ", ".join(f"{k}=[{', '.join(to_hex(x) for x in v)}]" for k, v in inputs.items())
    for reg, cvals in conc.outputs.items():
        t = TYPES[reg_decls[reg]]
        for lane, (c, s) in enumerate(zip(cvals, sym.outputs[reg])):
            if not _is_concrete(s):
                s = z3.substitute(s, *subst) if subst else s
            sv = _z3_value(s, t)
            if t.kind == "pred":
                ok = isinstance(sv, bool) and sv == bool(c)
            else:
                ok = isinstance(sv, int) and not isinstance(sv, bool) and sv == int(c)
            if not ok:
                raise AssertionError(
                    f"{form}: concrete and symbolic differ on {reg}, lane {lane}\n"
                    f"  line: {ptx_line}\n  inputs: {shown}\n"
                    f"  input lane {lane}: "
                    + ", ".join(f"{k}={to_hex(v[lane])}" for k, v in inputs.items())
                    + f"\n  concrete: {to_hex(c)}\n  symbolic: {to_hex(sv)}")
    missing = conc.effect_whats() - sym.effect_whats()
    if missing:
        raise AssertionError(f"{form}: effects recorded concretely but not symbolically: "
                             f"{sorted(missing)}\n  line: {ptx_line}\n  inputs: {shown}")
    return conc
