"""Device `printf` formats: which bytes of the argument buffer a format reads, and the text
it prints.

nvcc packs a `printf`'s arguments into a local buffer, each at its natural alignment (an
`int` in 4 bytes, a `double` in 8: C's default promotions turn `float` into `double` and
`char`/`short` into `int`), and passes its address to `vprintf`. The CUDA runtime formats
the text on the host, reading the buffer as the format string says (CUDA C++ Programming
Guide, "Formatted Output"). So what a call prints is a function of the format string and
the bytes it consumes, which is what keq compares (`Conversion` says how many and how
each is read).

Rendering (the emulator's text, used to show and replay a difference) follows C's printf as
glibc formats it; `%a` is rendered by Python's `float.hex`, which prints the same value in
another spelling (equal values print equal text either way, which is all a comparison
needs). Conversions keq does not compare: `%s` (the text lives at an address), `%p` (an
address), `%n` (a write) and anything it cannot parse: the call is then a `printf` effect,
Inconclusive unless the claim ignores what kernels print.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

# %[flags][width][.precision][length]conversion
_SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
                   r"(?P<length>hh|h|ll|l|L|j|z|t)?(?P<conv>[diouxXcfFeEgGaAspn%])")
_INTS = "diouxXc"
_FLOATS = "fFeEgGaA"


@dataclass(frozen=True)
class Conversion:
    """One `%...` of a format: the bytes it reads at `offset` of the argument buffer."""

    text: str            # as written, e.g. "%-08.3f"
    conv: str            # the conversion letter
    flags: str
    width: str | None    # digits, "*" or None
    prec: str | None
    length: str
    stars: tuple[int, ...] = ()    # offsets of the int arguments `*` reads
    offset: int = 0
    size: int = 0                  # 0 for %%

    @property
    def is_float(self) -> bool:
        return self.conv in _FLOATS

    @property
    def bits(self) -> int:
        """How many low bits of the argument the text depends on."""
        if self.conv == "c" or self.length == "hh":
            return 8
        if self.length == "h":
            return 16
        return self.size * 8


@dataclass(frozen=True)
class PrintFormat:
    """A parsed format string: literal pieces and conversions in order, or why keq does not
    compare it (`unsupported`)."""

    text: str
    pieces: tuple[str | Conversion, ...]
    unsupported: str | None = None

    @property
    def conversions(self) -> tuple[Conversion, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Conversion) and p.size)

    def reads(self) -> tuple[tuple[int, int], ...]:
        """(offset, size) of every argument the format reads, in order (`*`s included)."""
        out = []
        for c in self.conversions:
            out.extend((o, 4) for o in c.stars)
            out.append((c.offset, c.size))
        return tuple(out)


def _align(off: int, n: int) -> int:
    return (off + n - 1) // n * n


def parse_format(text: str) -> PrintFormat:
    """`text` parsed into pieces, each argument placed in the buffer as nvcc packs it."""
    pieces: list[str | Conversion] = []
    pos = off = 0
    while True:
        k = text.find("%", pos)
        if k < 0:
            pieces.append(text[pos:])
            break
        pieces.append(text[pos:k])
        m = _SPEC.match(text, k)
        if m is None:
            return PrintFormat(text, tuple(pieces), f"'{text[k:k + 4]}...' is not a "
                               f"conversion keq reads")
        g = m.groupdict()
        conv, length = g["conv"], g["length"] or ""
        if conv in "spn":
            return PrintFormat(text, tuple(pieces), f"'%{conv}' prints what lives at an "
                               f"address (not compared)")
        if conv == "c" and length:
            return PrintFormat(text, tuple(pieces), f"'{m.group(0)}' prints a wide character "
                               f"(not compared)")
        stars = []
        for part in (g["width"], g["prec"]):
            if part == "*":
                off = _align(off, 4)
                stars.append(off)
                off += 4
        size = 0
        if conv in _INTS:
            size = 8 if length in ("l", "ll", "j", "z", "t") else 4
        elif conv in _FLOATS:
            size = 8          # float is promoted to double; long double is double on the GPU
        if size:
            off = _align(off, size)
        pieces.append(Conversion(m.group(0), conv, g["flags"], g["width"], g["prec"], length,
                                 tuple(stars), off, size))
        off += size
        pos = m.end()
    return PrintFormat(text, tuple(p for p in pieces if p != ""))


def render(fmt: PrintFormat, buffer: dict[int, int]) -> str:
    """The text the call prints, `buffer[offset]` holding the raw bits of each argument
    `fmt.reads()` names."""
    out = []
    for p in fmt.pieces:
        if isinstance(p, str):
            out.append(p)
        elif p.conv == "%":
            out.append("%")
        else:
            out.append(_one(p, buffer))
    return "".join(out)


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _one(c: Conversion, buffer: dict[int, int]) -> str:
    width, prec = c.width, c.prec
    stars = iter(c.stars)
    flags = c.flags
    if width == "*":
        w = _signed(buffer[next(stars)], 32)
        flags, width = (flags + "-", str(-w)) if w < 0 else (flags, str(w))
    if prec == "*":
        p = _signed(buffer[next(stars)], 32)
        prec = None if p < 0 else str(p)
    spec = "%" + flags + (width or "") + ("" if prec is None else "." + (prec or "0"))
    raw = buffer[c.offset]
    if c.conv == "c":
        return (spec + "c") % chr(raw & 0xFF)
    if c.conv in _INTS:
        bits = c.bits
        v = _signed(raw, bits) if c.conv in "di" else raw & ((1 << bits) - 1)
        if "#" in flags and (c.conv == "o" or v == 0):
            # C's alternate octal makes the first digit 0 (Python's writes "0o"), and
            # neither alternate form prefixes a zero
            if c.conv == "o" and v:
                prec = str(max(int(prec or 1), len(f"{v:o}") + 1))
            spec = "%" + flags.replace("#", "") + (width or "") + \
                ("" if prec is None else "." + (prec or "0"))
        return (spec + ("d" if c.conv in "diu" else c.conv)) % v
    f = struct.unpack("<d", struct.pack("<Q", raw & (1 << 64) - 1))[0]
    if math.isnan(f) or math.isinf(f):
        sign = "-" if raw >> 63 else "+" if "+" in flags else " " if " " in flags else ""
        text = sign + ("nan" if math.isnan(f) else "inf")
        text = text.upper() if c.conv.isupper() else text
        pad = "%" + ("-" if "-" in flags else "") + (width or "") + "s"   # (spaces only)
        return pad % text
    if c.conv in "aA":
        text = f.hex()
        return text.upper() if c.conv == "A" else text
    return (spec + c.conv) % f


__all__ = ["Conversion", "PrintFormat", "parse_format", "render"]
