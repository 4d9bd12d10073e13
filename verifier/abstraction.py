"""Uninterpreted abstraction of floating-point subterms, for cheap proofs of output equality.

Under a symbolic launch shape an output element is `If(i < n, fp_result, old)` in one kernel and
a differently nested selection in the other; the floating-point results inside are often the
very same terms. Replacing each distinct floating-point subterm (a `fp.to_ieee_bv`, a selection
on a floating-point condition, a Boolean that mentions floats) by a fresh constant, the same
constant for the same term everywhere, leaves a pure bit-vector formula. That formula is a
generalization of the original (any model of the original gives one of it, by setting each
constant to its term's value), so if it is UNSAT the original is UNSAT. A SAT answer proves
nothing: the caller then asks the original question.
"""

from __future__ import annotations

import z3

from verifier.terms import TermMemo, any_subterm

PREFIX = "abstract!fp!"


class FloatAbstraction:
    def __init__(self) -> None:
        self.memo: TermMemo = TermMemo()             # term -> its abstraction
        self.float_free: TermMemo[bool] = TermMemo()
        self.count = 0

    def _mentions_float(self, t) -> bool:
        return any_subterm(lambda e: z3.is_fp(e) or z3.is_fprm(e), t, self.float_free)

    def _fresh(self, t):
        self.count += 1
        name = f"{PREFIX}{self.count}"
        return z3.Bool(name) if z3.is_bool(t) else z3.BitVec(name, t.size())

    def __call__(self, t):
        """`t` with its floating-point parts replaced by constants."""
        if isinstance(t, int):
            return t
        hit = self.memo.get(t)
        if hit is not None:
            return hit
        if not self._mentions_float(t):
            out = t
        elif z3.is_app_of(t, z3.Z3_OP_FPA_TO_IEEE_BV) or z3.is_bool(t) and not (
                z3.is_and(t) or z3.is_or(t) or z3.is_not(t)) or (
                z3.is_app_of(t, z3.Z3_OP_ITE) and self._mentions_float(t.arg(0))) or \
                z3.is_fp(t) or z3.is_fprm(t):
            out = self._fresh(t)
        else:
            kids = [self(c) for c in t.children()]
            out = t.decl()(*kids) if kids else t
        return self.memo.put(t, out)


__all__ = ["FloatAbstraction"]
