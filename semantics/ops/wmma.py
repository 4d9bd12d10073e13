"""Warp-level matrix multiply-accumulate through fragments: `wmma.load`, `wmma.mma`,
`wmma.store` (PTX ISA 9.7.14.4), for the shapes and types of sm_80 to sm_90:

| shape | A, B | C, D |
|---|---|---|
| m16n16k16, m32n8k16, m8n32k16 | .f16 | .f16 or .f32 (each) |
| m16n16k16, m32n8k16, m8n32k16 | .bf16 | .f32 |
| m16n16k16, m32n8k16, m8n32k16 | .s8, .u8 | .s32, optional .satfinite |
| m16n16k8 | .tf32 | .f32 |
| m8n8k4 | .f64 | .f64 (`.rn`) |
| m8n8k32 (A `.row`, B `.col`) | .s4, .u4 (A and B alike) | .s32, optional .satfinite |
| m8n8k128 (A `.row`, B `.col`) | .b1, `.xor.popc` or `.and.popc` (`.and`: sm_80) | .s32 |

Memory: element (r, c) of a `.row` matrix lies at p + (r * stride + c) * size, of a `.col`
matrix at p + (c * stride + r) * size; stride in elements, by default the row length (`.row`)
or column length (`.col`); a stride below the default is undefined (ISA), and so are an
address not 32-byte aligned, and for 16- and 32-bit elements a stride not a multiple of 16
bytes (CUDA C++ Programming Guide, `load_matrix_sync`/`store_matrix_sync`: "mptr must be a
256-bit aligned pointer", "ldm must be a multiple of 8 for __half element type or multiple
of 4 for float element type"; it states nothing for 8- and 64-bit elements, and the ISA's
default stride of an 8-bit m32n8k16 B is 8 bytes, so keq checks nothing there). `.global`, `.shared{::cta}` or generic; weak accesses.

Sub-byte A and B (`.s4/.u4`, `.b1`): the stride is in elements too (ISA 9.7.14.4.2, "in terms
of matrix elements (and not bytes)"), and "the starting address of each instance of the
leading dimension (row or column) must be aligned with the size of the corresponding
fragment in bytes": one .b32 register, 4 bytes, so a stride whose rows (A) or columns (B) do
not start 4-byte aligned (stride * bits not a multiple of 32) is undefined. keq's layout
holds 32 bits of consecutive elements along K per register (wmma_fragments.py), so it moves
each register as one aligned 32-bit word. Which element of a word is which k (low nibble or
bit first, or any other order) the ISA does not say; it cannot change D, as long as A's rows
and B's columns are packed alike: D[i][j] sums over k, and one reordering of K in both
operands leaves the sum as it is.

Fragments: the layout is unspecified; keq's own (`semantics.ops.wmma_fragments`) is made
invisible by `semantics.machine.fragments` (a result that could depend on it is undecided).

Arithmetic: as `mma` (semantics/ops/mma_float.py, mma_int.py): D[i][j] of a float form is an
open function of row i of A, column j of B and C[i][j], one per form
(`wmma.<shape>.<d>.<a>.<b>.<c>`; not assumed equal to an `mma.sync` form's), the emulator's
model the sm_80/sm_89/sm_90 datapath of `semantics.tensor_core` at the same K; integer forms
are exact (`.b1`: C + popc(A bitOp B), semantics/ops/mma_b1.py). `.sync.aligned`: the whole
warp executes it (undefined otherwise).

Refused by name: `.satfinite` on float and `.b1` forms, f64 rounding other than `.rn`, mixed
`.s4`/`.u4` inputs (ptxas 13: "Unexpected instruction types"), sub-byte A or B in another
layout than A `.row`, B `.col`, and `.b1` with another operation than `.xor/.and.popc`.
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops import register
from semantics.ops.matrix import converged, pick, vector_registers, warp_of
from semantics.ops.mma_b1 import BITOPS, popc_dot
from semantics.ops.mma_int import dot_s32
from semantics.ops.wmma_fragments import SHAPES, SUB_BYTE, Fragment, fragment
from semantics.tensor_core import mma_model

U32 = TYPES["u32"]
_REG = {32: TYPES["b32"], 64: TYPES["b64"]}
_SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared"}
_BASE = {"sync", "aligned"}


# -- registers <-> elements -------------------------------------------------------------------
def _read_elements(x, i: int, frag: Fragment) -> tuple[tuple, list]:
    """(registers, elements): operand i's registers and their elements, slot order."""
    d = x.d
    regs = vector_registers(x, i, frag.regs)
    words = [x.read(r, _REG[frag.reg_bits]) for r in regs]
    eb, rb = frag.elem_bits, frag.reg_bits
    if eb == rb:
        return regs, words
    return regs, [d.extract(w, lo + eb - 1, lo, rb) for w in words for lo in range(0, rb, eb)]


def _write_elements(x, regs: tuple, elems: list, frag: Fragment) -> None:
    d = x.d
    eb, per = frag.elem_bits, frag.per_reg
    for k, reg in enumerate(regs):
        word = elems[k * per]
        for j in range(1, per):           # higher elements above
            word = d.concat(elems[k * per + j], word, eb, eb * j)
        x.write(reg, word, _REG[frag.reg_bits])


# -- memory -----------------------------------------------------------------------------------
def _addresses(x, frag: Fragment, memory: str, addr_op: int, stride_op: int) -> list:
    """Per slot (per register for a sub-byte fragment): each lane's address of its element
    (word), after the UB checks of the address and stride."""
    d = x.d
    rows, cols = frag.dims
    size = frag.elem_bits // 8
    sub_byte = frag.elem in SUB_BYTE
    default = cols if memory == "row" else rows
    base = x.address(addr_op)
    if stride_op < len(x.ins.operands):
        s32 = x.read(stride_op, U32)
        x.undefined_if(d.ult(s32, d.const(default, 32), 32),
                       f"'{x.form.name}' with a stride below {default} (the matrix's "
                       f"{'row' if memory == 'row' else 'column'} length)")
        stride = d.zext(s32, 32, 64)
    else:
        stride = d.const(default, 64)
    zero = d.const(0, 64)
    x.undefined_if(d.pnot(d.eq(d.band(base, d.const(31, 64), 64), zero, 64)),
                   f"'{x.form.name}' at an address not 32-byte aligned")
    if size in (2, 4):           # (the guide states it for __half and float elements)
        x.undefined_if(d.pnot(d.eq(d.band(d.mul(stride, d.const(size, 64), 64),
                                          d.const(15, 64), 64), zero, 64)),
                       f"'{x.form.name}' with a stride not a multiple of 16 bytes")
    lanes = warp_of(x).lane
    if sub_byte:
        return _word_addresses(x, frag, memory, base, stride, lanes)
    out = []
    for s in range(frag.slots):
        places = [frag.element(lane, s) for lane in lanes]
        major = [r if memory == "row" else c for r, c in places]
        minor = [c if memory == "row" else r for r, c in places]
        index = d.add(d.mul(d.from_ints(major, 64), stride, 64), d.from_ints(minor, 64), 64)
        out.append(d.add(base, d.mul(index, d.const(size, 64), 64), 64))
    return out


def _word_addresses(x, frag: Fragment, memory: str, base, stride, lanes: list[int]) -> list:
    """Per register of a sub-byte A (`.row`) or B (`.col`): each lane's address of the 32-bit
    word it holds, at element (major, minor) of its first slot; undefined where a row (A) or
    column (B) does not start 4-byte aligned (the ISA: aligned to the fragment's size)."""
    d = x.d
    eb = frag.elem_bits
    bits = d.mul(stride, d.const(eb, 64), 64)
    x.undefined_if(d.pnot(d.eq(d.band(bits, d.const(31, 64), 64), d.const(0, 64), 64)),
                   f"'{x.form.name}' with a stride of {eb}-bit elements whose rows or columns "
                   f"do not start 4-byte aligned")
    row_bytes = d.lshr(bits, d.const(3, 64), 64)
    out = []
    for r in range(frag.regs):
        places = [frag.element(lane, r * frag.per_reg) for lane in lanes]
        major = [p[0] if memory == "row" else p[1] for p in places]
        minor = [(p[1] if memory == "row" else p[0]) * eb // 8 for p in places]
        off = d.add(d.mul(d.from_ints(major, 64), row_bytes, 64), d.from_ints(minor, 64), 64)
        out.append(d.add(base, off, 64))
    return out


def _load(x, frag: Fragment, memory: str, space: str) -> None:
    regs = vector_registers(x, 0, frag.regs)
    converged(x, warp_of(x), 32, "the matrix")
    if frag.elem in SUB_BYTE:                # one aligned word per register
        for reg, a in zip(regs, _addresses(x, frag, memory, 1, 2)):
            x.write(reg, x.load(space, a, 4, align=4), _REG[32])
        x.fragments.define(x, regs, frag)
        return
    size = frag.elem_bits // 8
    elems = [x.load(space, a, size, align=size) for a in _addresses(x, frag, memory, 1, 2)]
    _write_elements(x, regs, elems, frag)
    x.fragments.define(x, regs, frag)


def _store(x, frag: Fragment, memory: str, space: str) -> None:
    regs, elems = _read_elements(x, 1, frag)
    converged(x, warp_of(x), 32, "the matrix")
    x.fragments.check(x, regs, elems, frag, "D")
    size = frag.elem_bits // 8
    for a, v in zip(_addresses(x, frag, memory, 0, 2), elems):
        x.store(space, a, size, v, align=size)


# -- mma --------------------------------------------------------------------------------------
def _row_of_a(x, a: list, fa: Fragment, out: Fragment, s: int, k: int):
    """Per lane: element k of the row of A that output slot s of the lane needs."""
    return pick(x.d, warp_of(x), a, fa.elem_bits, ("wmma.a", fa, out, s, k),
                lambda lane: fa.holder(out.element(lane, s)[0], k))


def _col_of_b(x, b: list, fb: Fragment, out: Fragment, s: int, k: int):
    return pick(x.d, warp_of(x), b, fb.elem_bits, ("wmma.b", fb, out, s, k),
                lambda lane: fb.holder(k, out.element(lane, s)[1]))


def _words_of(x, words: list, frag: Fragment, out: Fragment, s: int, major: bool) -> list:
    """Per lane: the 32-bit words of the row of A (`major`) or column of B that output slot
    s needs, K/32 of them, in K order (each register of a `.b1` A or B is 32 consecutive k)."""
    k = frag.dims[1] if major else frag.dims[0]
    got = []
    for q in range(0, k, frag.per_reg):
        def rule(lane: int, q=q) -> tuple[int, int]:
            r, c = out.element(lane, s)
            slot, holder = frag.holder(r, q) if major else frag.holder(q, c)
            return slot // frag.per_reg, holder
        got.append(pick(x.d, warp_of(x), words, 32, ("wmma.w", frag, out, s, q), rule))
    return got


def _mma(x, shape: str, layouts: tuple[str, str], types: tuple[str, str, str, str],
         bitop: str | None = None) -> None:
    d = x.d
    dt, at, bt, ct = types
    k = SHAPES[shape][2]
    fa, fb = Fragment("a", shape, at, layouts[0]), Fragment("b", shape, bt, layouts[1])
    fc, fd = Fragment("c", shape, ct), Fragment("c", shape, dt)
    a_regs, a = _read_elements(x, 1, fa)
    b_regs, b = _read_elements(x, 2, fb)
    c_regs, c = _read_elements(x, 3, fc)
    d_regs = vector_registers(x, 0, fd.regs)
    converged(x, warp_of(x), 32, "matrix fragments")
    for regs, vals, kind, what in ((a_regs, a, fa, "A"), (b_regs, b, fb, "B"),
                                   (c_regs, c, fc, "C")):
        x.fragments.check(x, regs, vals, kind, what)
    out = []
    if bitop is not None:                    # .b1: whole words, popc (mma_b1.py)
        a_words = [x.read(r, _REG[32]) for r in a_regs]
        b_words = [x.read(r, _REG[32]) for r in b_regs]
        for s in range(fd.slots):
            out.append(popc_dot(d, _words_of(x, a_words, fa, fd, s, True),
                                _words_of(x, b_words, fb, fd, s, False), c[s], bitop))
    for s in range(fd.slots if bitop is None else 0):
        row = [_row_of_a(x, a, fa, fd, s, kk) for kk in range(k)]
        col = [_col_of_b(x, b, fb, fd, s, kk) for kk in range(k)]
        out.append(_element(x, shape, types, row, col, c[s]))
    # (all read before any write: D may name C's registers)
    _write_elements(x, d_regs, out, fd)
    x.fragments.define(x, d_regs, fd)


def _element(x, shape: str, types: tuple, row: list, col: list, c):
    dt, at, bt, ct = types
    if dt == "s32":
        e = 4 if at in ("s4", "u4") else 8
        return dot_s32(x.d, row, col, c, e, at in ("s8", "s4"), bt in ("s8", "s4"),
                       x.form.has("satfinite"))
    name = f"wmma.{shape}.{dt}.{at}.{bt}.{ct}"
    x.effect("unspecified", f"the results of {name} (the PTX ISA does not say how a tensor "
                            f"core sums and rounds; keq models {x.choices.target.arch})")
    eb = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64}[at]
    bits = {"f16": 16, "f32": 32, "f64": 64}
    k = len(row)
    model = mma_model(at, k, ct, dt, bt, x.choices.target.arch)
    widths = [eb] * (2 * k) + [bits[ct]]
    return x.d.tensor_fn(name, bits[dt], row + col + [c], widths, model, x.choices)


# -- forms ------------------------------------------------------------------------------------
_MMA_TYPES = ({(dd, "f16", "f16", cc) for dd in ("f16", "f32") for cc in ("f16", "f32")} |
              {("f32", "bf16", "bf16", "f32"), ("f32", "tf32", "tf32", "f32"),
               ("f64", "f64", "f64", "f64")} |
              {("s32", a, b, "s32") for a in ("s8", "u8") for b in ("s8", "u8")} |
              {("s32", t, t, "s32") for t in ("s4", "u4")})


def _b1_mma_form(form, shape: str, rest: set):
    """`wmma.mma.<op>.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32` (`.b1` is no keq
    type, so a modifier: the type modifiers must read s32, b1, b1, s32 in order)."""
    mods = form.mods
    ops = [m for m in mods if m in BITOPS]
    layouts = tuple(m for m in mods if m in ("row", "col"))
    if [m for m in mods if m in ("s32", "b1")] != ["s32", "b1", "b1", "s32"] or \
            len(ops) != 1 or mods.count("popc") != 1 or layouts != ("row", "col") or \
            [t.name for t in form.types] != ["s32", "s32"] or form.rounding is not None or \
            rest != {"b1", "popc", ops[0], "row", "col"}:
        return None
    if fragment("a", shape, "b1", "row") is None or fragment("c", shape, "s32") is None:
        return None
    types = ("s32", "b1", "b1", "s32")
    return lambda x: _mma(x, shape, layouts, types, ops[0])


def _mma_form(form, shape: str, rest: set):
    if "b1" in rest:
        return _b1_mma_form(form, shape, rest)
    layouts = tuple(m for m in form.mods if m in ("row", "col"))
    names = tuple(t.name for t in form.types)
    types = (names[0], "f16", "f16", names[1]) if len(names) == 2 else names
    if len(layouts) != 2 or types not in _MMA_TYPES:
        return None
    if fragment("a", shape, types[1], layouts[0]) is None or \
            fragment("b", shape, types[2], layouts[1]) is None or \
            fragment("c", shape, types[0]) is None:
        return None
    allowed = {"satfinite"} if types[0] == "s32" else set()
    if types[0] == "f64":
        if form.rounding not in ("rn", None):
            return None
    elif form.rounding is not None:
        return None
    if not rest <= allowed | {"row", "col"}:
        return None
    return lambda x: _mma(x, shape, layouts, types)


@register("wmma")
def _resolve_wmma(form):
    shapes = [f for f in form.flags if f in SHAPES]
    if len(shapes) != 1 or not _BASE <= form.flags:
        return None
    shape = shapes[0]
    rest = set(form.flags) - _BASE - {shape}
    if "mma" in rest:
        return _mma_form(form, shape, rest - {"mma"})
    op = "load" if "load" in rest else "store" if "store" in rest else None
    # (.b1 is no keq type: a modifier, the only type of its load)
    elems = [t.name for t in form.types] + (["b1"] * form.mods.count("b1"))
    if op is None or len(elems) != 1 or form.rounding is not None:
        return None
    rest.discard(op)
    rest.discard("b1")
    matrices = rest & {"a", "b", "c", "d"}
    memory = rest & {"row", "col"}
    spaces = rest & set(_SPACES)
    if len(matrices) != 1 or len(memory) != 1 or len(spaces) > 1 or \
            rest - matrices - memory - spaces:
        return None
    (matrix,), (mem,) = matrices, memory
    if (op == "load") == (matrix == "d"):
        return None
    frag = fragment("c" if matrix == "d" else matrix, shape, elems[0], mem)
    if frag is None:
        return None
    space = _SPACES[spaces.pop()] if spaces else "generic"
    sem = _load if op == "load" else _store
    return lambda x: sem(x, frag, mem, space)
