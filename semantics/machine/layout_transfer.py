"""The transfer function of the pointer-provenance analysis (`layout_taint`): what one
instruction does to the provenance of the registers it writes, and whether it makes an
address's numeric value observable (a finding). The rules are in `layout_taint`'s docstring."""

from __future__ import annotations

from semantics.ir.operands import Addr, IntImm, OperandList, Reg, Sym, Vec
from semantics.machine.layout_prov import (EXCHANGE, MANGLE, NONE, Prov, dests, has_dest, join,
                                           mangled, single)


class _Step:
    """One instruction in one state: operand values, guarded writes, findings."""

    def __init__(self, an, f, ins, state: dict, report) -> None:
        self.an, self.f, self.ins, self.state, self.report = an, f, ins, state, report
        self.ops = ins.operands

    def val(self, i: int) -> Prov:
        return self.an.value(self.f, self.ops[i], self.state) if i < len(self.ops) else NONE

    def put(self, key, p: Prov) -> None:
        # a guarded write may not happen: the old value stays possible
        self.state[key] = join(self.state.get(key), p) if self.ins.guard is not None else p

    def write(self, op, p: Prov) -> None:
        for r in dests(op):
            self.put((r.name, r.scope), p)

    def flag(self, what: str, p: Prov) -> None:
        if self.report is not None:
            self.report(f"{what} ('{self.ins.form.name}', {self.an.describe(p)})")

    def floating(self) -> bool:
        return any(t.kind == "f" for t in self.ins.form.types)


def step(an, f, idx: int, state: dict, report) -> None:
    """Apply instruction `idx` of `f` to `state`; `report(idx, message)` each finding."""
    ins = f.k.instrs[idx]
    s = _Step(an, f, ins, state, None if report is None else (lambda m: report(idx, m)))
    op = ins.opcode
    if op in MANGLE or "cc" in ins.form.mods:
        return _mangle(s)
    _HANDLERS.get(op, _unmodelled)(s)


def _uses(s: _Step, start: int) -> list[Prov]:
    """Values of the operands from `start` that are data (address operands are accesses)."""
    out = []
    for op in s.ops[start:]:
        if isinstance(op, Vec):
            out += [s.an.value(s.f, e, s.state) for e in op.elems]
        elif not isinstance(op, (Addr, OperandList)):
            out.append(s.an.value(s.f, op, s.state))
    return out


def _union(ps: list[Prov]) -> Prov:
    return Prov(frozenset().union(*(p.bases for p in ps))) if ps else NONE


def _mangle(s: _Step) -> None:
    if has_dest(s.ins):
        s.write(s.ops[0], mangled(*_uses(s, 1)))


def _unmodelled(s: _Step) -> None:
    """Sound for any instruction: an address it reads is a finding; it writes none."""
    start = 1 if has_dest(s.ins) else 0
    seen = [p for p in _uses(s, start) if p.bases]
    if seen:
        s.flag("an instruction the layout analysis does not model", _union(seen))
    if start:
        s.write(s.ops[0], NONE)


def _nothing(s: _Step) -> None:
    pass


def _mov(s: _Step) -> None:
    dst, src = s.ops[0], s.ops[1]
    p = s.val(1)
    if isinstance(dst, Vec) or isinstance(src, Vec):
        p = mangled(p)           # halves of an address, or an address from halves
    s.write(dst, p)


def _cvta(s: _Step) -> None:
    s.write(s.ops[0], s.val(1))   # adds or removes a window base: still that address


def _add(s: _Step) -> None:
    a, b = s.val(1), s.val(2)
    if s.floating():
        return s.write(s.ops[0], mangled(a, b))
    if a.bases and b.bases:
        s.flag("an addition of two addresses", _union([a, b]))
        return s.write(s.ops[0], NONE)
    s.write(s.ops[0], a if a.bases else b)


def _sub(s: _Step) -> None:
    a, b = s.val(1), s.val(2)
    if s.floating():
        return s.write(s.ops[0], mangled(a, b))
    if a.bases and b.bases:
        same = len(a.bases) == 1 and a.bases == b.bases and not (a.mangled or b.mangled)
        if not same:
            s.flag("a subtraction of addresses of different buffers or variables",
                   _union([a, b]))
        return s.write(s.ops[0], NONE)        # (p - q within one buffer: an offset)
    s.write(s.ops[0], a if a.bases else mangled(b))


def _mad(s: _Step) -> None:
    prod, c = mangled(s.val(1), s.val(2)), s.val(3)
    if "hi" in s.ins.form.mods or s.floating():
        return s.write(s.ops[0], mangled(prod, c))
    if prod.bases and c.bases:
        s.flag("an addition of two addresses", _union([prod, c]))
        return s.write(s.ops[0], NONE)
    s.write(s.ops[0], prod if prod.bases else c)


def _low_mask(m: int) -> int | None:
    """m + 1 when `m` is 2^k - 1, else None."""
    return m + 1 if m >= 0 and (m + 1) & m == 0 else None


def _and(s: _Step) -> None:
    t = s.ins.form.types[0] if s.ins.form.types else None
    if t is None or t.kind == "pred":
        return s.write(s.ops[0], NONE)
    imm = [op for op in s.ops[1:3] if isinstance(op, IntImm)]
    vals = [s.val(i) for i in (1, 2) if not isinstance(s.ops[i], IntImm)]
    if len(imm) != 1 or len(vals) != 1 or not vals[0].bases or vals[0].mangled:
        return s.write(s.ops[0], mangled(*vals))
    p, full = vals[0], (1 << t.bits) - 1
    m = imm[0].value & full
    aligns = [s.an.align_of(b) for b in p.bases]
    low, high = _low_mask(m), _low_mask(~m & full)
    if low is not None and all(a % low == 0 for a in aligns):
        return s.write(s.ops[0], NONE)        # the offset's low bits: the base's are zero
    if high is not None and all(a % high == 0 for a in aligns):
        return s.write(s.ops[0], p)           # aligned down: still base + offset
    s.write(s.ops[0], mangled(p))


def _compare(s: _Step, a: Prov, b: Prov) -> bool:
    """Is comparing `a` with `b` layout independent? (Flags it when not.)"""
    if not (a.bases or b.bases):
        return True
    if single(a, b) and not s.floating():
        return True
    s.flag("a comparison", _union([a, b]))
    return False


def _setp(s: _Step) -> None:
    _compare(s, s.val(1), s.val(2))
    s.write(s.ops[0], NONE)


def _minmax(s: _Step) -> None:
    a, b = s.val(1), s.val(2)
    s.write(s.ops[0], join(a, b) if _compare(s, a, b) and a.bases else NONE)


def _selp(s: _Step) -> None:
    s.write(s.ops[0], join(s.val(1), s.val(2)))


def _slct(s: _Step) -> None:
    c = s.val(3)
    if c.bases:
        s.flag("a comparison", c)
    s.write(s.ops[0], join(s.val(1), s.val(2)))


def _cvt(s: _Step) -> None:
    p = s.val(1)
    types = s.ins.form.types
    if not p.bases or len(types) < 2 or len(s.ops) != 2:
        return s.write(s.ops[0], mangled(*_uses(s, 1)))
    dst, src = types[0], types[1]
    if dst.kind == "f" or src.kind == "f" or "sat" in s.ins.form.mods:
        return s.write(s.ops[0], mangled(p))
    if dst.bits < src.bits:
        return s.write(s.ops[0], Prov(p.bases, p.mangled, True, p.partial))   # low bits
    if dst.bits > src.bits and src.kind == "s":
        return s.write(s.ops[0], mangled(p))                      # sign extension
    s.write(s.ops[0], p)


def _ld(s: _Step) -> None:
    if s.ins.form.space != "param":
        return s.write(s.ops[0], NONE)        # data: memory holds no address keq stored
    p = s.an.param_load(s.f, s.ins)
    if not p.bases:
        src = s.ops[1] if len(s.ops) > 1 else None
        if isinstance(src, Addr) and isinstance(src.base, Sym):
            p = s.state.get(("slot", src.base.name)) or NONE    # a call's result
    s.write(s.ops[0], mangled(p) if isinstance(s.ops[0], Vec) else p)


def _st(s: _Step) -> None:
    data = _union([p for p in _uses(s, 1)])
    carried = [p for p in _uses(s, 1) if p.bases]
    target = s.ops[0] if s.ops else None
    if s.ins.form.space == "param" and isinstance(target, Addr) and \
            isinstance(target.base, Sym) and target.base.name not in s.f.params:
        p = carried[0] if len(carried) == 1 and target.offset == 0 and \
            not isinstance(s.ops[1], Vec) else mangled(*carried) if carried else NONE
        name = target.base.name
        if name in s.f.returns:
            return s.an.give_back(s.f, name, p)           # a result, passed to the caller
        return s.put(("slot", name), p)                   # an argument of a coming call
    if data.bases:
        s.flag("a store to memory", data)


def _atom(s: _Step) -> None:
    start = 2 if s.ins.opcode == "atom" else 1
    seen = [p for p in _uses(s, start) if p.bases]
    if seen:
        s.flag("an atomic operation's operand", _union(seen))
    if s.ins.opcode == "atom":
        s.write(s.ops[0], NONE)


def _exchange(s: _Step) -> None:
    seen = [p for p in _uses(s, 1) if p.bases]
    if seen:
        s.flag("a warp-level exchange", _union(seen))
    s.write(s.ops[0], NONE)


def _call(s: _Step) -> None:
    at = next((i for i, op in enumerate(s.ops) if isinstance(op, Sym)), None)
    callee = s.an.funcs.get(s.ops[at].name) if at is not None else None
    if callee is None:
        return _unmodelled(s)
    rets = s.ops[at - 1].items if at > 0 and isinstance(s.ops[at - 1], OperandList) else ()
    args = s.ops[at + 1].items if at + 1 < len(s.ops) and \
        isinstance(s.ops[at + 1], OperandList) else ()
    for p, a in zip(callee.k.fn.params, args):
        v = (s.state.get(("slot", a.name)) or NONE) if isinstance(a, Sym) else \
            s.an.value(s.f, a, s.state)
        s.an.pass_in(callee.k.name, p.name, v)
    for r, p in zip(rets, callee.k.fn.returns):
        if isinstance(r, Sym):
            s.put(("slot", r.name), callee.ret_out.get(p.name, NONE))
        elif isinstance(r, Reg):
            s.put((r.name, r.scope), callee.ret_out.get(p.name, NONE))


_HANDLERS = {"mov": _mov, "cvta": _cvta, "add": _add, "sub": _sub, "mad": _mad, "and": _and,
             "setp": _setp, "set": _setp, "min": _minmax, "max": _minmax, "selp": _selp,
             "slct": _slct, "cvt": _cvt, "ld": _ld, "ldu": _ld, "st": _st, "atom": _atom,
             "red": _atom, "call": _call, "bra": _nothing, "ret": _nothing,
             "exit": _nothing, "trap": _nothing, **{op: _exchange for op in EXCHANGE}}

__all__ = ["step"]
