"""The tensor-core GEMM ladder (tests/data/mma_gemm/ladder.cu, nvcc -arch=sm_80 output; specs
ladder_*.toml), each rung against gemm_direct (gemm.cu: fragments read from global memory):
a 3-stage cp.async pipeline, an XOR-swizzled shared layout read with ldmatrix, register
blocking (two 16x8 tiles per warp) and f16 accumulators (against the f16 direct form) feed the
same values to the same mma in the same order, so they are EQUIVALENT bit for bit whatever the
tensor core computes; split-k is EQUIVALENT to the SIMT fp32 GEMM in mode real.

Planted bugs: a swizzle that aliases rows and a missing cp.async wait are refuted bit for bit
with replayed races. A transposed B (ldmatrix .trans), a dropped k tail and two swapped A
registers make the kernels differ only through the tensor core's dot product, which keq leaves
an open function (docs/tensor-cores.md): bit for bit they are INCONCLUSIVE, named (a constant
function would make them equal), and in mode real (an mma is the exact sum of its products)
they are refuted with replayed counterexamples. So is split-k against gemm_direct bit for bit
(another mma sequence: INCONCLUSIVE, not refuted). f16 accumulators where f32 was meant are
INCONCLUSIVE against gemm_direct (another open function), EQUIVALENT in mode real (the f16
rounding is rounding there), and INCONCLUSIVE against the SIMT fp32 GEMM, where a refutation
exists for every tensor core (an f16 widened to f32 has 13 low significand bits clear; the
fp32 sum 1 + 2^-11 does not) that keq does not find: an expected failure, strict.
With trials=0 the symbolic machinery alone decides (a refutation is replayed before it is
reported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.api import load_pair, verify
from verifier.verdict import VerdictKind

DATA = Path(__file__).resolve().parents[1] / "data" / "mma_gemm"
EQ, NE, INC = VerdictKind.EQUIVALENT, VerdictKind.NOT_EQUIVALENT, VerdictKind.INCONCLUSIVE
OPEN = "differ only through approximate functions"


def _verify(name):
    spec = load_pair(DATA / f"ladder_{name}.toml")
    return spec, verify(spec, trials=0)


@pytest.mark.parametrize("name", ["pipe3", "swizzled", "blocked", "f16", "split_k_real"])
def test_each_rung_is_equivalent(name):
    spec, v = _verify(name)
    assert v.kind is EQ, v.reasons
    assert spec.expect == "equivalent"
    if spec.mode == "real":
        assert any("exact sum of its products" in a for a in v.assumptions), v.assumptions


@pytest.mark.parametrize("name, race", [
    ("bug_swizzle_alias", "and write by"),     # two copies to one chunk
    ("bug_no_wait", "still in flight"),
    ("bug_trans_b_real", None),
    ("bug_k_tail_real", None),
    ("bug_a_order_real", None),
])
def test_planted_bugs_are_refuted(name, race):
    spec, v = _verify(name)
    assert v.kind is NE, v.reasons
    assert spec.expect == "not-equivalent"
    assert v.counterexample is not None
    if race:
        assert any("data race" in r and race in r for r in v.reasons), v.reasons
    else:
        assert spec.mode == "real" and not any("race" in r for r in v.reasons), v.reasons


@pytest.mark.parametrize("name", ["split_k", "bug_trans_b", "bug_k_tail", "bug_a_order",
                                  "bug_f16_acc"])
def test_differences_through_the_tensor_core_alone_are_inconclusive(name):
    # the kernels are not equivalent on a GPU, and the specs say so; keq cannot refute them
    # without knowing the tensor core's function, and proves nothing either
    spec, v = _verify(name)
    assert v.kind is INC, v.reasons
    assert spec.expect == "not-equivalent"
    assert any(OPEN in r for r in v.reasons), v.reasons


def test_f16_rounding_is_invisible_in_mode_real():
    spec, v = _verify("bug_f16_acc_real")
    assert v.kind is EQ, v.reasons
    assert spec.expect == "equivalent"


@pytest.mark.xfail(strict=True, reason="a refutation for every tensor-core function exists "
                   "(an f16 widened to f32 has its 13 low significand bits clear); keq's "
                   "solver picks inputs that do not show it, and says INCONCLUSIVE")
def test_f16_accumulators_against_the_simt_gemm_are_refuted():
    spec, v = _verify("bug_f16_acc_simt")
    assert spec.expect == "not-equivalent"
    assert v.kind is NE, v.reasons
