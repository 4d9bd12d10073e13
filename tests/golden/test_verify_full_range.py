"""`keq verify` on the corpus over each spec's whole claim: no scalar pinned, every launch shape
the ranges allow covered at once by one symbolic maximal launch (verifier/coverage/symbolic_launch.py).

The 1-D pairs, the histograms (addresses over input data, split by value) and the transposes
(addresses over two symbolic dimensions: in/out buffers indexed, verifier/indexed.py) must
reach their `expect` this way, and so must the bit-exact matmul with whole k tiles and the
real-mode matmul (their fma chains compared term by term at every shape, verifier/same_at.py;
the real one reads the padding `fma(0, 0, acc)` as `acc`; both run one symbolic CTA for the
four, verifier/symbolic_cta.py: the real one about 12 s and 5 GB, the slowest test). A claim past the indexed-buffer size limit (tests/data/matmul_big) is
Inconclusive with that reason named (never a pass); tests/golden/test_verify_probes.py
refutes the buggy matmuls over their whole claims.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from verifier.emulate import run_side
from verifier.api import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.spec import load_spec

K = Path(__file__).resolve().parents[2] / "kernels"

ONE_D = [
    "vector_add/vec4.toml", "vector_add/vec4_notail.toml", "vector_add/lineinfo.toml",
    "triton/vector_add.toml", "saxpy/fma_bitexact.toml", "saxpy/fma_real.toml",
    "reduce/i32_sequential.toml", "reduce/i32_tree_shfl.toml", "reduce/i32_warp_shfl.toml",
    "reduce/i32_sequential_nosync.toml", "reduce/i32_warp_shfl_badoffset.toml",
    "reduce/f32_tree_shfl_bitexact.toml", "reduce/f32_tree_shfl_real.toml",
    "reduce/f32_sequential_real.toml", "reduce/f32_sequential_bitexact.toml",
    "reduce/f32_warp_shfl_real.toml", "scan/blelloch.toml", "scan/hillis_steele_1buf.toml",
    "stencil/shared.toml", "stencil/shared_halo_oob.toml",
]

# Addresses over input data (histogram bins) are split by value; the privatized histogram's
# whole claim is the slowest case here (about 40 s), its racy variants are found quickly.
DATA_ADDRESSES = ["histogram/shared.toml", "histogram/shared_noinit_sync.toml",
                  "histogram/shared_nomerge_sync.toml"]

# Two symbolic dimensions (rows, cols: 4096 shapes); padded_badstride reads tile words no
# thread wrote: unspecified contents, refuted by a run where they are zero (the emulator's).
TWO_D = ["transpose/tiled.toml", "transpose/padded.toml", "transpose/tiled_nobounds.toml",
         "transpose/tiled_nobounds_aligned.toml", "transpose/padded_badstride.toml",
         "matmul/tiled_bitexact_k16.toml", "matmul/tiled_real.toml"]
# Proved on one symbolic CTA standing for all four (verifier/symbolic_cta.py), not on a fall
# back to every CTA: both kernels write each element of C from the same CTA. The transposes
# launch different grids (8- and 32-row tiles): one symbolic CTA per kernel.
ONE_CTA = ["matmul/tiled_bitexact_k16.toml", "matmul/tiled_real.toml",
           "transpose/tiled.toml", "transpose/padded.toml",
           "transpose/tiled_nobounds_aligned.toml"]


@pytest.mark.parametrize("path", ONE_D + DATA_ADDRESSES + TWO_D)
def test_whole_claim_reaches_expect(path):
    spec = load_spec(K / path)
    # (symbolic: tiled_nobounds_aligned's assumes leave 4 shapes, which auto would enumerate)
    v = verify(spec, timeout_s=60, shapes="symbolic")
    assert v.kind == spec.expect, (v.reasons, v.stages)
    assert "one symbolic maximal launch" in v.coverage
    if path in ONE_CTA:
        run = [s for s in v.stages if s.name == "symbolic execution"][-1]     # (after probes)
        assert "one symbolic CTA" in run.detail and not any(s.name == "one symbolic CTA"
                                                             for s in v.stages)
    if v.kind != NOT_EQUIVALENT:
        ranged = [p for p in spec.scalars if p.range is not None]
        assert v.assignments == sum(spec.check_assumptions(dict(zip([p.name for p in ranged],
                                                                   combo)))
                                    for combo in _combinations(ranged))
        return
    cex = v.counterexample
    assert cex is not None
    # The counterexample's shape is inside the claim, and it replays: a difference shows on
    # the emulator, a fault or race is what the note says.
    assert spec.check_assumptions({p.name: cex.scalars[p.name] for p in spec.scalars
                                   if p.name in cex.scalars})
    if cex.differences:
        for role, want in (("reference", cex.reference), ("candidate", cex.candidate)):
            final, _ = run_side(spec.side(role), {k: (x.copy() if isinstance(x, np.ndarray)
                                                      else x) for k, x in cex.inputs.items()},
                                cex.scalars)
            for name, arr in want.items():
                assert np.array_equal(final[name].view(np.uint8), arr.view(np.uint8))
    else:
        assert cex.note


def _combinations(params):
    return itertools.product(*[range(p.range[0], p.range[1] + 1) for p in params])


def test_whole_claim_beyond_one_maximal_launch_is_inconclusive_by_name():
    # The real-mode matmul with M, N <= 64: past the indexed comparison's size limit.
    spec = load_spec(K.parent / "tests/data/matmul_big/real64.toml")
    v = verify(spec, timeout_s=30, shapes="symbolic")     # (auto splits it: test_split_launch)
    assert v.kind == INCONCLUSIVE
    assert v.reasons[0].startswith("symbolic launch shapes: indexed buffers")
    assert "elements of 'C' to compare, more than" in v.reasons[0], v.reasons


def test_real_mode_over_symbolic_rows():
    # Online softmax against three passes, rows 1..4 in one maximal launch at 33 columns: the
    # CTAs past the first exist under a shape condition, and their terms must reach the real
    # reading as built (libdevice expf's `J << 23`, its NaN wrappers and flushes).
    spec = load_spec(K / "softmax/online.toml")
    v = verify(spec, timeout_s=60, fixed={"cols": 33}, shapes="symbolic")
    assert v.kind == EQUIVALENT, (v.reasons, v.stages)
    assert "rows symbolic" in v.coverage and v.assignments == 4
