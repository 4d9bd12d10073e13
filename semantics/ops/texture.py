"""Textures and surfaces: tex (1d, 2d, 3d; point sampling and linear filtering), tld4 (2d),
txq and suq, suld.b and sust.b (1d, 2d).

A texture or surface operand `[%rd, {coords}]` names an object by its handle, which keq's
launch resolves to a `semantics.machine.views.View` (the buffer the texels live in, their type,
the object's dimensions and modes). A fetch is an indexed load of that buffer, a surface store
an indexed store, both through the memory port, so bounds, races and symbolic addresses are
checked as for `ld`/`st`. Shared pieces are in `semantics.ops.texture_sampling`; linear
filtering and `tld4` in `semantics.ops.texture_filtering`; `txq`/`suq` in
`semantics.ops.texture_query`.

Sources (the texture rows of docs/semantics.md, "What the PTX ISA leaves open"):
- PTX ISA 9.7.10.3 (`tex`): 3-D coordinates are a four-element vector whose fourth element
  is ignored, and a `.v4` coordinate vector is allowed for any geometry (Notes).
- PTX ISA 9.7.10.8-9 (`suld`, `sust`): surface x coordinates are bytes ("not scaled");
  `.trap` traps out of range, `.clamp` accesses the nearest location in range, `.zero` loads
  zero and drops stores.
- CUDA C++ Programming Guide, "Texture fetching" appendix: point sampling returns T[i] with
  i = floor(x) (unnormalized) or floor(x * N) (normalized), per axis; clamp, border (0), and
  for normalized coordinates only, wrap and mirror. The texel-level wrap and mirror are those
  of OpenGL 4.6, 8.14.2 (`i mod N`, `(N-1) - mirror((i mod 2N) - N)`): CUDA documents them
  on the coordinate, which agrees except where x * N is an integer.
keq computes floor(x * N) exactly (an f32 times an integer below 2**24 is exact in f64); the
hardware's coordinate datapath is not documented, so a coordinate within rounding of a texel
boundary is the model's answer, not a measured one. A NaN coordinate's texel is unspecified
(an unknown function of the coordinates). Layered, cube and multi-sample textures, mipmaps
(`.level`, `.grad`), explicit samplers, offsets and depth compares are refused by name, as are
`suld.p`/`sust.p` and 3-D surfaces.
"""

from __future__ import annotations

from semantics.errors import UnsupportedError
from semantics.ir.operands import Vec
from semantics.ir.types import TYPES
from semantics.machine.views import View
from semantics.ops import register
from semantics.ops.texture_filtering import linear_fetch
from semantics.ops.texture_sampling import (
    GEOMETRIES, S32, axis_index, extents, fetch_coordinates, float_coordinate, load_texel,
    parts, texel_value, unspecified_texel, view_of, write_channels)

_SURFACE_MODES = ("trap", "clamp", "zero")


def plain_operands(x, what: str) -> None:
    """Refuse, by name, the optional operands keq does not model: a destination predicate
    (`d|p`), a coordinate offset `e` and a depth-compare value `f`."""
    if not isinstance(x.operand(0), Vec) or len(x.ins.operands) != 2:
        raise UnsupportedError(f"'{x.form.name}' with a destination predicate, a coordinate "
                               f"offset or a depth compare ({what}: not modelled)", x.ins.loc)


def _tex(x) -> None:
    form = x.form
    dst_t, coord_t = form.types[0], form.types[1]
    geom = next(g for g in GEOMETRIES if form.has(g))
    plain_operands(x, "tex")
    handle, coords = parts(x, 1)
    view, base = view_of(x, handle, "texture")
    coords = fetch_coordinates(x, view, geom, coords)
    if view.filter == "linear":
        linear_fetch(x, view, base, coords, dst_t, coord_t)
        return
    d = x.d
    indices, outside, nans = [], d.pconst(False), []
    for c_op, n in zip(coords, extents(d, view)):
        if coord_t.kind == "f":
            j, nan = float_coordinate(d, x.read(c_op, coord_t), n, view.normalized)
            nans.append(nan)
        else:
            if view.normalized:
                raise UnsupportedError(f"'{form.name}' with integer coordinates on a "
                                       f"normalized {view.describe()}", x.ins.loc)
            j = d.sext(x.read(c_op, S32), 32, 64)
        i, out = axis_index(d, view.address, j, n)
        indices.append(i)
        outside = d.por(outside, out)
    raw = load_texel(x, view, base, indices)
    value = d.ite(outside, d.const(0, dst_t.bits), texel_value(x, view, raw, dst_t),
                  dst_t.bits)
    if nans:
        value = unspecified_texel(x, view, nans, [x.read(c, coord_t) for c in coords],
                                  value, dst_t.bits)
    write_channels(x, view, value, dst_t)


@register("tex")
def _resolve_tex(form):
    # `.base` is level 0, the only level of a texture without mipmaps; `.level`, `.grad`
    # and the layered, cube and multi-sample geometries have no semantics (refused by name).
    geoms = form.flags & set(GEOMETRIES)
    if len(form.types) != 2 or form.vec != 4 or len(geoms) != 1 or \
            form.flags - geoms - {"base"}:
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
    xb = d.sext(x.read(coords[0], S32), 32, 64)
    last = d.sub(row, d.const(nbytes, 64), 64)        # the last byte offset an access fits at
    zero = d.const(0, 64)
    below, above = d.slt(xb, zero, 64), d.slt(last, xb, 64)
    outside = d.por(below, above)
    xc = d.ite(below, zero, d.ite(above, last, xb, 64), 64)
    offset = xc
    if len(coords) == 2:
        h = d.zext(d.splat(view.dims[1], 32), 32, 64)
        y = d.sext(x.read(coords[1], S32), 32, 64)
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
        handle, coords = parts(x, 0 if store else 1)
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
