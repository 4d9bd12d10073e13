"""The NaN a floating-point instruction returns, as the PTX ISA says (9.7.3: "NaN payloads
are supported for double-precision instructions ... Single-precision instructions return an
unspecified NaN"; the half-precision instructions say the same of theirs).

- f32, f16, bf16: a NaN result is an unspecified quiet NaN, fixed by the hardware for the
  operation and its inputs: `Domain.unspecified_fn` of them (symbolically an uninterpreted
  function, so kernels computing the same thing from the same inputs agree, and two that
  compute it differently, `a + b` and `b + a` included, are not assumed to). The claim may
  name the target assumption "f32-nan-canonical" / "f16-nan-canonical" (sm_90 returns
  0x7FFFFFFF / 0x7FFF): then it is that constant. The emulator returns the canonical NaN.
- f64: the payload of a NaN operand propagates, quieted; with several NaN operands which one
  is not specified (an unspecified choice, fixed per operation and inputs); a NaN made from
  non-NaN operands (0 * inf, inf - inf) is unspecified. The emulator propagates the first NaN
  operand's payload and returns the canonical NaN otherwise.
The PTX ISA makes its rounded arithmetic IEEE-754 compliant, and IEEE 754 makes every NaN an
arithmetic operation delivers quiet, so an unspecified NaN result is `u | EXP | QUIET` for an
unknown `u`: every quiet NaN, and nothing else. (`neg` and `abs` are no IEEE arithmetic:
their unspecified NaN may be any NaN.)
"""

from __future__ import annotations

from semantics.ops.common import CANONICAL_NAN, EXP_MASK, is_nan

QUIET = {"f16": 0x0200, "bf16": 0x0040, "f32": 0x00400000, "f64": 0x0008000000000000}


def _effect_text(op: str, fmt: str) -> str:
    return f"the NaN {op}.{fmt} returns (the PTX ISA leaves it open)"


def is_nan_result_effect(what: str) -> bool:
    """Is an "unspecified" effect's text that of a NaN result (this module's)? Its value is a
    NaN whatever the hardware picks, and symbolically an uninterpreted function of the
    operands, so a check that leaves those functions free covers every choice."""
    return what.startswith("the NaN ") and what.endswith(" returns (the PTX ISA leaves it open)")


def quiet(d, fmt: str, v, w: int):
    """`v` made a quiet NaN: its sign and payload kept, every exponent bit and the quiet bit
    set (a NaN operand's payload, propagated; or any bits, made a NaN)."""
    return d.bor(v, d.const(EXP_MASK[fmt] | QUIET[fmt], w), w)


def nan_result(x, fmt: str, op: str, r, inputs: list, w: int, d=None):
    """`r` (the IEEE result's bits) where it is not a NaN, else the NaN the ISA allows
    (module docstring); `inputs`: the operation's operands' bits, `op` names it; `d`: the
    domain of those values when it is not the executor's (an atomic's update)."""
    d = x.d if d is None else d
    target = x.choices.target
    if fmt in target.canonical_nan:
        return d.ite(is_nan(d, fmt, r, w), d.const(CANONICAL_NAN[fmt], w), r, w)
    widths = [w] * len(inputs)
    key = ("nan", fmt, op, len(inputs))
    if d is x.d:
        # (a value the hardware fixes but the ISA does not tell: testing proves nothing
        # through it, and a refutation must hold for every such value)
        x.effect("unspecified", _effect_text(op, fmt),
                 is_nan(d, fmt, r, w) if d.is_concrete(r) else None)

    def post(dd, rr, *ins):
        canon = dd.const(CANONICAL_NAN[fmt], w)
        made = quiet(dd, fmt, dd.unspecified_fn(f"nan/{op}.{fmt}", w, list(ins), canon,
                                               x.choices, widths), w)
        if fmt == "f64":
            made = _propagated(x, dd, fmt, op, list(ins), made, w)
        return dd.ite(is_nan(dd, fmt, rr, w), made, rr, w)
    return d.lanewise_n(key, post, [r] + list(inputs), [w] * (len(inputs) + 1))


def _propagated(x, d, fmt: str, op: str, ins: list, made, w: int):
    """f64: the first NaN operand's payload, quieted, where one is a NaN; with two or more,
    which one is an unspecified choice (per pair of candidates, fixed by the inputs)."""
    out = made
    for i in reversed(range(len(ins))):
        a = ins[i]
        later = [j for j in range(i + 1, len(ins))]
        take = quiet(d, fmt, a, w)
        for j in later:
            # a and ins[j] both NaN: which payload wins is the hardware's choice
            other = quiet(d, fmt, ins[j], w)
            pick = d.unspecified_fn(f"nan/{op}.{fmt}/pick{i}{j}", 1, ins,
                                    d.const(1, 1), x.choices, [w] * len(ins))
            both = is_nan(d, fmt, ins[j], w)
            take = d.ite(d.pand(both, d.eq(pick, d.const(0, 1), 1)), other, take, w)
        out = d.ite(is_nan(d, fmt, a, w), take, out, w)
    return out


def unspecified_nan(x, fmt: str, op: str, a, w: int, default=None):
    """The NaN a sign operation returns from a NaN operand `a` (`neg`, `abs`: "NaN inputs
    yield an unspecified NaN"; not IEEE arithmetic, so not necessarily quiet): canonical
    under the target assumption, else any NaN, fixed by the input."""
    d = x.d
    if fmt in x.choices.target.canonical_nan:
        return d.const(CANONICAL_NAN[fmt], w)
    x.effect("unspecified", _effect_text(op, fmt),
             is_nan(d, fmt, a, w) if d.is_concrete(a) else None)
    u = d.unspecified_fn(f"nan/{op}.{fmt}", w, [a], a if default is None else default,
                         x.choices, [w])
    exp = d.const(EXP_MASK[fmt], w)
    some = d.bor(u, exp, w)                      # a NaN unless its mantissa is 0
    return d.ite(is_nan(d, fmt, some, w), some, d.bor(some, d.const(1, w), w), w)


__all__ = ["nan_result", "unspecified_nan", "is_nan_result_effect", "quiet", "QUIET"]
