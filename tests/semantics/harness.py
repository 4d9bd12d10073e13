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

from typing import Sequence

import z3

# The harness core lives in the package (keq fuzz --semantics runs it too); re-exported here.
from semantics.conformance import (  # noqa: F401
    Run, allows, is_concrete, _lanes, _out, _prepared, _seed, z3_value, dest_regs, execute,
    parsed_ptx,
    parse_line_form, ptx_kernel, run_instruction, symbolic_variables, to_hex,
)
from semantics.ir.types import TYPES

__all__ = ["Run", "ptx_kernel", "parse_line_form", "execute", "run_instruction", "agree", "to_hex"]


def agree(ptx_line: str, reg_decls: dict[str, str], inputs: dict[str, Sequence], *,
          lanes: int | None = None, outputs: Sequence[str] | None = None) -> Run:
    """Run concretely, and symbolically with a fresh z3 variable for every input lane; substitute
    the concrete inputs into the symbolic results and require bit-for-bit equality per lane and
    per destination (bool equality for predicates). Also: every effect the concrete run records
    is recorded by the symbolic run (which may record more: it cannot rule a symbolic condition
    out). Returns the concrete run."""
    conc = execute(ptx_line, reg_decls, inputs, "concrete", lanes=lanes, outputs=outputs)
    n = _lanes(inputs, lanes)
    sym_inputs, subst = symbolic_variables(reg_decls, inputs)
    sym = execute(ptx_line, reg_decls, sym_inputs, "symbolic", lanes=n, outputs=outputs)
    form = conc.form.name
    shown = ", ".join(f"{k}=[{', '.join(to_hex(x) for x in v)}]" for k, v in inputs.items())
    for reg, cvals in conc.outputs.items():
        t = TYPES[reg_decls[reg]]
        for lane, (c, s) in enumerate(zip(cvals, sym.outputs[reg])):
            if not is_concrete(s):
                s = z3.substitute(s, *subst) if subst else s
            sv = z3_value(s, t)
            if isinstance(sv, z3.ExprRef) and "keq!u" in sv.sexpr():
                # what the ISA leaves open (an unspecified NaN...): a set of values, of which
                # the emulator's must be one
                ok = allows(sv, c, reg_decls[reg])
            elif t.kind == "pred":
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
