"""3-D point sampling, linear filtering (1d, 2d, 3d) and `tld4` (`semantics/ops/texture.py`,
`texture_filtering.py`) against numpy models of the CUDA Programming Guide's texture
fetching, with every addressing mode, on the emulator and symbolically:

- 3-D point sampling returns T[k][j][i] (row-major, x fastest), the `.v4` coordinate's
  fourth element ignored;
- linear filtering on the emulator is keq's named model (weights rounded to 1/256, f32
  sums), bit for bit; symbolically it is the uninterpreted `keq!uf!tex/linear/<texture>` of
  the 2**k texels (each through the addressing mode), the coordinates and the extents, and
  every use records an `approximation` effect;
- `tld4.r` returns T(i0,j1), T(i1,j1), T(i1,j0), T(i0,j0); `.g/.b/.a` of a one-channel
  texture are unspecified; a NaN coordinate's texels are unspecified."""

from __future__ import annotations

import numpy as np
import pytest
import z3

from semantics.errors import UnsupportedError
from semantics.machine import prepare, run_kernel
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.machine.views import View
from semantics.ptx import parse_ptx

LANES = 32
DIMS = {"1d": (7,), "2d": (5, 3), "3d": (4, 3, 2)}
COORDS = {"1d": "{%f1}", "2d": "{%f1, %f2}", "3d": "{%f1, %f2, %f3, %f4}"}

KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 t, .param .u64 xyz, .param .u64 out)
{
.reg .f32 %f<13>;
.reg .b32 %r<12>;
.reg .b64 %rd<10>;
ld.param.u64 %rd1, [t];
ld.param.u64 %rd2, [xyz];
ld.param.u64 %rd3, [out];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 16;
add.s64 %rd5, %rd2, %rd4;
add.s64 %rd7, %rd3, %rd4;
ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd5];
mov.b32 %f6, 0;
mov.b32 %f7, 0;
mov.b32 %f8, 0;
FETCH
st.global.v4.f32 [%rd7], {%f5, %f6, %f7, %f8};
ret;
}
"""


def _kernel(fetch: str):
    return prepare(parse_ptx(KERNEL.replace("FETCH", fetch), "t.ptx"), "k")


def _tex(geom: str, dtype: str = "f32") -> str:
    return f"tex.{geom}.v4.{dtype}.f32 {{%f5, %f9, %f10, %f11}}, [%rd1, {COORDS[geom]}];"


def _index(j: int, n: int, mode: str) -> int | None:
    """The texel index along one axis of integer coordinate j (None: border, outside)."""
    if mode == "clamp":
        return min(max(j, 0), n - 1)
    if mode == "border":
        return j if 0 <= j < n else None
    if mode == "wrap":
        return j % n
    m = j % (2 * n)
    return m if m < n else 2 * n - 1 - m


def _position(c: float, n: int, normalized: bool) -> float:
    u = np.float64(c) * n if normalized else np.float64(c)
    return float(np.clip(u, -2.0**40, 2.0**40))


def _texel(texels: np.ndarray, dims, idx) -> np.float32:
    if any(i is None for i in idx):
        return np.float32(0)
    flat, stride = 0, 1
    for i, n in zip(idx, dims):
        flat += i * stride
        stride *= n
    return texels[flat]


def _point(texels, dims, c, mode, normalized):
    idx = [_index(int(np.floor(_position(x, n, normalized))), n, mode)
           for x, n in zip(c, dims)]
    return _texel(texels, dims, idx)


def _footprint(x: float, n: int, normalized: bool):
    xb = _position(x, n, normalized) - 0.5
    i0 = int(np.floor(xb))
    return i0, np.float32(np.round((xb - i0) * 256) / 256)      # (round half to even)


def _linear(texels, dims, c, mode, normalized):
    """The guide's formula with keq's named rounding: nested lerps in f32."""
    axes = [_footprint(x, n, normalized) for x, n in zip(c, dims)]
    k = len(dims)
    vals = []
    for m in range(1 << k):
        idx = [_index(i0 + ((m >> a) & 1), n, mode) for a, ((i0, _), n)
               in enumerate(zip(axes, dims))]
        vals.append(np.float32(_texel(texels, dims, idx)))
    for _, a in axes:
        b = np.float32(1) - a
        vals = [np.float32(b * lo) + np.float32(a * hi) for lo, hi in zip(vals[0::2],
                                                                          vals[1::2])]
    return vals[0]


def _points(geom: str, normalized: bool) -> np.ndarray:
    rng = np.random.default_rng(5)
    dims = DIMS[geom]
    pts = np.zeros((LANES, 4), np.float32)
    for a, n in enumerate(dims):
        pts[:, a] = rng.uniform(-1.5, 2.5, LANES) if normalized else \
            rng.uniform(-2 * n, 3 * n, LANES)
    pts[:4, :len(dims)] = 0.5 / np.array(dims) if normalized else 0.5
    pts[1, 0] = 1.0 if normalized else dims[0]            # on the last texel's edge
    pts[2, :len(dims)] = (np.array(dims) + 0.25) / (np.array(dims) if normalized else 1)
    pts[3, 0] = -1e30
    pts[:, 3] = np.nan                                    # (the ignored element)
    if geom != "3d":
        pts[:, len(dims):] = np.nan                       # (a .v4 vector: extras ignored)
    return pts


def _texels(n: int) -> np.ndarray:
    return (np.arange(n, dtype=np.float32) * 1.75 - 3.0) ** 2


MODES = [("clamp", False), ("border", False), ("clamp", True), ("wrap", True),
         ("mirror", True), ("border", True)]


def _run(fetch, view, pts, texels):
    return run_kernel(_kernel(fetch), None, 1, LANES,
                      {"t": texels, "xyz": pts.reshape(-1),
                       "out": np.zeros(4 * LANES, np.float32)}, views={0: view})


@pytest.mark.parametrize("mode,normalized", MODES)
def test_tex3d_point_sampling(mode, normalized):
    dims, pts = DIMS["3d"], _points("3d", normalized)
    texels = _texels(int(np.prod(dims)))
    view = View("texture", "t", "f32", dims, mode, "point", normalized)
    r = _run(_tex("3d"), view, pts, texels)
    got = r.buffers["out"].reshape(LANES, 4)[:, 0]
    want = [_point(texels, dims, p[:3], mode, normalized) for p in pts]
    assert got.view(np.uint32).tolist() == np.array(want, np.float32).view(np.uint32).tolist()
    assert not r.effects


@pytest.mark.parametrize("geom", ["1d", "2d", "3d"])
@pytest.mark.parametrize("mode,normalized", MODES)
def test_linear_filtering_emulator_is_the_named_model(geom, mode, normalized):
    dims, pts = DIMS[geom], _points(geom, normalized)
    texels = _texels(int(np.prod(dims)))
    view = View("texture", "t", "f32", dims, mode, "linear", normalized)
    r = _run(_tex(geom), view, pts, texels)
    got = r.buffers["out"].reshape(LANES, 4)[:, 0]
    want = np.array([_linear(texels, dims, p[:len(dims)], mode, normalized) for p in pts],
                    np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert [e.kind for e in r.effects] == ["approximation"]
    assert "linear filtering" in r.effects[0].what


def test_linear_filtering_of_f16_texels_widens_them():
    dims, pts = DIMS["2d"], _points("2d", False)
    texels = _texels(15).astype(np.float16)
    r = _run(_tex("2d"), View("texture", "t", "f16", dims, "clamp", "linear"), pts, texels)
    got = r.buffers["out"].reshape(LANES, 4)[:, 0]
    wide = texels.astype(np.float32)
    want = np.array([_linear(wide, dims, p[:2], "clamp", False) for p in pts], np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def _symbolic(fetch, view, pts, n_texels):
    xs = [z3.BitVec(f"c{k}", 32) for k in range(4 * len(pts))]
    ts = tuple(z3.BitVec(f"t{k}", 32) for k in range(n_texels))
    launch = run_symbolic(_kernel(fetch), (1, 1, 1), (len(pts), 1, 1),
                          [SymBuffer(32, ts), SymBuffer(32, tuple(xs)),
                           SymBuffer(32, (0,) * (4 * len(pts)))], views={0: view},
                          resolver=lambda off, cond: set(range(0, 4 * n_texels, 4)))
    bits = pts.view(np.uint32).reshape(-1).tolist()
    sub = [(x, z3.BitVecVal(b, 32)) for x, b in zip(xs, bits)]
    return launch, ts, sub



@pytest.mark.parametrize("mode,normalized", [("border", False), ("mirror", True)])
def test_tex3d_point_sampling_symbolic(mode, normalized):
    """Symbolic coordinates: the fetched term, at each test point, is the texel the model
    names (or 0 outside, border)."""
    dims, pts = DIMS["3d"], _points("3d", normalized)[:8]
    view = View("texture", "t", "f32", dims, mode, "point", normalized)
    launch, ts, sub = _symbolic(_tex("3d"), view, pts, 24)
    for lane, p in enumerate(pts):
        term = z3.simplify(z3.substitute(launch.buffers["out"][4 * lane], *sub))
        idx = [_index(int(np.floor(_position(x, n, normalized))), n, mode)
               for x, n in zip(p[:3], dims)]
        if any(i is None for i in idx):
            assert z3.is_bv_value(term) and term.as_long() == 0
        else:
            assert z3.eq(term, ts[idx[0] + dims[0] * (idx[1] + dims[1] * idx[2])]), lane

@pytest.mark.parametrize("geom", ["1d", "2d", "3d"])
@pytest.mark.parametrize("mode,normalized", [("border", False), ("mirror", True)])
def test_linear_filtering_symbolic_is_a_function_of_the_footprint(geom, mode, normalized):
    """The term is keq!uf!tex/linear/t applied to the footprint's texels (border: 0) in
    corner order, the coordinates and the extents; the loads are built from symbolic
    coordinates, and each texel argument, at a test point, is the texel the model names."""
    dims, pts = DIMS[geom], _points(geom, normalized)[:6]
    n = int(np.prod(dims))
    view = View("texture", "t", "f32", dims, mode, "linear", normalized)
    launch, ts, sub = _symbolic(_tex(geom), view, pts, n)
    assert [e.kind for e in launch.effects] == ["approximation"]
    k = len(dims)
    for lane, p in enumerate(pts):
        term = z3.simplify(z3.substitute(launch.buffers["out"][4 * lane], *sub))
        assert term.decl().name() == "keq!uf!tex/linear/t"
        args = [term.arg(i) for i in range(term.num_args())]
        assert len(args) == (1 << k) + 2 * k
        axes = [_footprint(x, m, normalized) for x, m in zip(p[:k], dims)]
        for m, a in enumerate(args[:1 << k]):
            idx = [_index(i0 + ((m >> b) & 1), d, mode) for b, ((i0, _), d)
                   in enumerate(zip(axes, dims))]
            if any(i is None for i in idx):
                assert z3.is_bv_value(a) and a.as_long() == 0
            else:
                flat = sum(i * int(np.prod(dims[:b])) for b, i in enumerate(idx))
                assert z3.eq(a, ts[flat]), (lane, m, a)
        assert [a.as_long() for a in args[1 << k:]] == \
            p[:k].view(np.uint32).tolist() + list(dims)


def test_linear_filtering_agrees_by_congruence_only():
    """Two lanes fetching the same coordinates get the same term; another coordinate in
    the same footprint (same texels) gets another application, not assumed equal."""
    dims = DIMS["2d"]
    pts = np.zeros((3, 4), np.float32)
    pts[:, :2] = [[1.5, 1.25], [1.5, 1.25], [1.75, 1.25]]
    view = View("texture", "t", "f32", dims, "clamp", "linear")
    launch, _, sub = _symbolic(_tex("2d"), view, pts, 15)
    out = [z3.simplify(z3.substitute(launch.buffers["out"][4 * k], *sub)) for k in range(3)]
    s = z3.Solver()
    s.add(out[0] != out[1])
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(out[0] != out[2])
    assert s.check() == z3.sat


@pytest.mark.parametrize("fetch, message", [
    ("tex.2d.v4.s32.f32 {%r2, %r3, %r4, %r5}, [%rd1, {%f1, %f2}];", "floating-point data"),
    ("tex.2d.v4.f32.s32 {%f5, %f9, %f10, %f11}, [%rd1, {%r2, %r3}];", "integer coordinates"),
])
def test_linear_filtering_outside_float_results_is_refused(fetch, message):
    view = View("texture", "t", "f32", DIMS["2d"], "clamp", "linear")
    with pytest.raises(UnsupportedError, match=message):
        _run("mov.u32 %r2, 0;\nmov.u32 %r3, 0;\n" + fetch, view, _points("2d", False),
             _texels(15))


def _gather(comp: str = "r", dtype: str = "f32") -> str:
    return f"tld4.{comp}.2d.v4.{dtype}.f32 {{%f5, %f6, %f7, %f8}}, [%rd1, {{%f1, %f2}}];"


def _tld4_model(texels, dims, c, mode, normalized):
    (i0, _), (j0, _) = (_footprint(x, n, normalized) for x, n in zip(c, dims))
    return [_texel(texels, dims, [_index(i0 + dx, dims[0], mode), _index(j0 + dy, dims[1],
                                                                         mode)])
            for dx, dy in ((0, 1), (1, 1), (1, 0), (0, 0))]


@pytest.mark.parametrize("mode,normalized", MODES)
def test_tld4_returns_the_footprint_counter_clockwise_from_lower_left(mode, normalized):
    dims, pts = DIMS["2d"], _points("2d", normalized)
    texels = _texels(15)
    for filt in ("point", "linear"):          # (the filter mode does not matter)
        view = View("texture", "t", "f32", dims, mode, filt, normalized)
        r = _run(_gather(), view, pts, texels)
        got = r.buffers["out"].reshape(LANES, 4)
        want = np.array([_tld4_model(texels, dims, p[:2], mode, normalized) for p in pts],
                        np.float32)
        assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
        assert not r.effects


def test_tld4_symbolic_coordinates_name_the_same_texels():
    dims, pts = DIMS["2d"], _points("2d", False)[:6]
    view = View("texture", "t", "f32", dims, "border", "point")
    launch, ts, sub = _symbolic(_gather(), view, pts, 15)
    values = np.arange(15, dtype=np.float32) + 1
    fix = [(t, z3.BitVecVal(int(b), 32)) for t, b in zip(ts, values.view(np.uint32))]
    for lane, p in enumerate(pts):
        want = np.array(_tld4_model(values, dims, p[:2], "border", False), np.float32)
        got = [z3.simplify(z3.substitute(launch.buffers["out"][4 * lane + k], *(sub + fix)))
               for k in range(4)]
        assert [g.as_long() for g in got] == want.view(np.uint32).tolist()


def test_tld4_integer_texels_and_missing_channels():
    dims, pts = DIMS["2d"], _points("2d", False)
    texels = np.arange(15, dtype=np.int16) - 7
    view = View("texture", "t", "s16", dims, "clamp", "point")
    fetch = _gather(dtype="s32").replace("%f5, %f6, %f7, %f8", "%r2, %r3, %r4, %r5") + \
        "\nmov.b32 %f5, %r2;\nmov.b32 %f6, %r3;\nmov.b32 %f7, %r4;\nmov.b32 %f8, %r5;"
    r = _run(fetch, view, pts, texels)
    got = r.buffers["out"].view(np.int32).reshape(LANES, 4)
    want = [_tld4_model(texels, dims, p[:2], "clamp", False) for p in pts]
    assert got.tolist() == np.array(want, np.int32).tolist() and not r.effects
    r = _run(fetch.replace("tld4.r", "tld4.g"), view, pts, texels)
    assert [e.kind for e in r.effects] == ["unspecified"] and ".g" in r.effects[0].what


def test_tld4_nan_coordinate_is_unspecified():
    pts = np.full((LANES, 4), np.nan, np.float32)
    r = _run(_gather(), View("texture", "t", "f32", DIMS["2d"], "clamp", "point"), pts,
             _texels(15))
    assert any(e.kind == "unspecified" and "NaN" in e.what for e in r.effects)


@pytest.mark.parametrize("fetch", [
    "tex.a2d.v4.f32.f32 {%f5, %f9, %f10, %f11}, [%rd1, {%r2, %f1, %f2, %f3}];",
    "tex.level.2d.v4.f32.f32 {%f5, %f9, %f10, %f11}, [%rd1, {%f1, %f2}], %f3;",
    "tex.grad.2d.v4.f32.f32 {%f5, %f9, %f10, %f11}, [%rd1, {%f1, %f2}], {%f1, %f2}, "
    "{%f3, %f4};",
    "tex.cube.v4.f32.f32 {%f5, %f9, %f10, %f11}, [%rd1, {%f1, %f2, %f3, %f4}];",
    "tld4.r.a2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%r2, %f1, %f2, %f3}];",
])
def test_layered_cube_and_mipmapped_fetches_stay_unsupported(fetch):
    from semantics.ops import is_supported
    mod = parse_ptx(KERNEL.replace("FETCH", "mov.u32 %r2, 0;\n" + fetch), "t.ptx")
    forms = [i.form for i in mod.functions["k"].instructions if i.form.opcode in ("tex",
                                                                                   "tld4")]
    assert forms and not any(is_supported(f) for f in forms)


def test_a_fetch_whose_geometry_is_not_the_textures_is_refused():
    with pytest.raises(UnsupportedError, match=r"\(3d\) on 2-D"):
        _run(_tex("3d"), View("texture", "t", "f32", DIMS["2d"]), _points("3d", False),
             _texels(15))


def test_tex3d_integer_coordinates_and_texels():
    """`tex.3d.v4.u32.s32`: integer texel indices per axis (border: 0 outside), u16 texels
    zero-extended."""
    dims = DIMS["3d"]
    texels = (np.arange(24, dtype=np.uint16) * 2500)
    rng = np.random.default_rng(9)
    ijk = np.zeros((LANES, 4), np.int32)
    for a, n in enumerate(dims):
        ijk[:, a] = rng.integers(-2, n + 2, LANES)
    fetch = "tex.3d.v4.u32.s32 {%r2, %r3, %r4, %r5}, [%rd1, {%r6, %r7, %r8, %r9}];\n" \
            "mov.b32 %f5, %r2;"
    regs = "mov.b32 %r6, %f1;\nmov.b32 %r7, %f2;\nmov.b32 %r8, %f3;\nmov.b32 %r9, %f4;\n"
    r = _run(regs + fetch, View("texture", "t", "u16", dims, "border"),
             ijk.view(np.float32), texels)
    got = r.buffers["out"].view(np.uint32).reshape(LANES, 4)[:, 0]
    want = [int(_texel(texels, dims, [_index(int(j), n, "border") for j, n in
                                      zip(p[:3], dims)])) for p in ijk]
    assert got.tolist() == want


@pytest.mark.parametrize("fetch, view", [
    (_tex("2d"), View("texture", "t", "f32", DIMS["2d"], "clamp", "linear")),
    (_gather(), View("texture", "t", "f32", DIMS["2d"], "clamp", "point")),
])
def test_each_footprint_texel_is_a_fetch_under_the_memory_model(fetch, view):
    """A store to the texels a linear or gather fetch reads is undefined, as for `tex`."""
    from semantics.machine.memory import UndefinedBehavior
    pts = np.zeros((LANES, 4), np.float32)
    pts[:, :2] = 1.0                          # (footprint: texels (0..1, 0..1))
    with pytest.raises(UndefinedBehavior, match="non-coherent"):
        run_kernel(_kernel(fetch + "\nst.global.f32 [%rd1+24], %f5;"), None, 1, LANES,
                   {"t": _texels(15), "xyz": pts.reshape(-1),
                    "out": np.zeros(4 * LANES, np.float32)}, views={0: view},
                   detect_races=True)
