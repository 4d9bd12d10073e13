"""The 2-texel-per-axis footprint: linear filtering (`tex` on a texture whose filter mode is
linear; 1d, 2d, 3d) and `tld4` (the four texels of a 2-D footprint, unweighted).

Sources (the texture rows of docs/semantics.md, "What the PTX ISA leaves open"):
- CUDA C++ Programming Guide, "Texture fetching" appendix, linear filtering: xB = x - 0.5
  (x in texel units: x, or x * N when normalized), i = floor(xB), alpha = frac(xB);
  tex(x) = (1 - alpha) T[i] + alpha T[i+1], bilinear and trilinear likewise, per axis;
  "alpha ... stored in 9-bit fixed point format with 8 bits of fractional value"; only for
  textures that return floating-point data.
- PTX ISA 9.7.10.4 (`tld4`): the four texels of the bilerp footprint "in counter-clockwise
  order starting at lower left"; Direct3D's gather4, whose description uses the same words,
  spells it out as the (u, v) offsets (-,+), (+,+), (+,-), (-,-), and GLSL's textureGather
  as T(i0,j1), T(i1,j1), T(i1,j0), T(i0,j0). keq returns that order (unchecked on silicon).

Every texel index (i and i + 1 per axis) goes through the addressing mode as a point sample
does, so each of the 2, 4 or 8 texels is a load in bounds, checked for races like any other.

The filtered value: the guide leaves the hardware's datapath open (how alpha is rounded to
1/256, the precision of the weighted sum), so symbolically it is an uninterpreted
deterministic function `keq!uf!tex/linear/<texture>` of the fetched texels, the coordinates
and the extents (two kernels that fetch the same coordinates of the same texture agree), and
every use records an `approximation` effect (the claim rests on it; an emulator run is no
evidence, and a refutation must hold for every such function). The emulator's value is
keq's named model, unchecked on silicon: alpha = round-to-nearest-even(256 * frac(xB)) / 256
(0 to 1 inclusive: 9 bits, 8 of them fractional), then per axis, nested x, y, z,
(1 - alpha) * T0 + alpha * T1 with each product and the sum rounded to nearest f32.
"""

from __future__ import annotations

from semantics.errors import UnsupportedError
from semantics.ir.operands import Vec
from semantics.ir.types import TYPES
from semantics.machine.views import View
from semantics.ops import register
from semantics.ops.texture_sampling import (
    F32_FROM, axis_index, extents, fetch_coordinates, footprint_coordinate, is_read,
    load_texel, missing_channel, parts, texel_value, unspecified_texel, view_of)

_F32 = TYPES["f32"]
_F32_ONE = 0x3F800000
_F32_2_POW_M8 = 0x3B800000          # 2**-8: one step of the 8-bit fractional weight
_F64_256 = 0x4070000000000000


def _footprint(x, view: View, coord_vals):
    """Per axis, ((i0, out0), (i1, out1)): the footprint's two texel indices after the
    addressing mode (and whether each is outside, border mode), and the NaN predicates."""
    d = x.d
    axes, nans = [], []
    for c, n in zip(coord_vals, extents(d, view)):
        j0, _, nan = footprint_coordinate(d, c, n, view.normalized)
        j1 = d.add(j0, d.const(1, 64), 64)
        axes.append((axis_index(d, view.address, j0, n), axis_index(d, view.address, j1, n)))
        nans.append(nan)
    return axes, nans


def _corner(x, view: View, base: int, axes, offsets, dst_t):
    """The texel at the footprint corner `offsets` (0 or 1 per axis) as `dst_t`; 0 (the
    border colour) where border addressing puts it outside."""
    d = x.d
    picked = [axes[a][o] for a, o in enumerate(offsets)]
    outside = d.pconst(False)
    for _, out in picked:
        outside = d.por(outside, out)
    raw = load_texel(x, view, base, [i for i, _ in picked])
    return d.ite(outside, d.const(0, dst_t.bits), texel_value(x, view, raw, dst_t),
                 dst_t.bits)


def linear_fetch(x, view: View, base: int, coords, dst_t, coord_t) -> None:
    """`tex` of a texture with linear filtering (called by `semantics.ops.texture`)."""
    form = x.form
    if coord_t.kind != "f":
        raise UnsupportedError(f"'{form.name}' with integer coordinates on linearly "
                               f"filtered {view.describe()} (keq models linear filtering "
                               f"of float coordinates)", x.ins.loc)
    if dst_t.name != "f32" or view.elem not in F32_FROM:
        raise UnsupportedError(f"'{form.name}' of linearly filtered {view.describe()}: "
                               f"linear filtering returns floating-point data only (CUDA "
                               f"guide); keq models it for .f32 fetches of f32 and f16 "
                               f"texels", x.ins.loc)
    d, k = x.d, len(coords)
    cvals = [x.read(c, coord_t) for c in coords]
    axes, _ = _footprint(x, view, cvals)
    texels = [_corner(x, view, base, axes, [(m >> a) & 1 for a in range(k)], _F32)
              for m in range(1 << k)]
    # (named without the extents, which may be terms: one assumption per texture and site)
    x.effect("approximation", f"linear filtering of texture '{view.name}' ({view.elem}, "
                              f"{k}-D; the emulator's is keq's model: weights rounded to "
                              f"1/256, f32 sums, unchecked on silicon)")
    dims = [d.splat(n, 32) for n in view.dims]
    args = texels + cvals + dims
    normalized = view.normalized

    def model(*lanes):            # (the emulator's: only the concrete domain calls it)
        return filtered(d, list(lanes[:1 << k]), lanes[1 << k:(1 << k) + k],
                        lanes[(1 << k) + k:], normalized)
    value = d.tensor_fn(f"tex/linear/{view.name}", 32, args, [32] * len(args), model,
                        x.choices)
    # (NaN coordinates need no separate case: the function is of the coordinates' bits)
    dst = x.operand(0)
    x.write(dst.elems[0], value, dst_t)
    for ch, e in zip("yzw", dst.elems[1:]):
        x.write(e, missing_channel(x, view, ch, value, 32, "tex") if is_read(x, e)
                else d.const(0, 32), dst_t)


def weight(d, c, n32, normalized: bool):
    """alpha of one axis as an f32: frac(xB) rounded to the nearest multiple of 1/256
    (ties to even), in [0, 1] (keq's model)."""
    n = d.zext(n32, 32, 64)
    j0, xb, _ = footprint_coordinate(d, c, n, normalized)
    frac = d.fsub("f64", "rn", xb, d.int2f(64, True, "f64", "rn", j0))     # exact, in [0, 1)
    steps = d.f2int("f64", "rn", d.fmul("f64", "rn", frac, d.const(_F64_256, 64)), 32, True)
    return d.fmul("f32", "rn", d.int2f(32, True, "f32", "rn", steps),
                  d.const(_F32_2_POW_M8, 32))


def filtered(d, texels: list, coords, dims, normalized: bool):
    """keq's model of the filtered value: `texels` (f32 bits; corner m has offset bit a of m
    along axis a) interpolated along x, then y, then z (see the module docstring)."""
    vals = list(texels)
    for c, n32 in zip(coords, dims):
        a = weight(d, c, n32, normalized)
        b = d.fsub("f32", "rn", d.const(_F32_ONE, 32), a)                   # exact
        vals = [d.fadd("f32", "rn", d.fmul("f32", "rn", b, lo), d.fmul("f32", "rn", a, hi))
                for lo, hi in zip(vals[0::2], vals[1::2])]
    return vals[0]


# counter-clockwise from lower left: (x offset, y offset) of d.x, d.y, d.z, d.w
TLD4_ORDER = ((0, 1), (1, 1), (1, 0), (0, 0))


def _tld4(x) -> None:
    form = x.form
    dst_t, comp = form.types[0], next(c for c in "rgba" if form.has(c))
    if not isinstance(x.operand(0), Vec) or len(x.ins.operands) != 2 or \
            len(x.operand(0).elems) != 4:
        raise UnsupportedError(f"'{form.name}' with a destination predicate, an offset or "
                               f"a depth compare (not modelled)", x.ins.loc)
    handle, coords = parts(x, 1)
    view, base = view_of(x, handle, "texture")
    coords = fetch_coordinates(x, view, "2d", coords)
    cvals = [x.read(c, _F32) for c in coords]
    axes, nans = _footprint(x, view, cvals)
    w = dst_t.bits
    for k, (offsets, reg) in enumerate(zip(TLD4_ORDER, x.operand(0).elems)):
        v = _corner(x, view, base, axes, offsets, dst_t)
        if comp != "r":           # (a one-channel format has no g, b, a)
            v = missing_channel(x, view, comp, v, w, "tld4")
        v = unspecified_texel(x, view, nans, cvals, v, w, site=f"tld4/{k}")
        x.write(reg, v, dst_t)


@register("tld4")
def _resolve_tld4(form):
    comps = form.flags & set("rgba")
    if len(form.types) != 2 or form.vec != 4 or len(comps) != 1 or \
            form.flags - comps != {"2d"}:
        return None
    if form.types[1].name != "f32" or form.types[0].name not in ("f32", "s32", "u32"):
        return None
    return _tld4


__all__ = ["linear_fetch", "filtered", "weight", "TLD4_ORDER"]
