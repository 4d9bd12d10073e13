"""The corpus families test_emulator_corpus.py leaves out (textures and surfaces, fp8, bar.red,
programmatic dependent launch) on the concrete emulator, each side against a numpy model of
its CUDA source. Kept apart because their sides need what that file's runner does not give:
texture and surface objects, several launches, fp8 codes.

Bit-exact throughout: the texture images hold small integers where a filter weights them
(every bilinear weight here is a multiple of 1/4, so the filtered value is exact whatever the
order of its adds), and random f32 where a kernel only adds in a fixed order. Planted bugs
show here as a different result, except the early read before griddepcontrol.wait: the
emulator runs launches one after another, so only the race check (keq verify) sees it.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from semantics.machine import MemoryFault
from verifier.emulate import run_side
from verifier.spec import load_spec, make_inputs

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
FAMILIES = ("texture", "fp8", "block_reduce", "pdl")
SPECS = sorted(p for f in FAMILIES for p in (KERNELS / f).glob("*.toml"))
F32 = np.float32

POINTS = {
    "texture": [{"w": 1, "h": 1, "d": 1}, {"w": 7, "h": 3, "d": 2}, {"w": 40, "h": 2, "d": 3}],
    "fp8": [{"n": 1}, {"n": 9}, {"n": 256}],
    "block_reduce": [{"n": 1}, {"n": 17}, {"n": 40}],
    "pdl": [{"rows": 1, "cols": 1}, {"rows": 2, "cols": 3}, {"rows": 3, "cols": 4}],
}


def _sides():
    """(spec, role) once per kernel launch list and texture modes."""
    seen = {}
    for path in SPECS:
        spec = load_spec(path)
        for role in ("reference", "candidate"):
            side = spec.side(role)
            key = (tuple(s.kernel for s in side.launches), side.arg_names,
                   tuple(v.claim_text() for v in spec.views if v.name in side.arg_names))
            seen.setdefault(key, (path, role))
    return list(seen.values())


def _cases():
    for path, role in _sides():
        spec = load_spec(path)
        ranges = {p.name: p.range for p in spec.scalars if p.range is not None}
        for pt in POINTS[path.parent.name]:
            pt = {k: v for k, v in pt.items() if k in ranges}
            if all(ranges[k][0] <= v <= ranges[k][1] for k, v in pt.items()):
                kernels = "+".join(s.kernel for s in spec.side(role).launches)
                yield pytest.param(path, role, pt, id=f"{path.parent.name}/{path.stem}:{role}:"
                                   f"{kernels}:" + ",".join(f"{k}={v}" for k, v in pt.items()))


CASES = list(_cases())


def _same_f32(got, want):
    got, want = np.asarray(got, F32), np.asarray(want, F32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


# ------------------------------------------------------------------ models

def _texel(img, x, y, border):
    """img[y, x] of a clamping (or, border, 0-outside) 2-D texture."""
    h, w = img.shape
    if border and not (0 <= x < w and 0 <= y < h):
        return F32(0)
    return img[min(max(y, 0), h - 1), min(max(x, 0), w - 1)]


def _bilinear(img, u, v):
    """Linear filtering at unnormalized (u, v), clamped: exact for these weights."""
    u, v = u - 0.5, v - 0.5
    i, j = int(np.floor(u)), int(np.floor(v))
    a, b = u - i, v - j
    t = lambda x, y: float(_texel(img, x, y, False))  # noqa: E731
    return F32((1 - a) * (1 - b) * t(i, j) + a * (1 - b) * t(i + 1, j)
               + (1 - a) * b * t(i, j + 1) + a * b * t(i + 1, j + 1))


def _texture(k, spec, v, s):
    w, h = s["w"], s["h"]
    if k.startswith("copy3d"):
        d = s["d"]
        vol = v["vol"].reshape(d, h, w)
        if k == "copy3d_tex_swapped":   # BUG shown: texel (x, z, y), clamped
            return "out", np.array([[[vol[min(y, d - 1), min(z, h - 1), x] for x in range(w)]
                                     for y in range(h)] for z in range(d)]).reshape(-1)
        return "out", v["vol"]
    if k.startswith(("scale_surf", "scale_ref")):
        return "dst", F32(2) * v["src"]
    img = v["img"].reshape(h, w)
    border = any(x.address == "border" for x in spec.views)
    T = lambda x, y: _texel(img, x, y, border)  # noqa: E731
    if k.startswith("blur"):
        left = -2 if k == "blur_tex_offbyone" else -1     # BUG shown: texel x - 2
        return "out", np.array([[(T(x + left, y) + T(x, y)) + T(x + 1, y) for x in range(w)]
                                for y in range(h)], F32).reshape(-1)
    if k.startswith("shift"):
        return "out", np.roll(img, -1, axis=1).reshape(-1)
    if k.startswith("quad"):
        quad = [(0, 1), (1, 1), (1, 0), (0, 0)]
        if k == "quad_gather_order":                    # BUG shown: reversed components
            quad = quad[::-1]
        return "out", np.array([[[T(x + dx, y + dy) for dx, dy in quad] for x in range(w)]
                                for y in range(h)], F32).reshape(-1)
    if k.startswith("upsample"):
        c = 0.0 if k == "upsample_tex_corner" else 0.5  # (the missing +0.5: other samples)
        return "out", np.array([[_bilinear(img, (x + c) * 0.5, (y + c) * 0.5)
                                 for x in range(2 * w)] for y in range(2 * h)], F32).reshape(-1)
    raise AssertionError(f"no model for {k}")


def _e4m3(y, ml):
    with np.errstate(over="ignore", invalid="ignore"):
        q = y.astype(ml.float8_e4m3fn).view(np.uint8).copy()
    over = np.abs(y) > 448
    q[over] = np.where(np.signbit(y[over]), 0xFE, 0x7E)       # .satfinite
    q[np.isnan(y)] = 0x7F
    return q


def _e5m2(y, ml):
    with np.errstate(over="ignore", invalid="ignore"):
        q = y.astype(ml.float8_e5m2).view(np.uint8).copy()
    over = np.isinf(y) | (np.abs(y) > 57344)
    q[over] = np.where(np.signbit(y[over]), 0xFB, 0x7B)       # .satfinite
    q[np.isnan(y)] = 0x7F
    return q


def _fp8(k, v, s):
    ml = pytest.importorskip("ml_dtypes")
    n, scale = s["n"], v["scale"]
    if k.startswith("dequantize"):
        return "y", v["q"][:n].view(ml.float8_e4m3fn).astype(F32) * scale
    with np.errstate(all="ignore"):
        y = v["x"][:n] * scale
    q = _e4m3(y, ml)
    pairs = n // 2 * 2
    if k == "quantize_e4m3_x2_swapped":                  # BUG shown: halves swapped
        q[:pairs] = q[:pairs].reshape(-1, 2)[:, ::-1].reshape(-1)
    if k == "quantize_e5m2_x2":                          # BUG shown: e5m2 codes
        q[:pairs] = _e5m2(y[:pairs], ml)
    return "q", q


def _block_reduce(k, v, s):
    n = s["n"]
    p = (np.arange(40) < n) & (v["x"] > 0)
    c, every, some = int(p.sum()), int(p.all()), int(p.any())
    if k == "count_by_bar_red_swapped":                  # BUG shown: and/or swapped
        every, some = some, every
    return "out", np.full(n, c * 4 + every * 2 + some, np.int32)


def _pdl(k, v, s):
    rows, cols = s["rows"], s["cols"]
    x = v["x"].reshape(rows, cols)
    sums = np.zeros(rows, F32)
    for c in range(cols):                               # f32 adds in column order
        sums = sums + x[:, c]
    with np.errstate(all="ignore"):
        return "out", (x / sums[:, None]).reshape(-1)


@pytest.mark.parametrize("path,role,point", CASES)
def test_side_matches_numpy_model(path: Path, role: str, point: dict):
    spec = load_spec(path)
    side = spec.side(role)
    k = "+".join(s.kernel for s in side.launches)
    fam = path.parent.name
    rng = np.random.default_rng(zlib.crc32(f"{k}:{sorted(point.items())}".encode()))
    s = dict(point)
    for p in spec.scalars:
        if p.name not in s:                              # fp8's scale
            s[p.name] = F32(rng.choice([0.5, 3.0, -1.25, 2.0 ** -7, 200.0]))
    values = make_inputs(spec, s, rng)
    for p in spec.params:
        if not p.is_scalar and p.access in ("in", "inout") and fam in ("texture", "pdl"):
            size = values[p.name].size                   # small integers: exact filters
            values[p.name] = rng.integers(-8, 9, size).astype(F32)
            if fam == "pdl":                             # (no zero row sums)
                values[p.name] = np.abs(values[p.name]) + F32(1)
    if side.kernel == "scale_surf_elements" and s["w"] > 1:
        # BUG shown: x = 1 as a byte offset is a misaligned 4-byte surface access
        with pytest.raises(MemoryFault, match="misaligned 4-byte"):
            run_side(side, values, s)
        return
    final = run_side(side, values, s).final
    if fam == "texture":
        name, want = _texture(side.kernel, spec, values, s)
    else:
        name, want = {"fp8": _fp8, "block_reduce": _block_reduce, "pdl": _pdl}[fam](
            side.launches[-1].kernel, values, s)
    got = final[name][:len(want)]
    if want.dtype == F32:
        _same_f32(got, want)
    else:
        assert got.tolist() == want.tolist()


def test_every_side_of_these_families_is_covered():
    covered = {(c.values[0], c.values[1]) for c in CASES}
    assert set(_sides()) <= covered and len(_sides()) >= 20
