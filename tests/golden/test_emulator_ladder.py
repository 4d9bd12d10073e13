"""The mma.sync GEMM ladder of kernels/tensorcore (mma_gemm.cu, mma_ladder.cu: the sides of
ladder_*.toml that test_emulator_corpus.py leaves out) on the concrete emulator, against
C = A @ B^T (B stored as N rows of K).

Each side runs at the smallest and the largest shape its specs list (the kernels assume those:
N a multiple of 16 for register blocking, K of 32 for split-k). A and B hold small integers,
whose products and sums are exact in f32, in f16 up to 2048 and in every tensor-core datapath,
so the comparison is bit for bit. Planted bugs that feed the tensor core other values show as
a different result; the f16 accumulator shows on 1 + 2^-11, which f16 cannot hold. The races
(an aliasing swizzle, a missing cp.async wait) are what keq verify's race check finds: the
emulator's schedule does or does not show them as a wrong result, asserted below.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from verifier.emulate import run_side
from verifier.spec import load_spec, make_inputs

TENSORCORE = Path(__file__).resolve().parents[2] / "kernels" / "tensorcore"
LADDER_PTX = ("mma_gemm.ptx", "mma_ladder.ptx")
F16_OUT = {"gemm_direct_f16", "gemm_pipe3_f16"}
# the planted bugs whose result differs from A @ B^T at every shape listed (k_tail: K / 16 odd)
WRONG = {"gemm_bug_trans_b", "gemm_bug_a_order", "gemm_bug_k_tail", "gemm_bug_swizzle_alias"}


def _cases():
    """(spec, role, shape) once per ladder kernel and shape: the first and the last values."""
    seen = set()
    for path in sorted(TENSORCORE.glob("ladder_*.toml")):
        spec = load_spec(path)
        for role in ("reference", "candidate"):
            side = spec.side(role)
            if side.ptx.name not in LADDER_PTX:
                continue
            for pick in (0, -1):
                shape = {p.name: p.values[pick] for p in spec.scalars}
                key = (side.ptx.name, side.kernel, tuple(sorted(shape.items())))
                if key in seen:
                    continue
                seen.add(key)
                yield pytest.param(path, role, shape, id=f"{side.kernel}:" + ",".join(
                    f"{k}={v}" for k, v in shape.items()))


CASES = list(_cases())


def _run(spec, role, shape, A, B):
    rng = np.random.default_rng(zlib.crc32(f"{spec.name}:{role}:{shape}".encode()))
    values = make_inputs(spec, shape, rng)
    values["A"], values["B"] = A, B
    final, _ = run_side(spec.side(role), values, shape)
    return final["C"]


@pytest.mark.parametrize("path,role,shape", CASES)
def test_ladder_kernel_matches_the_exact_product(path, role, shape):
    spec = load_spec(path)
    kernel = spec.side(role).kernel
    M, N, K = shape["M"], shape["N"], shape["K"]
    rng = np.random.default_rng(zlib.crc32(f"{kernel}:{sorted(shape.items())}".encode()))
    A = rng.integers(-3, 4, M * K).astype(np.float16)
    B = rng.integers(-3, 4, N * K).astype(np.float16)
    got = _run(spec, role, shape, A, B)
    exact = A.astype(np.float64).reshape(M, K) @ B.astype(np.float64).reshape(N, K).T
    want = exact.astype(np.float16 if kernel in F16_OUT else np.float32).reshape(-1)
    if kernel in WRONG:
        # BUG shown: B transposed, A's registers swapped, the odd last k step dropped, or
        # two copies landing in one chunk of the aliasing swizzle
        assert not np.array_equal(got, want)
        return
    # gemm_bug_no_wait (BUG: a stage read while its copy may be in flight): the emulator
    # lands each copy when it is issued, so the race does not show here (keq verify finds it)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_f16_accumulators_round_what_f32_holds():
    # gemm_bug_f16_acc: row 0 of A is (1, 2^-11, 0, ...), every B element 1: C[0] = 1 + 2^-11
    # in f32, which an f16 accumulator cannot hold (its neighbours are 1 and 1 + 2^-10)
    spec = load_spec(TENSORCORE / "ladder_bug_f16_acc.toml")
    shape = {"M": 16, "N": 8, "K": 16}
    A = np.zeros(16 * 16, np.float16)
    A[0], A[1] = 1.0, 2.0 ** -11
    B = np.ones(8 * 16, np.float16)
    ref = _run(spec, "reference", shape, A, B)
    cand = _run(spec, "candidate", shape, A, B)
    assert ref[0] == np.float32(1 + 2.0 ** -11)
    assert cand[0] != ref[0] and np.float32(np.float16(cand[0])) == cand[0]


def test_every_ladder_side_is_covered():
    kernels = {load_spec(c.values[0]).side(c.values[1]).kernel for c in CASES}
    assert kernels == {"gemm_direct", "gemm_direct_f16", "gemm_pipe3", "gemm_swizzled",
                       "gemm_blocked", "gemm_pipe3_f16", "gemm_split_k", "gemm_bug_trans_b",
                       "gemm_bug_swizzle_alias", "gemm_bug_no_wait", "gemm_bug_k_tail",
                       "gemm_bug_a_order", "gemm_bug_f16_acc"}
