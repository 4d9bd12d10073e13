"""`keq verify` on the corpus at fixed launch shapes (whole claims: test_verify_full_range.py).

Each case pins the launch-shaping scalars (the claim is then restricted to that shape, with
every buffer content and every other scalar still symbolic) and requires the spec's `expect`.
Where keq cannot reach `expect` yet, the case is a strict xfail naming the missing piece, so
the test flips the day the piece lands.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verifier.api import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.emulate import run_side
from verifier.spec import load_spec

K = Path(__file__).resolve().parents[2] / "kernels"
BIG = K.parent / "tests/data/matmul_big/real64.toml"      # past the indexed size limit


CASES = [
    ("vector_add/vec4.toml", {"n": 1001}, None),
    ("vector_add/vec4.toml", {"n": 4}, None),
    ("vector_add/lineinfo.toml", {"n": 300}, None),
    ("vector_add/vec4_notail.toml", {"n": 1001}, None),
    ("triton/vector_add.toml", {"n": 1000}, None),
    ("saxpy/fma_bitexact.toml", {"n": 2}, None),
    ("saxpy/fma_real.toml", {"n": 64}, None),
    ("reduce/i32_sequential.toml", {"n": 300}, None),
    ("reduce/i32_tree_shfl.toml", {"n": 300}, None),
    ("reduce/i32_warp_shfl.toml", {"n": 300}, None),
    ("reduce/i32_sequential_nosync.toml", {"n": 300}, None),
    ("reduce/i32_warp_shfl_badoffset.toml", {"n": 300}, None),
    ("reduce/f32_tree_shfl_bitexact.toml", {"n": 256}, None),
    ("reduce/f32_sequential_real.toml", {"n": 300}, None),
    ("reduce/f32_warp_shfl_real.toml", {"n": 300}, None),
    ("reduce/f32_sequential_bitexact.toml", {"n": 255}, None),
    ("transpose/tiled.toml", {"rows": 40, "cols": 33}, None),
    ("transpose/padded.toml", {"rows": 40, "cols": 33}, None),
    ("transpose/tiled_nobounds.toml", {"rows": 40, "cols": 33}, None),
    ("transpose/tiled_nobounds_aligned.toml", {"rows": 32, "cols": 64}, None),
    ("transpose/padded_badstride.toml", {"rows": 40, "cols": 33}, None),
    ("scan/blelloch.toml", {"n": 200}, None),
    ("scan/hillis_steele_1buf.toml", {"n": 200}, None),
    ("histogram/shared.toml", {"n": 100}, None),
    ("histogram/shared.toml", {"n": 300}, None),
    ("histogram/shared_noinit_sync.toml", {"n": 100}, None),
    ("histogram/shared_nomerge_sync.toml", {"n": 300}, None),
    ("stencil/shared.toml", {"n": 300}, None),
    ("stencil/shared_halo_oob.toml", {"n": 256}, None),
    ("matmul/tiled_bitexact_k16.toml", {"M": 8, "N": 8, "K": 16}, None),
    ("matmul/tiled_bitexact.toml", {"M": 2, "N": 15, "K": 1}, None),
    ("matmul/tiled_nosync2.toml", {"M": 16, "N": 16, "K": 32}, None),
    ("matmul/tiled_floor_k.toml", {"M": 4, "N": 4, "K": 20}, None),
    ("matmul/tiled_real.toml", {"M": 8, "N": 8, "K": 20}, None),
    ("softmax/online_rows.toml", {"rows": 1, "cols": 33}, None),
    ("softmax/warp_rows.toml", {"rows": 2, "cols": 33}, None),
    ("softmax/cross_entropy.toml", {"rows": 2, "cols": 9}, None),
    ("softmax/cross_entropy_no_max.toml", {"rows": 1, "cols": 9}, None),
    ("softmax/online_max_zero.toml", {"rows": 1, "cols": 1}, None),
    ("softmax/online_ex2_prescale.toml", {"rows": 1, "cols": 2}, None),
    ("softmax/cross_entropy_logf.toml", {"rows": 1, "cols": 9}, None),    # (logf: no reading)
    ("layernorm/welford.toml", {"rows": 2, "cols": 33}, None),
    ("layernorm/welford_no_cross.toml", {"rows": 1, "cols": 33}, None),
    ("layernorm/rmsnorm.toml", {"rows": 2, "cols": 65}, None),
    ("gelu/tanh_vs_erf.toml", {"n": 4}, None),
    ("attention/flash.toml", {"n": 5}, None),
    ("attention/flash_no_rescale.toml", {"n": 5}, None),
    ("attention/flash_last_tile.toml", {"n": 5}, None),
    ("tensorcore/wmma_shared.toml", {"M": 32, "N": 16, "K": 32}, None),
    ("tensorcore/wmma_real.toml", {"M": 16, "N": 32, "K": 32}, None),
    ("tensorcore/wmma_b_row.toml", {"M": 16, "N": 16, "K": 16}, None),
    ("tensorcore/wmma_scaled.toml", {"M": 16, "N": 32, "K": 32}, None),
    ("tensorcore/wmma_ragged.toml", {"M": 16, "N": 16, "K": 16}, None),
    ("tensorcore/ladder_pipe3.toml", {"M": 32, "N": 16, "K": 64}, None),
    ("tensorcore/ladder_swizzled.toml", {"M": 16, "N": 16, "K": 64}, None),
    ("tensorcore/ladder_blocked.toml", {"M": 16, "N": 32, "K": 64}, None),
    ("tensorcore/ladder_f16.toml", {"M": 16, "N": 16, "K": 64}, None),
    # (another summation order: rounding within keq's bound of the tensor core's exact sum)
    ("tensorcore/ladder_split_k.toml", {"M": 16, "N": 8, "K": 32},
     "the tensor core's exact function (split-k differs by rounding its bound admits)"),
    ("tensorcore/ladder_split_k_real.toml", {"M": 16, "N": 16, "K": 64}, None),
    ("tensorcore/ladder_bug_trans_b.toml", {"M": 16, "N": 8, "K": 16}, None),
    ("tensorcore/ladder_bug_trans_b_real.toml", {"M": 16, "N": 8, "K": 16}, None),
    ("tensorcore/ladder_bug_swizzle_alias.toml", {"M": 32, "N": 16, "K": 48}, None),
    ("tensorcore/ladder_bug_no_wait.toml", {"M": 32, "N": 16, "K": 48}, None),
    ("tensorcore/ladder_bug_k_tail.toml", {"M": 16, "N": 8, "K": 16}, None),
    ("tensorcore/ladder_bug_k_tail_real.toml", {"M": 16, "N": 8, "K": 48}, None),
    ("tensorcore/ladder_bug_a_order.toml", {"M": 16, "N": 8, "K": 16}, None),
    ("tensorcore/ladder_bug_a_order_real.toml", {"M": 16, "N": 8, "K": 16}, None),
    ("tensorcore/ladder_bug_f16_acc.toml", {"M": 16, "N": 8, "K": 16}, None),
    ("tensorcore/ladder_bug_f16_acc_real.toml", {"M": 16, "N": 8, "K": 32}, None),
    ("tensorcore/ladder_bug_f16_acc_simt.toml", {"M": 16, "N": 16, "K": 16}, None),
    ("splitk/serial.toml", {"M": 16, "N": 32, "K": 13, "S": 3}, None),
    ("splitk/serial_early_release.toml", {"M": 16, "N": 16, "K": 8, "S": 2}, None),
    ("splitk/fixup.toml", {"M": 16, "N": 32, "K": 13, "S": 3}, None),
    ("texture/blur.toml", {"w": 7, "h": 2}, None),
    ("texture/blur_offbyone.toml", {"w": 7, "h": 2}, None),
    ("texture/blur_border.toml", {"w": 7, "h": 2}, None),
    ("texture/shift_wrap.toml", {"w": 5, "h": 2}, None),
    ("texture/scale_surface.toml", {"w": 33, "h": 2}, None),
    ("texture/scale_surface_elements.toml", {"w": 33, "h": 2}, None),
    ("texture/copy3d.toml", {"w": 5, "h": 2, "d": 3}, None),
    ("texture/copy3d_swapped.toml", {"w": 5, "h": 2, "d": 3}, None),
    ("texture/gather.toml", {"w": 7, "h": 3}, None),
    ("texture/gather_order.toml", {"w": 7, "h": 3}, None),
    ("texture/upsample_pairs.toml", {"w": 7, "h": 2}, None),
    ("texture/upsample_corner.toml", {"w": 7, "h": 2}, None),
    ("fp8/pack_two.toml", {"n": 9}, None),
    ("fp8/dequantize.toml", {"n": 9}, None),
    ("fp8/swapped.toml", {"n": 9}, None),
    ("fp8/e5m2.toml", {"n": 9}, None),
    ("block_reduce/bar_red.toml", {"n": 17}, None),
    ("block_reduce/swapped.toml", {"n": 40}, None),
    ("pdl/fused.toml", {"rows": 2, "cols": 3}, None),
    ("pdl/pdl.toml", {"rows": 2, "cols": 3}, None),
    ("pdl/pdl_early.toml", {"rows": 2, "cols": 3}, None),
]


def _fixed(spec, shape):
    return {k: v for k, v in shape.items() if any(p.name == k for p in spec.scalars)}


@pytest.mark.parametrize("path,shape,gap", CASES,
                         ids=[f"{c[0]}@{','.join(f'{k}={v}' for k, v in c[1].items())}"
                              for c in CASES])
def test_verdict_matches_expect(path, shape, gap):
    spec = load_spec(K / path)
    v = verify(spec, fixed=_fixed(spec, shape), timeout_s=60)
    if gap:
        assert v.kind == INCONCLUSIVE, v.reasons
        pytest.xfail(gap)
    assert v.kind == spec.expect, (v.reasons, v.counterexample)
    if v.kind == NOT_EQUIVALENT:
        cex = v.counterexample
        assert cex is not None
        if cex.differences:
            # The reported difference is real: replaying the saved inputs shows it.
            for role, want in (("reference", cex.reference), ("candidate", cex.candidate)):
                final, _ = run_side(spec.side(role), {k: (a.copy() if isinstance(a, np.ndarray)
                                                          else a)
                                                      for k, a in cex.inputs.items()},
                                    cex.scalars)
                for name, arr in want.items():
                    assert np.array_equal(final[name].view(np.uint8), arr.view(np.uint8))
        else:
            assert cex.note        # a fault or a race, named
    if v.kind == EQUIVALENT:
        assert v.stages and all(s.status in ("ok", "unsat") for s in v.stages)


def test_a_claim_beyond_symbolic_shapes_and_enumeration_is_inconclusive_and_says_why(tmp_path):
    # real64 with K up to 5000: 20,480,000 shapes, past the plan of one maximal launch and of
    # split launches alike, and past enumeration
    text = BIG.read_text().replace('"../../../kernels/', f'"{K}/')
    text = text.replace('name = "K"\nscalar = "s32"\nrange = [1, 32]',
                        'name = "K"\nscalar = "s32"\nrange = [1, 5000]')
    assert "range = [1, 5000]" in text
    (tmp_path / "pair.toml").write_text(text)
    v = verify(load_spec(tmp_path / "pair.toml"))
    assert v.kind == INCONCLUSIVE
    assert "20480000 launch shapes" in v.reasons[0] and "--set" in v.reasons[0]
    assert "symbolic launch shapes do not apply" in v.reasons[0]
    assert "split symbolic launches do not apply" in v.reasons[0]
