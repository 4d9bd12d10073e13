"""A polynomial normal form for mode real's terms, for the arguments of its opaque atoms.

`sqrt(v)` read as `SQRT(v)` (an uninterpreted real function) is the same atom in two kernels
only when its argument is the same term. Two kernels that compute a variance in different
orders (Welford's updates, two passes over the row) reach the same polynomial by different
terms, so each argument is put in this normal form first: a sum of monomials, each a
rational coefficient times a product of atoms, monomials and their factors in a fixed order.
Every step is an identity of the reals (distributivity, commutativity, associativity,
rational arithmetic); a quotient by a non-constant is the atom `1 / normal(denominator)`,
with no side condition used.

Expansion can be exponential in the nesting of sums and products; past `LIMIT` monomials the
term is left as z3 simplifies it (still a correct term, only not canonical: a proof may then
not be found, never a wrong one).
"""

from __future__ import annotations

from fractions import Fraction

import z3

LIMIT = 20_000                     # monomials in one intermediate polynomial

Poly = dict[tuple[int, ...], Fraction]      # sorted atom ids -> coefficient


class TooLarge(Exception):
    """The expansion passed LIMIT monomials."""


class Normalizer:
    """Memoized normal forms (one per translator: atom ids are this process's z3 ids)."""

    def __init__(self) -> None:
        self.atoms: dict[int, z3.ArithRef] = {}
        self.memo: dict[int, tuple[Poly, object]] = {}       # term id -> (poly, the term)

    def normal(self, e: z3.ArithRef) -> z3.ArithRef:
        try:
            return self._term(self._poly(e))
        except TooLarge:
            return z3.simplify(e)

    # -- terms to polynomials -----------------------------------------------------------
    def _poly(self, e) -> Poly:
        hit = self.memo.get(e.get_id())
        if hit is not None:
            return hit[0]
        out = self._poly_uncached(e)
        self.memo[e.get_id()] = (out, e)
        return out

    def _poly_uncached(self, e) -> Poly:
        if z3.is_rational_value(e):
            c = Fraction(e.as_fraction())
            return {(): c} if c else {}
        k = e.decl().kind() if z3.is_app(e) else None
        kids = e.children()
        if k == z3.Z3_OP_ADD:
            return _sum([self._poly(a) for a in kids])
        if k == z3.Z3_OP_SUB:
            return _sum([self._poly(kids[0])] + [_scale(self._poly(a), -1) for a in kids[1:]])
        if k == z3.Z3_OP_UMINUS:
            return _scale(self._poly(kids[0]), -1)
        if k == z3.Z3_OP_MUL:
            out: Poly = {(): Fraction(1)}
            for a in kids:
                out = _product(out, self._poly(a))
            return out
        if k == z3.Z3_OP_DIV:
            den = self._poly(kids[1])
            num = self._poly(kids[0])
            if set(den) <= {()}:
                c = den.get((), Fraction(0))
                if c:
                    return _scale(num, 1 / c)
            return _product(num, self._atom(z3.RealVal(1) / self._term(den)))
        if k == z3.Z3_OP_POWER and z3.is_rational_value(kids[1]) and \
                Fraction(kids[1].as_fraction()).denominator == 1 and \
                0 <= Fraction(kids[1].as_fraction()) <= 8:
            out = {(): Fraction(1)}
            base = self._poly(kids[0])
            for _ in range(int(Fraction(kids[1].as_fraction()))):
                out = _product(out, base)
            return out
        return self._atom(e)

    def _atom(self, e) -> Poly:
        self.atoms[e.get_id()] = e
        return {(e.get_id(),): Fraction(1)}

    # -- polynomials to terms -----------------------------------------------------------
    def _term(self, p: Poly) -> z3.ArithRef:
        parts = []
        for key in sorted(p, key=lambda m: (len(m), m)):
            c = p[key]
            factors = [self.atoms[i] for i in key]
            if not factors:
                parts.append(_rational(c))
                continue
            mono = factors[0] if len(factors) == 1 else z3.Product(factors)
            parts.append(mono if c == 1 else _rational(c) * mono)
        if not parts:
            return z3.RealVal(0)
        return parts[0] if len(parts) == 1 else z3.Sum(parts)


def _rational(c: Fraction) -> z3.ArithRef:
    return z3.Q(c.numerator, c.denominator) if c.denominator != 1 else z3.RealVal(c.numerator)


def _add_to(out: Poly, m: tuple[int, ...], c: Fraction) -> None:
    """out += c * m, a monomial whose coefficient cancels dropped."""
    v = out.get(m, 0) + c
    if v:
        out[m] = v
    else:
        out.pop(m, None)


def _sum(polys: list[Poly]) -> Poly:
    out: Poly = {}
    for p in polys:
        for m, c in p.items():
            _add_to(out, m, c)
    _check(out)
    return out


def _scale(p: Poly, c) -> Poly:
    return {m: v * c for m, v in p.items()} if c else {}


def _product(a: Poly, b: Poly) -> Poly:
    if len(a) * len(b) > 4 * LIMIT:
        raise TooLarge()
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            _add_to(out, tuple(sorted(ma + mb)), ca * cb)
    _check(out)
    return out


def _check(p: Poly) -> None:
    if len(p) > LIMIT:
        raise TooLarge()


__all__ = ["Normalizer", "LIMIT"]
