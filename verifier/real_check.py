"""Does a difference the real-arithmetic solver found hold for the true real functions?

Mode real reads some operations as opaque atoms (`verifier.real_exp`): `E2(x)` for 2^x, a
`Max` atom per set of members, libdevice's range-reduction integer `J`. The solver treats
them as free, so a model of "the readings differ" may give `E2(0)` the value 2 or a `Max`
atom a value none of its members has: a difference of the atoms, not of the kernels. (The
emulator would then show a rounding difference, and a rounding difference is no
counterexample to a claim modulo rounding.) Division by zero is likewise free to z3.

So a model is evaluated again, with the true functions, in interval arithmetic (mpmath.iv,
200 bits): `E2(x) = 2^x`, `Max` the largest member, `J` the float the kernel computes at
the model's inputs, `a / b` only where `b`'s interval excludes 0. Only disjoint intervals
show the real functions differ there; anything else (overlap, a zero denominator, an atom
without a true function here) shows nothing.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import mpmath
import z3
from mpmath import iv

from verifier.real_exp import E2
from verifier.real_functions import TRUE
from verifier.real_mode import RealTranslator, bits_of_real
from verifier.terms import free_constants

PRECISION = 200                          # bits of each interval endpoint


class Unknown(Exception):
    """A term this evaluation cannot bound (an unknown atom, a zero denominator)."""


def _exact(x: Fraction):
    return iv.mpf(x.numerator) / iv.mpf(x.denominator)


def _lo(x):
    return mpmath.mpf(x.a)


def _hi(x):
    return mpmath.mpf(x.b)


class TrueReals:
    """Interval values of mode real's terms at one solver model, with the true functions."""

    def __init__(self, tr: RealTranslator, model: z3.ModelRef) -> None:
        self.tr = tr
        self.model = model
        self.memo: dict[int, object] = {}
        self.kept: list = []                 # (the terms memoized by id: kept alive)

    # -- the model's inputs, concretely -----------------------------------------------------
    def _real_of(self, name: str) -> Fraction:
        x = self.model.eval(self.tr.variables[name], True)
        if not z3.is_rational_value(x):
            raise Unknown(f"the model's value of {name}")
        return Fraction(x.as_fraction())

    def concrete(self, t):
        """A bit-vector, float or Boolean term with every input fixed to the model's value
        (a real input by its float bits), simplified to a value."""
        pairs = []
        for c in free_constants(t):
            name = str(c)
            if name in self.tr.variables and z3.is_bv(c):
                bits = bits_of_real(float(self._real_of(name)), c.size())
                pairs.append((c, z3.BitVecVal(bits, c.size())))
            else:
                pairs.append((c, self.model.eval(c, True)))
        return z3.simplify(z3.substitute(t, *pairs) if pairs else t)

    # -- evaluation -------------------------------------------------------------------------
    def value(self, t):
        """The interval of the real term `t`."""
        hit = self.memo.get(t.get_id())
        if hit is not None:
            return hit
        out = self._value(t)
        self.memo[t.get_id()] = out
        self.kept.append(t)
        return out

    def _value(self, t):
        if z3.is_rational_value(t):
            return _exact(Fraction(t.as_fraction()))
        k = t.decl().kind()
        kids = t.children()
        if k == z3.Z3_OP_ADD:
            return _fold(lambda a, b: a + b, [self.value(a) for a in kids])
        if k == z3.Z3_OP_SUB:
            vals = [self.value(a) for a in kids]
            return _fold(lambda a, b: a - b, vals)
        if k == z3.Z3_OP_MUL:
            return _fold(lambda a, b: a * b, [self.value(a) for a in kids])
        if k == z3.Z3_OP_UMINUS:
            return -self.value(kids[0])
        if k == z3.Z3_OP_DIV:
            num, den = self.value(kids[0]), self.value(kids[1])
            if _lo(den) <= 0 <= _hi(den):
                raise Unknown("a division by an interval holding zero")
            return num / den
        if k == z3.Z3_OP_POWER and z3.is_rational_value(kids[1]) and \
                Fraction(kids[1].as_fraction()).denominator == 1:
            return self.value(kids[0]) ** int(Fraction(kids[1].as_fraction()))
        if k == z3.Z3_OP_ITE:
            c = self.concrete(kids[0])
            if z3.is_true(c):
                return self.value(kids[1])
            if z3.is_false(c):
                return self.value(kids[2])
            raise Unknown("a selection the model does not decide")
        if t.decl().eq(E2):
            return iv.exp(self.value(kids[0]) * iv.log(2))
        true = TRUE.get(t.decl().name()) if len(kids) == 1 else None
        if true is not None:
            try:
                return true(self.value(kids[0]))
            except ValueError as e:
                raise Unknown(str(e)) from None
        if k == z3.Z3_OP_UNINTERPRETED and not kids:
            return self._atom(str(t))
        raise Unknown(f"the operation {t.decl().name()}")

    def _atom(self, name: str):
        if name in self.tr.variables:
            return _exact(self._real_of(name))
        for sets, pick in ((self.tr.maxima, max), (self.tr.minima, min)):
            members = sets.members.get(name)
            if members is not None:
                vals = [self.value(sets.terms[m]) for m in sorted(members)]
                return iv.mpf([pick(_lo(v) for v in vals), pick(_hi(v) for v in vals)])
        fp = self.tr.integers.get(name)
        if fp is not None:
            v = self.concrete(fp)
            if not z3.is_fp_value(v) or v.isNaN() or v.isInf():
                raise Unknown(f"the value of {name}")
            return _exact(Fraction(z3.simplify(z3.fpToReal(v)).as_fraction()))
        raise Unknown(f"the atom {name}")

    def differ(self, a, b, live) -> bool:
        """Are `a` and `b` certainly different reals at the model (where `live` holds)?"""
        if live is not True and live is not None and not z3.is_true(self.concrete(live)):
            return False
        saved, iv.prec = iv.prec, PRECISION
        try:
            va, vb = self.value(a), self.value(b)
            return bool(_hi(va) < _lo(vb) or _hi(vb) < _lo(va))
        except Unknown:
            return False
        finally:
            iv.prec = saved


def _fold(op: Callable, vals: list):
    out = vals[0]
    for v in vals[1:]:
        out = op(out, v)
    return out


def shown_to_differ(tr: RealTranslator, model: z3.ModelRef, pairs: list) -> tuple | None:
    """The first (a, b, live) of `pairs` that differs as true real functions at `model`, or
    None."""
    check = TrueReals(tr, model)
    return next((p for p in pairs if check.differ(*p)), None)


__all__ = ["TrueReals", "shown_to_differ", "PRECISION"]
