"""How often each register is named in a kernel's code: a register named once, by the
instruction that writes it, is never read (nvcc leaves such dead loads, e.g. of the result of
`vprintf`)."""

from __future__ import annotations

from semantics.ir.operands import Reg

_MENTIONS: dict[int, tuple] = {}


def mentions(instrs) -> dict:
    """How many operand positions (guards included) name each register in `instrs`
    (cached per instruction list)."""
    hit = _MENTIONS.get(id(instrs))
    if hit is not None and hit[0] is instrs:
        return hit[1]
    count: dict = {}

    def walk(op) -> None:
        if isinstance(op, Reg):
            count[op] = count.get(op, 0) + 1
        for sub in getattr(op, "elems", ()) or getattr(op, "items", ()):
            walk(sub)
        base = getattr(op, "base", None)
        if isinstance(base, Reg):
            walk(base)
    for ins in instrs:
        for op in getattr(ins, "operands", ()):
            walk(op)
        guard = getattr(ins, "guard", None)
        if guard is not None:
            walk(guard.reg)
    _MENTIONS[id(instrs)] = (instrs, count)
    return count


__all__ = ["mentions"]
