"""The tensor-core GEMM ladder (kernels/tensorcore/mma_ladder.cu; specs
kernels/tensorcore/ladder_*.toml), each rung against gemm_direct (mma_gemm.cu: fragments read
from global memory): a 3-stage cp.async pipeline, an XOR-swizzled shared layout read with
ldmatrix, register blocking (two 16x8 tiles per warp) and f16 accumulators (against the f16
direct form) feed the same values to the same mma in the same order, so they are EQUIVALENT
bit for bit whatever the tensor core computes; split-k is EQUIVALENT to the SIMT fp32 GEMM in
mode real.

Planted bugs: a swizzle that aliases rows and a missing cp.async wait are refuted bit for bit
with replayed races. A transposed B (ldmatrix .trans), a dropped k tail and two swapped A
registers feed the tensor core other values: keq leaves its dot product an open function
(docs/tensor-cores.md) but bounds how far it may be from the exact sum
(verifier/mma_bounds.py, looser than every published datapath), so they are refuted bit for
bit for every tensor core within the bound, and in mode real (an mma is the exact sum) too.
Split-k against gemm_direct bit for bit (another mma sequence) and f16 accumulators where f32
was meant against gemm_direct (another mma form) differ only by rounding the bound admits:
INCONCLUSIVE, named. f16 accumulators are EQUIVALENT in mode real (the f16 rounding is
rounding there) and refuted against the SIMT fp32 GEMM (an f16 widened to f32 has 13 low
significand bits clear; the fp32 sum need not).
With trials=0 the symbolic machinery alone decides (a refutation is replayed before it is
reported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.api import load_pair, verify
from verifier.verdict import VerdictKind

DATA = Path(__file__).resolve().parents[2] / "kernels" / "tensorcore"
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


@pytest.mark.parametrize("name", ["bug_trans_b", "bug_k_tail", "bug_a_order"])
def test_wrong_operands_are_refuted_bit_for_bit_within_the_tensor_core_bound(name):
    # the kernels feed the tensor core other values: refuted for every tensor core whose
    # result lies within keq's bound of the exact sum (verifier/mma_bounds.py), replayed
    spec, v = _verify(name)
    assert v.kind is NE, v.reasons
    assert spec.expect == "not-equivalent" and v.counterexample is not None


@pytest.mark.parametrize("name", ["split_k", "bug_f16_acc"])
def test_differences_within_the_tensor_core_bound_are_inconclusive(name):
    # another mma sequence (split-k) or another mma form (an f16 accumulator) against
    # gemm_direct: the results differ by rounding, which the bound admits either way; keq
    # cannot refute them without knowing the tensor core's exact function
    spec, v = _verify(name)
    assert v.kind is INC, v.reasons
    assert spec.expect == "not-equivalent"
    assert any(OPEN in r for r in v.reasons), v.reasons


def test_f16_rounding_is_invisible_in_mode_real():
    spec, v = _verify("bug_f16_acc_real")
    assert v.kind is EQ, v.reasons
    assert spec.expect == "equivalent"


def test_f16_accumulators_against_the_simt_gemm_are_refuted():
    # an f16 result widened to f32 has its 13 low significand bits clear; the fp32 sum
    # of the SIMT GEMM need not: at ordinary inputs the bound tells them apart
    spec, v = _verify("bug_f16_acc_simt")
    assert spec.expect == "not-equivalent"
    assert v.kind is NE, v.reasons
