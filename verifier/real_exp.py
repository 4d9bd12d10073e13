"""Mode real with exponentials and running maxima: the readings softmax-shaped kernels need
(`verifier.real_mode` calls these). Each is exact over the reals, or an assumption the claim
prints:

- `ex2.approx` reads as 2^x: `E2(x)`, an uninterpreted real function, so nothing about it is
  assumed but what the normal form below uses, `E2(a) * E2(b) = E2(a + b)`, and (in the
  real-arithmetic query, `RealTranslator.facts`) `E2(x) > 0`. Products that
  hold an `E2` are distributed over sums and their exponentials merged, and every exponent is
  a linear form in canonical order (`canonical`), so `d * 2^(m - m') + 2^(x - m')` and the
  direct sum meet as the same terms.
- libdevice's `expf` scales `2^r` by `2^j`, made by shifting a float's bits into the
  exponent: `bits(J) << 23` with `J = 12582912 + 127 + j` (the range reduction's integer,
  rounded into the 2^23 binade). It reads as `E2(J - 12583039)`; J itself, a rounding to an
  integer, is an opaque real (`keq!int!...`: universally quantified, so a proof holds for
  every value of it). `r` carries `-j`, so the two meet as `E2(x * log2(e))`.
- `max` (the NaN-aware `max.f32` of the semantics) reads as `Max` of the set of its
  non-constant arguments, flattened (`max(a, max(b, c))` and `max(max(a, b), c)` are one
  term): for finite values, `-FLT_MAX` and `-inf` never win against a value, so they drop
  out. A `Max` atom is an opaque real: no ordering fact is used, only the identity of the
  set.
"""

from __future__ import annotations

import hashlib

import z3

from verifier.real_poly import Normalizer

E2 = z3.Function("keq!e2", z3.RealSort(), z3.RealSort())
MAGIC = 12583039            # 2^23 + 2^22 + 127: libdevice expf's J for j = 0
LOWEST = -3.4028234663852886e38       # -FLT_MAX

EXP_ASSUMPTION = ("mode real: ex2.approx is 2^x, and libdevice expf's 2^j (a float's bits "
                  "shifted into the exponent) is 2^j exactly")
MAX_ASSUMPTION = ("mode real: max.f32 is the real maximum (finite values: -FLT_MAX and -inf "
                  "never win)")
MIN_ASSUMPTION = ("mode real: min.f32 is the real minimum (finite values: FLT_MAX and +inf "
                  "never win)")


def _linear(e, coef, out: dict) -> bool:
    """Add `coef * e` to `out` (atom sexpr -> (atom, coefficient)); False if not linear."""
    if z3.is_rational_value(e):
        key = "1"
        atom, c = out.get(key, (z3.RealVal(1), 0))
        out[key] = (atom, c + coef * e.as_fraction())
        return True
    if z3.is_add(e):
        return all(_linear(a, coef, out) for a in e.children())
    if z3.is_sub(e):
        kids = e.children()
        return _linear(kids[0], coef, out) and all(_linear(a, -coef, out) for a in kids[1:])
    if z3.is_app_of(e, z3.Z3_OP_UMINUS):
        return _linear(e.arg(0), -coef, out)
    if z3.is_mul(e):
        consts = [a for a in e.children() if z3.is_rational_value(a)]
        rest = [a for a in e.children() if not z3.is_rational_value(a)]
        if len(rest) == 1:
            k = coef
            for c in consts:
                k *= c.as_fraction()
            return _linear(rest[0], k, out)
        if not rest:
            k = coef
            for c in consts:
                k *= c.as_fraction()
            return _linear(z3.RealVal(1), k, out)
        return False
    key = e.sexpr()
    atom, c = out.get(key, (e, 0))
    out[key] = (atom, c + coef)
    return True


_NONLINEAR = Normalizer()           # (exponents such as a dot product of two inputs)


_CANONICAL: dict[int, tuple[object, object]] = {}     # term id -> (its form, the term)


def canonical(e):
    """A linear real term as the sum of its atoms times their coefficients, atoms in a fixed
    order; a non-linear term in the polynomial normal form of `verifier.real_poly`.
    (Memoized: a running max's exponents recur at every step.)"""
    hit = _CANONICAL.get(e.get_id())
    if hit is not None:
        return hit[0]
    if len(_CANONICAL) > 1_000_000:
        _CANONICAL.clear()
    out = _canonical(e)
    _CANONICAL[e.get_id()] = (out, e)
    return out


def _canonical(e):
    out: dict = {}
    if not _linear(e, 1, out):
        if len(_NONLINEAR.memo) > 1_000_000:
            _NONLINEAR.memo.clear()
        return _NONLINEAR.normal(e)
    parts = []
    for key in sorted(out):
        atom, c = out[key]
        if c == 0:
            continue
        parts.append(z3.RealVal(c) if key == "1" else
                     (atom if c == 1 else z3.RealVal(c) * atom))
    if not parts:
        return z3.RealVal(0)
    return parts[0] if len(parts) == 1 else z3.Sum(parts)


def exp2(x):
    return E2(canonical(x))


def _is_e2(t) -> bool:
    return z3.is_app(t) and t.decl().eq(E2)


_HAS_E2: dict[int, tuple[bool, object]] = {}     # term id -> (answer, the term: kept alive)


def _has_e2(t) -> bool:
    """Is `t` an exponential, a product with one, or a sum holding one? (Memoized: the sums
    of a long reduction are asked about at every step.)"""
    key = t.get_id()
    hit = _HAS_E2.get(key)
    if hit is not None:
        return hit[0]
    if _is_e2(t):
        answer = True
    elif z3.is_add(t):
        answer = any(_has_e2(a) for a in t.children())
    else:
        answer = z3.is_mul(t) and any(_is_e2(a) for a in t.children())
    if len(_HAS_E2) > 1_000_000:
        _HAS_E2.clear()
    _HAS_E2[key] = (answer, t)
    return answer


def _monomials(t) -> list:
    """`t` as a list of (factors without E2, exponent or None)."""
    terms = t.children() if z3.is_add(t) else [t]
    out = []
    for m in terms:
        factors = m.children() if z3.is_mul(m) else [m]
        exps = [f.arg(0) for f in factors if _is_e2(f)]
        rest = [f for f in factors if not _is_e2(f)]
        out.append((rest, canonical(z3.Sum(exps)) if len(exps) > 1 else
                    (exps[0] if exps else None)))
    return out


def times(x, y):
    """x * y with exponentials merged (`E2(a) * E2(b) = E2(a + b)`), distributed over sums
    when either side holds an exponential; the plain product otherwise."""
    if not (_has_e2(x) or _has_e2(y)):
        return None
    out = []
    for fx, ex in _monomials(x):
        for fy, ey in _monomials(y):
            factors = fx + fy
            if ex is not None and ey is not None:
                factors.append(exp2(ex + ey))
            elif ex is not None or ey is not None:
                factors.append(E2(ex if ex is not None else ey))
            if any(z3.is_rational_value(f) and f.as_fraction() == 0 for f in factors):
                continue
            out.append(factors[0] if len(factors) == 1 else z3.Product(factors))
    if not out:
        return z3.RealVal(0)
    return out[0] if len(out) == 1 else z3.Sum(out)


def _summands(t, out: list) -> None:
    if z3.is_add(t):
        for a in t.children():
            _summands(a, out)
    elif not (z3.is_rational_value(t) and t.as_fraction() == 0):
        out.append(t)


def plus(x, y):
    """x + y as one flat sum, zeros dropped, summands in a fixed order (of their terms'
    ids: z3 shares structurally equal terms), when either side holds an exponential: two
    kernels that add the same exponentials in another order give the same term."""
    if not (_has_e2(x) or _has_e2(y)):
        return None
    out: list = []
    _summands(x, out)
    _summands(y, out)
    out.sort(key=lambda t: t.get_id())
    if not out:
        return z3.RealVal(0)
    return out[0] if len(out) == 1 else z3.Sum(out)


class Maxima:
    """Max atoms: one opaque real per set of members (each a real term, flattened)."""

    PREFIX = "keq!max!"
    NEUTRAL = LOWEST                  # the constant no value loses to, dropped from a set

    def __init__(self) -> None:
        self.members: dict[str, frozenset] = {}        # atom name -> member sexprs
        self.terms: dict[str, object] = {}             # member sexpr -> term

    def neutral(self, t) -> bool:
        """Is `t` a constant no finite value is below (-FLT_MAX or less)?"""
        return _lowest(t)

    def of(self, a, b):
        keys: set[str] = set()
        for t in (a, b):
            name = str(t) if z3.is_const(t) else None
            if name in self.members:
                keys |= self.members[name]
            elif not self.neutral(t):
                keys.add(t.sexpr())
                self.terms[t.sexpr()] = t
        if not keys:
            return z3.RealVal(self.NEUTRAL)
        if len(keys) == 1:
            return self.terms[next(iter(keys))]
        digest = hashlib.sha1("\n".join(sorted(keys)).encode()).hexdigest()[:16]
        name = f"{self.PREFIX}{digest}"
        self.members[name] = frozenset(keys)
        return z3.Real(name)


class Minima(Maxima):
    """Min atoms (`min.f32`): as `Maxima`, with +FLT_MAX (or more) the constant dropped."""

    PREFIX = "keq!min!"
    NEUTRAL = -LOWEST

    def neutral(self, t) -> bool:
        return z3.is_rational_value(t) and float(t.as_fraction()) >= -LOWEST


def _lowest(t) -> bool:
    """Is `t` a constant no finite value is below (-FLT_MAX or less)?"""
    return z3.is_rational_value(t) and float(t.as_fraction()) <= LOWEST


__all__ = ["E2", "MAGIC", "EXP_ASSUMPTION", "MAX_ASSUMPTION", "MIN_ASSUMPTION", "canonical",
           "exp2", "times", "plus", "Maxima", "Minima"]
