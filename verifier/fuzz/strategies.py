"""Hypothesis strategies for kernel inputs, built from a pair spec (public API).

Use them in your own property tests::

    from hypothesis import given, settings
    from verifier.spec import load_spec
    from verifier.fuzz.strategies import from_spec, from_param, launch_values, arrays

    spec = load_spec("kernels/vector_add/vec4.toml")

    @settings(max_examples=50, deadline=None)
    @given(from_spec(spec))
    def test_my_kernel(values):            # every param by name, like verifier.spec.make_inputs
        ...

- `launch_values(spec, fixed=None, *, finite=False, real=None)`: every scalar param by name,
  satisfying `assume`. Integer scalars are drawn from their `range`/`values` with the edges
  first: min, max, min+1, max-1, and multiples of the launch constants (block sizes and the
  divisors in grid expressions, e.g. 256 and 1024 for ``ceil_div(n, 1024)``) and those
  multiples +-1. Float scalars: the
  range ends, 0 when inside, and values in between (no range: `elements`).
- `from_param(param, length=None, scalars=None, *, finite=False, real=False)`: one param's
  value. A scalar param gives what `launch_values` gives for it; a buffer param needs its
  length (`length=`, or `scalars=` to evaluate the spec's length expression).
- `from_spec(spec, *, finite=False, real=None, fixed=None)`: every param by name (scalars, then
  each buffer at the length its expression gives), the dict `Side.kernel_args` takes.
- `arrays(type, length, *, finite=False, real=False)`: a numpy array of a spec element type
  (f16 bf16 f32 f64 s8 .. u64; bf16 as uint16 bit patterns).
- `elements(type, *, finite=False, real=False)`: one element, as an int bit pattern.

Float buffers hold mostly ordinary values: moderate normals sign * 2^e * (1 + f), e in
[-8, 8) ([-4, 4) for f16) with a random mantissa (80%), small integers in [-16, 16] (10%) and
exact values such as 0.5, 1, 2, 1.5, 4 (10%). Outside real mode, in one buffer in
SPRINKLED (4), each element is with probability 1/10 a special value instead, half of those from the specials (NaN payloads, quiet
and signalling, both signs; +-0, +-inf, the smallest and largest subnormals and normals, 1,
1+ulp, 0.5, 1.5, 2) and half uniformly random bit patterns (any exponent), and one buffer in
ten is specials only, so that bitexact pairs meet every special value. Integer buffers mix
random bit patterns with 0, 1, -1, the type's min and max, min+1 and max-1 (a third random,
a third mixed, a third specials only). A buffer is drawn as a few hypothesis choices (a fill
seed, up to 3 specials placed at drawn positions), never one choice per element, so drawing a
2^16-element buffer costs about as much as a 16-element one, and shrinking moves towards
all-zero buffers with few specials. Float scalars without a range are drawn alike, each part
(class, exponent, mantissa, sign) a hypothesis choice, so they shrink towards 0.

`finite=True` leaves out NaN and infinities (floats only). `real=True` (the default for
`from_spec` and `launch_values` of a `mode = "real"` spec) draws floats finite and ordinary
only (no specials, no random bit patterns; the placed specials are +-0, +-0.5, +-1, +-2):
real-mode comparison treats any NaN as equal to any NaN, so a NaN input would hide every
difference behind it, and huge or tiny values make rounding, not the kernel, differ. Rounding
differences between reordered arithmetic are then what the runner's derived tolerance
(`verifier.fuzz.compare`) allows for.

Arguments are validated when the strategy is built (hypothesis.errors.InvalidArgument with
the offending value named), not when it is drawn.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from verifier.spec import (TYPES, PairSpec, ParamSpec, draw_scalars, dtype_of, int_bounds,
                           is_float_type, scalar_value, type_bits)

__all__ = ["from_spec", "from_param", "launch_values", "arrays", "elements", "special_bits",
           "launch_multiples", "MAX_SPECIALS"]

MAX_SPECIALS = 3          # specials placed at drawn positions in one buffer
_MULTIPLES_PER_CONSTANT = 4
_FMT = {"f16": (5, 11), "bf16": (8, 8), "f32": (8, 24), "f64": (11, 53)}


# ------------------------------------------------------------------ validation

def _check_type(type_name) -> str:
    if not isinstance(type_name, str) or type_name not in TYPES:
        raise InvalidArgument(f"type={type_name!r} is not a spec element type "
                              f"(one of {', '.join(TYPES)})")
    return type_name


def _check_bool(name: str, v) -> bool:
    if not isinstance(v, bool):
        raise InvalidArgument(f"{name}={v!r} must be True or False")
    return v


def _check_length(length) -> int:
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
        raise InvalidArgument(f"length={length!r} must be a non-negative integer")
    return int(length)


def _check_spec(spec) -> PairSpec:
    if not isinstance(spec, PairSpec):
        raise InvalidArgument(f"spec must be a PairSpec (verifier.spec.load_spec(path)), "
                              f"got {type(spec).__name__}")
    return spec


# ------------------------------------------------------------------ special values

def _uint(bits: int) -> np.dtype:
    return np.dtype(f"<u{bits // 8}")


def special_bits(type_name: str, *, finite: bool = False, real: bool = False) -> list[int]:
    """The special values of a type as bit patterns (see the module docstring). `real=True`
    gives the finite, exactly representable ones only (+-0, +-0.5, +-1, +-2), whatever
    `finite` says."""
    _check_type(type_name)
    bits = type_bits(type_name)
    if not is_float_type(type_name):
        lo, hi = int_bounds(type_name)
        mask = (1 << bits) - 1
        vals = {0, 1, lo, hi, lo + 1, hi - 1, 2}
        if lo < 0:
            vals.add(-1)
        return sorted(v & mask for v in vals)
    e, s = _FMT[type_name]
    m = s - 1
    sign = 1 << (e + m)
    exp = ((1 << e) - 1) << m
    bias = (1 << (e - 1)) - 1
    one = bias << m
    if real:
        vals = [0, (bias - 1) << m, one, (bias + 1) << m]                 # 0, 0.5, 1, 2
    else:
        vals = [0, 1, (1 << m) - 1, 1 << m, exp - 1,                      # 0, subnormals, normals
                one, one | 1, (bias - 1) << m, (bias + 1) << m,           # 1, 1+ulp, 0.5, 2
                one | (1 << (m - 1))]                                     # 1.5
        if not finite:
            vals += [exp, exp | (1 << (m - 1)), exp | 1,                  # inf, qNaN, sNaN
                     exp | (1 << (m - 1)) | 0x5, sign - 1]                # payload NaNs
    return sorted({v for x in vals for v in (x, x | sign)})


def _finite_mask(raw: np.ndarray, type_name: str) -> np.ndarray:
    e, s = _FMT[type_name]
    exp = ((1 << e) - 1) << (s - 1)
    return (raw & raw.dtype.type(exp)) != raw.dtype.type(exp)


# Ordinary values: what a buffer mostly holds. Moderate normals sign * 2^e * (1 + f) with e in
# [-E, E) and a random mantissa f (E = 8; 4 for f16, whose range a sum of 512 of them or a
# 32-term dot product would leave), small integers in [-16, 16], and exact values.
ORDINARY_NORMAL, ORDINARY_SMALL_INT = 0.8, 0.1       # the rest: EXACT_VALUES
UNUSUAL = 0.1             # per element, outside real mode: a special value or random bits ...
SPRINKLED = 4             # ... in one buffer in this many. (Per element in every buffer, almost
#                           every buffer of a few dozen elements held a NaN or an infinity, and
#                           a float sum whose order shows compared NaN with NaN: unnoticed.)
SPECIALS_ONLY = 10        # one buffer in this many is specials only (outside real mode)
EXACT_VALUES = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.25, -0.25, 1.5, -1.5, 4.0, -4.0)
SMALL_INT = 16


def ordinary_exponents(type_name: str) -> tuple[int, int]:
    """[lo, hi): the binary exponents of the moderate normals drawn for a float type."""
    e = 4 if type_name == "f16" else 8
    return -e, e


def _normal_bits(type_name: str, sign, e, mant):
    """Bit patterns sign * 2^e * (1 + mant / 2^m) (numpy uint64 arrays or ints)."""
    eb, s = _FMT[type_name]
    m = s - 1
    bias = (1 << (eb - 1)) - 1
    if isinstance(e, np.ndarray):
        u = np.uint64
        return (sign.astype(u) << u(eb + m)) | ((e + bias).astype(u) << u(m)) | mant.astype(u)
    return (int(sign) << (eb + m)) | ((e + bias) << m) | int(mant)


def _ordinary_fill(type_name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n ordinary values (see ORDINARY_*) as unsigned bit patterns of the type's width."""
    udt = _uint(type_bits(type_name))
    m = _FMT[type_name][1] - 1
    lo, hi = ordinary_exponents(type_name)
    cls = rng.random(n)
    normal = _normal_bits(type_name, rng.integers(0, 2, size=n), rng.integers(lo, hi, size=n),
                          rng.integers(0, 1 << m, size=n, dtype=np.uint64)).astype(udt)
    small = _from_f64(type_name, rng.integers(-SMALL_INT, SMALL_INT + 1,
                                              size=n).astype(np.float64))
    exact = _from_f64(type_name, np.array(EXACT_VALUES)[rng.integers(0, len(EXACT_VALUES),
                                                                     size=n)])
    return np.where(cls < ORDINARY_NORMAL, normal,
                    np.where(cls < ORDINARY_NORMAL + ORDINARY_SMALL_INT, small, exact))


def _random_bits(type_name: str, n: int, rng: np.random.Generator, finite: bool) -> np.ndarray:
    """n uniformly random bit patterns (NaN/inf made finite when `finite`)."""
    bits = type_bits(type_name)
    udt = _uint(bits)
    raw = rng.integers(0, 1 << bits, size=n, dtype=np.uint64).astype(udt) if bits < 64 else \
        rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    if is_float_type(type_name) and finite:
        bad = ~_finite_mask(raw, type_name)
        if bad.any():       # replace NaN/inf by a finite pattern with the same sign and payload
            raw[bad] &= ~udt.type(1 << (bits - 2))
    return raw


def _from_f64(type_name: str, x: np.ndarray) -> np.ndarray:
    """Exactly representable float64 values as bit patterns of the type."""
    if type_name == "bf16":
        return (x.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return x.astype(dtype_of(type_name)).view(_uint(type_bits(type_name)))


def _one_f64(type_name: str, v: float) -> int:
    return int(_from_f64(type_name, np.array([v], dtype=np.float64))[0])


# ------------------------------------------------------------------ elements and arrays

def elements(type_name: str, *, finite: bool = False, real: bool = False):
    """One element of a spec type as an int bit pattern (predictable, shrinks to 0).

    Floats: mostly ordinary values (an exact value, a small integer or a moderate normal, as
    in buffers; each part a hypothesis choice, so they shrink), about one draw in ten
    (outside real mode) a special value or random bits."""
    _check_type(type_name)
    _check_bool("finite", finite)
    _check_bool("real", real)
    sp = special_bits(type_name, finite=finite, real=real)
    bits = type_bits(type_name)
    if not is_float_type(type_name):
        return st.one_of(st.sampled_from(sp), st.integers(0, (1 << bits) - 1))
    m = _FMT[type_name][1] - 1
    lo, hi = ordinary_exponents(type_name)
    exact = st.sampled_from([_one_f64(type_name, v) for v in (0.0,) + EXACT_VALUES])
    small = st.integers(-SMALL_INT, SMALL_INT).map(lambda k: _one_f64(type_name, float(k)))
    normal = st.builds(lambda s, e, f: _normal_bits(type_name, s, e, f), st.integers(0, 1),
                       st.integers(lo, hi - 1), st.integers(0, (1 << m) - 1))
    if finite:
        rand = st.integers(0, (1 << bits) - 1).map(lambda v: _random_fill_one(type_name, v))
    else:
        rand = st.integers(0, (1 << bits) - 1)
    unusual = st.one_of(st.sampled_from(sp), rand)

    @st.composite
    def draw(d):
        c = d(st.integers(0, 9))          # shrinks towards 0: the exact values, 0 first
        if c == 0:
            return d(exact)
        if c == 1:
            return d(small)
        if c == 9 and not real:
            return d(unusual)
        return d(normal)
    return draw()


def _random_fill_one(type_name: str, v: int) -> int:
    a = np.array([v], dtype=_uint(type_bits(type_name)))
    if not _finite_mask(a, type_name)[0]:
        a[0] &= ~a.dtype.type(1 << (type_bits(type_name) - 2))
    return int(a[0])


def arrays(type_name: str, length: int, *, finite: bool = False, real: bool = False):
    """A 1-d numpy array of `length` elements of a spec type (dtype as `verifier.spec`)."""
    _check_type(type_name)
    length = _check_length(length)
    _check_bool("finite", finite)
    _check_bool("real", real)
    key = (type_name, length, finite, real)
    s = _ARRAYS.get(key)
    if s is None:
        if len(_ARRAYS) > 4096:
            _ARRAYS.clear()
        s = _ARRAYS[key] = _arrays(type_name, length, finite, real)
    return s


_ARRAYS: dict[tuple, object] = {}


def _arrays(type_name: str, length: int, finite: bool, real: bool):
    # Few choices per buffer (each hypothesis choice costs tens of microseconds): one `fill`
    # (0: all zeros; else the seed of the buffer's contents, which also picks, one buffer in
    # SPECIALS_ONLY, a buffer of specials only), and up to MAX_SPECIALS placements, each one
    # integer packing (position, special). Shrinking moves fill to 0 and placements to
    # position 0 with the first special (+0).
    is_float = is_float_type(type_name)
    real = real and is_float
    sp = np.array(special_bits(type_name, finite=finite, real=real), dtype=np.uint64)
    nsp = len(sp)
    bits = type_bits(type_name)
    udt = _uint(bits)
    dt = dtype_of(type_name)
    if length == 0:
        return st.just(np.zeros(0, dtype=dt)).map(lambda a: a.copy())
    fill_s = st.integers(0, 2**32 - 1)
    placed_s = st.lists(st.integers(0, length * nsp - 1), max_size=min(length, MAX_SPECIALS))

    @st.composite
    def draw(d):
        fill = d(fill_s)
        if fill == 0:
            raw = np.zeros(length, dtype=udt)
        else:
            rng = np.random.default_rng(fill)
            if not is_float:        # integers: random / mixed / specials only, a third each
                mode = fill % 3
                if mode == 2:
                    raw = sp[rng.integers(0, nsp, size=length)].astype(udt)
                else:
                    raw = _random_bits(type_name, length, rng, finite)
                    if mode == 1:
                        where = rng.random(length) < 0.125
                        raw[where] = sp[rng.integers(0, nsp, size=int(where.sum()))]
            elif not real and (fill >> 8) % SPECIALS_ONLY == 0:
                raw = sp[rng.integers(0, nsp, size=length)].astype(udt)
            else:
                raw = _ordinary_fill(type_name, length, rng)
                if not real and (fill >> 4) % SPRINKLED == 0:
                    where = np.flatnonzero(rng.random(length) < UNUSUAL)
                    if where.size:
                        half = rng.random(where.size) < 0.5
                        raw[where[half]] = sp[rng.integers(0, nsp, size=int(half.sum()))]
                        rest = where[~half]
                        raw[rest] = _random_bits(type_name, rest.size, rng, finite)
        for v in d(placed_s):
            raw[v // nsp] = sp[v % nsp]
        return raw.view(dt).copy() if raw.dtype != dt else raw
    return draw()


# ------------------------------------------------------------------ scalars

def launch_multiples(spec: PairSpec) -> list[int]:
    """Block dimensions, their products, and the constant divisors of grid expressions."""
    _check_spec(spec)
    out: set[int] = set()
    for side in (spec.reference, spec.candidate):
        dims = []
        for e in side.block:
            if not e.names:
                dims.append(int(e.eval({})))
        for d in dims:
            out.add(d)
        if dims:
            out.add(int(np.prod(dims)))
        for e in side.grid:
            _divisors(e.node, out)
    return sorted(x for x in out if x > 1)


def _divisors(n, out: set) -> None:
    if n.kind == "call" and n.value == "ceil_div" and n.args[1].kind == "int":
        out.add(int(n.args[1].value))
    if n.kind == "bin" and n.value in ("//", "%") and n.args[1].kind == "int":
        out.add(int(n.args[1].value))
    for a in n.args:
        _divisors(a, out)


def _int_edges(lo: int, hi: int, multiples: list[int]) -> list[int]:
    vals = {lo, hi, lo + 1, hi - 1, 0, 1, 2}
    for b in multiples:
        ks = list(range(1, _MULTIPLES_PER_CONSTANT + 1))
        top = hi // b
        ks += [top - 1, top]
        for k in ks:
            if k >= 1:
                vals.update((k * b - 1, k * b, k * b + 1))
    return sorted(v for v in vals if lo <= v <= hi)


def _scalar_strategy(p: ParamSpec, multiples: list[int], finite: bool, real: bool = False):
    if p.values is not None:
        return st.sampled_from(sorted(p.values)).map(lambda v: scalar_value(p, v))
    if p.is_float:
        bits = type_bits(p.type)
        if p.range is not None:
            # (the ends rounded to the type, as the claim reads them; bf16 drawn at width 32
            # and rounded, which stays between the ends since they are bf16 values)
            lo, hi = p.float_bounds()
            edges = sorted({lo, hi} | ({0.0} if lo <= 0 <= hi else set()))
            width = 64 if bits == 64 else 32 if bits == 32 or p.type == "bf16" else 16
            inner = st.floats(lo, hi, width=width, allow_nan=False, allow_infinity=False)
            return st.one_of(st.sampled_from(edges), inner).map(lambda v: scalar_value(p, v))
        ud = _uint(bits)
        return elements(p.type, finite=finite, real=real).map(
            lambda b: np.array([b], dtype=ud).view(p.dtype)[0] if p.type != "bf16"
            else int(b))
    lo, hi = p.range if p.range is not None else int_bounds(p.type)
    return st.one_of(st.sampled_from(_int_edges(lo, hi, multiples)), st.integers(lo, hi))


_ASSUME_TRIES = 4


def launch_values(spec: PairSpec, *, fixed: Mapping[str, Any] | None = None,
                  finite: bool = False, real: bool | None = None):
    """Every scalar param by name, satisfying `assume` (edges first; see module docstring).
    `real` (default: the spec's mode is "real") draws float scalars without a range finite
    and ordinary (no specials)."""
    _check_spec(spec)
    _check_bool("finite", finite)
    real = spec.mode == "real" if real is None else _check_bool("real", real)
    fixed = dict(fixed or {})
    for k in fixed:
        try:
            p = spec.param(k)
        except KeyError:
            raise InvalidArgument(f"fixed names {k!r}, which is not a param of {spec.name}") \
                from None
        if not p.is_scalar:
            raise InvalidArgument(f"fixed names {k!r}, which is a buffer, not a scalar")
        if not p.allows(fixed[k]):
            raise InvalidArgument(f"fixed {k}={fixed[k]!r} is outside the spec's domain "
                                  f"({p.describe_domain()})")
    multiples = launch_multiples(spec)
    free = [p for p in spec.scalars if p.name not in fixed]
    per = {p.name: _scalar_strategy(p, multiples, finite, real) for p in free}
    order = [p.name for p in spec.scalars]

    @st.composite
    def draw(d):
        for _ in range(_ASSUME_TRIES):
            env = dict(fixed)
            for name, s in per.items():
                env[name] = d(s)
            if spec.check_assumptions(env):
                return {k: env[k] for k in order}
        # `assume` rejects most edge/uniform draws: rejection-sample from a drawn seed.
        rng = np.random.default_rng(d(st.integers(0, 2**32 - 1)))
        env = draw_scalars(spec, rng, fixed=fixed)
        if real or finite:      # draw_scalars takes float scalars from their whole type
            for p in free:
                if p.is_float and p.range is None and p.values is None:
                    v = _ordinary_fill(p.type, 1, rng)[0]
                    new = dict(env, **{p.name: int(v) if p.type == "bf16" else
                                       np.array([v]).view(p.dtype)[0]})
                    if spec.check_assumptions(new):
                        env = new
        return env
    return draw()


# ------------------------------------------------------------------ params and specs

def from_param(param: ParamSpec, length: int | None = None,
               scalars: Mapping[str, Any] | None = None, *, finite: bool = False,
               real: bool = False, multiples: list[int] | tuple = ()):
    """One param's value: a scalar within its domain, or a buffer of its element type."""
    if not isinstance(param, ParamSpec):
        raise InvalidArgument(f"param must be a verifier.spec.ParamSpec (spec.param(name)), "
                              f"got {type(param).__name__}")
    _check_bool("finite", finite)
    _check_bool("real", real)
    if param.is_scalar:
        if length is not None:
            raise InvalidArgument(f"length= is for buffers; {param.name!r} is a scalar")
        return _scalar_strategy(param, sorted(int(m) for m in multiples), finite, real)
    if length is None:
        if scalars is None:
            raise InvalidArgument(f"buffer {param.name!r} needs length= or scalars= (to "
                                  f"evaluate its length {param.length.text!r})")
        missing = sorted(param.length.names - set(scalars))
        if missing:
            raise InvalidArgument(f"scalars= lacks {', '.join(missing)}, needed for the length "
                                  f"{param.length.text!r} of {param.name!r}")
        length = param.length_of(scalars)
    s = arrays(param.type, length, finite=finite, real=real)
    if param.elements is None:
        return s
    missing = sorted((param.elements[0].names | param.elements[1].names) - set(scalars or {}))
    if missing:
        raise InvalidArgument(f"scalars= lacks {', '.join(missing)}, needed for the element "
                              f"range of {param.name!r}")
    return within(s, param.element_bounds(scalars or {}))


def within(s, bounds: tuple[int, int]):
    """Integer arrays drawn by `s`, wrapped into the inclusive `bounds` (a buffer's element
    range): v -> lo + (v - lo) mod (hi - lo + 1), so 0 stays 0 where the range holds it and
    shrinking still moves towards it."""
    lo, hi = bounds
    n = hi - lo + 1

    def wrap(a: np.ndarray) -> np.ndarray:
        v = (a.astype(object) - lo) % n + lo
        return v.astype(a.dtype)
    return s.map(wrap)


def from_spec(spec: PairSpec, *, finite: bool = False, real: bool | None = None,
              fixed: Mapping[str, Any] | None = None):
    """Every param of the spec by name: scalars from `launch_values`, then each buffer."""
    _check_spec(spec)
    real = spec.mode == "real" if real is None else _check_bool("real", real)
    scal = launch_values(spec, fixed=fixed, finite=finite, real=real)
    buffers = spec.buffers

    @st.composite
    def draw(d):
        scalars = d(scal)
        out: dict[str, Any] = {}
        for p in spec.params:
            if p.is_scalar:
                out[p.name] = scalars[p.name]
            else:
                out[p.name] = d(from_param(p, scalars=scalars, finite=finite, real=real))
        return out
    del buffers
    return draw()
