"""What `tex`, `tld4`, `txq` and the surface instructions share: the object a handle names,
the coordinates of a fetch, texel indices under an addressing mode, the texel as the
destination type, and the values the ISA leaves open (channels a one-channel format lacks,
the texel a NaN coordinate fetches). `semantics.ops.texture` has the sources.
"""

from __future__ import annotations

from semantics.errors import UnsupportedError
from semantics.ir.operands import Addr, BracketList, Reg, Vec
from semantics.ir.types import TYPES
from semantics.machine.mentions import mentions
from semantics.machine.views import View, view_key

U64 = TYPES["u64"]
S32 = TYPES["s32"]
F32_FROM = {"f32", "f16"}           # texel types a `.f32` fetch returns (f16 is widened)
INT_FROM = {"s8", "s16", "s32", "u8", "u16", "u32", "b8", "b16", "b32"}
GEOMETRIES = {"1d": 1, "2d": 2, "3d": 3}


def parts(x, i: int):
    """(handle register, coordinate operands) of the bracketed operand `i`."""
    op = x.operand(i)
    if not isinstance(op, BracketList) or len(op.items) != 2:
        raise UnsupportedError(f"'{x.form.name}' with operand '{op}' (keq reads "
                               f"[object, {{coordinates}}]; an explicit sampler is not "
                               f"modelled)", x.ins.loc)
    handle, coords = op.items
    return _handle_reg(x, handle), (coords.elems if isinstance(coords, Vec) else (coords,))


def handle_of(x, i: int) -> Reg:
    """The handle register of a query's `[%rd]` operand `i`."""
    op = x.operand(i)
    base = op.base if isinstance(op, Addr) and op.offset == 0 else op
    return _handle_reg(x, base)


def _handle_reg(x, handle) -> Reg:
    if not isinstance(handle, Reg):
        raise UnsupportedError(f"'{x.form.name}' of a named texture or surface "
                               f"('{handle}'): keq models objects passed as parameters",
                               x.ins.loc)
    return handle


def view_of(x, handle: Reg, kind: str) -> tuple[View, int]:
    """The object the active lanes' `handle` names, and its handle (the texels' address).
    The handle must be one known object in every lane that may run the instruction."""
    v = x.read(handle, U64)
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


def fetch_coordinates(x, view: View, geom: str, coords) -> tuple:
    """The coordinate operands a fetch of geometry `geom` uses: one per axis. 3-D takes a
    four-element vector whose fourth element is ignored, and (ISA 9.7.10.3, Notes) a `.v4`
    vector is allowed for any geometry, its extra elements ignored."""
    n = GEOMETRIES[geom]
    if n != len(view.dims):
        raise UnsupportedError(f"'{x.form.name}' ({geom}) on {len(view.dims)}-D "
                               f"{view.describe()}", x.ins.loc)
    if (len(coords) != n and len(coords) != 4) or (n == 3 and len(coords) != 4):
        raise UnsupportedError(f"'{x.form.name}' with {len(coords)} coordinate(s) on "
                               f"{view.describe()}", x.ins.loc)
    return tuple(coords[:n])


def extents(d, view: View) -> list:
    """Each axis's extent as a 64-bit value (per lane)."""
    return [d.zext(d.splat(n32, 32), 32, 64) for n32 in view.dims]


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
F64_HALF = 0x3FE0000000000000


def float_position(d, c, n, normalized: bool):
    """The f32 coordinate `c` in texel units as an f64: c, or c * n (normalized), exactly
    (f64 holds the product of an f32 and an integer below 2**29), saturated to +-2**40;
    and whether `c` is a NaN (0 stands in for it: its value is open)."""
    u = d.fcvt("f32", "f64", "rn", c)
    if normalized:
        u = d.fmul("f64", "rn", u, d.int2f(64, False, "f64", "rn", n))
    nan = d.fisnan("f32", c)
    lo, hi = d.const(_F64_NEG_LIMIT, 64), d.const(_F64_LIMIT, 64)
    u = d.ite(nan, d.const(0, 64), u, 64)
    u = d.ite(d.flt("f64", u, lo), lo, d.ite(d.flt("f64", hi, u), hi, u, 64), 64)
    return u, nan


def float_coordinate(d, c, n, normalized: bool):
    """floor(c) or floor(c * n) (normalized) of the f32 coordinate `c`, as a signed 64-bit
    integer (see `float_position`), and whether `c` is a NaN."""
    u, nan = float_position(d, c, n, normalized)
    return d.f2int("f64", "rm", u, 64, True), nan


def footprint_coordinate(d, c, n, normalized: bool):
    """i0 = floor(xB) with xB = x - 0.5 (x in texel units): the lower texel of the 2-texel
    footprint of linear filtering and `tld4` along one axis (CUDA guide, texture fetching),
    the position xB itself (f64; exact where it matters: an f32 below 2**-29 in magnitude
    rounds to -0.5, whose floor and weight are the same), and whether `c` is a NaN."""
    u, nan = float_position(d, c, n, normalized)
    xb = d.fsub("f64", "rn", u, d.const(F64_HALF, 64))
    return d.f2int("f64", "rm", xb, 64, True), xb, nan


def texel_offset(d, view: View, indices):
    """The row-major element offset of the texel at `indices` (one per axis, in range)."""
    index, stride = d.const(0, 64), d.const(1, 64)
    for i, n in zip(indices, extents(d, view)):
        index = d.add(index, d.mul(i, stride, 64), 64)
        stride = d.mul(stride, n, 64)
    return index


def load_texel(x, view: View, base: int, indices):
    """The raw texel (the texel type's bits) at `indices`, through the memory port (so
    bounds, races and the fetch-after-write rule apply to it)."""
    d, eb = x.d, TYPES[view.elem].bits
    index = texel_offset(d, view, indices)
    addr = d.add(d.const(base, 64), d.mul(index, d.const(eb // 8, 64), 64), 64)
    return x.load("global", addr, eb // 8, align=eb // 8)


def texel_value(x, view: View, raw, dst):
    """The fetched texel `raw` (the texel type's bits) as the destination type of a fetch."""
    d, eb = x.d, TYPES[view.elem].bits
    if dst.name == "f32" and view.elem in F32_FROM:
        return raw if view.elem == "f32" else d.fcvt("f16", "f32", "rn", raw)
    if dst.kind in "sub" and dst.bits == 32 and view.elem in INT_FROM:
        if eb == 32:
            return raw
        return d.sext(raw, eb, 32) if view.elem[0] == "s" else d.zext(raw, eb, 32)
    raise UnsupportedError(f"'{x.form.name}' of {view.describe()}: keq reads a one-channel "
                           f"{view.elem} texture as .f32 (from f32, f16) or as 32-bit integers "
                           f"(from integer texels) only", x.ins.loc)


def unspecified_texel(x, view: View, nans, coords, value, w: int, site: str = "tex"):
    """`value`, except where a coordinate is a NaN: there an unknown function of the
    coordinates and `value` (`keq!uf!<site>/nan/<texture>`), an `unspecified` effect."""
    d = x.d
    any_nan = nans[0]
    for p in nans[1:]:
        any_nan = d.por(any_nan, p)
    if not d.may_any(d.pand(x.mask, any_nan)):
        return value
    x.effect("unspecified", f"the texel a NaN coordinate fetches from {view.describe()} "
             f"(the ISA leaves it open)", any_nan if d.is_concrete(any_nan) else None)
    u = d.unspecified_fn(f"{site}/nan/{view.name}", w, coords, value, x.choices,
                         [32] * len(coords))
    return d.ite(any_nan, u, value, w)


def write_channels(x, view: View, value, dst_t) -> None:
    """.x is the texel; a one-channel format has no y, z, w: where a kernel reads them they
    are unspecified (a function of the texel), else never observed."""
    dst = x.operand(0)
    elems = dst.elems if isinstance(dst, Vec) else (dst,)
    x.write(elems[0], value, dst_t)
    for k, e in enumerate(elems[1:], start=1):
        if is_read(x, e):
            x.write(e, missing_channel(x, view, "xyzw"[k], value, dst_t.bits, "tex"), dst_t)
        else:
            x.write(e, x.d.const(0, dst_t.bits), dst_t)


def is_read(x, reg) -> bool:
    """Does the kernel name `reg` anywhere but here (a destination it may read)?"""
    return isinstance(reg, Reg) and mentions(x.k.instrs).get(reg, 0) > 1


def missing_channel(x, view: View, ch: str, texel, w: int, site: str):
    """Channel `ch` of a texel of a one-channel format: unspecified, fixed per texel
    (`keq!uf!<site>/<ch>/<texture>`), an `unspecified` effect."""
    x.effect("unspecified", f"channel .{ch} of one-channel {view.describe()} (the ISA "
             f"leaves it open)")
    return x.d.unspecified_fn(f"{site}/{ch}/{view.name}", w, [texel], x.d.const(0, w),
                              x.choices, [w])


__all__ = ["parts", "handle_of", "view_of", "fetch_coordinates", "extents", "axis_index",
           "float_position", "float_coordinate", "footprint_coordinate", "texel_offset",
           "load_texel", "texel_value", "unspecified_texel", "write_channels", "is_read",
           "missing_channel", "U64", "S32", "F32_FROM", "INT_FROM", "GEOMETRIES",
           "F64_HALF"]
