"""Warp-level matrix multiply-accumulate through fragments: `wmma.load`, `wmma.mma`,
`wmma.store` (PTX ISA 9.7.14.4), for the shapes and types of sm_80 to sm_90:

| shape | A, B | C, D |
|---|---|---|
| m16n16k16, m32n8k16, m8n32k16 | .f16 | .f16 or .f32 (each) |
| m16n16k16, m32n8k16, m8n32k16 | .bf16 | .f32 |
| m16n16k16, m32n8k16, m8n32k16 | .s8, .u8 | .s32, optional .satfinite |
| m16n16k8 | .tf32 | .f32 |
| m8n8k4 | .f64 | .f64 (`.rn`) |

Memory: element (r, c) of a `.row` matrix lies at p + (r * stride + c) * size, of a `.col`
matrix at p + (c * stride + r) * size; stride in elements, by default the row length (`.row`)
or column length (`.col`); a stride below the default is undefined (ISA), and so are an
address not 32-byte aligned, and for 16- and 32-bit elements a stride not a multiple of 16
bytes (CUDA C++ Programming Guide, `load_matrix_sync`/`store_matrix_sync`: "mptr must be a
256-bit aligned pointer", "ldm must be a multiple of 8 for __half element type or multiple
of 4 for float element type"; it states nothing for 8- and 64-bit elements, and the ISA's
default stride of an 8-bit m32n8k16 B is 8 bytes, so keq checks nothing there). `.global`, `.shared{::cta}` or generic; weak accesses.

Fragments: the layout is unspecified; keq's own (`semantics.ops.wmma_fragments`) is made
invisible by `semantics.machine.fragments` (a result that could depend on it is undecided).

Arithmetic: as `mma` (semantics/ops/mma_float.py, mma_int.py): D[i][j] of a float form is an
open function of row i of A, column j of B and C[i][j], one per form
(`wmma.<shape>.<d>.<a>.<b>.<c>`; not assumed equal to an `mma.sync` form's), the emulator's
model the sm_80/sm_89/sm_90 datapath of `semantics.tensor_core` at the same K; integer forms
are exact. `.sync.aligned`: the whole warp executes it (undefined otherwise).

Refused by name: the sub-byte (`.s4/.u4` m8n8k32) and single-bit (`.b1` m8n8k128) shapes,
`.satfinite` on float forms, and f64 rounding other than `.rn`.
"""

from __future__ import annotations

from semantics.ir.types import TYPES
from semantics.ops import register
from semantics.ops.matrix import converged, pick, vector_registers, warp_of
from semantics.ops.mma_int import dot_s32
from semantics.ops.wmma_fragments import SHAPES, Fragment, fragment
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
    """Per slot: each lane's address of its element, after the UB checks of the address and
    stride."""
    d = x.d
    rows, cols = frag.dims
    size = frag.elem_bits // 8
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
    out = []
    for s in range(frag.slots):
        places = [frag.element(lane, s) for lane in lanes]
        major = [r if memory == "row" else c for r, c in places]
        minor = [c if memory == "row" else r for r, c in places]
        index = d.add(d.mul(d.from_ints(major, 64), stride, 64), d.from_ints(minor, 64), 64)
        out.append(d.add(base, d.mul(index, d.const(size, 64), 64), 64))
    return out


def _load(x, frag: Fragment, memory: str, space: str) -> None:
    regs = vector_registers(x, 0, frag.regs)
    converged(x, warp_of(x), 32, "the matrix")
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


def _mma(x, shape: str, layouts: tuple[str, str], types: tuple[str, str, str, str]) -> None:
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
    for s in range(fd.slots):
        row = [_row_of_a(x, a, fa, fd, s, kk) for kk in range(k)]
        col = [_col_of_b(x, b, fb, fd, s, kk) for kk in range(k)]
        out.append(_element(x, shape, types, row, col, c[s]))
    # (all read before any write: D may name C's registers)
    _write_elements(x, d_regs, out, fd)
    x.fragments.define(x, d_regs, fd)


def _element(x, shape: str, types: tuple, row: list, col: list, c):
    dt, at, bt, ct = types
    if dt == "s32":
        return dot_s32(x.d, row, col, c, 8, at == "s8", bt == "s8", x.form.has("satfinite"))
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
              {("s32", a, b, "s32") for a in ("s8", "u8") for b in ("s8", "u8")})


def _mma_form(form, shape: str, rest: set):
    layouts = tuple(m for m in form.mods if m in ("row", "col"))
    names = tuple(t.name for t in form.types)
    types = (names[0], "f16", "f16", names[1]) if len(names) == 2 else names
    if len(layouts) != 2 or types not in _MMA_TYPES:
        return None
    if fragment("a", shape, types[1]) is None or fragment("c", shape, types[0]) is None:
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
    if op is None or len(form.types) != 1 or form.rounding is not None:
        return None
    rest.discard(op)
    matrices = rest & {"a", "b", "c", "d"}
    memory = rest & {"row", "col"}
    spaces = rest & set(_SPACES)
    if len(matrices) != 1 or len(memory) != 1 or len(spaces) > 1 or \
            rest - matrices - memory - spaces:
        return None
    (matrix,), (mem,) = matrices, memory
    if (op == "load") == (matrix == "d"):
        return None
    frag = fragment("c" if matrix == "d" else matrix, shape, form.types[0].name, mem)
    if frag is None:
        return None
    space = _SPACES[spaces.pop()] if spaces else "generic"
    sem = _load if op == "load" else _store
    return lambda x: sem(x, frag, mem, space)
