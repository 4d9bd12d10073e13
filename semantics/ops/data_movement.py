"""mov and cvta: moving values and converting addresses between state spaces."""

from __future__ import annotations

from semantics.ir.operands import Sym, Vec
from semantics.machine.memory import LOCAL_WINDOW, SHARED_WINDOW
from semantics.ops import register

_WINDOWS = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "global": 0}


def _mov(x) -> None:
    t = x.form.type
    dst, src = x.operand(0), x.operand(1)
    if t.kind == "pred":
        x.write_pred(0, x.read_pred(1))
        return
    if isinstance(dst, Vec):            # mov.b64 {%r1, %r2}, %rd1: unpack
        v = x.read(1, t)
        w = t.bits // len(dst.elems)
        for k, e in enumerate(dst.elems):
            x.write(e, x.d.extract(v, (k + 1) * w - 1, k * w, t.bits), _bits(w))
        return
    if isinstance(src, Vec):            # mov.b64 %rd1, {%r1, %r2}: pack
        w = t.bits // len(src.elems)
        acc = None
        for k, e in enumerate(src.elems):
            v = x.read(e, _bits(w))
            acc = v if acc is None else x.d.concat(v, acc, w, w * k)
        x.write(0, acc, t)
        return
    if isinstance(src, Sym) and x.space_of_symbol(src.name) not in ("param",):
        # mov of a variable's name yields its address in its own state space.
        x.write(0, x.d.const(x.symbol_address(src.name), t.bits), t)
        return
    x.write(0, x.read(1, t), t)


def _bits(w: int):
    from semantics.ir.types import TYPES
    return TYPES[f"b{w}"]


@register("mov")
def _resolve_mov(form):
    return _mov if not form.flags and form.vec == 1 else None


def _cvta(x) -> None:
    """cvta.space: space address -> generic; cvta.to.space: generic -> space address."""
    t = x.form.type
    space = x.form.space
    base = x.d.const(_WINDOWS[space], t.bits)
    v = x.read(1, t)
    if x.form.has("to"):
        x.write(0, x.d.sub(v, base, t.bits), t)
    else:
        x.write(0, x.d.add(v, base, t.bits), t)


@register("cvta")
def _resolve_cvta(form):
    if form.space not in _WINDOWS or not form.flags <= {"to", "shared::cta"}:
        return None
    return _cvta
