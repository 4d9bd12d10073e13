"""The loaded spec as frozen dataclasses (`PairSpec`, `Side`, `ParamSpec`), the closed sets of
values the format accepts (modes, expectations, access kinds, types) and the type helpers
mapping a spec type to numpy and to its bit width and integer bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from semantics.errors import KeqError
from verifier.spec.expressions import Expr

MODES = ("bitexact", "real")
# corpus metadata: the verdict keq must reach; "bad-spec": keq must refuse the claim as an
# error about the spec (exit 3), e.g. a launch the kernel's .reqntid forbids
EXPECTS = ("equivalent", "not-equivalent", "inconclusive", "bad-spec")
ACCESS = ("in", "out", "inout", "scratch")
TYPES = ("f16", "bf16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")

_DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
           "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


# The named relaxations (`allow`) and target assumptions (`target_assumptions`) a spec may
# state, by key, each with the one line the claim prints for it. The only place they are
# defined: the loader, the claim line, --json and certificates all read them from here.
CLAIM_NAMES: dict[str, dict[str, str]] = {
    "allow": {
        "benign-write-races": "two threads storing the same value to one address without "
                              "synchronisation are not reported as a race",
        "nan-any": "a NaN output equals any NaN output: NaN payloads are not compared",
        "printf-ignored": "what the kernels print with printf is not compared",   # (else it is: verifier.printed)
    },
    "target_assumptions": {
        "f32-nan-canonical": "every f32 NaN result is 0x7FFFFFFF",
        "f16-nan-canonical": "every f16/bf16 NaN result is 0x7FFF",
    },
}

# The architectures a claim may name with `arch` (the tensor-core datapath the emulator
# models, `semantics.tensor_core`), and the one a claim that names none is about.
ARCHS = ("sm_80", "sm_86", "sm_87", "sm_89", "sm_90")
DEFAULT_ARCH = "sm_80"

# (exponent bits, significand bits with the hidden bit) of each float type: z3's FPSort
FLOAT_FORMATS = {"f16": (5, 11), "bf16": (8, 8), "f32": (8, 24), "f64": (11, 53)}


def dtype_of(type_name: str) -> np.dtype:
    """The numpy dtype holding values of a spec type (bf16: uint16 bit patterns)."""
    return np.dtype(_DTYPES[type_name])


def type_bits(type_name: str) -> int:
    return 16 if type_name == "bf16" else int(type_name[1:])


def int_bounds(type_name: str) -> tuple[int, int]:
    bits = type_bits(type_name)
    if type_name[0] == "s":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def is_float_type(type_name: str) -> bool:
    return type_name[0] in "fb"


def float_bits(type_name: str, x) -> int:
    """The bit pattern of the number `x` (an int or a float, exactly) rounded to the float
    type with round-to-nearest-even: what a spec's float literal means (NaN: the canonical
    quiet NaN; too large: infinity). Exact rational arithmetic, so there is no double rounding
    through f64 (bf16 and ints past 2**53)."""
    e, s = FLOAT_FORMATS[type_name]
    x = int(x) if isinstance(x, (int, np.integer)) else float(x)   # (numpy: exact)
    inf = ((1 << e) - 1) << (s - 1)
    if isinstance(x, float) and math.isnan(x):
        return inf | 1 << (s - 2)
    negative = x < 0 if isinstance(x, int) else math.copysign(1.0, x) < 0
    sign = 1 << (e + s - 1) if negative else 0
    if isinstance(x, float) and math.isinf(x):
        return sign | inf
    num, den = abs(Fraction(x)).as_integer_ratio()
    if num == 0:
        return sign
    bias = (1 << (e - 1)) - 1
    exp = num.bit_length() - den.bit_length()       # 2**exp <= |x| < 2**(exp + 1), or one less
    if (num << max(0, -exp)) < (den << max(0, exp)):
        exp -= 1
    exp = max(exp, 1 - bias)                         # subnormals share the least exponent
    shift = exp - (s - 1)                            # the weight of the last significand bit
    d = den << max(0, shift)
    q, r = divmod(num << max(0, -shift), d)
    if 2 * r > d or (2 * r == d and q & 1):
        q += 1
    if q == 1 << s:                                  # rounded up to the next binade
        q, exp = q >> 1, exp + 1
    if exp > bias:
        return sign | inf
    if q < 1 << (s - 1):
        return sign | q                              # subnormal (exponent field 0)
    return sign | (exp + bias) << (s - 1) | (q - (1 << (s - 1)))


def float_value(type_name: str, bits: int) -> float:
    """The value of a bit pattern of a float type as a Python float (exact: every f16, bf16
    and f32 value is an f64 value)."""
    e, s = FLOAT_FORMATS[type_name]
    sign = -1.0 if bits >> (e + s - 1) & 1 else 1.0
    field_, man = bits >> (s - 1) & ((1 << e) - 1), bits & ((1 << (s - 1)) - 1)
    if field_ == (1 << e) - 1:
        return math.copysign(math.inf, sign) if man == 0 else math.nan
    bias = (1 << (e - 1)) - 1
    if field_ == 0:
        return math.copysign(math.ldexp(man, 2 - bias - s), sign)
    return math.copysign(math.ldexp(man | 1 << (s - 1), field_ - bias - s + 1), sign)


@dataclass(frozen=True)
class ParamSpec:
    name: str
    kind: str                          # "buffer" | "scalar"
    type: str                          # element type (buffer) or scalar type
    length: Expr | None = None         # buffers
    access: str | None = None          # buffers: in | out | inout | scratch
    range: tuple | None = None         # scalars: inclusive (lo, hi)
    values: tuple | None = None        # scalars: allowed values
    # integer `in`/`inout` buffers: every element's inclusive range (expressions over the
    # integer scalars), assumed for the inputs: a gather's indices (`wte[inp[i] * C + c]`)
    elements: tuple[Expr, Expr] | None = None

    @property
    def is_buffer(self) -> bool:
        return self.kind == "buffer"

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"

    @property
    def dtype(self) -> np.dtype:
        return dtype_of(self.type)

    @property
    def is_float(self) -> bool:
        return is_float_type(self.type)

    def length_of(self, scalars: Mapping[str, int]) -> int:
        if self.length is None:
            raise KeqError(f"param {self.name!r} is a scalar, it has no length")
        n = self.length.eval(scalars)
        if n < 0:
            raise self.length._error(f"length of {self.name!r} is {n} (negative) at "
                                     + ", ".join(f"{k}={scalars[k]}" for k in sorted(self.length.names)))
        return n

    def element_bounds(self, scalars: Mapping[str, int]) -> tuple[int, int] | None:
        """The inclusive range of this buffer's elements at one shape, or None (any value);
        a located error when it is empty or leaves the element type."""
        if self.elements is None:
            return None
        lo, hi = (e.eval(scalars) for e in self.elements)
        tlo, thi = int_bounds(self.type)
        at = ", ".join(f"{k}={scalars[k]}" for k in sorted(
            self.elements[0].names | self.elements[1].names))
        if lo > hi:
            raise self.elements[0]._error(f"the range of {self.name!r}'s elements is empty: "
                                          f"{lo} > {hi}" + (f" at {at}" if at else ""))
        if lo < tlo or hi > thi:
            raise self.elements[0]._error(
                f"the range [{lo}, {hi}] of {self.name!r}'s elements leaves its type "
                f"{self.type} [{tlo}, {thi}]" + (f" at {at}" if at else ""))
        return lo, hi

    def element_text(self) -> str:
        """The element range as the claim prints it."""
        lo, hi = self.elements
        return f"{lo.text} <= {self.name}[*] <= {hi.text}"

    def allows(self, value) -> bool:
        """Whether a scalar value is in this param's range/values (and its type). A float
        scalar is compared by bit pattern with `values` (so -0.0 is not 0.0) and as a float
        with `range` (so NaN is never in one, and -0.0 is in [0.0, 1.0]); see `bits_of`."""
        if self.is_float:
            if self.values is None and self.range is None:
                return True
            bits = self.bits_of(value)
            if self.values is not None:
                return bits in self.value_bits()
            lo, hi = self.float_bounds()
            return lo <= float_value(self.type, bits) <= hi
        if isinstance(value, (float, np.floating)) or not isinstance(value, (int, np.integer)):
            return False
        v = int(value)
        lo, hi = int_bounds(self.type)
        if not lo <= v <= hi:
            return False
        if self.values is not None:
            return v in self.values
        if self.range is not None:
            return self.range[0] <= v <= self.range[1]
        return True

    def bits_of(self, value) -> int:
        """The bit pattern of a float scalar value as keq passes it: a numpy float of the
        param's type as it stands; a bf16 integer is already a bit pattern (numpy has no
        bf16: keq carries bf16 as uint16 bits); any other number rounded to the type."""
        if isinstance(value, np.floating) and value.dtype == self.dtype:
            return int(np.array([value]).view(f"u{self.dtype.itemsize}")[0])
        if self.type == "bf16" and isinstance(value, (int, np.integer)) \
                and not isinstance(value, bool):
            return int(value) & 0xFFFF
        return float_bits(self.type, value)

    def only_value(self):
        """The one value the claim allows this scalar, or None: an int, or a float of the
        type (a float range [x, x] allows one value unless x is a zero: -0.0 and 0.0 both
        lie in [0.0, 0.0])."""
        if self.values is not None and len(self.values) == 1:
            v = self.values[0]
        elif self.range is not None and self.range[0] == self.range[1]:
            v = self.range[0]
            if self.is_float and float(v) == 0.0:
                return None
        else:
            return None
        if not self.is_float:
            return int(v)
        if self.type == "bf16":
            return float_bits(self.type, v)          # (keq carries bf16 as its bits)
        return np.array([float_value(self.type, float_bits(self.type, v))],
                        dtype=self.dtype)[0]

    def value_bits(self) -> tuple[int, ...]:
        """A float scalar's `values` as bit patterns, each rounded to the type."""
        return tuple(float_bits(self.type, x) for x in self.values or ())

    def float_bounds(self) -> tuple[float, float]:
        """A float scalar's `range` with both ends rounded to the type (exact as floats): the
        range the claim covers is the type's values between them."""
        lo, hi = self.range if self.range is not None else (-math.inf, math.inf)
        return (float_value(self.type, float_bits(self.type, lo)),
                float_value(self.type, float_bits(self.type, hi)))

    def describe_domain(self) -> str:
        if self.values is not None:
            return f"one of {list(self.values)}"
        if self.range is not None:
            return f"in [{self.range[0]}, {self.range[1]}]"
        if self.is_float:
            return f"any {self.type}"
        lo, hi = int_bounds(self.type)
        return f"in [{lo}, {hi}] ({self.type})"


@dataclass(frozen=True)
class Side:
    role: str                           # "reference" | "candidate"
    ptx: Path                           # resolved against the TOML's directory
    kernel: str
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    args: tuple[str, ...] | None = None
    sass: Path | None = None
    dynamic_shared: int = 0             # bytes of dynamic (extern .shared) memory per CTA
    arg_names: tuple[str, ...] = ()     # spec param names in .entry order (args or all)
    module: Any = field(default=None, repr=False, compare=False)   # the parsed PTX Module
    # "ptx", or "sass"/"cubin" for a side given as SASS (then `ptx` is that file's path and
    # `module` the parsed `semantics.sass.SassModule`)
    isa: str = "ptx"
    param_types: tuple[str, ...] = ()   # SASS sides: each kernel parameter's type, in order
    read_only: frozenset[str] = frozenset()   # spec names of the `in` buffers it is passed
    # texture and surface params it is passed: (.entry parameter index, `ViewSpec`); the
    # parameter's slot in `arg_names` holds the buffer the object is over
    views: tuple[tuple[int, Any], ...] = ()
    # The launches that follow this one on the same side, in order (`[[reference.then]]`):
    # a side of several kernels (mean, then variance, then normalize); each is a Side of
    # one launch, and the buffers each leaves are the next one's (`verifier.launches`)
    then: tuple["Side", ...] = ()
    # a `then` launch made with programmatic stream serialization (PDL: `programmatic = true`),
    # which may start before the launch before it ends (`semantics.machine.grid_dependency`)
    programmatic: bool = False

    @property
    def launches(self) -> tuple["Side", ...]:
        """Every launch of this side, in order (this one first, without its `then`)."""
        if not self.then:
            return (self,)
        return (replace(self, then=()),) + self.then

    def views_at(self, scalars: Mapping[str, int]) -> dict:
        """The texture and surface objects of a launch at one shape, by parameter index."""
        return {i: v.at(scalars) for i, v in self.views}

    def views_over(self, env64: Mapping[str, Any]) -> dict:
        """The same over a symbolic launch (`verifier.spec.views.ViewSpec.over`)."""
        return {i: v.over(env64) for i, v in self.views}

    def launch(self, scalars: Mapping[str, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        def dims(exprs: tuple[Expr, ...], what: str) -> tuple[int, int, int]:
            vals = [e.eval(scalars) for e in exprs]
            for e, v in zip(exprs, vals):
                if v < 1:
                    env = ", ".join(f"{k}={scalars[k]}" for k in sorted(e.names))
                    raise e._error(f"[{self.role}] {what} dimension {e.text!r} is {v} "
                                   f"(must be >= 1)" + (f" at {env}" if env else ""))
            return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]
        return dims(self.grid, "grid"), dims(self.block, "block")

    def kernel_args(self, values: Mapping[str, Any]) -> list:
        """Values (by spec param name) in this kernel's .entry parameter order."""
        return [values[n] for n in self.arg_names]

    def read_only_params(self, kparams) -> frozenset[str]:
        """The kernel parameters (its own names, `kparams` in .entry order) bound to `in`
        buffers: the claim says the kernel only reads them, so a write into one faults."""
        return frozenset(kp.name for n, kp in zip(self.arg_names, kparams) if n in self.read_only)


@dataclass(frozen=True)
class PairSpec:
    path: Path
    name: str
    mode: str
    expect: str
    assume: tuple[Expr, ...]
    description: str
    reference: Side
    candidate: Side
    params: tuple[ParamSpec, ...]
    # Named relaxations of the claim and assumptions about the target GPU (`CLAIM_NAMES`)
    allow: tuple[str, ...] = ()
    target_assumptions: tuple[str, ...] = ()
    arch: str = ""                      # the claim's `arch` ("": not named, DEFAULT_ARCH)
    views: tuple[Any, ...] = ()         # texture and surface params (`ViewSpec`), in order

    def side(self, role: str) -> Side:
        if role not in ("reference", "candidate"):
            raise KeqError(f"no side {role!r} (reference or candidate)")
        return self.reference if role == "reference" else self.candidate

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def scalars(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.is_scalar)

    @property
    def buffers(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.is_buffer)

    def check_assumptions(self, scalars: Mapping[str, Any]) -> bool:
        """True when every scalar is in its range/values and every `assume` holds."""
        for p in self.scalars:
            if p.name in scalars and not p.allows(scalars[p.name]):
                return False
        return all(a.eval(scalars) for a in self.assume)

    def failed_assumption(self, scalars: Mapping[str, Any]) -> Expr | None:
        for a in self.assume:
            if not a.eval(scalars):
                return a
        return None
