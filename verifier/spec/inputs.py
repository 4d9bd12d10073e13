"""Concrete launch inputs from a spec: scalar draws (uniform within range/values, rejection
sampling under `assume`) and buffers of random bit patterns."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from semantics.errors import KeqError
from verifier.spec.model import (PairSpec, ParamSpec, float_bits, float_value, int_bounds,
                                 type_bits)

DRAW_ATTEMPTS = 10_000


def _draw_one(p: ParamSpec, rng: np.random.Generator):
    if p.values is not None:
        v = p.values[int(rng.integers(len(p.values)))]
        return scalar_value(p, v)
    if p.is_float:
        if p.range is not None:
            return _draw_float(p, rng)
        bits = type_bits(p.type)
        raw = int(rng.integers(0, 1 << bits, dtype=np.uint64))
        return np.array([raw], dtype=f"<u{bits // 8}").view(p.dtype)[0]
    lo, hi = p.range if p.range is not None else int_bounds(p.type)
    return int(lo + int(rng.integers(0, hi - lo + 1, dtype=np.uint64)))


def _draw_float(p: ParamSpec, rng: np.random.Generator):
    """A value of the type in p's range (both ends rounded to the type): an end one time in
    four each, else uniform among the type's values between them (by bit pattern, so small
    magnitudes and subnormals are drawn as often as any other value)."""
    lo, hi = p.float_bounds()
    pick = rng.random()
    if pick < 0.25:
        return scalar_value(p, lo)
    if pick < 0.5:
        return scalar_value(p, hi)
    a, b = _order(p.type, lo), _order(p.type, hi)
    k = a + int(rng.integers(0, 1 << 62)) % (b - a + 1)
    return scalar_value(p, float_value(p.type, _unorder(p.type, k)))


def _order(type_name: str, x: float) -> int:
    """A float's rank among the type's values (monotonic; -0.0 and 0.0 share rank 0)."""
    bits = float_bits(type_name, x)
    sign = 1 << (type_bits(type_name) - 1)
    return -(bits & (sign - 1)) if bits & sign else bits


def _unorder(type_name: str, k: int) -> int:
    return (1 << (type_bits(type_name) - 1)) | -k if k < 0 else k


def scalar_value(p: ParamSpec, v):
    """A scalar as the value keq passes: a Python int, or a numpy float of the param's type
    (bf16, which numpy lacks: its uint16 bit pattern). A number is rounded to the type; an
    integer given for a bf16 param is taken as the bit pattern it already is."""
    if not p.is_float:
        return int(v)
    if p.type == "bf16":
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return np.uint16(int(v))
        return np.uint16(float_bits("bf16", v))
    return p.dtype.type(v)


def first_allowed(p: ParamSpec):
    """A scalar's first allowed value, as keq passes it: its first `values` entry, the low
    end of its range (for a float: rounded to the type, which the range includes), or 0."""
    if p.values is not None:
        return scalar_value(p, p.values[0])
    if p.range is not None:
        return scalar_value(p, p.range[0])
    return scalar_value(p, 0.0 if p.is_float else 0)


def draw_scalars(spec: PairSpec, rng: np.random.Generator,
                 fixed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Draw every scalar not in `fixed` uniformly within its range/values (its whole type when
    neither is given), rejecting draws until `assume` holds. Integer scalars are Python ints,
    float scalars numpy floats of their type."""
    fixed = dict(fixed or {})
    for a in spec.assume:
        if a.names <= set(fixed) and not a.eval(fixed):
            vals = ", ".join(f"{k}={fixed[k]}" for k in sorted(a.names))
            raise a._error(f"the given scalars ({vals}) violate assume {a.text!r}")
    free = [p for p in spec.scalars if p.name not in fixed]
    for _ in range(DRAW_ATTEMPTS):
        env = dict(fixed)
        for p in free:
            env[p.name] = _draw_one(p, rng)
        if all(a.eval(env) for a in spec.assume):
            return {p.name: env[p.name] for p in spec.scalars}
        if not free:
            break
    first = spec.assume[0] if spec.assume else None
    given = ", ".join(f"{k}={v}" for k, v in fixed.items())
    msg = (f"no scalar values satisfying assume found in {DRAW_ATTEMPTS} draws"
           if free else "the given scalars do not satisfy assume")
    if given:
        msg += f" (given {given})"
    if first is not None:
        bad = spec.failed_assumption(env) or first
        raise bad._error(msg)
    raise KeqError(msg)


def random_buffer(p: ParamSpec, n: int, rng: np.random.Generator,
                  bounds: tuple[int, int] | None = None) -> np.ndarray:
    """n elements of p's type with uniformly random bit patterns (NaNs and infs included);
    integers within `bounds` (the buffer's element range at this shape) when given."""
    if n == 0:
        return np.zeros(0, dtype=p.dtype)
    dt = p.dtype
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = bounds if bounds is not None else (info.min, info.max)
        return rng.integers(lo, hi, size=n, dtype=dt, endpoint=True)
    raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).copy()


def make_inputs(spec: PairSpec, scalars: Mapping[str, Any],
                rng: np.random.Generator) -> dict[str, Any]:
    """Every param's initial value by name: the scalars as given, every buffer (in, inout, out
    and scratch alike) filled with random bit patterns of its element type (within its
    element range, if it has one)."""
    out: dict[str, Any] = {}
    for p in spec.params:
        if p.is_scalar:
            out[p.name] = scalars[p.name]
        else:
            out[p.name] = random_buffer(p, p.length_of(scalars), rng,
                                        p.element_bounds(scalars))
    return out
