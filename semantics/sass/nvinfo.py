"""Kernel metadata from the `.nv.info` sections of an nvdisasm listing.

nvdisasm prints each EIATTR attribute as a `//----- nvinfo : EIATTR_NAME` comment followed by
data directives. The parser turns those directives into the attribute's bytes (symbolic
values such as `index@(k)` or `(.L_9 - .L_8)` become zeros of their width, the symbol kept);
this module decodes the few attributes keq needs:

- EIATTR_KPARAM_INFO (one per parameter): u32 index, u16 ordinal, u16 offset, u32 flags, the
  parameter's size in bytes in bits 18..31 of the flags;
- EIATTR_PARAM_CBANK: u32 index@(.nv.constant<bank>.<kernel>), u16 base, u16 size: the
  parameters occupy `c[bank][base .. base+size)` (0x210 on sm_90, 0x160 on sm_80);
- EIATTR_REGCOUNT (in the shared `.nv.info`): u32 index@(function), u32 registers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from semantics.errors import SourceLoc
from semantics.sass.lexer import SassSyntaxError
from semantics.sass.nodes import KParam, ParamCbank

_CONST_SECTION = re.compile(r"\.nv\.constant([0-9]+)\.")


@dataclass
class Attr:
    """One EIATTR entry as read: its name, bytes (format, id, [size], payload), the symbols
    its `index@(...)` values named, and where its header comment was."""

    name: str
    loc: SourceLoc
    line_text: str
    data: bytearray = field(default_factory=bytearray)
    symbols: list[str] = field(default_factory=list)

    def payload(self, need: int) -> bytes:
        """The bytes after the 4-byte header (format, id, u16 size); at least `need`."""
        body = bytes(self.data[4:])
        if len(body) < need:
            raise SassSyntaxError(f"{self.name} needs {need} bytes of data, found {len(body)}",
                                  self.loc, self.line_text)
        return body


def _u(b: bytes, at: int, n: int) -> int:
    return int.from_bytes(b[at:at + n], "little")


def kparams(attrs: list[Attr]) -> tuple[KParam, ...]:
    """The parameters, in ordinal order (nvdisasm lists them last to first)."""
    out: dict[int, KParam] = {}
    for a in attrs:
        if a.name != "EIATTR_KPARAM_INFO":
            continue
        b = a.payload(12)
        ordinal, offset, flags = _u(b, 4, 2), _u(b, 6, 2), _u(b, 8, 4)
        if ordinal in out:
            raise SassSyntaxError(f"parameter {ordinal} described twice", a.loc, a.line_text)
        out[ordinal] = KParam(ordinal, offset, (flags >> 18) & 0x3FFF, flags)
    return tuple(out[k] for k in sorted(out))


def param_cbank(attrs: list[Attr]) -> ParamCbank | None:
    for a in attrs:
        if a.name != "EIATTR_PARAM_CBANK":
            continue
        b = a.payload(8)
        bank = 0
        for s in a.symbols:
            m = _CONST_SECTION.match(s)
            if m:
                bank = int(m.group(1))
        return ParamCbank(bank, _u(b, 4, 2), _u(b, 6, 2))
    return None


def regcounts(attrs: list[Attr]) -> dict[str, int]:
    """Function name -> register count, from the module-wide `.nv.info` section."""
    out: dict[str, int] = {}
    for a in attrs:
        if a.name == "EIATTR_REGCOUNT" and a.symbols:
            out[a.symbols[0]] = _u(a.payload(8), 4, 4)
    return out
