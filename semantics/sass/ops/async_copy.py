"""Asynchronous global-to-shared copies in SASS: LDGSTS, LDGDEPBAR and DEPBAR.LE SB0, each
the PTX instruction it implements, run through the PTX semantics (`ptxcall.call`), so when a
copy lands, what reading its bytes early means (a race) and the zero fill are PTX's
(semantics/ops/async_copy.py).

| SASS | PTX |
|---|---|
| LDGSTS.E{,.64,.128} [d], [s] | cp.async.ca.shared.global [d], [s], 4 / 8 / 16 |
| LDGSTS.E.BYPASS.128 [d], [s] | cp.async.cg.shared.global [d], [s], 16 |
| LDGSTS... [d], [s], P | the same with ignore-src = !P (P false: 16 zero bytes, nothing read) |
| LDGSTS...ZFILL [d], [s], P | the same with src-size = P ? cp-size - (s % cp-size) : 0, from s - s % cp-size |
| LDGDEPBAR | cp.async.commit_group |
| DEPBAR.LE SB0, N | cp.async.wait_group N |

ASSUMPTIONS (no NVIDIA document describes SASS; these readings are inferred from what ptxas
13 emits for the PTX forms on the right, and translation validation of the tests' kernels
checks that ptxas' lowering means the PTX under them):
- A trailing predicate P says whether the source is read: ptxas lowers `cp.async ..., 16,
  sz` with `sz` 0 or 16 to `LDGSTS... , !P0` where P0 = (sz == 0).
- `.ZFILL`: the low bits of the source address (below cp-size, which the aligned source
  leaves free) count the bytes to zero at the end: ptxas lowers a variable src-size `sz` to
  `LDGSTS...ZFILL [d], [s + ((cp-size - sz) % cp-size)], P` with P = (sz != 0).
- Scoreboard SB0 counts the LDGDEPBAR groups in flight; DEPBAR on another scoreboard, or with
  a list of scoreboards, waits on something else and is refused by name.
- `.LTC128B` (an L2 prefetch size, PTX's .L2::128B) and `desc[URx]` choose caching, not
  values. `.BYPASS` (PTX's .cg: bypass L1) likewise, but PTX allows .cg with cp-size 16 only,
  so it is refused with another size.
"""

from __future__ import annotations

from semantics.ir.operands import IntImm, Sym
from semantics.sass.operands import SassReg
from semantics.sass.ops import register
from semantics.sass.ops.access import address, fail, parts, pred_value
from semantics.sass.ops.memory import shared_addr
from semantics.sass.ops.ptxcall import Address, Imm, Pred, call

_SIZES = {None: 4, "64": 8, "128": 16}
_HINTS = frozenset(("LTC128B",))


def _ldgsts(size: int, bypass: bool, zfill: bool, hint: bool):
    name = f"cp.async.{'cg' if bypass else 'ca'}.shared.global{'.L2::128B' if hint else ''}"

    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) not in (2, 3):
            fail(x, "expected LDGSTS [d], [s] with an optional predicate")
        if len(ops) == 3:
            base, _ = parts(ops[2])
            if not isinstance(base, SassReg) or not base.is_predicate:
                fail(x, f"the third operand '{ops[2]}' must be a predicate")
        d = x.d
        dst, src = shared_addr(x, 0), address(x, 1, wide=True)
        read = pred_value(x, ops[2]) if len(ops) == 3 else d.pconst(True)
        args = [Address(dst), Address(src), Imm(size)]
        if zfill:
            low = d.band(src, d.const(size - 1, 64), 64)
            src = d.sub(src, low, 64)
            kept = d.sub(d.const(size, 32), d.extract(low, 31, 0, 64), 32)
            args = [Address(dst), Address(src), Imm(size),
                    d.ite(read, kept, d.const(0, 32), 32)]
        elif len(ops) == 3:
            args.append(Pred(d.pnot(read)))
        call(x, name, args)
    return sem


@register("LDGSTS")
def _resolve_ldgsts(form):
    mods = list(form.mods)
    if not mods or mods[0] != "E":
        return None
    rest = mods[1:]
    bypass, zfill = "BYPASS" in rest, "ZFILL" in rest
    hint = any(m in _HINTS for m in rest)
    sizes = [m for m in rest if m in ("64", "128")]
    if len(sizes) > 1 or set(rest) - {"BYPASS", "ZFILL", "64", "128"} - _HINTS:
        return None
    size = _SIZES[sizes[0] if sizes else None]
    if bypass and size != 16:
        return None
    return _ldgsts(size, bypass, zfill, hint)


def _ldgdepbar(x) -> None:
    if x.ins.operands:
        fail(x, "LDGDEPBAR takes no operands")
    call(x, "cp.async.commit_group", [])


def _depbar(x) -> None:
    ops = x.ins.operands
    if len(ops) != 2 or not isinstance(ops[0], Sym) or ops[0].name != "SB0" or \
            not isinstance(ops[1], IntImm):
        fail(x, f"only DEPBAR.LE SB0, N (cp.async.wait_group N) is modelled, not "
                f"{', '.join(map(str, ops))}")
    call(x, "cp.async.wait_group", [Imm(ops[1].value)])


@register("LDGDEPBAR")
def _resolve_ldgdepbar(form):
    return _ldgdepbar if not form.mods else None


@register("DEPBAR")
def _resolve_depbar(form):
    return _depbar if list(form.mods) == ["LE"] else None
