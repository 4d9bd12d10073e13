"""Textures and surfaces: tex (1d, 2d; point sampling), suld.b and sust.b (1d, 2d).

A texture or surface operand `[%rd, {coords}]` names an object by its handle, which keq's
launch resolves to a `semantics.machine.views.View` (the buffer the texels live in, their type,
the object's dimensions and modes). A fetch is an indexed load of that buffer, a surface store
an indexed store, both through the memory port, so bounds, races and symbolic addresses are
checked as for `ld`/`st`.

Sources (docs/semantics.md, "Textures and surfaces", has the table):
- PTX ISA 9.7.10.3 (`tex`), 9.7.10.8-9 (`suld`, `sust`): surface x coordinates are bytes
  ("not scaled"); `.trap` traps out of range, `.clamp` accesses the nearest location in range,
  `.zero` loads zero and drops stores.
- CUDA C++ Programming Guide, "Texture fetching" appendix: point sampling returns T[i] with
  i = floor(x) (unnormalized) or floor(x * N) (normalized); clamp, border (0), and for
  normalized coordinates only, wrap and mirror. The texel-level wrap and mirror are those of
  OpenGL 4.6, 8.14.2 (`i mod N`, `(N-1) - mirror((i mod 2N) - N)`): CUDA documents them on
  the coordinate, which agrees except where x * N is an integer.
keq computes floor(x * N) exactly (an f32 times an integer below 2**24 is exact in f64); the
hardware's coordinate datapath is not documented, so a coordinate within rounding of a texel
boundary is the model's answer, not a measured one. A NaN coordinate's texel is unspecified
(an unknown function of the coordinates). Linear filtering (9-bit fixed-point weights) is
refused by name.
"""

from __future__ import annotations

from semantics.errors import UnsupportedError
from semantics.ir.operands import BracketList, Reg, Vec
from semantics.ir.types import TYPES
from semantics.machine.views import View, view_key
from semantics.ops import register

_U64 = TYPES["u64"]
_S32 = TYPES["s32"]
_F32_FROM = {"f32", "f16"}          # texel types a `.f32` fetch returns (f16 is widened)
_INT_FROM = {"s8", "s16", "s32", "u8", "u16", "u32", "b8", "b16", "b32"}
_SURFACE_MODES = ("trap", "clamp", "zero")


def _parts(x, i: int):
    """(handle register, coordinate operands) of the bracketed operand `i`."""
    op = x.operand(i)
    if not isinstance(op, BracketList) or len(op.items) != 2:
        raise UnsupportedError(f"'{x.form.name}' with operand '{op}' (keq reads "
                               f"[object, {{coordinates}}])", x.ins.loc)
    handle, coords = op.items
    if not isinstance(handle, Reg):
        raise UnsupportedError(f"'{x.form.name}' of a named texture or surface "
                               f"('{handle}'): keq models objects passed as parameters",
                               x.ins.loc)
    return handle, (coords.elems if isinstance(coords, Vec) else (coords,))


def view_of(x, handle: Reg, kind: str) -> tuple[View, int]:
    """The object the active lanes' `handle` names, and its handle (the texels' address).
    The handle must be one known object in every lane that may run the instruction."""
    v = x.read(handle, _U64)
    seen = set()
    for lane in x.maybe_lanes():
        h = v[int(lane)]
        if not isinstance(h, int) and not hasattr(h, "__index__"):
            raise UnsupportedError(f"'{x.form.name}' of a {kind} handle computed from data",
                                   x.ins.loc)
        seen.add(int(h))
    if len(seen) != 1:
        raise UnsupportedError(f"'{x.form.name}' of {len(seen)} different {kind} handles "
                               f"in one instruction", x.ins.loc)
    base = seen.pop()
    view = x.params.get(view_key(base))
    if view is None or view.kind != kind:
        raise UnsupportedError(f"'{x.form.name}': register {handle} holds no {kind} object "
                               f"of this launch (declare the parameter as a {kind} in the "
                               f"spec)", x.ins.loc)
    return view, base


def axis_index(d, mode: str, j, n):
    """The texel index along one axis for the integer coordinate `j` (64 bits, signed) and
    extent `n` (64 bits), and the predicate "out of range" (border mode; else false). The
    index is always in [0, n), so the load it feeds stays in bounds."""
    zero, one = d.const(0, 64), d.const(1, 64)
    below, above = d.slt(j, zero, 64), d.sle(n, j, 64)
    clamped = d.ite(below, zero, d.ite(above, d.sub(n, one, 64), j, 64), 64)
    if mode == "clamp":
        return clamped, d.pconst(False)
    if mode == "border":
        return clamped, d.por(below, above)
    if mode == "wrap":
        r = d.srem(j, n, 64)
        return d.ite(d.slt(r, zero, 64), d.add(r, n, 64), r, 64), d.pconst(False)
    two_n = d.add(n, n, 64)
    m = d.srem(j, two_n, 64)
    m = d.ite(d.slt(m, zero, 64), d.add(m, two_n, 64), m, 64)
    mirrored = d.sub(d.sub(two_n, one, 64), m, 64)
    return d.ite(d.slt(m, n, 64), m, mirrored, 64), d.pconst(False)


_F64_LIMIT = 0x4270000000000000      # 2**40 as an f64: past every texture extent
_F64_NEG_LIMIT = 0xC270000000000000


def float_coordinate(d, c, n, normalized: bool):
    """floor(c) or floor(c * n) (normalized) of the f32 coordinate `c`, as a signed 64-bit
    integer, exactly (f64 holds the product of an f32 and a 32-bit integer when n < 2**29),
    saturated to +-2**40; and whether `c` is a NaN (its texel is then unspecified)."""
    u = d.fcvt("f32", "f64", "rn", c)
    if normalized:
        u = d.fmul("f64", "rn", u, d.int2f(64, False, "f64", "rn", n))
    nan = d.fisnan("f32", c)
    lo, hi = d.const(_F64_NEG_LIMIT, 64), d.const(_F64_LIMIT, 64)
    u = d.ite(nan, d.const(0, 64), u, 64)
    u = d.ite(d.flt("f64", u, lo), lo, d.ite(d.flt("f64", hi, u), hi, u, 64), 64)
    return d.f2int("f64", "rm", u, 64, True), nan


def _texel_value(x, view: View, raw, dst):
    """The fetched texel `raw` (the texel type's bits) as the destination type of `tex`."""
    d, eb = x.d, TYPES[view.elem].bits
    if dst.name == "f32" and view.elem in _F32_FROM:
        return raw if view.elem == "f32" else d.fcvt("f16", "f32", "rn", raw)
    if dst.kind in "sub" and dst.bits == 32 and view.elem in _INT_FROM:
        if eb == 32:
            return raw
        return d.sext(raw, eb, 32) if view.elem[0] == "s" else d.zext(raw, eb, 32)
    raise UnsupportedError(f"'{x.form.name}' of {view.describe()}: keq reads a one-channel "
                           f"{view.elem} texture as .f32 (from f32, f16) or as 32-bit integers "
                           f"(from integer texels) only", x.ins.loc)


def _tex(x) -> None:
    form = x.form
    dst_t, coord_t = form.types[0], form.types[1]
    handle, coords = _parts(x, 1)
    view, base = view_of(x, handle, "texture")
    if view.filter != "point":
        raise UnsupportedError(f"'{form.name}' of {view.describe()}: linear filtering (the "
                               f"hardware's 9-bit fixed-point weights) is not modelled",
                               x.ins.loc)
    if len(coords) != len(view.dims):
        raise UnsupportedError(f"'{form.name}' with {len(coords)} coordinate(s) on "
                               f"{view.describe()}", x.ins.loc)
    d = x.d
    index, outside, nans = d.const(0, 64), d.pconst(False), []
    stride = d.const(1, 64)
    for c_op, n32 in zip(coords, view.dims):
        n = d.zext(d.splat(n32, 32), 32, 64)
        if coord_t.kind == "f":
            j, nan = float_coordinate(d, x.read(c_op, coord_t), n, view.normalized)
            nans.append(nan)
        else:
            if view.normalized:
                raise UnsupportedError(f"'{form.name}' with integer coordinates on a "
                                       f"normalized {view.describe()}", x.ins.loc)
            j = d.sext(x.read(c_op, _S32), 32, 64)
        i, out = axis_index(d, view.address, j, n)
        index = d.add(index, d.mul(i, stride, 64), 64)
        stride = d.mul(stride, n, 64)
        outside = d.por(outside, out)
    eb = TYPES[view.elem].bits
    addr = d.add(d.const(base, 64), d.mul(index, d.const(eb // 8, 64), 64), 64)
    raw = x.load("global", addr, eb // 8, align=eb // 8)
    value = d.ite(outside, d.const(0, dst_t.bits), _texel_value(x, view, raw, dst_t),
                  dst_t.bits)
    if nans:
        value = _unspecified_texel(x, view, nans, [x.read(c, coord_t) for c in coords],
                                   value, dst_t.bits)
    _write_channels(x, view, value, dst_t)


def _unspecified_texel(x, view: View, nans, coords, value, w: int):
    d = x.d
    any_nan = nans[0]
    for p in nans[1:]:
        any_nan = d.por(any_nan, p)
    if not d.may_any(d.pand(x.mask, any_nan)):
        return value
    x.effect("unspecified", f"the texel a NaN coordinate fetches from {view.describe()} "
             f"(the ISA leaves it open)", any_nan if d.is_concrete(any_nan) else None)
    u = d.unspecified_fn(f"tex/nan/{view.name}", w, coords, value, x.choices, [32] * len(coords))
    return d.ite(any_nan, u, value, w)


def _write_channels(x, view: View, value, dst_t) -> None:
    """.x is the texel; a one-channel format has no y, z, w: where a kernel reads them they
    are unspecified (a function of the texel), else never observed."""
    dst = x.operand(0)
    elems = dst.elems if isinstance(dst, Vec) else (dst,)
    x.write(elems[0], value, dst_t)
    mentions = _mentions(x.k.instrs)
    for k, e in enumerate(elems[1:], start=1):
        if isinstance(e, Reg) and mentions.get(e, 0) > 1:
            ch = "xyzw"[k]
            x.effect("unspecified", f"channel .{ch} of one-channel {view.describe()} (the "
                     f"ISA leaves it open)")
            x.write(e, x.d.unspecified_fn(f"tex/{ch}/{view.name}", dst_t.bits, [value],
                                          x.d.const(0, dst_t.bits), x.choices,
                                          [dst_t.bits]), dst_t)
        else:
            x.write(e, x.d.const(0, dst_t.bits), dst_t)


_MENTIONS: dict[int, tuple] = {}


def _mentions(instrs) -> dict:
    """How many operand positions name each register in `instrs` (cached per kernel)."""
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


@register("tex")
def _resolve_tex(form):
    if len(form.types) != 2 or form.vec != 4 or form.flags - {"1d", "2d"} or \
            len(form.flags) != 1:
        return None
    if form.types[1].name not in ("f32", "s32"):
        return None
    return _tex


# -- surfaces ---------------------------------------------------------------------------------
def _surface_address(x, view: View, coords, nbytes: int, mode: str):
    """(address, out-of-range predicate) of a surface access of `nbytes` at the byte x
    coordinate and row y of `coords`; out of range, `.clamp` moves it to the nearest place
    in range (the ISA: "the nearest surface location"), the others keep it in range too and
    let the caller trap, load zero or drop the store."""
    d = x.d
    eb = TYPES[view.elem].bits // 8
    if len(coords) != len(view.dims):
        raise UnsupportedError(f"'{x.form.name}' with {len(coords)} coordinate(s) on "
                               f"{view.describe()}", x.ins.loc)
    w = d.zext(d.splat(view.dims[0], 32), 32, 64)
    row = d.mul(w, d.const(eb, 64), 64)
    xb = d.sext(x.read(coords[0], _S32), 32, 64)
    last = d.sub(row, d.const(nbytes, 64), 64)        # the last byte offset an access fits at
    zero = d.const(0, 64)
    below, above = d.slt(xb, zero, 64), d.slt(last, xb, 64)
    outside = d.por(below, above)
    xc = d.ite(below, zero, d.ite(above, last, xb, 64), 64)
    offset = xc
    if len(coords) == 2:
        h = d.zext(d.splat(view.dims[1], 32), 32, 64)
        y = d.sext(x.read(coords[1], _S32), 32, 64)
        yi, yout = axis_index(d, "border", y, h)
        outside = d.por(outside, yout)
        offset = d.add(offset, d.mul(yi, row, 64), 64)
    if mode == "trap":
        x.trap_if(outside, f"surface access out of range of {view.describe()} with .trap")
    return offset, outside


def _surface(store: bool):
    def sem(x) -> None:
        form = x.form
        t = form.type
        mode = next(m for m in _SURFACE_MODES if form.has(m))
        handle, coords = _parts(x, 0 if store else 1)
        view, base = view_of(x, handle, "surface")
        data = x.operand(1 if store else 0)
        elems = data.elems if isinstance(data, Vec) else (data,)
        nbytes = t.bits // 8
        d = x.d
        offset, outside = _surface_address(x, view, coords, nbytes * len(elems), mode)
        addr = d.add(d.const(base, 64), offset, 64)
        for k, e in enumerate(elems):
            a = d.add(addr, d.const(k * nbytes, 64), 64) if k else addr
            align = nbytes * len(elems) if k == 0 else nbytes
            if store:
                mask = x.mask if mode == "clamp" else d.pand(x.mask, d.pnot(outside))
                x.store("global", a, nbytes, x.read(e, t), mask=mask, align=align)
            else:
                v = x.load("global", a, nbytes, align=align)
                if mode == "zero":
                    v = d.ite(outside, d.const(0, t.bits), v, t.bits)
                x.write(e, v, t)
    return sem


def _resolve_surface(store: bool):
    def resolve(form):
        dims = form.flags & {"1d", "2d"}
        modes = form.flags & set(_SURFACE_MODES)
        if "b" not in form.flags or len(dims) != 1 or len(modes) != 1 or \
                form.flags - {"b"} - dims - modes or len(form.types) != 1:
            return None
        if form.type.kind != "b" or form.type.bits not in (8, 16, 32, 64):
            return None
        return _surface(store)
    return resolve


register("suld")(_resolve_surface(False))
register("sust")(_resolve_surface(True))
