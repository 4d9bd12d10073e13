"""An independent re-check of a valid rule through a second term layer: pysmt parses the
obligation's SMT-LIB text (never z3's terms) and cvc5 decides it through pysmt's
solver-agnostic API. pysmt reads bit-vectors and uninterpreted functions, not floating
point: a floating-point rule is re-checked by nobody here, and says so (docs/solvers.md)."""

from __future__ import annotations

import io

from verifier.solvers import Obligation

LOGICS = ("QF_BV", "QF_UFBV")


def recheck(obligation: Obligation, timeout_s: float) -> str:
    """"unsat" or "sat" (pysmt/cvc5's answer), else why there is none."""
    logic = obligation.translation.logic
    if not obligation.portable or logic not in LOGICS:
        return f"not re-checked (logic {logic}: pysmt reads {' and '.join(LOGICS)} only)"
    try:
        from pysmt import logics
        from pysmt.environment import Environment
        from pysmt.smtlib.parser import SmtLibParser
    except ImportError as e:                       # (a declared dependency: never expected)
        return f"not re-checked (pysmt: {e})"
    try:
        env = Environment()          # (its own symbols: rules reuse names with other types)
        formula = SmtLibParser(environment=env).get_script(
            io.StringIO(obligation.text)).get_last_formula()
        with env.factory.Solver(name="cvc5", logic=getattr(logics, logic),
                                solver_options={"tlimit-per": max(1, int(timeout_s * 1000))}) as s:
            s.add_assertion(formula)
            return "sat" if s.solve() else "unsat"
    except Exception as e:         # noqa: BLE001 (a re-check that fails says why, never passes)
        return f"not re-checked (pysmt/cvc5: {type(e).__name__}: {str(e)[:120]})"


__all__ = ["LOGICS", "recheck"]
