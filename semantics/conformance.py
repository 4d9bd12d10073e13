"""Instruction-form conformance: run ONE PTX instruction on a few lanes in any backend, and
check that two backends agree bit for bit on every scalar form of tiers 1 and 2.

Moved here from tests/semantics (harness.py and conformance.py, which re-export it) so that
`keq fuzz --semantics` can run the same suite with a GPU as one side. Imports nothing from
`verifier`.

Part 1, the single-instruction harness (stable API):

    execute(ptx_line, reg_decls, inputs, domain_kind) -> Run (outputs, effects, executor)
    run_instruction(ptx_line, reg_decls, inputs, domain_kind) -> {dest register: [per lane]}
    ptx_kernel(ptx_line, reg_decls) -> PTX text of a minimal `.entry k()`

`reg_decls` maps register names to PTX type names: {"%r1": "b32", "%p1": "pred"}.
`inputs` maps input register names to one value per lane (ints: any Python int, wrapped to the
register's width; predicates: bools). For the symbolic domain an input lane may also be a z3
term. Concrete outputs are ints (bools for predicates); symbolic ones ints/bools or z3 terms.

Part 2, the conformance suite: per instruction form, two backends agree bit for bit.

A *backend* runs one instruction line on a few lanes of concrete inputs and returns an
`Outcome` (destination values as ints/bools, and the effects it recorded). Two ship here:

- `concrete_backend`: the numpy domain.
- `symbolic_backend`: the z3 domain on a fresh variable per input lane; the concrete inputs are
  substituted into the resulting terms afterwards and simplified to constants.

Any future domain (SASS semantics, a GPU run through pycuda) is one more backend: a callable
`(case, inputs) -> Outcome`. Run it with

    conformance_suite(FORMS, reference=concrete_backend, candidate=my_backend)

or per form with `check_form(case, inputs, reference, candidate)`. `inputs` maps each input
register of the case to one value per lane (bit patterns; bools for predicates);
`draw_inputs(case)` is the hypothesis strategy that mixes random values with NaN payloads,
±0, ±inf, subnormals, max/min normals and integer extremes (0, 1, -1, INT_MIN, INT_MAX,
UINT_MAX, and width-1, width, width+1 for shift amounts), and `special_inputs(case)` a
deterministic sweep of those specials.

The table `FORMS` has one or more instruction lines for every scalar form of tiers 1 and 2 of
PTX-COVERAGE.md (and the rest of the bit family). Forms keq has no semantics for yet are kept in
the table and reported as skipped (`skipped_forms()`): when another family gains semantics for
them, the suite picks them up with no change here. Tier entries that are not scalar register
operations (memory, control flow, barriers, textures, tensor cores) are listed in `NON_SCALAR`
with the reason; the executor and memory tests cover them.

Approximate forms (`*.approx`): the symbolic domain makes them uninterpreted functions by
design, so values are not compared; both backends must record the approximation effect.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import z3
from hypothesis import strategies as st

from semantics.domains.concrete import ConcreteDomain
from semantics.domains.symbolic import SymbolicDomain
from semantics.ir.operands import Pair, Reg, Vec
from semantics.ir.types import TYPES
from semantics.machine.executor import Executor, Geometry
from semantics.machine.kernel import prepare
from semantics.ptx import parse_ptx


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
def parsed_ptx(text: str):
    return parse_ptx(text, "<harness>")


@lru_cache(maxsize=4096)
def _prepared(text: str):
    return prepare(parsed_ptx(text), "k")


def parse_line_form(ptx_line: str, reg_decls: dict[str, str]):
    """The static `Form` of the instruction (parsed, not prepared: works for unsupported
    forms too)."""
    return parsed_ptx(ptx_kernel(ptx_line, reg_decls)).functions["k"].instructions[0].form


def _lanes(inputs: dict[str, Sequence], lanes: int | None) -> int:
    ns = {len(v) for v in inputs.values()}
    if len(ns) > 1:
        raise ValueError(f"input lists have different lengths: { {k: len(v) for k, v in inputs.items()} }")
    if lanes is not None:
        if ns and ns != {lanes}:
            raise ValueError(f"lanes={lanes} but inputs have {ns.pop()} lanes")
        return lanes
    return ns.pop() if ns else 1


def dest_regs(ins) -> list[Reg]:
    if not ins.operands:
        return []
    op = ins.operands[0]
    ops = [op.first, op.second] if isinstance(op, Pair) else \
        list(op.elems) if isinstance(op, Vec) else [op]
    return [o for o in ops if isinstance(o, Reg)]


def is_concrete(x) -> bool:
    return isinstance(x, (int, bool, np.integer, np.bool_))


def _seed(d, kind: str, values: Sequence, t) -> Any:
    if t.kind == "pred":
        if kind == "concrete":
            return np.array([bool(v) for v in values], dtype=bool)
        return [bool(v) if is_concrete(v) else v for v in values]
    m = (1 << t.bits) - 1
    if kind == "concrete":
        return np.array([int(v) & m for v in values], dtype=np.uint64)
    return [int(v) & m if is_concrete(v) else v for v in values]


def _out(kind: str, v, t, n: int) -> list:
    if v is None:
        return [False] * n if t.kind == "pred" else [0] * n
    if kind == "concrete":
        return [bool(e) for e in v] if t.kind == "pred" else [int(e) for e in v]
    out = []
    for e in v:
        if isinstance(e, (bool, np.bool_)):
            out.append(bool(e))
        elif is_concrete(e):
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
    names = list(outputs) if outputs is not None else [r.name for r in dest_regs(ins)]
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
    if is_concrete(v):
        return hex(int(v))
    return str(v)


def z3_value(e, t):
    """A symbolic output lane (after substitution and simplification) as int/bool."""
    if is_concrete(e):
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
        return z3_value(v, t)
    return s                                          # not a constant: reported as a mismatch


# -- the tier lists of PTX-COVERAGE.md (data) ---------------------------------------------------

TIER1 = (
    'ret', 'ld.param.T', 'mov.T', 'add.T', 'cvta.to.global.T', 'bra', 'mul.wide.T', 'mad.lo.T',
    'shl.T', 'st.global.T', 'setp.ge.T', 'ld.global.T', 'setp.lt.T', 'and.T', 'sub.T', 'setp.ne.T',
    'cvt.T.T', 'setp.eq.T', 'shr.T', 'mul.lo.T', 'setp.gt.T', 'bar.sync', 'or.T', 'st.shared.T',
    'mul.T', 'cvt.rn.T.T', 'ld.shared.T', 'fma.rn.T', 'bra.uni', 'selp.T', 'neg.T',
    'st.global.v4.T', 'div.rn.T', 'ld.global.v4.T', 'max.T', 'shfl.sync.bfly.T', 'xor.T', 'not.T',
    'setp.le.T', 'div.T', 'barrier.sync', 'cvt.rzi.T.T', 'abs.T', 'min.T', 'add.ftz.T', 'rcp.rn.T',
    'st.global.v2.T', 'atom.global.add.T', 'st.param.T', 'call.uni', 'ld.global.v2.T',
    'ld.const.T', 'ex2.approx.T', 'rem.T', 'cvta.global.T', 'tex.2d.v4.T.T', 'sqrt.rn.T',
    'shfl.sync.down.T', 'setp.ltu.T', 'setp.neu.T',
)
TIER2 = (
    'ex2.approx.ftz.T', 'ld.shared.v4.T', 'fma.rn.ftz.T', 'mul.ftz.T', 'cp.async.wait_group',
    'cp.async.commit_group', 'st.shared.v4.T', 'shfl.sync.idx.T', 'sub.ftz.T', 'rcp.approx.ftz.T',
    'cvt.sat.T.T', 'cp.async.cg.shared.global.L2::128B', 'st.local.T',
    'ldmatrix.sync.aligned.x4.m8n8.shared.T', 'mma.sync.aligned.m16n8k16.row.col.T.T.T.T', 'bfi.T',
    'div.approx.ftz.T', 'ldmatrix.sync.aligned.x2.trans.m8n8.shared.T', 'ld.local.T',
    'ld.global.nc.T', 'ldmatrix.sync.aligned.x2.m8n8.shared.T', 'ld.volatile.shared.T',
    'st.volatile.shared.T', 'rsqrt.approx.ftz.T', 'fma.rm.T', 'shfl.sync.up.T', 'ld.shared.v2.T',
    'mul.hi.T', 'cvt.rni.T.T', 'rsqrt.approx.T', 'setp.geu.T', 'atom.shared.add.T',
    'bar.warp.sync', 'cvta.local.T', 'mul.rn.T', 'setp.leu.T', 'mad.wide.T', 'st.local.v4.T',
    'st.shared.v2.T', 'max.ftz.T', 'set.eq.T.T', 'clz.T', 'cvta.shared.T', 'ld.global.cs.T',
    'ld.global.cs.v4.T', 'ld.const.v4.T', 'st.local.v2.T', 'tex.1d.v4.T.T', 'ld.global.nc.v4.T',
    'ld.local.v4.T', 'st.global.cs.T', 'cp.async.ca.shared.global.L2::128B', 'st.T', 'add.rn.T',
    'call', 'copysign.T', 'ld.volatile.global.T', 'cvt.ftz.T.T', 'cvt.rmi.T.T', 'cvt.rn.ftz.T.T',
    'div.approx.T', 'ld.T', 'setp.gtu.T', 'setp.lt.ftz.T', 'tex.3d.v4.T.T',
    'cp.async.cg.shared.global', 'lg2.approx.ftz.T', 'setp.gt.ftz.T', 'atom.shared.exch.T',
    'cvta.to.local.T', 'lg2.approx.T', 'sqrt.approx.ftz.T', 'st.global.cs.v4.T',
    'atom.add.noftz.T', 'bmsk.clamp.T', 'cp.async.ca.shared.global', 'ld.global.nc.v2.T',
    'ld.param.v2.T', 'ld.volatile.global.v4.T', 'tanh.approx.T', 'sust.b.2d.v4.T.trap',
    'tex.a2d.v4.T.T', 'add.rz.T', 'cvt.rn.satfinite.T.T', 'cvt.rpi.T.T', 'fma.rz.T',
    'ld.local.v2.T',
)

_MEMORY = "memory access: needs a memory port and addresses (memory/executor tests)"
_CONTROL = "control flow / barrier: needs the SIMT loop (executor tests)"
NON_SCALAR = {e: _MEMORY for e in TIER1 + TIER2
              if e.split(".")[0] in ("ld", "st", "atom", "cvta", "cp", "ldmatrix", "sust", "tex")}
NON_SCALAR.update({e: _CONTROL for e in ("ret", "bra", "bra.uni", "bar.sync", "barrier.sync",
                                         "bar.warp.sync", "call", "call.uni",
                                         "cp.async.wait_group", "cp.async.commit_group")})
NON_SCALAR["mma.sync.aligned.m16n8k16.row.col.T.T.T.T"] = \
    "tensor-core fragment spread over a warp: not a per-lane register operation"


# -- the table of forms --------------------------------------------------------------------------

@dataclass(frozen=True)
class FormCase:
    """One instruction line with its registers. `line` names registers as %d %e (outputs,
    before the first comma), %a %b %c %x (inputs), %p %q (predicates)."""

    entry: str                       # tier entry (PTX-COVERAGE.md) or "extra"
    line: str
    regs: tuple[tuple[str, str], ...]
    lanes: int = 4

    @property
    def reg_decls(self) -> dict[str, str]:
        return dict(self.regs)

    @cached_property
    def inputs(self) -> tuple[str, ...]:
        """Registers read by the line: those after the destination operand."""
        tail = self.line.split(",", 1)[1] if "," in self.line else ""
        return tuple(r for r, _ in self.regs if _mentions(tail, r))

    @property
    def id(self) -> str:
        return self.line.split(" ", 1)[0] + ("" if self.entry != "extra" else "")

    @cached_property
    def form(self):
        return parse_line_form(self.line, self.reg_decls)

    @property
    def supported(self) -> bool:
        from semantics.ops import lookup
        return lookup(self.form) is not None

    @property
    def is_lanewise(self) -> bool:
        return self.form.opcode != "shfl"


def _mentions(text: str, reg: str) -> bool:
    import re
    return re.search(re.escape(reg) + r"(?![A-Za-z0-9_])", text) is not None


def case(entry: str, line: str, types: str, lanes: int = 4) -> FormCase:
    """`types`: "d:s32 a,b:s32 p:pred" -> registers %d %a %b %p of those types."""
    regs = []
    for part in types.split():
        names, t = part.split(":")
        assert t in TYPES, t
        regs += [(f"%{n}", t) for n in names.split(",")]
    return FormCase(entry, line, tuple(regs), lanes)


def _int_binops(entry: str, op: str, types: Iterable[str]) -> list[FormCase]:
    return [case(entry, f"{op}.{t} %d, %a, %b", f"d,a,b:{t}") for t in types]


_I = ("s16", "u16", "s32", "u32", "s64", "u64")
_F = ("f32", "f64")
_FH = ("f16", "bf16", "f32", "f64")

FORMS: list[FormCase] = [
    # moves and selection
    *[case("mov.T", f"mov.{t} %d, %a", f"d,a:{t}") for t in ("b16", "b32", "u64", "f32", "f64")],
    case("mov.T", "mov.pred %p, %q", "p,q:pred"),
    *[case("selp.T", f"selp.{t} %d, %a, %b, %p", f"d,a,b:{t} p:pred")
      for t in ("b32", "s32", "u64", "f32", "f64", "b16")],
    # integer arithmetic
    *_int_binops("add.T", "add", _I),
    case("add.T", "add.sat.s32 %d, %a, %b", "d,a,b:s32"),
    *_int_binops("sub.T", "sub", _I),
    case("sub.T", "sub.sat.s32 %d, %a, %b", "d,a,b:s32"),
    *_int_binops("mul.lo.T", "mul.lo", ("s16", "u16", "s32", "u32", "s64", "u64")),
    *_int_binops("mul.hi.T", "mul.hi", ("s16", "u16", "s32", "u32", "s64", "u64")),
    *[case("mul.wide.T", f"mul.wide.{t} %d, %a, %b", f"d:{t[0]}{2 * int(t[1:])} a,b:{t}")
      for t in ("s16", "u16", "s32", "u32")],
    *[case("mad.lo.T", f"mad.lo.{t} %d, %a, %b, %c", f"d,a,b,c:{t}") for t in _I],
    *[case("mad.lo.T", f"mad.hi.{t} %d, %a, %b, %c", f"d,a,b,c:{t}") for t in ("s32", "u32", "s64", "u64")],
    case("mad.lo.T", "mad.hi.sat.s32 %d, %a, %b, %c", "d,a,b,c:s32"),
    *[case("mad.wide.T", f"mad.wide.{t} %d, %a, %b, %c", f"d,c:{t[0]}{2 * int(t[1:])} a,b:{t}")
      for t in ("s16", "u16", "s32", "u32")],
    *_int_binops("div.T", "div", _I),
    *_int_binops("rem.T", "rem", _I),
    *[case("neg.T", f"neg.{t} %d, %a", f"d,a:{t}") for t in ("s16", "s32", "s64")],
    *[case("abs.T", f"abs.{t} %d, %a", f"d,a:{t}") for t in ("s16", "s32", "s64")],
    *_int_binops("min.T", "min", _I),
    *_int_binops("max.T", "max", _I),
    # bits
    *[case(f"{op}.T", f"{op}.{t} %d, %a, %b", f"d,a,b:{t}")
      for op in ("and", "or", "xor") for t in ("b16", "b32", "b64")],
    *[case(f"{op}.T", f"{op}.pred %p, %q, %x", "p,q,x:pred") for op in ("and", "or", "xor")],
    *[case("not.T", f"not.{t} %d, %a", f"d,a:{t}") for t in ("b16", "b32", "b64")],
    case("not.T", "not.pred %p, %q", "p,q:pred"),
    *[case("shl.T", f"shl.{t} %d, %a, %b", f"d,a:{t} b:u32") for t in ("b16", "b32", "b64")],
    *[case("shr.T", f"shr.{t} %d, %a, %b", f"d,a:{t} b:u32")
      for t in ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64")],
    *[case("clz.T", f"clz.{t} %d, %a", f"d:u32 a:{t}") for t in ("b32", "b64")],
    *[case("bfi.T", f"bfi.{t} %d, %a, %b, %c, %x", f"d,a,b:{t} c,x:u32") for t in ("b32", "b64")],
    case("bfi.T", "bfi.b32 %d, %a, %b, 8, 4", "d,a,b:b32"),
    case("bmsk.clamp.T", "bmsk.clamp.b32 %d, %a, %b", "d,a,b:b32"),
    # integer comparisons
    *[case(f"setp.{cmp}.T", f"setp.{cmp}.{t} %p, %a, %b", f"p:pred a,b:{t}")
      for cmp in ("eq", "ne", "lt", "le", "gt", "ge") for t in ("s32", "u32", "s64", "u64")],
    *[case("setp.lt.T", f"setp.{cmp}.u32 %p, %a, %b", "p:pred a,b:u32") for cmp in ("lo", "ls", "hi", "hs")],
    *[case("setp.lt.T", f"setp.lt.{op}.s32 %p|%q, %a, %b, %x", "p,q,x:pred a,b:s32")
      for op in ("and", "or", "xor")],
    case("set.eq.T.T", "set.eq.u32.s32 %d, %a, %b", "d:u32 a,b:s32"),
    # warp shuffles (one partial warp of `lanes` threads)
    *[case(f"shfl.sync.{m}.T", f"shfl.sync.{m}.b32 %d|%p, %a, {b}, {c}, -1;", "d:b32 p:pred a:b32",
           lanes=8)
      for m, b, c in (("bfly", 1, 31), ("bfly", 4, 31), ("down", 1, 31), ("down", 2, 0x1c1f),
                      ("up", 1, 0), ("up", 3, 0x1800), ("idx", 5, 31), ("idx", 2, 0x1c1f))],
    # floating point
    *[case("add.T", f"add.{t} %d, %a, %b", f"d,a,b:{t}") for t in _FH],
    *[case("sub.T", f"sub.{t} %d, %a, %b", f"d,a,b:{t}") for t in _FH],
    *[case("mul.T", f"mul.{t} %d, %a, %b", f"d,a,b:{t}") for t in _FH],
    *[case(f"{op}.{rm}.T", f"{op}.{rm}.{t} %d, %a, %b", f"d,a,b:{t}")
      for op, rm in (("add", "rn"), ("add", "rz"), ("mul", "rn")) for t in _F],
    case("add.ftz.T", "add.ftz.f32 %d, %a, %b", "d,a,b:f32"),
    case("sub.ftz.T", "sub.ftz.f32 %d, %a, %b", "d,a,b:f32"),
    case("mul.ftz.T", "mul.ftz.f32 %d, %a, %b", "d,a,b:f32"),
    *[case(f"fma.{rm}.T", f"fma.{rm}.{t} %d, %a, %b, %c", f"d,a,b,c:{t}")
      for rm in ("rn", "rm", "rz") for t in _F],
    case("fma.rn.T", "fma.rn.f16 %d, %a, %b, %c", "d,a,b,c:f16"),
    case("fma.rn.T", "fma.rn.bf16 %d, %a, %b, %c", "d,a,b,c:bf16"),
    case("fma.rn.ftz.T", "fma.rn.ftz.f32 %d, %a, %b, %c", "d,a,b,c:f32"),
    *[case("div.rn.T", f"div.rn.{t} %d, %a, %b", f"d,a,b:{t}") for t in _F],
    *[case("rcp.rn.T", f"rcp.rn.{t} %d, %a", f"d,a:{t}") for t in _F],
    *[case("sqrt.rn.T", f"sqrt.rn.{t} %d, %a", f"d,a:{t}") for t in _F],
    *[case("neg.T", f"neg.{t} %d, %a", f"d,a:{t}") for t in _FH],
    *[case("abs.T", f"abs.{t} %d, %a", f"d,a:{t}") for t in _FH],
    *[case("min.T", f"min.{t} %d, %a, %b", f"d,a,b:{t}") for t in _FH],
    *[case("max.T", f"max.{t} %d, %a, %b", f"d,a,b:{t}") for t in _FH],
    case("max.ftz.T", "max.ftz.f32 %d, %a, %b", "d,a,b:f32"),
    *[case("copysign.T", f"copysign.{t} %d, %a, %b", f"d,a,b:{t}") for t in _F],
    case("ex2.approx.T", "ex2.approx.f32 %d, %a", "d,a:f32"),
    case("ex2.approx.ftz.T", "ex2.approx.ftz.f32 %d, %a", "d,a:f32"),
    case("lg2.approx.T", "lg2.approx.f32 %d, %a", "d,a:f32"),
    case("lg2.approx.ftz.T", "lg2.approx.ftz.f32 %d, %a", "d,a:f32"),
    case("rcp.approx.ftz.T", "rcp.approx.ftz.f32 %d, %a", "d,a:f32"),
    case("rsqrt.approx.T", "rsqrt.approx.f32 %d, %a", "d,a:f32"),
    case("rsqrt.approx.ftz.T", "rsqrt.approx.ftz.f32 %d, %a", "d,a:f32"),
    case("sqrt.approx.ftz.T", "sqrt.approx.ftz.f32 %d, %a", "d,a:f32"),
    case("div.approx.T", "div.approx.f32 %d, %a, %b", "d,a,b:f32"),
    case("div.approx.ftz.T", "div.approx.ftz.f32 %d, %a, %b", "d,a,b:f32"),
    case("tanh.approx.T", "tanh.approx.f32 %d, %a", "d,a:f32"),
    case("div.T", "div.full.f32 %d, %a, %b", "d,a,b:f32"),
    # floating-point comparisons
    *[case(f"setp.{cmp}.T", f"setp.{cmp}.{t} %p, %a, %b", f"p:pred a,b:{t}")
      for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "ltu", "neu", "geu", "leu", "gtu")
      for t in _F],
    *[case(f"setp.{cmp}.ftz.T", f"setp.{cmp}.ftz.f32 %p, %a, %b", "p:pred a,b:f32")
      for cmp in ("lt", "gt")],
    case("set.eq.T.T", "set.eq.u32.f32 %d, %a, %b", "d:u32 a,b:f32"),
    # conversions
    *[case("cvt.T.T", f"cvt.{d}.{s} %d, %a", f"d:{d} a:{s}")
      for d, s in (("u64", "u32"), ("s64", "s32"), ("u32", "u64"), ("s32", "s64"), ("u16", "u32"),
                   ("s32", "s16"), ("u32", "u16"), ("s16", "s8"), ("u8", "u32"), ("s8", "s32"),
                   ("f32", "f16"), ("f64", "f32"), ("f32", "bf16"))],
    *[case("cvt.rn.T.T", f"cvt.rn.{d}.{s} %d, %a", f"d:{d} a:{s}")
      for d, s in (("f32", "s32"), ("f32", "u32"), ("f64", "s64"), ("f32", "u64"), ("f64", "u32"),
                   ("f32", "f64"), ("f16", "f32"), ("bf16", "f32"), ("f16", "f64"))],
    *[case(f"cvt.{r}.T.T", f"cvt.{r}.{d}.{s} %d, %a", f"d:{d} a:{s}")
      for r in ("rzi", "rni", "rmi", "rpi")
      for d, s in (("s32", "f32"), ("u32", "f32"), ("s64", "f64"), ("f32", "f32"), ("f64", "f64"))],
    case("cvt.sat.T.T", "cvt.sat.f32.f32 %d, %a", "d,a:f32"),
    case("cvt.sat.T.T", "cvt.sat.u8.s32 %d, %a", "d:u8 a:s32"),
    case("cvt.ftz.T.T", "cvt.ftz.f32.f32 %d, %a", "d,a:f32"),
    case("cvt.ftz.T.T", "cvt.ftz.f64.f32 %d, %a", "d:f64 a:f32"),
    case("cvt.rn.ftz.T.T", "cvt.rn.ftz.f32.f64 %d, %a", "d:f32 a:f64"),
    case("cvt.rn.satfinite.T.T", "cvt.rn.satfinite.f16.f32 %d, %a", "d:f16 a:f32"),
    case("cvt.rn.satfinite.T.T", "cvt.rn.satfinite.bf16.f32 %d, %a", "d:bf16 a:f32"),
    # fp8 (semantics/ops/convert_fp8.py)
    *[case("extra", f"cvt.rn.satfinite{r}.{t}.f32 %d, %a, %b", "d:b16 a,b:f32")
      for t in ("e4m3x2", "e5m2x2") for r in ("", ".relu")],
    *[case("extra", f"cvt.rn.satfinite.{t}.f16x2 %d, %a", "d:b16 a:f16x2")
      for t in ("e4m3x2", "e5m2x2")],
    *[case("extra", f"cvt.rn{r}.f16x2.{t} %d, %a", "d:f16x2 a:b16")
      for t in ("e4m3x2", "e5m2x2") for r in ("", ".relu")],
    # the rest of the bit family (tier 3)
    *[case("extra", f"cnot.{t} %d, %a", f"d,a:{t}") for t in ("b16", "b32", "b64")],
    *[case("extra", f"shf.{lr}.{m}.b32 %d, %a, %b, %c", "d,a,b,c:b32")
      for lr in ("l", "r") for m in ("clamp", "wrap")],
    *[case("extra", f"popc.{t} %d, %a", f"d:u32 a:{t}") for t in ("b32", "b64")],
    *[case("extra", f"brev.{t} %d, %a", f"d,a:{t}") for t in ("b32", "b64")],
    *[case("extra", f"bfind{s}.{t} %d, %a", f"d:u32 a:{t}")
      for s in ("", ".shiftamt") for t in ("u32", "s32", "u64", "s64")],
    *[case("extra", f"bfe.{t} %d, %a, %b, %c", f"d,a:{t} b,c:u32") for t in ("u32", "s32", "u64", "s64")],
    *[case("extra", f"prmt.b32{m} %d, %a, %b, %c", "d,a,b,c:b32")
      for m in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16")],
    *[case("extra", f"lop3.b32 %d, %a, %b, %c, {lut}", "d,a,b,c:b32") for lut in (0x96, 0xE8, 0x3C)],
    case("extra", "bmsk.wrap.b32 %d, %a, %b", "d,a,b:b32"),
    case("extra", "fns.b32 %d, %a, %b, %c", "d,a,b:b32 c:s32"),
]


def scalar_forms() -> list[FormCase]:
    return list(FORMS)


def supported_forms() -> list[FormCase]:
    return [c for c in FORMS if c.supported]


def skipped_forms() -> list[tuple[FormCase, str]]:
    return [(c, "no semantics yet (semantics.ops.lookup returned None)")
            for c in FORMS if not c.supported]


def coverage_report() -> str:
    """Which tier entries the suite checks, which it skips and why."""
    lines = []
    sup = supported_forms()
    lines.append(f"{len(sup)} of {len(FORMS)} scalar form lines have semantics and are checked")
    for c, why in skipped_forms():
        lines.append(f"  skipped {c.line}  ({c.entry}): {why}")
    for e, why in NON_SCALAR.items():
        lines.append(f"  not scalar {e}: {why}")
    return "\n".join(lines)


# -- operand values ----------------------------------------------------------------------------

def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _fp_specials(fmt: str) -> list[int]:
    e, s = {"f16": (5, 11), "bf16": (8, 8), "f32": (8, 24), "f64": (11, 53)}[fmt]
    m = s - 1
    sign = 1 << (e + m)
    exp = ((1 << e) - 1) << m
    bias = (1 << (e - 1)) - 1
    one = bias << m
    vals = [0, 1, (1 << m) - 1, 1 << m, exp - 1,              # 0, min/max subnormal, min/max normal
            exp, exp | (1 << (m - 1)), exp | 1,               # inf, canonical-ish qNaN, sNaN
            exp | (1 << (m - 1)) | 0x5,                       # qNaN with payload
            (1 << (e + m)) - 1,                               # NaN, all payload bits set
            one, one | 1, (bias - 1) << m, (bias + 1) << m,   # 1, 1+ulp, 0.5, 2
            (bias + m) << m, ((bias + m) << m) | 1,           # 2^m: integers near the ulp=1 edge
            ((bias + 31) << m), ((bias + 32) << m) - 1,       # 2^31, just below 2^32
            ((bias + 63) << m) if bias + 63 < (1 << e) - 1 else exp - 1,
            (bias << m) | (1 << (m - 1))]                     # 1.5 (ties when rounding)
    return sorted({v for x in vals for v in (x, x | sign)})


def _int_specials(w: int) -> list[int]:
    m = (1 << w) - 1
    vals = [0, 1, 2, 3, 7, 8, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1,
            0xFF, 0x80, 0x7F, 0x100, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256,
            0x55555555, 0xAAAAAAAA, 0x12345678, 0x8000, 0x7FFF, 0xFFFF, 0x1F, 0x1C1F]
    return sorted({v & m for v in vals})


def specials(t: str) -> list:
    pt = TYPES[t]
    if pt.kind == "pred":
        return [False, True]
    if pt.is_float and pt.lanes == 1:
        return _fp_specials("bf16" if pt.kind == "bf" else f"f{pt.bits}")
    return _int_specials(pt.bits)


def value_strategy(t: str):
    pt = TYPES[t]
    if pt.kind == "pred":
        return st.booleans()
    spec = st.sampled_from(specials(t))
    rand = st.integers(0, (1 << pt.bits) - 1)
    if pt.is_float and pt.lanes == 1 and pt.bits == 32:
        real = st.floats(width=32, allow_nan=False).map(_f32_bits)
        return st.one_of(spec, rand, real)
    return st.one_of(spec, rand)


def draw_inputs(c: FormCase):
    """Hypothesis strategy: {input register: [value per lane]}."""
    regs = c.reg_decls
    return st.fixed_dictionaries({r: st.lists(value_strategy(regs[r]), min_size=c.lanes,
                                              max_size=c.lanes) for r in c.inputs})


def special_inputs(c: FormCase, lanes: int | None = None) -> dict[str, list]:
    """A deterministic sweep: operand k of lane i is specials[(i * (k + 1) + k) % n]: every
    special of every operand appears, against varying partners."""
    regs = c.reg_decls
    n = lanes or max([len(specials(regs[r])) for r in c.inputs] + [1])
    if not c.is_lanewise:
        n = c.lanes
    out = {}
    for k, r in enumerate(c.inputs):
        sp = specials(regs[r])
        out[r] = [sp[(i * (k + 1) + k * 7) % len(sp)] for i in range(n)]
    return out


# -- backends ----------------------------------------------------------------------------------

@dataclass
class Outcome:
    values: dict[str, list]                  # register -> per-lane int / bool (or a term)
    effects: set[tuple[str, str]] = field(default_factory=set)

    @property
    def approximate(self) -> bool:
        return any(k == "approximation" for k, _ in self.effects)


Backend = Callable[[FormCase, dict[str, list]], Outcome]


def concrete_backend(c: FormCase, inputs: dict[str, list]) -> Outcome:
    r = execute(c.line, c.reg_decls, inputs, "concrete")
    return Outcome(r.outputs, r.effect_whats())


def symbolic_variables(reg_decls: dict[str, str], inputs: dict[str, list]):
    """A fresh z3 variable per input register lane, and the substitution that gives each the
    concrete input value: `(variables by register, [(variable, value)])`."""
    sym, subst = {}, []
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
        sym[name] = lane_vars
    return sym, subst


def symbolic_backend(c: FormCase, inputs: dict[str, list]) -> Outcome:
    """z3 domain on fresh variables; concrete inputs substituted afterwards."""
    regs = c.reg_decls
    sym, subst = symbolic_variables(regs, inputs)
    r = execute(c.line, regs, sym, "symbolic", lanes=len(next(iter(inputs.values()))) if inputs else c.lanes)
    values = {}
    for reg, vals in r.outputs.items():
        t = TYPES[regs[reg]]
        out = []
        for v in vals:
            if isinstance(v, z3.ExprRef):
                v = z3_value(z3.substitute(v, *subst) if subst else v, t)
            out.append(v)
        values[reg] = out
    return Outcome(values, r.effect_whats())


# -- the check -----------------------------------------------------------------------------------

def _same(a, b, t) -> bool:
    if isinstance(b, z3.ExprRef) and "keq!u" in b.sexpr():
        return allows(b, a, t)
    if TYPES[t].kind == "pred":
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return (isinstance(a, int) and not isinstance(a, bool) and isinstance(b, int)
            and not isinstance(b, bool) and a == b)


def allows(term, value, t) -> bool:
    """A symbolic result that depends on what the ISA leaves open (`keq!u!` constants,
    `keq!uf!` functions: an unspecified NaN, a value read from a lane that does not take
    part) is a set of values: the emulator's must be one of them."""
    solver = z3.Solver()
    solver.set("timeout", 20_000)
    want = z3.BoolVal(bool(value)) if TYPES[t].kind == "pred" else \
        z3.BitVecVal(int(value), TYPES[t].bits)
    solver.add(term == want)
    return solver.check() == z3.sat


def check_form(c: FormCase, inputs: dict[str, list], reference: Backend = concrete_backend,
               candidate: Backend = symbolic_backend) -> Outcome:
    """Run both backends on `inputs`; raise AssertionError naming the form, lane, inputs (hex)
    and both results on the first difference. Returns the reference outcome."""
    ref = reference(c, inputs)
    cand = candidate(c, inputs)
    regs = c.reg_decls
    name = c.form.name

    def where(lane=None) -> str:
        s = f"  line: {c.line}\n"
        if lane is not None:
            s += "  inputs of lane %d: " % lane + ", ".join(
                f"{r}={to_hex(v[lane])}" for r, v in inputs.items()) + "\n"
        return s

    missing = {e for e in ref.effects if e[0] != "nondeterministic"} - cand.effects
    if missing:
        raise AssertionError(f"{name}: effects recorded by the reference but not the candidate: "
                             f"{sorted(missing)}\n{where()}")
    if ref.approximate:
        if not cand.approximate:
            raise AssertionError(f"{name}: reference approximates, candidate does not\n{where()}")
        return ref                      # approximate values are not compared bit for bit
    for reg, rvals in ref.values.items():
        cvals = cand.values.get(reg)
        if cvals is None:
            raise AssertionError(f"{name}: candidate did not write {reg}\n{where()}")
        for lane, (a, b) in enumerate(zip(rvals, cvals)):
            if not _same(a, b, regs[reg]):
                raise AssertionError(
                    f"{name}: {reg} differs on lane {lane}\n{where(lane)}"
                    f"  reference: {to_hex(a)}\n  candidate: {to_hex(b)}")
    return ref


def conformance_suite(forms: Sequence[FormCase], reference: Backend = concrete_backend,
                      candidate: Backend = symbolic_backend, *, max_examples: int = 25,
                      specials_sweep: bool = True) -> dict[str, list]:
    """Check every supported form (specials sweep + hypothesis draws). Returns
    {"passed": [...], "failed": [(case, message)], "skipped": [(case, reason)]}."""
    from hypothesis import HealthCheck, given, settings

    report = {"passed": [], "failed": [], "skipped": []}
    for c in forms:
        if not c.supported:
            report["skipped"].append((c, "no semantics yet"))
            continue
        try:
            if specials_sweep:
                check_form(c, special_inputs(c), reference, candidate)

            @settings(max_examples=max_examples, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(draw_inputs(c))
            def run(inputs):
                check_form(c, inputs, reference, candidate)
            run()
            report["passed"].append(c)
        except AssertionError as e:
            report["failed"].append((c, str(e)))
    return report
