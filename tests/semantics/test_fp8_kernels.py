"""fp8 quantization kernels as nvcc emits them from cuda_fp8.h (kernels/fp8/): the emulator
against ml_dtypes on nvcc's one-element kernel, and the pairs: two elements per thread with the
x2 intrinsic proved equal to one per thread (quantize and dequantize), the two halves swapped
and e5m2 for e4m3 refuted with a counterexample that replays on the emulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semantics.machine import run_kernel
from semantics.ptx import parse_ptx_file
from verifier.api import EQUIVALENT, NOT_EQUIVALENT, load_pair, verify
from verifier.emulate import run_side

ml_dtypes = pytest.importorskip("ml_dtypes")
DATA = Path(__file__).resolve().parents[2] / "kernels" / "fp8"


def test_nvccs_quantize_kernel_matches_ml_dtypes_with_satfinite():
    m = parse_ptx_file(DATA / "quantize.ptx")
    rng = np.random.default_rng(5)
    n = 300
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-12, 10, n))).astype(np.float32)
    x[:6] = [np.inf, -np.inf, np.nan, 1e6, -0.0, 2.0 ** -20]
    scale = np.float32(3.0)
    q = np.zeros(n, np.uint8)
    res = run_kernel(m, "quantize_e4m3", grid=(5, 1, 1), block=(64, 1, 1),
                     args=[x, q, scale, n])
    y = x * scale
    with np.errstate(over="ignore", invalid="ignore"):
        want = y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).copy()
        over = np.abs(y) > 448
    want[over] = np.where(np.signbit(y[over]), 0xFE, 0x7E)          # .satfinite
    want[np.isnan(y)] = 0x7F                                          # the emulator's NaN
    assert res.buffers["quantize_e4m3_param_1"].tolist() == want.tolist()


@pytest.mark.parametrize("name,fixed", [("pack_two", {}), ("dequantize", {"n": 9})])
def test_two_per_thread_is_proved_equal_to_one_per_thread(name, fixed):
    v = verify(load_pair(DATA / f"{name}.toml"), fixed=fixed, timeout_s=120)
    assert v.kind == EQUIVALENT, v.reasons


@pytest.mark.parametrize("name", ["swapped", "e5m2"])
def test_planted_bugs_are_refuted_with_a_replayed_counterexample(name):
    spec = load_pair(DATA / f"{name}.toml")
    v = verify(spec, fixed={"n": 9}, timeout_s=120)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    cex = v.counterexample
    outs = {}
    for role, want in (("reference", cex.reference), ("candidate", cex.candidate)):
        final, _ = run_side(spec.side(role), {k: (x.copy() if isinstance(x, np.ndarray) else x)
                                              for k, x in cex.inputs.items()}, cex.scalars,
                              shared_fill=cex.shared_fill or None, choices=cex.choices,
                              tag=role)
        assert np.array_equal(final["q"], want["q"])
        outs[role] = final["q"]
    assert not np.array_equal(outs["reference"], outs["candidate"])
