"""Textures and surfaces (`semantics/ops/texture.py`): point sampling with every addressing
mode, unnormalized, normalized and integer coordinates, against a numpy model of the CUDA
Programming Guide's texture fetching (texel-level wrap and mirror as OpenGL 8.14.2), on the
emulator and symbolically (symbolic coordinates, each answer read back from the terms); a
NaN coordinate's texel is unspecified; surfaces `suld`/`sust` `.b` with byte x coordinates
and `.clamp`/`.zero`/`.trap`; a texture fetch of memory the kernel writes is undefined."""

from __future__ import annotations

import numpy as np
import pytest
import z3

from semantics.errors import UnsupportedError
from semantics.machine import prepare, run_kernel
from semantics.machine.memory import Trap, UndefinedBehavior
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.machine.views import View
from semantics.ptx import parse_ptx

W, H = 5, 3
LANES = 32

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 t, .param .u64 xy, .param .u64 out)
{
.reg .pred %p<2>;
.reg .f32 %f<9>;
.reg .b32 %r<12>;
.reg .b64 %rd<10>;
ld.param.u64 %rd1, [t];
ld.param.u64 %rd2, [xy];
ld.param.u64 %rd3, [out];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 8;
add.s64 %rd5, %rd2, %rd4;
mul.wide.u32 %rd6, %r1, 4;
add.s64 %rd7, %rd3, %rd6;
"""
TEX2D = HEAD + """ld.global.v2.f32 {%f1, %f2}, [%rd5];
tex.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}];
st.global.f32 [%rd7], %f5;
ret;
}
"""
FETCH = HEAD + """ld.global.v2.u32 {%r2, %r3}, [%rd5];
tex.1d.v4.s32.s32 {%r4, %r5, %r6, %r7}, [%rd1, {%r2}];
st.global.u32 [%rd7], %r4;
ret;
}
"""


def _index(c: float, n: int, mode: str, normalized: bool) -> int | None:
    """The texel index along one axis (None: border, outside)."""
    u = np.float64(c) * n if normalized else np.float64(c)
    j = int(np.floor(np.clip(u, -2.0**40, 2.0**40)))      # (past every extent alike)
    if mode == "clamp":
        return min(max(j, 0), n - 1)
    if mode == "border":
        return j if 0 <= j < n else None
    if mode == "wrap":
        return j % n
    m = j % (2 * n)
    return m if m < n else 2 * n - 1 - m


def _expected(texels: np.ndarray, xy: np.ndarray, mode: str, normalized: bool) -> np.ndarray:
    out = np.zeros(len(xy), np.uint32)
    bits = texels.view(np.uint32)
    for k, (cx, cy) in enumerate(xy):
        i, j = _index(cx, W, mode, normalized), _index(cy, H, mode, normalized)
        out[k] = 0 if i is None or j is None else bits[j * W + i]
    return out


def _coords(normalized: bool) -> np.ndarray:
    rng = np.random.default_rng(3)
    if normalized:
        pts = rng.uniform(-2.5, 2.5, (LANES, 2))
        pts[:6] = [[0.0, 0.0], [1.0, 1.0], [-0.2, 0.99], [0.2, 1.0 / 3.0], [2.0, -1.0],
                   [-1e30, 1e30]]
    else:
        pts = rng.uniform(-3 * W, 3 * W, (LANES, 2))
        pts[:6] = [[0.5, 0.5], [4.999, 2.999], [5.0, 3.0], [-0.25, -1.0], [-0.0, 1e30],
                   [float("inf"), float("-inf")]]
    return pts.astype(np.float32)


def _texels() -> np.ndarray:
    return (np.arange(W * H, dtype=np.float32) + 1.5) * 3


def _view(mode: str, normalized: bool, elem: str = "f32", dims=(W, H)) -> View:
    return View("texture", "t", elem, dims, mode, "point", normalized)


MODES = [("clamp", False), ("border", False), ("clamp", True), ("border", True),
         ("wrap", True), ("mirror", True)]


@pytest.mark.parametrize("mode,normalized", MODES)
def test_tex2d_point_sampling_concrete(mode, normalized):
    xy = _coords(normalized)
    r = run_kernel(prepare(parse_ptx(TEX2D, "t.ptx"), "k"), None, 1, LANES,
                   {"t": _texels(), "xy": xy.reshape(-1), "out": np.zeros(LANES, np.float32)},
                   views={0: _view(mode, normalized)})
    got = r.buffers["out"].view(np.uint32)
    assert got.tolist() == _expected(_texels(), xy, mode, normalized).tolist()


@pytest.mark.parametrize("mode,normalized", MODES)
def test_tex2d_point_sampling_symbolic(mode, normalized):
    """Symbolic coordinates: the fetched term, evaluated at each test point, is the texel
    the model names (the index computation and the load are built as terms)."""
    xy = _coords(normalized)[:8]
    lanes = len(xy)
    cs = [z3.BitVec(f"c{k}", 32) for k in range(2 * lanes)]
    texel_bits = _texels().view(np.uint32).tolist()
    launch = run_symbolic(prepare(parse_ptx(TEX2D, "t.ptx"), "k"), (1, 1, 1), (lanes, 1, 1),
                          [SymBuffer(32, tuple(texel_bits)), SymBuffer(32, tuple(cs)),
                           SymBuffer(32, (0,) * lanes)],
                          views={0: _view(mode, normalized)},
                          resolver=lambda off, cond: set(range(0, 4 * W * H, 4)))
    want = _expected(_texels(), xy, mode, normalized)
    bits = xy.view(np.uint32).reshape(-1).tolist()
    for k in range(lanes):
        term = launch.buffers["out"][k]
        sub = [(cs[2 * k], z3.BitVecVal(bits[2 * k], 32)),
               (cs[2 * k + 1], z3.BitVecVal(bits[2 * k + 1], 32))]
        got = z3.simplify(z3.substitute(term, *sub)) if isinstance(term, z3.ExprRef) else term
        assert int(str(got)) == int(want[k]), (mode, normalized, xy[k])


def test_integer_coordinates_tex1dfetch():
    """`tex1Dfetch`: an s32 texel index; clamp or border (0 outside) on a 1-D texture of
    integer texels (s16, sign-extended to the .s32 result)."""
    texels = np.arange(-6, 6, dtype=np.int16)
    idx = np.array([[k - 8, 0] for k in range(LANES)], np.int32).view(np.uint32)
    for mode in ("clamp", "border"):
        r = run_kernel(prepare(parse_ptx(FETCH, "t.ptx"), "k"), None, 1, LANES,
                       {"t": texels, "xy": idx.reshape(-1), "out": np.zeros(LANES, np.int32)},
                       views={0: View("texture", "t", "s16", (len(texels),), mode)})
        want = []
        for k in range(LANES):
            i = k - 8
            if mode == "clamp":
                want.append(int(texels[min(max(i, 0), len(texels) - 1)]))
            else:
                want.append(int(texels[i]) if 0 <= i < len(texels) else 0)
        assert r.buffers["out"].tolist() == want


def test_nan_coordinate_is_unspecified():
    xy = np.full((LANES, 2), np.nan, np.float32)
    r = run_kernel(prepare(parse_ptx(TEX2D, "t.ptx"), "k"), None, 1, LANES,
                   {"t": _texels(), "xy": xy.reshape(-1), "out": np.zeros(LANES, np.float32)},
                   views={0: _view("clamp", False)})
    assert any(e.kind == "unspecified" and "NaN coordinate" in e.what for e in r.effects)


def test_unread_channels_record_nothing_read_channels_are_unspecified():
    xy = np.zeros((LANES, 2), np.float32)
    args = {"t": _texels(), "xy": xy.reshape(-1), "out": np.zeros(LANES, np.float32)}
    r = run_kernel(prepare(parse_ptx(TEX2D, "t.ptx"), "k"), None, 1, LANES, args,
                   views={0: _view("clamp", False)})
    assert not r.effects
    reads_y = TEX2D.replace("st.global.f32 [%rd7], %f5;", "st.global.f32 [%rd7], %f6;")
    r = run_kernel(prepare(parse_ptx(reads_y, "t.ptx"), "k"), None, 1, LANES, args,
                   views={0: _view("clamp", False)})
    assert [e.kind for e in r.effects] == ["unspecified"] and ".y" in r.effects[0].what


def test_linear_filtering_of_integer_texels_is_refused_by_name():
    """Linear filtering returns floats only (CUDA guide); keq models f32 and f16 texels
    (tests/semantics/test_texture_filtering.py)."""
    xy = np.zeros((LANES, 2), np.float32)
    with pytest.raises(UnsupportedError, match="linear filtering returns floating-point"):
        run_kernel(prepare(parse_ptx(TEX2D, "t.ptx"), "k"), None, 1, LANES,
                   {"t": np.zeros(W * H, np.int32), "xy": xy.reshape(-1),
                    "out": np.zeros(LANES, np.float32)},
                   views={0: View("texture", "t", "s32", (W, H), "clamp", "linear")})


def test_handle_without_a_view_is_refused():
    xy = np.zeros((LANES, 2), np.float32)
    with pytest.raises(UnsupportedError, match="no texture object"):
        run_kernel(prepare(parse_ptx(TEX2D, "t.ptx"), "k"), None, 1, LANES,
                   {"t": _texels(), "xy": xy.reshape(-1), "out": np.zeros(LANES, np.float32)})


WRITES_THEN_FETCHES = TEX2D.replace("st.global.f32 [%rd7], %f5;",
                                    "st.global.f32 [%rd7], %f5;\nst.global.f32 [%rd1], %f5;")


def test_fetch_of_memory_the_kernel_writes_is_undefined():
    xy = np.zeros((LANES, 2), np.float32)
    with pytest.raises(UndefinedBehavior, match="non-coherent"):
        run_kernel(prepare(parse_ptx(WRITES_THEN_FETCHES, "t.ptx"), "k"), None, 1, LANES,
                   {"t": _texels(), "xy": xy.reshape(-1), "out": np.zeros(LANES, np.float32)},
                   views={0: _view("clamp", False)}, detect_races=True)


SURF = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 s, .param .u64 xy)
{
.reg .b32 %r<12>;
.reg .b64 %rd<10>;
ld.param.u64 %rd1, [s];
ld.param.u64 %rd2, [xy];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 8;
add.s64 %rd5, %rd2, %rd4;
ld.global.v2.u32 {%r2, %r3}, [%rd5];
add.u32 %r8, %r1, 100;
sust.b.2d.b32.MODE [%rd1, {%r2, %r3}], {%r8};
ret;
}
"""
SULD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 s, .param .u64 xy)
{
.reg .b32 %r<12>;
.reg .b64 %rd<10>;
ld.param.u64 %rd1, [s];
ld.param.u64 %rd2, [xy];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 8;
add.s64 %rd5, %rd2, %rd4;
ld.global.v2.u32 {%r2, %r3}, [%rd5];
suld.b.2d.b32.MODE {%r8}, [%rd1, {%r2, %r3}];
st.global.u32 [%rd5], %r8;
ret;
}
"""


def _surface_points():
    """(x in bytes, y) per lane: in range, past each edge, and negative."""
    pts = [(4 * (k % W), k % H) for k in range(LANES)]
    pts[:5] = [(4 * W, 0), (-4, 1), (0, H), (4 * (W - 1), -1), (4 * W + 8, H + 2)]
    return np.array(pts, np.int32)


def _surface_model(pts, mode: str):
    """(in-range flag, clamped (x texel, y)) per lane."""
    out = []
    for xb, y in pts.tolist():
        inside = 0 <= xb <= 4 * (W - 1) and 0 <= y < H
        out.append((inside, min(max(xb, 0), 4 * (W - 1)) // 4, min(max(y, 0), H - 1)))
    return out


@pytest.mark.parametrize("mode", ["clamp", "zero"])
def test_surface_store_and_load_modes(mode):
    pts = _surface_points()
    sv = View("surface", "s", "u32", (W, H))
    k = prepare(parse_ptx(SURF.replace("MODE", mode), "t.ptx"), "k")
    # one writer per place: only the lanes whose clamped target is unique write (else race)
    model = _surface_model(pts, mode)
    img = np.zeros(W * H, np.uint32)
    keep = []
    seen = set()
    for lane, (inside, xi, yi) in enumerate(model):
        if (inside or mode == "clamp") and (xi, yi) in seen:
            continue
        if inside or mode == "clamp":
            seen.add((xi, yi))
            img[yi * W + xi] = lane + 100
        keep.append(lane)
    lanes = len(keep)
    sub = pts[keep]
    r = run_kernel(k, None, 1, lanes, {"s": np.zeros(W * H, np.uint32),
                                       "xy": sub.view(np.uint32).reshape(-1)},
                   views={0: sv})
    want = np.zeros(W * H, np.uint32)
    for j, lane in enumerate(keep):
        inside, xi, yi = model[lane]
        if inside or mode == "clamp":
            want[yi * W + xi] = j + 100
    assert r.buffers["s"].tolist() == want.tolist()
    img = np.arange(W * H, dtype=np.uint32) + 7
    r = run_kernel(prepare(parse_ptx(SULD.replace("MODE", mode), "t.ptx"), "k"), None, 1,
                   LANES, {"s": img, "xy": pts.view(np.uint32).reshape(-1)}, views={0: sv})
    got = r.buffers["xy"].reshape(LANES, 2)[:, 0].tolist()
    want = [int(img[yi * W + xi]) if inside or mode == "clamp" else 0
            for inside, xi, yi in model]
    assert got == want


def test_surface_trap_out_of_range_faults_in_range_does_not():
    sv = View("surface", "s", "u32", (W, H))
    k = prepare(parse_ptx(SULD.replace("MODE", "trap"), "t.ptx"), "k")
    inside = np.array([(4 * (k_ % W), k_ // W) for k_ in range(W * H)], np.int32)
    img = np.arange(W * H, dtype=np.uint32)
    r = run_kernel(k, None, 1, W * H, {"s": img, "xy": inside.view(np.uint32).reshape(-1)},
                   views={0: sv})
    assert r.buffers["xy"].reshape(-1, 2)[:, 0].tolist() == img.tolist()
    for bad in [(4 * W, 0), (-4, 0), (0, H), (0, -1), (4 * W - 2, 0)]:
        pts = np.array([bad], np.int32)
        with pytest.raises(Trap, match="out of range .* .trap"):
            run_kernel(k, None, 1, 1, {"s": img, "xy": pts.view(np.uint32).reshape(-1)},
                       views={0: sv})


def test_surface_trap_symbolic_coordinate_is_an_obligation_not_a_guess():
    """A symbolic x coordinate that may leave the surface: the trap is a condition the
    verifier must decide (no fixed-input guess); in range, it needs nothing."""
    from semantics.machine.executor import ShapeMachineryNeeded
    k = prepare(parse_ptx(SULD.replace("MODE", "trap"), "t.ptx"), "k")
    x = z3.BitVec("x", 32)
    with pytest.raises(ShapeMachineryNeeded):
        run_symbolic(k, (1, 1, 1), (1, 1, 1), [SymBuffer(32, tuple(range(W * H))),
                                               SymBuffer(32, (x, 0))],
                     views={0: View("surface", "s", "u32", (W, H))})


# A surface read of bytes written earlier in the launch returns undefined data (CUDA guide:
# surface reads are not coherent with the launch's writes); read, then write in place, is
# fine. `ORDER` is `sust` then `suld` (or the reverse) of one texel per thread.
INPLACE = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 s)
{
.reg .b32 %r<6>;
.reg .b64 %rd<2>;
ld.param.u64 %rd1, [s];
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 2;
mov.u32 %r3, 0;
ORDER
ret;
}
"""
READ = "suld.b.2d.b32.trap {%r4}, [%rd1, {%r2, %r3}];\nadd.u32 %r5, %r4, 1;"
WRITE = "sust.b.2d.b32.trap [%rd1, {%r2, %r3}], {%r5};"


@pytest.mark.parametrize("write_first", [False, True])
def test_a_surface_read_after_a_write_of_its_bytes_is_undefined(write_first):
    order = (f"mov.u32 %r5, 7;\n{WRITE}\n{READ}" if write_first else f"{READ}\n{WRITE}")
    k = prepare(parse_ptx(INPLACE.replace("ORDER", order), "t.ptx"), "k")
    sv = View("surface", "s", "u32", (4, 1))
    img = np.arange(4, dtype=np.uint32)
    if write_first:
        with pytest.raises(UndefinedBehavior, match="surface read.* written before it"):
            run_kernel(k, None, 1, 4, {"s": img.copy()}, views={0: sv}, detect_races=True)
    else:
        r = run_kernel(k, None, 1, 4, {"s": img.copy()}, views={0: sv}, detect_races=True)
        assert r.buffers["s"].tolist() == [1, 2, 3, 4]
    xs = tuple(z3.BitVec(f"s[{i}]", 32) for i in range(4))
    launch = run_symbolic(k, (1, 1, 1), (4, 1, 1), [SymBuffer(32, xs)], views={0: sv},
                          detect_races=True)
    undefined = [p for p in launch.races if p.kind == "undefined"]
    assert bool(undefined) == write_first
    assert not [p for p in launch.races if p.kind == "race"]
