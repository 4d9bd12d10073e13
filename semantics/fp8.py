"""The two 8-bit floating-point formats of sm_89+ (PTX ISA 5.2.5 "Alternate Floating-Point
Data Formats": .e4m3 and .e5m2), described once for everything that reads or writes them:
`cvt` (semantics/ops/convert_fp8.py, over a Domain) and the tensor-core model
(semantics/tensor_core.py, exact on the emulator).

- e5m2: 1 sign, 5 exponent (bias 15), 2 fraction bits; IEEE-like: exponent 11111 holds
  ±inf (fraction 0) and NaNs; largest finite value 57344 (0x7B).
- e4m3: 1 sign, 4 exponent (bias 7), 3 fraction bits; NOT IEEE: no infinities, S.1111.111 is
  its only NaN (per sign), the other patterns of exponent 1111 are normal numbers, so the
  largest finite value is 1.75 * 2^8 = 448 (0x7E).
Both have subnormals (exponent 0) and signed zeros.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fp8Format:
    name: str
    ebits: int
    mbits: int                  # fraction bits (the hidden bit not counted)
    has_inf: bool

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def max_finite(self) -> int:
        """The bit pattern of the largest finite value (positive)."""
        top = (1 << self.ebits) - 1
        if self.has_inf:
            return ((top - 1) << self.mbits) | ((1 << self.mbits) - 1)
        return (top << self.mbits) | ((1 << self.mbits) - 2)

    @property
    def nan_bits(self) -> int:
        """The bits every NaN of the format has set (sign excluded): e4m3 its only NaN
        0x7F, e5m2 a quiet NaN (exponent 11111 and the fraction's top bit)."""
        if self.has_inf:
            return (((1 << self.ebits) - 1) << self.mbits) | (1 << (self.mbits - 1))
        return 0x7F

    @property
    def canonical_nan(self) -> int:
        """0x7F for both: the all-ones positive pattern, as the canonical NaNs of f16/f32
        are (the NaN `.relu` returns; cuda_fp8.hpp's host conversion returns it too)."""
        return 0x7F

    def is_nan(self, bits: int) -> bool:
        mag = bits & 0x7F
        if self.has_inf:
            top = (1 << self.ebits) - 1
            return mag >> self.mbits == top and bool(mag & ((1 << self.mbits) - 1))
        return mag == 0x7F

    def decode(self, bits: int) -> tuple[bool, int, int] | str:
        """The exact value of a pattern: (negative, significand, exponent) meaning
        (-1)^negative * significand * 2^exponent, or "nan", "+inf", "-inf"."""
        neg = bool(bits >> 7 & 1)
        e = bits >> self.mbits & ((1 << self.ebits) - 1)
        f = bits & ((1 << self.mbits) - 1)
        if self.is_nan(bits):
            return "nan"
        if self.has_inf and e == (1 << self.ebits) - 1:
            return "-inf" if neg else "+inf"
        sig = f | (1 << self.mbits) if e else f          # subnormals are exact too
        return neg, sig, max(e, 1) - self.bias - self.mbits


E4M3 = Fp8Format("e4m3", 4, 3, has_inf=False)
E5M2 = Fp8Format("e5m2", 5, 2, has_inf=True)
FP8: dict[str, Fp8Format] = {"e4m3": E4M3, "e5m2": E5M2}
