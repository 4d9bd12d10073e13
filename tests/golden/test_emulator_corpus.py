"""Every corpus kernel (each side of each spec in kernels/) runs on the concrete emulator and
matches a numpy model of what its CUDA/Triton source computes.

Bit-exact where the model reproduces the order of operations (integer kernels, copies, f32
adds/fmas done in the kernel's order); tolerances only where the kernel uses approximations
(`ex2.approx` inside expf/tl.exp). Buggy candidates either show their bug here (different
result or a MemoryFault), or, for races and missing barriers, the comment says what the
emulator's lockstep schedule shows: lockstep runs a whole CTA one instruction at a time, so a
missing __syncthreads between a write and a read by another thread does not change the result;
the race checker (verifier/races), not this test, is what catches those bugs.
"""

from __future__ import annotations

import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from semantics.errors import UnsupportedError
from semantics.machine import MemoryFault, run_kernel
from verifier.emulate import run_side
from verifier.spec import load_spec, make_inputs

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"
# (textures, fp8, bar.red and PDL sides need views and several launches: their models are
# in test_emulator_families.py)
ELSEWHERE = {"texture", "fp8", "block_reduce", "pdl"}
SPECS = sorted(p for p in KERNELS.glob("*/*.toml") if p.parent.name not in ELSEWHERE)
# (the mma.sync GEMM ladder's sides run at their specs' own shapes: test_emulator_ladder.py)
LADDER_PTX = {"mma_gemm.ptx", "mma_ladder.ptx"}

# ------------------------------------------------------------------ the sides to run

def _sides():
    """Distinct (ptx, kernel, launch) sides over every spec, with the first spec naming it."""
    seen = {}
    for path in SPECS:
        spec = load_spec(path)
        for side in (spec.reference, spec.candidate):
            if side.ptx.name in LADDER_PTX:
                continue
            key = (side.ptx.resolve(), side.kernel, tuple(e.text for e in side.grid),
                   tuple(e.text for e in side.block), side.arg_names)
            if key not in seen:
                seen[key] = (path, side.role)
    return list(seen.values())


SIDES = _sides()

# scalar points per family: edge sizes (1, not a multiple of 4, partial last block, full blocks)
POINTS = {
    "vector_add": [{"n": 1}, {"n": 7}, {"n": 256}, {"n": 1030}],
    "saxpy": [{"n": 1}, {"n": 5}, {"n": 300}],
    "reduce": [{"n": 1}, {"n": 255}, {"n": 256}, {"n": 301}, {"n": 512}],
    "transpose": [{"rows": 1, "cols": 1}, {"rows": 33, "cols": 7}, {"rows": 32, "cols": 64},
                  {"rows": 64, "cols": 64}],
    "matmul": [{"M": 1, "N": 1, "K": 1}, {"M": 5, "N": 17, "K": 16}, {"M": 32, "N": 20, "K": 21}],
    "scan": [{"n": 1}, {"n": 255}, {"n": 300}, {"n": 512}],
    "histogram": [{"n": 1}, {"n": 255}, {"n": 300}],
    "stencil": [{"n": 1}, {"n": 5}, {"n": 300}, {"n": 1024}],
    "softmax": [{"rows": 1, "cols": 1}, {"rows": 2, "cols": 129}, {"rows": 3, "cols": 256}],
    "cross_entropy": [{"rows": 1, "cols": 1}, {"rows": 2, "cols": 9}],   # (the specs' values)
    "layernorm": [{"rows": 1, "cols": 1, "eps": np.float32(1e-5)},
                  {"rows": 2, "cols": 33, "eps": np.float32(1e-5)},
                  {"rows": 3, "cols": 200, "eps": np.float32(1e-5)}],
    "attention": [{"n": 1}, {"n": 5}, {"n": 8}],
    "gelu": [{"n": 1}, {"n": 100}],
    "tensorcore": [{"M": 16, "N": 16, "K": 16}, {"M": 32, "N": 16, "K": 48}],
    "gather": [{"B": 1, "T": 1, "C": 4, "V": 2}, {"B": 2, "T": 2, "C": 8, "V": 5},
               {"B": 2, "T": 1, "C": 4, "V": 5}],
    "splitk": [{"M": 16, "N": 16, "K": 8, "S": 1}, {"M": 16, "N": 32, "K": 13, "S": 3}],
}


def _family(spec_path: Path, kernel: str) -> str:
    fam = spec_path.parent.name
    if fam == "triton":
        return "softmax" if "softmax" in kernel else "vector_add"
    if kernel.startswith(("cross_entropy", "log_softmax_nll")):
        return "cross_entropy"
    return fam


CASES = []
for _path, _role in SIDES:
    _spec = load_spec(_path)
    _side = _spec.side(_role)
    for _pt in POINTS[_family(_path, _side.kernel)]:
        if not _spec.check_assumptions(_pt):
            # aligned-only specs (assume): take the aligned point instead
            continue
        _id = f"{_path.parent.name}/{_path.stem}:{_role}:{_side.kernel}:" + ",".join(
            f"{k}={v}" for k, v in _pt.items())
        CASES.append(pytest.param(_path, _role, _pt, id=_id))


# ------------------------------------------------------------------ numpy models

F32 = np.float32


def _i32(x) -> np.ndarray:
    return (np.asarray(x, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def _f32_round(q: Fraction) -> np.float32:
    """q (nonzero, finite) rounded to the nearest f32, ties to even; overflow to inf."""
    neg = q < 0
    q = -q if neg else q
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, -126)
    ulp = Fraction(2) ** (e - 23)
    m = q / ulp
    mi = m.numerator // m.denominator
    rem = m - mi
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and mi % 2 == 1):
        mi += 1
    v = float(mi * ulp)
    if v >= 2.0 ** 128:
        v = float("inf")
    return F32(-v if neg else v)


def fma_f32(a, b, c) -> np.float32:
    """fma.rn.f32: a*b+c rounded once."""
    a, b, c = F32(a), F32(b), F32(c)
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        return F32(np.float64(a) * np.float64(b) + np.float64(c))
    q = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if q == 0:   # exact zero: IEEE sign rules, which f64 arithmetic applies exactly here
        return F32(np.float64(a) * np.float64(b) + np.float64(c))
    return _f32_round(q)


def _shfl_down_reduce(v: np.ndarray, op=np.add) -> np.ndarray:
    """One warp's `v += __shfl_down_sync(full, v, off)` for off = 16..1 (lane 0 is exact)."""
    v = v.copy()
    for off in (16, 8, 4, 2, 1):
        src = np.concatenate([v[off:], v[32 - off:]])   # out-of-range lanes read their own
        v = op(v, src)
    return v


def model_reduce(kind: str, x: np.ndarray, n: int) -> np.ndarray:
    blocks = -(-n // 256)
    dt = x.dtype
    out = np.zeros(blocks, dt)
    for b in range(blocks):
        s = np.zeros(256, dt)
        seg = x[b * 256:min(n, (b + 1) * 256)]
        s[:seg.size] = seg
        with np.errstate(over="ignore"):
            if kind == "interleaved":
                st = 1
                while st < 256:
                    s[0::2 * st] = s[0::2 * st] + s[st::2 * st]
                    st *= 2
                out[b] = s[0]
            elif kind in ("sequential", "sequential_nosync"):
                st = 128
                while st > 0:
                    s[:st] = s[:st] + s[st:2 * st]
                    st //= 2
                out[b] = s[0]
            elif kind == "tree_shfl":
                for st in (128, 64):
                    s[:st] = s[:st] + s[st:2 * st]
                v = s[:32] + s[32:64]
                out[b] = _shfl_down_reduce(v)[0]
            elif kind in ("warp_shfl", "warp_shfl_badoffset"):
                def wsum(v):
                    v = v.copy()
                    if kind == "warp_shfl_badoffset":
                        v = v + v          # offset 32: every lane reads its own value
                    return _shfl_down_reduce(v)
                partial = np.array([wsum(s[w * 32:(w + 1) * 32])[0] for w in range(8)], dt)
                v = np.zeros(32, dt)
                v[:8] = partial
                out[b] = wsum(v)[0]
            else:
                raise AssertionError(kind)
    return out


def model_matmul(A, B, M, N, K, k_limit=None) -> np.ndarray:
    """acc = fma(A[r,k], B[k,c], acc) for k in order (nvcc contracts acc += a*b to fma.rn)."""
    kk = K if k_limit is None else k_limit
    C = np.zeros(M * N, F32)
    for r in range(M):
        for c in range(N):
            acc = F32(0.0)
            for k in range(kk):
                acc = fma_f32(A[r * K + k], B[k * N + c], acc)
            C[r * N + c] = acc
    return C


def model_stencil(x: np.ndarray, n: int) -> np.ndarray:
    xs = x[:n].astype(np.int64)
    out = np.zeros(n, np.int64)
    for j in range(-3, 4):
        lo, hi = max(0, -j), min(n, n - j)
        out[lo:hi] += xs[lo + j:hi + j]
    return _i32(out)


def model_scan(x: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    for b in range(0, n, 256):
        out[b:b + 256] = np.cumsum(x[b:min(n, b + 256)].astype(np.int64))
    return _i32(out)


def model_transpose(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    return x.reshape(rows, cols).T.reshape(-1).copy()


def model_transpose_badstride(x: np.ndarray, out0: np.ndarray, rows: int, cols: int):
    """The buggy kernel's tile: written with stride 33, read with stride 32; never-written
    tile words read as 0 (the emulator's fresh shared memory)."""
    out = out0.copy()
    for by in range(-(-rows // 32)):
        for bx in range(-(-cols // 32)):
            tile = np.zeros(32 * 33, x.dtype)
            for ty in range(32):
                for tx in range(32):
                    xx, yy = bx * 32 + tx, by * 32 + ty
                    if xx < cols and yy < rows:
                        tile[ty * 33 + tx] = x[yy * cols + xx]
            for ty in range(32):
                for tx in range(32):
                    xx, yy = by * 32 + tx, bx * 32 + ty
                    if xx < rows and yy < cols:
                        out[yy * rows + xx] = tile[tx * 32 + ty]
    return out


def model_softmax(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    m = x.reshape(rows, cols).astype(np.float64)
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(-1)


def model_layernorm(x, gamma, beta, rows: int, cols: int, eps: float) -> np.ndarray:
    m = x.reshape(rows, cols).astype(np.float64)
    mean = m.mean(axis=1, keepdims=True)
    var = ((m - mean) ** 2).mean(axis=1, keepdims=True)
    return ((m - mean) / np.sqrt(var + eps) * gamma + beta).reshape(-1)


def model_attention(q, k, v, n: int, d: int = 4) -> np.ndarray:
    q64, k64, v64 = (a.reshape(n, d).astype(np.float64) for a in (q, k, v))
    s = q64 @ k64.T / np.sqrt(d)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return ((p @ v64) / p.sum(axis=1, keepdims=True)).reshape(-1)


def _same_f32(got: np.ndarray, want: np.ndarray) -> None:
    """Bit-exact f32 comparison; every NaN matches every NaN (the GPU returns the canonical
    NaN where numpy propagates a payload: payload policy is the float semantics' business)."""
    g, w = np.asarray(got, F32), np.asarray(want, F32)
    assert g.shape == w.shape
    gn, wn = np.isnan(g), np.isnan(w)
    assert np.array_equal(gn, wn), f"NaN positions differ at {np.nonzero(gn != wn)[0][:10]}"
    gb, wb = g.view(np.uint32)[~gn], w.view(np.uint32)[~wn]
    bad = np.nonzero(gb != wb)[0]
    assert bad.size == 0, (f"{bad.size} element(s) differ; first at {bad[:5]}: got "
                           f"{g[~gn][bad[:5]]}, want {w[~wn][bad[:5]]}")


# ------------------------------------------------------------------ running

def _finite_f32(rng, n, scale=1.0):
    return (rng.standard_normal(n) * scale).astype(F32)


def _inputs(spec, scalars, rng, finite: bool):
    values = make_inputs(spec, scalars, rng)
    if finite:   # float kernels whose model needs ordinary numbers (reductions, fma chains)
        for p in spec.buffers:
            if p.type == "f32" and p.access in ("in", "inout"):
                values[p.name] = _finite_f32(rng, values[p.name].size)
    return values


def _run(spec, side, values, scalars):
    if side.then:                 # a side of several launches: all of them, in order
        final, r = run_side(side, values, scalars)
        return final, tuple(e for e in r.effects if e.kind != "unspecified")
    grid, block = side.launch(scalars)
    dyn = side.dynamic_shared     # Triton's softmax: `dynamic_shared = 16` in its spec
    try:
        r = run_kernel(side.module, side.kernel, grid, block, side.kernel_args(values),
                       dynamic_shared=dyn)
    except UnsupportedError as e:
        pytest.xfail(f"float/convert semantics not written yet: {e}")
    kparams = side.module.functions[side.kernel].params
    final = dict(values)
    for name, kp in zip(side.arg_names, kparams):
        if kp.name in r.buffers:
            final[name] = r.buffers[kp.name]
    # (the NaN an f32 operation returns is open in the PTX ISA: an "unspecified" effect
    # wherever one does, with random bit patterns often; `_same_f32` compares NaNs as NaNs)
    return final, tuple(e for e in r.effects if e.kind != "unspecified")


def _run_expect_fault(side, values, scalars):
    grid, block = side.launch(scalars)
    try:
        with pytest.raises(MemoryFault) as ei:
            run_kernel(side.module, side.kernel, grid, block, side.kernel_args(values))
    except UnsupportedError as e:
        pytest.xfail(f"float/convert semantics not written yet: {e}")
    return ei.value


@pytest.mark.parametrize("spec_path,role,point", CASES)
def test_kernel_matches_numpy_model(spec_path: Path, role: str, point: dict):
    spec = load_spec(spec_path)
    side = spec.side(role)
    # (a side of several launches is named by its family and kernels: "layernorm_ln_mean+...")
    k = side.kernel if not side.then else \
        f"{spec.name.split('/')[0]}_" + "+".join(s.kernel for s in side.launches)
    rng = np.random.default_rng(zlib.crc32(f"{k}:{sorted(point.items())}".encode()))
    scalars = dict(point)
    for p in spec.scalars:
        if p.name not in scalars:        # saxpy's `a`
            scalars[p.name] = F32(rng.standard_normal()) if p.is_float else p.range[0]
    float_model_needs_finite = k.startswith(("reduce_", "matmul_", "softmax", "layernorm",
                                             "rmsnorm", "attention", "gelu", "cross_entropy",
                                             "log_softmax"))
    values = _inputs(spec, scalars, rng, finite=float_model_needs_finite)

    if k in ("vector_add", "vector_add_vec4", "vector_add_kernel", "vector_add_vec4_notail"):
        n = scalars["n"]
        final, eff = _run(spec, side, values, scalars)
        with np.errstate(all="ignore"):
            want = values["a"] + values["b"]
        if k == "vector_add_vec4_notail":
            # BUG shown: the last n % 4 outputs keep the out buffer's initial contents
            want[n // 4 * 4:] = values["c"][n // 4 * 4:]
        _same_f32(final["c"], want)
        assert not eff
        return

    if k in ("saxpy", "saxpy_fma"):
        a, x, y = scalars["a"], values["x"], values["y"]
        final, _ = _run(spec, side, values, scalars)
        with np.errstate(all="ignore"):
            if k == "saxpy":      # __fmul_rn then __fadd_rn: two f32 roundings, as numpy does
                want = (F32(a) * x).astype(F32) + y
            else:                 # __fmaf_rn: one rounding, modeled exactly with fractions
                want = np.array([fma_f32(a, xi, yi) for xi, yi in zip(x, y)], F32)
        _same_f32(final["y"], want)
        return

    if k.startswith("reduce_"):
        n = scalars["n"]
        kind = k[len("reduce_"):].rsplit("_", 1)[0]
        final, eff = _run(spec, side, values, scalars)
        want = model_reduce(kind, values["in"], n)
        # reduce_sequential_nosync_i32 (BUG: no barrier between tree steps): lockstep runs
        # each step for the whole block before the next, so the race does not show here and
        # the result is the correct sum. reduce_warp_shfl_badoffset_i32 (BUG) shows: 4x sum.
        # f32: the model repeats the kernel's pairing order in f32, so this is bit-exact too.
        if want.dtype == F32:
            _same_f32(final["out"], want)
        else:
            np.testing.assert_array_equal(final["out"], want)
        if kind == "warp_shfl_badoffset":
            honest = model_reduce("sequential", values["in"], n)
            if np.any(honest != 0):
                assert not np.array_equal(final["out"], honest)
        return

    if k.startswith("transpose_"):
        rows, cols = scalars["rows"], scalars["cols"]
        x = values["in"]
        if k == "transpose_tiled_nobounds" and (rows % 32 or cols % 32):
            # BUG shown: without bounds checks the kernel reads past `in` for unaligned sizes
            f = _run_expect_fault(side, values, scalars)
            assert "out of bounds" in str(f)
            return
        final, eff = _run(spec, side, values, scalars)
        got = final["out"].view(np.uint32)
        if k == "transpose_padded_badstride":
            want = model_transpose_badstride(x.view(np.uint32), values["out"].view(np.uint32),
                                             rows, cols)
            np.testing.assert_array_equal(got, want)
            honest = model_transpose(x.view(np.uint32), rows, cols)
            if rows > 1 and cols > 1:
                assert not np.array_equal(got, honest)   # BUG shown: wrong elements
            return
        np.testing.assert_array_equal(got, model_transpose(x.view(np.uint32), rows, cols))
        assert not [e for e in eff if e.kind == "uninitialized"]
        return

    if k in ("gemm_direct", "serial", "serial_early_release", "fixup"):
        M, N, K = scalars["M"], scalars["N"], scalars["K"]
        final, _ = _run(spec, side, values, scalars)
        A = values["A"].reshape(M, K).astype(np.uint64)
        B = values["B"].reshape(K, N).astype(np.uint64)
        want = ((A @ B) & 0xFFFFFFFF).astype(np.uint32).view(np.int32).reshape(-1)
        # serial_early_release (BUG: the turn passes before the slice is added): a race the
        # emulator's schedule does not show here (keq verify finds it)
        np.testing.assert_array_equal(final["C"], want)
        return

    if k.startswith("matmul_"):
        M, N, K = scalars["M"], scalars["N"], scalars["K"]
        final, _ = _run(spec, side, values, scalars)
        A, B = values["A"], values["B"]
        # matmul_tiled adds fma(0, 0, acc) for the zero-padded part of the last k tile: with
        # finite normal inputs acc is never -0.0, so the chain is bit-identical to naive.
        # matmul_tiled_nosync2 (BUG: race on the next tile's loads): hidden by lockstep.
        limit = K // 16 * 16 if k == "matmul_tiled_floor_k" else None
        want = model_matmul(A, B, M, N, K, limit)   # floor_k BUG shown: last partial tile lost
        _same_f32(final["C"], want)
        if k == "matmul_tiled_floor_k" and K % 16:
            assert not np.array_equal(final["C"], model_matmul(A, B, M, N, K))
        return

    if k.startswith("scan_"):
        n = scalars["n"]
        final, _ = _run(spec, side, values, scalars)
        # scan_hillis_steele_1buf (BUG: in-place update races within a step): lockstep loads
        # s[tid - offset] for the whole block before any store, so the race is hidden here.
        np.testing.assert_array_equal(final["out"], model_scan(values["in"], n))
        return

    if k.startswith("histogram_"):
        n = scalars["n"]
        final, _ = _run(spec, side, values, scalars)
        want = (values["bins"].astype(np.uint64)
                + np.bincount(values["data"][:n], minlength=256).astype(np.uint64))
        # histogram_shared_noinit_sync / _nomerge_sync (BUG: missing barriers, races): under
        # lockstep the zeroing (resp. the shared atomics) finish for the whole block before
        # the next statement, so the counts come out right here.
        np.testing.assert_array_equal(final["bins"], (want & 0xFFFFFFFF).astype(np.uint32))
        return

    if k.startswith("stencil_"):
        n = scalars["n"]
        if k == "stencil_shared_halo_oob" and n >= 256 and n % 256 < 3:
            # BUG shown: `right <= n` reads in[n] when a block's right halo starts at n
            f = _run_expect_fault(side, values, scalars)
            assert "out of bounds" in str(f)
            return
        final, _ = _run(spec, side, values, scalars)
        np.testing.assert_array_equal(final["out"], model_stencil(values["in"], n))
        return

    if k.startswith("softmax"):
        rows, cols = scalars["rows"], scalars["cols"]
        final, eff = _run(spec, side, values, scalars)
        # expf / tl.exp compile to ex2.approx.f32 (max error ~2 ulp) plus f32 rounding of the
        # sums: compare with a float64 softmax loosely, and require the approximation effect.
        want = model_softmax(values["in"], rows, cols)
        if k == "softmax_online_ex2_prescale" and cols > 1:
            # BUG shown: the merge rescales a partial sum by 2^(m1 - mm), not e^(m1 - mm)
            assert not np.allclose(final["out"], want, rtol=1e-3, atol=1e-5)
        else:
            np.testing.assert_allclose(final["out"], want, rtol=1e-5, atol=1e-7)
        assert any(e.kind == "approximation" and "ex2" in e.what for e in eff), eff
        return

    if k.startswith(("cross_entropy", "log_softmax_nll")):
        rows, cols = scalars["rows"], scalars["cols"]
        final, eff = _run(spec, side, values, scalars)
        x = values["logits"].astype(np.float64).reshape(rows, cols)
        t = values["target"]
        assert ((0 <= t) & (t < cols)).all()        # (the spec's element range)
        m = x.max(axis=1)
        want = np.log(np.exp(x - m[:, None]).sum(axis=1)) + m - x[np.arange(rows), t]
        if k == "cross_entropy_fused_no_max":
            want -= m                                 # BUG shown: the max is missing
        # expf and logf/__logf are approximations; f32 sums: compare loosely
        np.testing.assert_allclose(final["loss"], want, rtol=1e-5, atol=1e-5)
        assert any(e.kind == "approximation" and "ex2" in e.what for e in eff), eff
        return

    if k.startswith("attention"):
        n = scalars["n"]
        final, eff = _run(spec, side, values, scalars)
        want = model_attention(values["q"], values["k"], values["v"], n)
        got = final["out"].reshape(n, 4)
        # the rows each planted bug changes: a later tile raises the row's max / the keys
        # of a partial last tile are dropped (every row)
        s = values["q"].reshape(n, 4).astype(np.float64) @ values["k"].reshape(n, 4).T
        wrong = np.zeros(n, bool)
        if k == "attention_flash_no_rescale" and n > 4:
            wrong = s[:, 4:].max(axis=1) > s[:, :4].max(axis=1)
        if k == "attention_flash_last_tile" and n % 4:
            wrong[:] = True
        with np.errstate(all="ignore"):
            for i in range(n):
                close = np.allclose(got[i], want.reshape(n, 4)[i], rtol=1e-4, atol=1e-5)
                # (libdevice expf, ex2.approx inside, and f32 sums: close to float64)
                assert close != wrong[i], (i, got[i], want.reshape(n, 4)[i])
        if not (k == "attention_flash_last_tile" and n < 4):      # (else no tile ran)
            assert any(e.kind == "approximation" and "ex2" in e.what for e in eff), eff
        return

    if k.startswith("gelu"):
        with np.errstate(all="ignore"):       # (erff's and tanhf's range reductions)
            final, eff = _run(spec, side, values, scalars)
        v = values["x"].astype(np.float64)
        with np.errstate(all="ignore"):
            if k == "gelu_erf":
                from math import erf
                want = 0.5 * v * (1 + np.vectorize(erf)(v / np.sqrt(2.0)))
            else:
                want = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))
        finite = np.isfinite(want) & (np.abs(v) < 1e4)
        np.testing.assert_allclose(final["out"][finite], want[finite], rtol=1e-5, atol=1e-6)
        if k == "gelu_tanh":          # libdevice tanhf: ex2.approx and rcp.approx inside
            assert any(e.kind == "approximation" for e in eff), eff
        return

    if k.startswith("rmsnorm"):
        rows, cols = scalars["rows"], scalars["cols"]
        final, eff = _run(spec, side, values, scalars)
        m = values["in"].reshape(rows, cols).astype(np.float64)
        rms = np.sqrt((m * m).mean(axis=1, keepdims=True) + float(scalars["eps"]))
        want = (m / rms * values["weight"]).reshape(-1)
        np.testing.assert_allclose(final["out"], want, rtol=1e-4, atol=1e-5)
        assert any(e.kind == "approximation" and "rsqrt" in e.what for e in eff), eff
        return

    if k.startswith("layernorm"):
        rows, cols = scalars["rows"], scalars["cols"]
        final, eff = _run(spec, side, values, scalars)
        want = model_layernorm(values["in"], values["gamma"], values["beta"], rows, cols,
                               float(scalars["eps"]))
        if (k == "layernorm_welford_no_cross" or "unbiased" in k) and cols > 1:
            # BUG shown: the variance misses the spread between merged parts' means / is
            # divided by cols - 1
            assert not np.allclose(final["out"], want, rtol=1e-3, atol=1e-4)
        else:
            # rsqrt.approx (~2 ulp) and f32 sums: close to a float64 layernorm, loosely
            np.testing.assert_allclose(final["out"], want, rtol=1e-4, atol=1e-4)
        assert any(e.kind == "approximation" and "rsqrt" in e.what for e in eff), eff
        return

    if k.startswith("encoder_forward"):
        B, T, C, V = (scalars[n] for n in "BTCV")
        if spec.name in ("gather/printf_compared", "gather/printf_unsigned"):
            _check_printed_reports(spec, side, k, values, scalars)
            return
        # token ids drawn within the spec's range on inp: [0, V - 1]
        assert values["inp"].min() >= 0 and values["inp"].max() <= V - 1
        if k == "encoder_forward_vec4_assert_off_by_one" and (values["inp"] == V - 1).any():
            # BUG shown: the assert (ix < V - 1) traps on the last token id
            f = _run_expect_fault(side, values, scalars)
            assert "assertion `ix >= 0 && ix < V - 1` failed" in str(f)
            return
        final, eff = _run(spec, side, values, scalars)
        wte, wpe = values["wte"].reshape(V, C), values["wpe"].reshape(T, C)
        with np.errstate(all="ignore"):
            want = (wte[values["inp"].reshape(B, T)] + wpe[None, :, :]).reshape(-1)
        _same_f32(final["out"], want)
        assert not [e for e in eff if e.kind == "printf"]      # (no token out of range)
        return

    if k.startswith(("wmma_gemm", "gemm_simt")):
        _check_tensorcore_gemm(spec, side, k, values, scalars, rng)
        return

    raise AssertionError(f"no numpy model for kernel {k} (add one)")


def _check_printed_reports(spec, side, k, values, scalars) -> None:
    """The encoders that report token ids outside [0, V) (drawn from [-2, V + 1]): in-range
    elements gathered, and every thread of a bad id printing one report of it (%u: as
    unsigned), none other."""
    B, T, C, V = (scalars[n] for n in "BTCV")
    inp = values["inp"].astype(np.int64)
    grid, block = side.launch(scalars)
    result = run_kernel(side.module, side.kernel, grid, block, side.kernel_args(values))
    out = result.buffers[side.module.functions[side.kernel].params[0].name]
    want: dict[int, tuple[str, ...]] = {}
    good = np.zeros(B * T * C, dtype=bool)
    for idx in range(B * T * C):
        ix = int(inp[idx // C])
        if 0 <= ix < V:
            good[idx] = True
        else:
            shown = ix % 2**32 if k.endswith("_unsigned") else ix
            want[idx] = (f"encoder: token {shown} at ({idx // C}) is out of range\n",)
    assert dict(result.printed) == want
    wte, wpe = values["wte"].reshape(V, C), values["wpe"].reshape(T, C)
    t = (np.arange(B * T * C) // C) % T
    c = np.arange(B * T * C) % C
    with np.errstate(all="ignore"):
        gathered = wte[np.clip(inp[np.arange(B * T * C) // C], 0, V - 1), c] + wpe[t, c]
    _same_f32(out[good], gathered[good].astype(np.float32))


def _check_tensorcore_gemm(spec, side, k, values, scalars, rng) -> None:
    """C = A @ B^T (B stored as N rows of K) on small integers, exact in f32 and in every
    tensor-core datapath; the scaled ones times alpha (one f32 rounding)."""
    M, N, K = (scalars[c] for c in "MNK")
    for name, size in (("A", M * K), ("B", N * K)):
        values[name] = rng.integers(-3, 4, size).astype(np.float16)
    final, eff = _run(spec, side, values, scalars)
    exact = values["A"].astype(np.float64).reshape(M, K) @ \
        values["B"].astype(np.float64).reshape(N, K).T
    want = (exact.astype(F32) * F32(scalars.get("alpha", 1.0))).astype(F32).reshape(-1)
    if k == "wmma_gemm_b_row":
        # BUG shown: B's tiles are read transposed
        assert not np.array_equal(final["C"], want)
        return
    if k == "wmma_gemm_ragged":
        # a per-register scale: what it computes depends on the fragment layout (an effect)
        assert {e.kind for e in eff} == {"fragment"}
        return
    _same_f32(final["C"], want)
    assert not eff


def test_every_spec_side_is_covered():
    covered = {(c.values[0], c.values[1]) for c in CASES}
    sides = {(p, r) for p, r in SIDES}
    assert sides <= covered
    assert len(SIDES) >= 25


def test_matmul_tiled_bitexact_difference_on_negative_zero():
    """tiled_bitexact.toml: an underflowing negative product gives naive acc = -0.0; the tiled
    kernel's padded fma(0, 0, acc) turns it into +0.0 (K not a multiple of 16)."""
    spec = load_spec(KERNELS / "matmul" / "tiled_bitexact.toml")
    scalars = {"M": 1, "N": 1, "K": 1}
    values = {"A": np.array([-1e-30], F32), "B": np.array([1e-30], F32),
              "C": np.array([7.0], F32), "M": 1, "N": 1, "K": 1}
    ref, _ = _run(spec, spec.reference, dict(values), scalars)
    cand, _ = _run(spec, spec.candidate, dict(values), scalars)
    assert ref["C"].view(np.uint32)[0] == 0x80000000     # -0.0
    assert cand["C"].view(np.uint32)[0] == 0x00000000    # +0.0


def test_saxpy_fma_differs_from_mul_add():
    """fma_bitexact.toml: one rounding vs two, on an input where they differ."""
    spec = load_spec(KERNELS / "saxpy" / "fma_bitexact.toml")
    a = F32(1.0 + 2.0 ** -12)
    x = np.array([1.0 + 2.0 ** -12], F32)
    y = np.array([-1.0], F32)
    scalars = {"n": 1, "a": a}
    ref, _ = _run(spec, spec.reference, {"n": 1, "a": a, "x": x, "y": y.copy()}, scalars)
    cand, _ = _run(spec, spec.candidate, {"n": 1, "a": a, "x": x, "y": y.copy()}, scalars)
    exact = 2.0 ** -11 + 2.0 ** -24
    assert float(cand["y"][0]) == exact
    assert float(ref["y"][0]) == 2.0 ** -11
