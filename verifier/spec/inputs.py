"""Concrete launch inputs from a spec: scalar draws (uniform within range/values, rejection
sampling under `assume`) and buffers of random bit patterns."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from semantics.errors import KeqError
from verifier.spec.model import PairSpec, ParamSpec, int_bounds, type_bits

DRAW_ATTEMPTS = 10_000


def _draw_one(p: ParamSpec, rng: np.random.Generator):
    if p.values is not None:
        v = p.values[int(rng.integers(len(p.values)))]
        return scalar_value(p, v)
    if p.is_float:
        if p.range is not None:
            lo, hi = p.range
            return scalar_value(p, lo + (hi - lo) * rng.random())
        bits = type_bits(p.type)
        raw = int(rng.integers(0, 1 << bits, dtype=np.uint64))
        return np.array([raw], dtype=f"<u{bits // 8}").view(p.dtype)[0]
    lo, hi = p.range if p.range is not None else int_bounds(p.type)
    return int(lo + int(rng.integers(0, hi - lo + 1, dtype=np.uint64)))


def scalar_value(p: ParamSpec, v):
    """A scalar as the value keq passes: a Python int, or a numpy float of the param's type."""
    if p.is_float:
        return p.dtype.type(v)
    return int(v)


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


def random_buffer(p: ParamSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """n elements of p's type with uniformly random bit patterns (NaNs and infs included)."""
    if n == 0:
        return np.zeros(0, dtype=p.dtype)
    dt = p.dtype
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).copy()


def make_inputs(spec: PairSpec, scalars: Mapping[str, Any],
                rng: np.random.Generator) -> dict[str, Any]:
    """Every param's initial value by name: the scalars as given, every buffer (in, inout, out
    and scratch alike) filled with random bit patterns of its element type."""
    out: dict[str, Any] = {}
    for p in spec.params:
        if p.is_scalar:
            out[p.name] = scalars[p.name]
        else:
            out[p.name] = random_buffer(p, p.length_of(scalars), rng)
    return out
