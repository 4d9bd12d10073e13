"""Integer SASS instructions: IMAD (.WIDE .HI .MOV .SHL .IADD .X), IADD3 (.X, carries),
VIADD, LEA (.HI .X .SX32), LOP3.LUT, SHF, ISETP, SEL, IMNMX, POPC, FLO, BREV, PLOP3, P2R,
MOV, CS2R, S2R, and the uniform-datapath twins (UIMAD UIADD3 ULEA USHF ULOP3 USEL UMOV S2UR
UISETP ...), which compute the same functions on uniform registers.

Carry chains (IADD3, LEA, IMAD.X), ASSUMPTIONS from the ISA's description and from the code
ptxas emits for 64-bit arithmetic:
- `-a` in IADD3 is `~a + 1`: the +1 enters the same carry chain, so `IADD3 R, P0, a, -b, RZ`
  sets P0 = (a >= b) unsigned, as a subtract-with-borrow needs; `~a` is a plain inversion.
- With one carry-out predicate it is bit 32 of the full sum, with two the second is bit 33.
- `.X` adds the carry-in predicates (operands after the sources; `!PT` adds 0).
"""

from __future__ import annotations

from semantics.sass.operands import SassReg
from semantics.sass.ops import register
from semantics.sass.ops.access import (
    fail,
    imm,
    int_raw,
    int_src,
    parts,
    pred_value,
    set_pred,
    set_reg,
    set_wide,
    special,
)
from semantics.sass.ops.ptxcall import ptx



def _mods(form) -> set[str]:
    return set(form.mods)


def _preds_then_srcs(x) -> tuple[list, list]:
    """Split operands after the destination into leading predicate outputs and the rest."""
    ops = x.ins.operands
    preds, k = [], 1
    while k < len(ops) and isinstance(parts(ops[k])[0], SassReg) and \
            parts(ops[k])[0].is_predicate:
        preds.append(ops[k])
        k += 1
    return preds, list(range(k, len(ops)))


def _chain_sum(x, srcs: list[int], carry_ins: list, w: int = 32):
    """The (w+2)-bit sum of the sources with `-`/`~` applied in the carry chain, plus the
    carry-in predicates. Returns (sum, width)."""
    d = x.d
    W = w + 2
    total = d.const(0, W)
    for i in srcs:
        v, kind = int_raw(x, i, w)
        if kind in ("-", "~"):
            v = d.bnot(v, w)
        total = d.add(total, d.zext(v, w, W), W)
        if kind == "-":
            total = d.add(total, d.const(1, W), W)
    for p in carry_ins:
        total = d.add(total, d.zext(d.bool_to_bv(pred_value(x, p), 1), 1, W), W)
    return total, W


def _carry_outs(x, preds, total, W: int, w: int = 32) -> None:
    d = x.d
    for k, p in enumerate(preds):
        bit = d.extract(total, w + k, w + k, W)
        set_pred(x, p, d.eq(bit, d.const(1, 1), 1))


# -- IADD3, VIADD ------------------------------------------------------------------------------

def _iadd3(x) -> None:
    d = x.d
    preds, rest = _preds_then_srcs(x)
    X = "X" in x.form.mods
    srcs, cins = (rest[:3], rest[3:]) if X else (rest, [])
    if len(srcs) != 3 or len(preds) > 2 or len(cins) > 2:
        fail(x, "expected IADD3 d, [p, [q,]] a, b, c[, carry-ins]")
    total, W = _chain_sum(x, srcs, [x.ins.operands[i] for i in cins])
    set_reg(x, x.ins.operands[0], d.extract(total, 31, 0, W))
    _carry_outs(x, preds, total, W)


@register("IADD3", "UIADD3")
def _resolve_iadd3(form):
    return _iadd3 if _mods(form) <= {"X"} else None


def _viadd(x) -> None:
    d = x.d
    if len(x.ins.operands) != 3:
        fail(x, "expected VIADD d, a, b")
    set_reg(x, x.ins.operands[0], d.add(int_src(x, 1), int_src(x, 2), 32))


@register("VIADD", "UVIADD")
def _resolve_viadd(form):
    return _viadd if not form.mods else None


# -- IMAD --------------------------------------------------------------------------------------

def _imad(x) -> None:
    """IMAD d, a, b, c[, cin]: d = a*b + c (low 32 bits; signedness does not matter there).
    .X adds a carry-in predicate. IMAD.MOV/.SHL/.IADD/.U32 name the same operation (ptxas'
    idioms for a move, a shift by a power of two, an add)."""
    d = x.d
    ops = x.ins.operands
    X = "X" in x.form.mods
    if len(ops) != (5 if X else 4):
        fail(x, "unexpected operand count")
    r = d.add(d.mul(int_src(x, 1), int_src(x, 2), 32), int_src(x, 3), 32)
    if X:
        r = d.add(r, d.bool_to_bv(pred_value(x, ops[4]), 32), 32)
    set_reg(x, ops[0], r)


def _imad_hi(signed: bool):
    def sem(x) -> None:
        """IMAD.HI d, a, b, c: the high word of the 64-bit ext(a)*ext(b) + c, where c is the
        register PAIR c:c+1 (ptxas' Newton step for division writes `MOV R2, RZ` then
        `IMAD.HI.U32 R3, R3, R9, R2` to compute R3 + umulhi(R3, R9): R3 is the pair's high
        half). The differential tests against the PTX division confirm it."""
        d = x.d
        if len(x.ins.operands) != 4:
            fail(x, "unexpected operand count")
        ext = d.sext if signed else d.zext
        prod = d.mul(ext(int_src(x, 1), 32, 64), ext(int_src(x, 2), 32, 64), 64)
        r = d.add(prod, int_src(x, 3, 64), 64)
        set_reg(x, x.ins.operands[0], d.extract(r, 63, 32, 64))
    return sem


def _imad_wide(signed: bool):
    def sem(x) -> None:
        """IMAD.WIDE[.U32] d, a, b, c: d:d+1 = ext(a) * ext(b) + c, c a 64-bit pair."""
        d = x.d
        if len(x.ins.operands) != 4:
            fail(x, "unexpected operand count")
        ext = d.sext if signed else d.zext
        a, b = ext(int_src(x, 1), 32, 64), ext(int_src(x, 2), 32, 64)
        r = d.add(d.mul(a, b, 64), int_src(x, 3, 64), 64)
        set_wide(x, x.ins.operands[0], r, 64)
    return sem


@register("IMAD", "UIMAD")
def _resolve_imad(form):
    m = _mods(form)
    if "WIDE" in m:
        if m == {"WIDE"}:
            return _imad_wide(True)
        if m == {"WIDE", "U32"}:
            return _imad_wide(False)
        return None
    if "HI" in m:
        if m == {"HI", "U32"}:
            return _imad_hi(False)
        if m == {"HI"}:
            return _imad_hi(True)
        return None
    if m <= {"MOV", "U32"} or m <= {"SHL", "U32"} or m <= {"IADD", "U32"} or m == {"X"}:
        return _imad
    return None


# -- LEA ---------------------------------------------------------------------------------------

def _lea(x) -> None:
    """LEA d, [p,] a, b, s: d = (a << s) + b; p is the carry out of that addition (the low
    half of a 64-bit address computation)."""
    d = x.d
    preds, rest = _preds_then_srcs(x)
    if len(rest) != 3 or len(preds) > 1:
        fail(x, "expected LEA d, [p,] a, b, shift")
    s = imm(x, rest[2])
    a, kind = int_raw(x, rest[0])
    if kind:
        fail(x, "a negated or inverted shifted operand")
    W = 34
    b, kb = int_raw(x, rest[1])
    shifted = d.zext(d.shl(a, d.const(s, 32), 32), 32, W)
    total = d.add(shifted, d.zext(d.bnot(b, 32) if kb else b, 32, W), W)
    if kb == "-":       # -b = ~b + 1 in the carry chain, as in IADD3
        total = d.add(total, d.const(1, W), W)
    set_reg(x, x.ins.operands[0], d.extract(total, 31, 0, W))
    _carry_outs(x, preds, total, W)


def _lea_hi(x) -> None:
    """LEA.HI d, a, b, c, s[, cin]: d = b + high word of ({c:a} << s) [+ cin with .X].
    .SX32: the high source is the sign extension of a (no c operand)."""
    d = x.d
    m = _mods(x.form)
    preds, rest = _preds_then_srcs(x)
    sx = "SX32" in m
    X = "X" in m
    n_src = 3 if sx else 4
    srcs, cins = rest[:n_src], rest[n_src:]
    if len(srcs) != n_src or preds or len(cins) != (1 if X else 0):
        fail(x, "unexpected operands")
    a, kind = int_raw(x, srcs[0])
    if kind:
        fail(x, "a negated or inverted shifted operand")
    b = int_src(x, srcs[1])
    s = imm(x, srcs[-1])
    if sx:
        v = d.sext(a, 32, 64)
    else:
        c, kc = int_raw(x, srcs[2])
        if kc:
            fail(x, "a negated or inverted high operand")
        v = d.concat(c, a, 32, 32)
    hi = d.extract(d.shl(v, d.const(s, 64), 64), 63, 32, 64)
    r = d.add(b, hi, 32)
    if X:
        r = d.add(r, d.bool_to_bv(pred_value(x, x.ins.operands[cins[0]]), 32), 32)
    set_reg(x, x.ins.operands[0], r)


@register("LEA", "ULEA")
def _resolve_lea(form):
    m = _mods(form)
    if not m:
        return _lea
    if "HI" in m and m <= {"HI", "X", "SX32"} and ("SX32" not in m or "X" in m):
        return _lea_hi
    return None


# -- LOP3, PLOP3, SEL, MOV ---------------------------------------------------------------------

def _lop3(x) -> None:
    """LOP3.LUT [p,] d, a, b, c, lut, q: the PTX `lop3.b32` function of a, b, c. The trailing
    predicate must be !PT (no predicate combination); a predicate output is d != 0
    (ASSUMPTION)."""
    ops = x.ins.operands
    pout = None
    first = 0
    if isinstance(parts(ops[0])[0], SassReg) and parts(ops[0])[0].is_predicate:
        pout, first = ops[0], 1
    if len(ops) != first + 6:
        fail(x, "expected LOP3.LUT [p,] d, a, b, c, lut, !PT")
    q = ops[first + 5]
    if str(q) not in ("!PT", "!UPT"):
        fail(x, f"predicate input '{q}' (only !PT is modelled)")
    d = x.d
    a, b, c = (int_src(x, first + k) for k in (1, 2, 3))
    lut = imm(x, first + 4)
    r = ptx(x, "lop3.b32", [a, b, c, lut], static={4: lut})
    set_reg(x, ops[first], r)
    if pout is not None:
        set_pred(x, pout, d.pnot(d.eq(r, d.const(0, 32), 32)))


@register("LOP3", "ULOP3")
def _resolve_lop3(form):
    return _lop3 if form.mods == ("LUT",) else None


def _plop3(x) -> None:
    """PLOP3.LUT p, q, a, b, c, lut_p, lut_q: p = LUT_p(a, b, c), q = LUT_q(a, b, c), with
    the LOP3 minterm order (a = bit 2)."""
    ops = x.ins.operands
    if len(ops) != 7:
        fail(x, "expected PLOP3.LUT p, q, a, b, c, lut, lut")
    d = x.d
    a, b, c = (pred_value(x, ops[k]) for k in (2, 3, 4))
    for dst, lut in ((ops[0], imm(x, 5)), (ops[1], imm(x, 6))):
        out = d.pconst(False)
        for i in range(8):
            if lut >> i & 1:
                term = d.pconst(True)
                for bit, v in ((4, a), (2, b), (1, c)):
                    term = d.pand(term, v if i & bit else d.pnot(v))
                out = d.por(out, term)
        set_pred(x, dst, out)


@register("PLOP3", "UPLOP3")
def _resolve_plop3(form):
    return _plop3 if form.mods == ("LUT",) else None


def _sel(x) -> None:
    """SEL d, a, b, p: d = p ? a : b (PTX selp)."""
    ops = x.ins.operands
    if len(ops) != 4:
        fail(x, "expected SEL d, a, b, p")
    set_reg(x, ops[0], x.d.ite(pred_value(x, ops[3]), int_src(x, 1), int_src(x, 2), 32))


@register("SEL", "USEL")
def _resolve_sel(form):
    return _sel if not form.mods else None


def _mov(x) -> None:
    """MOV d, a[, 0xf]: the optional lane mask must be 0xf (all lanes; nothing else is
    modelled)."""
    ops = x.ins.operands
    if len(ops) == 3 and imm(x, 2) != 0xF:
        fail(x, "a lane mask other than 0xf")
    if len(ops) not in (2, 3):
        fail(x, "expected MOV d, a")
    set_reg(x, ops[0], int_src(x, 1))


@register("MOV", "UMOV", "MOV32I")
def _resolve_mov(form):
    return _mov if not form.mods else None


# -- SHF ---------------------------------------------------------------------------------------

def _shf(x) -> None:
    """SHF.{L,R}[.W].{U32,S32,U64,S64}[.HI] d, lo, s, hi: shift the 64-bit {hi:lo} and keep
    its low word (or the high word with .HI). The amount is clamped to 32 for 32-bit types and
    to 64 for 64-bit types, or taken mod the width with .W (ASSUMPTION: the PTX `shf` clamp
    and wrap modes; ptxas lowers `shl.b32`/`shr` by a register this way, which also needs the
    clamp). .S32/.S64 right shifts fill with the sign of hi."""
    d = x.d
    m = _mods(x.form)
    ops = x.ins.operands
    if len(ops) != 4:
        fail(x, "expected SHF d, lo, shift, hi")
    left = "L" in m
    signed = bool(m & {"S32", "S64"})
    wide = bool(m & {"U64", "S64"})
    limit = 64 if wide else 32
    lo, hi = int_src(x, 1), int_src(x, 3)
    s = int_src(x, 2)
    if "W" in m:
        s = d.band(s, d.const(limit - 1, 32), 32)
    else:
        s = d.ite(d.ult(s, d.const(limit, 32), 32), s, d.const(limit, 32), 32)
    v = d.concat(hi, lo, 32, 32)
    s64 = d.zext(s, 32, 64)
    if left:
        r = d.shl(v, s64, 64)
    elif signed:
        r = d.ashr(v, s64, 64)
    else:
        r = d.lshr(v, s64, 64)
    out = d.extract(r, 63, 32, 64) if "HI" in m else d.extract(r, 31, 0, 64)
    set_reg(x, ops[0], out)


@register("SHF", "USHF")
def _resolve_shf(form):
    m = set(form.mods)
    dirs = m & {"L", "R"}
    types = m & {"U32", "S32", "U64", "S64"}
    if len(dirs) != 1 or len(types) != 1 or not m <= {"L", "R", "W", "HI"} | types:
        return None
    if "L" in m and types & {"S32", "S64"}:
        return None
    return _shf


# -- ISETP, IMNMX --------------------------------------------------------------------------

_ICMP = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}
_BOOL = {"AND": "and", "OR": "or", "XOR": "xor"}


def _isetp_name(form) -> str | None:
    m = list(form.mods)
    if "EX" in m:
        return None      # 64-bit compare chains: not modelled
    t = "u32" if "U32" in m else "s32"
    rest = [k for k in m if k not in ("U32", "S32")]
    if len(rest) != 2 or rest[0] not in _ICMP or rest[1] not in _BOOL:
        return None
    return f"setp.{_ICMP[rest[0]]}.{_BOOL[rest[1]]}.{t}"


def _isetp(name: str):
    def sem(x) -> None:
        """ISETP.cmp[.U32].bop p, q, a, b, c: p = (a cmp b) bop c, q = !(a cmp b) bop c,
        the PTX `setp.cmp.bop` with a `p|q` destination."""
        ops = x.ins.operands
        if len(ops) != 5:
            fail(x, "expected ISETP p, q, a, b, c")
        p, q = ptx(x, name, [int_src(x, 2), int_src(x, 3), pred_value(x, ops[4])], pair=True)
        set_pred(x, ops[0], p)
        set_pred(x, ops[1], q)
    return sem


@register("ISETP", "UISETP")
def _resolve_isetp(form):
    name = _isetp_name(form)
    return _isetp(name) if name else None


def _min_or_max(x, a, b, pred_operand) -> None:
    """d = min(a, b) when the predicate is true, max when false ([.U32]: unsigned)."""
    d = x.d
    signed = "U32" not in x.form.mods
    lt = d.slt(a, b, 32) if signed else d.ult(a, b, 32)
    mn, mx = d.ite(lt, a, b, 32), d.ite(lt, b, a, 32)
    set_reg(x, x.ins.operands[0], d.ite(pred_value(x, pred_operand), mn, mx, 32))


def _imnmx(x) -> None:
    """IMNMX/VIMNMX[.U32] d, a, b, p: min when p is true, max when false (PT = min: ptxas
    compiles PTX min.s32 to `VIMNMX ..., PT` and max.u32 to `VIMNMX.U32 ..., !PT`)."""
    _min_or_max(x, int_src(x, 1), int_src(x, 2), x.ins.operands[3])


def _viaddmnmx(x) -> None:
    """VIADDMNMX[.U32] d, a, b, c, p (sm_90): min or max (as IMNMX's p) of a + b (32-bit
    wrapping) and c; ptxas fuses PTX `add` then `min`/`max` into it (`min(4, n - t)`)."""
    if len(x.ins.operands) != 5:
        fail(x, "expected VIADDMNMX d, a, b, c, p")
    total = x.d.add(int_src(x, 1), int_src(x, 2), 32)
    _min_or_max(x, total, int_src(x, 3), x.ins.operands[4])


@register("IMNMX", "UIMNMX", "VIMNMX")
def _resolve_imnmx(form):
    return _imnmx if set(form.mods) <= {"U32", "S32"} else None


@register("VIADDMNMX")
def _resolve_viaddmnmx(form):
    return _viaddmnmx if set(form.mods) <= {"U32", "S32"} else None


# -- POPC, IABS, FLO, BREV ------------------------------------------------------------------------

def _unary_ptx(name: str):
    def sem(x) -> None:
        ops = x.ins.operands
        if len(ops) != 2:
            fail(x, "expected two operands")
        set_reg(x, ops[0], ptx(x, name, [int_src(x, 1)]))
    return sem


@register("POPC", "UPOPC")
def _resolve_popc(form):
    return _unary_ptx("popc.b32") if not form.mods else None


@register("BREV", "UBREV")
def _resolve_brev(form):
    return _unary_ptx("brev.b32") if not form.mods else None


@register("IABS", "UIABS")
def _resolve_iabs(form):
    """IABS: PTX abs.s32 (|INT_MIN| is INT_MIN)."""
    return _unary_ptx("abs.s32") if not form.mods else None


@register("FLO")
def _resolve_flo(form):
    """FLO.U32 / FLO (signed): PTX bfind.u32 / bfind.s32 (0xffffffff when none)."""
    m = set(form.mods)
    if m <= {"U32"}:
        return _unary_ptx("bfind.u32" if m else "bfind.s32")
    return None


# -- P2R, S2R, CS2R ----------------------------------------------------------------------------

def _p2r(x) -> None:
    """P2R d, PR, a, mask: d = (a & ~mask) | (PR & mask), PR bit i = P_i (P0..P6).
    ASSUMPTION: the merge with `a` (ptxas passes RZ)."""
    d = x.d
    ops = x.ins.operands
    if len(ops) != 4 or str(parts(ops[1])[0]) != "PR":
        fail(x, "expected P2R d, PR, a, mask")
    mask = imm(x, 3)
    pr = d.const(0, 32)
    for i in range(7):
        if mask >> i & 1:
            bit = d.bool_to_bv(pred_value(x, SassReg("P", i)), 32)
            pr = d.bor(pr, d.shl(bit, d.const(i, 32), 32), 32)
    a = int_src(x, 2)
    set_reg(x, ops[0], d.bor(d.band(a, d.const(~mask & 0xFFFFFFFF, 32), 32), pr, 32))


@register("P2R")
def _resolve_p2r(form):
    return _p2r if not form.mods else None


def _s2r(x) -> None:
    ops = x.ins.operands
    if len(ops) != 2:
        fail(x, "expected S2R d, SR")
    base, _ = parts(ops[1])
    set_reg(x, ops[0], special(x, getattr(base, "name", str(base))))


@register("S2R", "S2UR")
def _resolve_s2r(form):
    return _s2r if not form.mods else None


def _cs2r(x) -> None:
    """CS2R[.32] d, SR: SRZ gives zeros (ptxas' way to clear a register pair)."""
    ops = x.ins.operands
    base, _ = parts(ops[1])
    name = getattr(base, "name", str(base))
    w = 32 if "32" in x.form.mods else 64
    if name != "SRZ":
        fail(x, f"CS2R of {name}")
    set_wide(x, ops[0], x.d.const(0, w), w)


@register("CS2R")
def _resolve_cs2r(form):
    return _cs2r if set(form.mods) <= {"32"} else None
