"""Proving a rewrite rule (`verifier.rules.model.Rule`) with keq's one semantics: each side
is wrapped in a one-thread kernel that reads the inputs from parameters, runs the sequence
and stores the outputs, and runs on the symbolic domain with every input a free bit-vector.
Valid: no input on which the precondition holds and an output differs (the solvers' unsat).
Invalid: a solver model, replayed on the emulator, where they differ: concrete register
values. Inconclusive (named): no solver answer, undefined behaviour on a side, or a difference
only through what the hardware fixes (the NaN an operation returns, an approximation)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import z3

from semantics.choices import Choices, Target
from semantics.errors import KeqError
from semantics.ir.types import TYPES
from semantics.machine import prepare, run_kernel
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx
from verifier.rules.model import Rule
from verifier.rules.recheck import recheck
from verifier.solvers import DEFAULT_SOLVERS, Cache, Obligation, solve


class RuleVerdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    verdict: RuleVerdict
    reason: str = ""
    inputs: tuple[tuple[str, int], ...] = ()          # a counterexample's register values
    source_out: tuple[tuple[str, int], ...] = ()
    target_out: tuple[tuple[str, int], ...] = ()
    seconds: float = 0.0
    solver: str = ""
    recheck: str = ""             # a valid rule's independent re-check (`recheck`)


def _kernel_text(rule: Rule, body: str) -> str:
    """A one-thread kernel: inputs from parameters, `pre` and `body`, outputs (and %pre as
    a u32) stored in 8-byte slots of `keq_out`."""
    regs = dict(rule.temps) | dict(rule.inputs) | dict(rule.outputs)
    if rule.pre:
        regs.setdefault("pre", "pred")
    params = ", ".join(["\t.param .u64 keq_out"] + [f"\t.param .{t} keq_in_{n}"
                                                      for n, t in rule.inputs])
    lines = [".version 8.5", ".target sm_90", ".address_size 64",
             f".visible .entry keq_rule(\n{params}\n)", "{",
             "\t.reg .u64 %keq_o;", "\t.reg .u32 %keq_p;"]
    lines += [f"\t.reg .{t} %{n};" for n, t in regs.items()]
    lines += [f"\tld.param.{t} %{n}, [keq_in_{n}];" for n, t in rule.inputs]
    lines += ["\t" + rule.pre, "\t" + body, "\tld.param.u64 %keq_o, [keq_out];"]
    for i, (n, t) in enumerate(rule.outputs):
        lines.append(f"\tst.global.{t} [%keq_o+{8 * i}], %{n};")
    if rule.pre:
        lines += ["\tselp.u32 %keq_p, 1, 0, %pre;",
                  f"\tst.global.u32 [%keq_o+{8 * len(rule.outputs)}], %keq_p;"]
    return "\n".join(lines + ["\tret;", "}", ""])


def _prepared(rule: Rule, role: str):
    body = rule.source if role == "source" else rule.target
    return prepare(parse_ptx(_kernel_text(rule, body), f"{rule.loc.file}[{rule.name}:{role}]"),
                   "keq_rule")


def _choices(rule: Rule) -> Choices:
    return Choices(target=Target.from_names(rule.assume))


def check_rule(rule: Rule, *, solvers: tuple[str, ...] = DEFAULT_SOLVERS,
               timeout_s: float = 60.0, cache: Cache | None = None) -> RuleResult:
    """The verdict of one rule (module docstring)."""
    t0 = time.perf_counter()
    try:
        kernels = {role: _prepared(rule, role) for role in ("source", "target")}
    except KeqError as e:
        raise KeqError(f"{rule.loc}: rule {rule.name!r}: {e}") from None
    xs = [z3.BitVec(n, TYPES[t].bits) for n, t in rule.inputs]
    slots = len(rule.outputs) + (1 if rule.pre else 0)
    runs = {role: run_symbolic(k, (1, 1, 1), (1, 1, 1), [SymBuffer(64, (0,) * slots), *xs],
                               choices=_choices(rule), tag="k")
            for role, k in kernels.items()}
    for role, launch in runs.items():
        bad = [e for e in launch.effects if e.kind in ("undefined", "uninitialized", "layout")]
        if bad:
            return RuleResult(rule, RuleVerdict.INCONCLUSIVE,
                              f"the {role} has {bad[0].kind} behaviour: {bad[0].what} at "
                              f"{bad[0].loc}", seconds=time.perf_counter() - t0)
    out = {role: [z3.BitVecVal(v, 64) if isinstance(v, int) else v
                  for v in launch.buffers["keq_out"]] for role, launch in runs.items()}
    differ = z3.Or([a != b for a, b in zip(out["source"][:len(rule.outputs)],
                                           out["target"][:len(rule.outputs)])])
    phi = z3.And(out["source"][-1] != 0, differ) if rule.pre else differ
    ob = Obligation(phi, f"rule {rule.name!r}: an output differs")
    r = solve(ob, solvers=solvers, timeout_s=timeout_s, cache=cache)
    if r.answer == "unsat":
        again = recheck(ob, timeout_s)
        seconds = time.perf_counter() - t0
        if again == "sat":
            return RuleResult(rule, RuleVerdict.INCONCLUSIVE, f"{r.solver} proved it, but "
                              f"cvc5 through pysmt finds a model (a solver bug: report it)",
                              seconds=seconds)
        return RuleResult(rule, RuleVerdict.VALID, seconds=seconds, solver=r.solver,
                          recheck="pysmt/cvc5: unsat" if again == "unsat" else again)
    seconds = time.perf_counter() - t0
    if r.answer != "sat":
        return RuleResult(rule, RuleVerdict.INCONCLUSIVE, f"no solver answered ({r.answer}: "
                          f"{r.detail or r.solver})", seconds=seconds)
    values = {n: int((r.model or {}).get(n, 0)) for n, _ in rule.inputs}
    return _replayed(rule, kernels, values, seconds, r.solver)


def _replayed(rule: Rule, kernels: dict, values: dict[str, int], seconds: float,
              solver: str) -> RuleResult:
    """The solver's inputs on the emulator: invalid only where the outputs differ there."""
    outs = {}
    for role, k in kernels.items():
        buf = np.zeros(len(rule.outputs) + (1 if rule.pre else 0), np.uint64)
        args = {"keq_out": buf}
        for n, t in rule.inputs:
            bits = TYPES[t].bits
            args[f"keq_in_{n}"] = np.array([values[n]], dtype=f"u{max(bits // 8, 1)}").view(
                _dtype(t))[0]
        res = run_kernel(k, None, (1, 1, 1), (1, 1, 1), args, choices=_choices(rule))
        outs[role] = [int(v) for v in res.buffers["keq_out"]]
    shown = tuple((n, values[n]) for n, _ in rule.inputs)
    if rule.pre and not outs["source"][-1]:
        return RuleResult(rule, RuleVerdict.INCONCLUSIVE, "a solver model breaks the "
                          "precondition on the emulator (keq bug?)", shown, seconds=seconds)
    k = len(rule.outputs)
    src = tuple((n, outs["source"][i] & _mask(t)) for i, (n, t) in enumerate(rule.outputs))
    tgt = tuple((n, outs["target"][i] & _mask(t)) for i, (n, t) in enumerate(rule.outputs))
    if outs["source"][:k] == outs["target"][:k]:
        return RuleResult(rule, RuleVerdict.INCONCLUSIVE, "the outputs differ only through "
                          "what the hardware fixes (the NaN an operation returns, an "
                          "approximation): the emulator's model gives them equal; a target "
                          "assumption (assume = [...]) may decide it", shown, src, tgt,
                          seconds)
    return RuleResult(rule, RuleVerdict.INVALID, "", shown, src, tgt, seconds, solver)


def _mask(t: str) -> int:
    return (1 << TYPES[t].bits) - 1


def _dtype(t: str) -> str:
    ty = TYPES[t]
    if ty.is_float:
        return {16: "f2", 32: "f4", 64: "f8"}[ty.bits]
    return f"{'i' if ty.kind == 's' else 'u'}{max(ty.bits // 8, 1)}"


__all__ = ["RuleResult", "RuleVerdict", "check_rule"]
