"""Differential fuzzing of the corpus on the emulator: every planted bug in kernels/ is found
within the default example count and shrunk to its minimal size; equivalent pairs run clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.fuzz.backends import get_backend
from verifier.fuzz.runner import DEFAULT_EXAMPLES, ReferenceError_, fuzz
from verifier.spec import load_spec

K = Path(__file__).resolve().parents[2] / "kernels"

# pair -> (kind of difference, the minimal scalars the shrinker must reach)
PLANTED = {
    "vector_add/vec4_notail": ("mismatch", {"n": 1}),
    "reduce/i32_sequential_nosync": ("race", {"n": 1}),
    "reduce/i32_warp_shfl_badoffset": ("mismatch", {"n": 1}),
    "transpose/padded_badstride": ("mismatch", None),
    "transpose/tiled_nobounds": ("fault", {"rows": 1, "cols": 1}),
    "matmul/tiled_floor_k": ("mismatch", {"M": 1, "N": 1, "K": 1}),
    "matmul/tiled_nosync2": ("race", {"M": 1, "N": 1, "K": 17}),
    "scan/hillis_steele_1buf": ("race", {"n": 1}),
    "histogram/shared_noinit_sync": ("race", {"n": 1}),
    "histogram/shared_nomerge_sync": ("race", {"n": 1}),
    "stencil/shared_halo_oob": ("fault", {"n": 256}),
    "layernorm/welford_no_cross": ("mismatch", {"rows": 1, "cols": 2,
                                                "eps": 9.999999747378752e-06}),
    "attention/flash_no_rescale": ("mismatch", {"n": 5}),
    "softmax/cross_entropy_no_max": ("mismatch", {"rows": 1, "cols": 1}),
    "softmax/online_ex2_prescale": ("mismatch", {"rows": 1, "cols": 2}),
    "attention/flash_last_tile": ("mismatch", {"n": 1}),
    "splitk/serial_early_release": ("race", {"M": 16, "N": 16, "K": 8, "S": 2}),
    "gather/printf_unsigned": ("printf", {"B": 1, "T": 1, "C": 4, "V": 2}),
    "layernorm/three_launch_unbiased": ("mismatch", {"rows": 1, "cols": 2,
                                                     "eps": 9.999999747378752e-06}),
    # (the shrinker stops at w = 31: the texel x - 2 differs from x - 1 only past x = 1, and a
    # narrower image of random texels does not show it every time)
    "texture/blur_offbyone": ("mismatch", None),
    "texture/scale_surface_elements": ("fault", {"w": 2, "h": 1}),
    "texture/copy3d_swapped": ("mismatch", {"w": 1, "h": 1, "d": 2}),
    "texture/gather_order": ("mismatch", {"w": 1, "h": 2}),
    "fp8/swapped": ("mismatch", {"scale": 0.0, "n": 2}),
    "fp8/e5m2": ("mismatch", {"scale": 0.5, "n": 2}),
    "block_reduce/swapped": ("mismatch", {"n": 1}),
    "pdl/pdl_early": ("race", {"rows": 1, "cols": 1}),
    # the mma.sync GEMM ladder: every claim's smallest shape already shows its bug
    "tensorcore/ladder_bug_trans_b": ("mismatch", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_trans_b_real": ("mismatch", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_swizzle_alias": ("race", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_no_wait": ("race", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_k_tail": ("mismatch", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_k_tail_real": ("mismatch", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_a_order": ("mismatch", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_a_order_real": ("mismatch", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_f16_acc": ("mismatch", {"M": 16, "N": 8, "K": 16}),
    "tensorcore/ladder_bug_f16_acc_simt": ("mismatch", {"M": 16, "N": 16, "K": 16}),
}


# Planted bugs the fuzzer does not find within DEFAULT_EXAMPLES from a fresh hypothesis
# database; `keq verify` refutes them (tests/golden/test_verify_corpus.py) -> why
VERIFY_ONLY = {
    # only rows whose every value is below about -104 (or -FLT_MAX, -inf) show it; a fresh
    # run of 100 examples draws none (verify's edge-value testing tries -128 first)
    "softmax/online_max_zero": "a row far below 0 is rarely drawn",
}


def test_the_table_lists_every_buggy_candidate_of_the_corpus():
    readme = (K / "README.md").read_text()
    bugs = {line.split("`")[1].removesuffix(".toml") for line in readme.splitlines()
            if line.startswith("| `") and "**bug**" in line}
    assert bugs == set(PLANTED) | set(VERIFY_ONLY)
    assert not set(PLANTED) & set(VERIFY_ONLY)


@pytest.mark.parametrize("pair", sorted(PLANTED))
def test_planted_bug_is_found_and_shrunk(pair):
    kind, minimal = PLANTED[pair]
    spec = load_spec(K / f"{pair}.toml")
    rep = fuzz(spec, get_backend("emulator"), examples=DEFAULT_EXAMPLES, seed_=0)
    d = rep.difference
    assert d is not None, f"{pair}: no difference in {rep.examples} examples"
    assert d.kind == kind, d.summary
    assert rep.examples <= DEFAULT_EXAMPLES
    if minimal is not None:
        assert d.scalars == minimal
    if kind == "race":
        assert d.races and "race" in d.races[0]
    if kind == "fault":
        assert d.candidate.fault is not None and d.candidate.final is None


def test_padded_badstride_shrinks_to_a_two_element_transpose():
    spec = load_spec(K / "transpose/padded_badstride.toml")
    d = fuzz(spec, get_backend("emulator"), seed_=0).difference
    assert d.scalars["rows"] * d.scalars["cols"] == 2
    m = d.mismatches[0]
    assert m.param == "out" and m.count == 1


@pytest.mark.parametrize("pair", ["vector_add/vec4", "reduce/i32_warp_shfl",
                                  "transpose/tiled", "stencil/shared",
                                  "matmul/tiled_real", "histogram/shared",
                                  "reduce/f32_tree_shfl_real"])
def test_equivalent_pairs_run_clean(pair):
    spec = load_spec(K / f"{pair}.toml")
    rep = fuzz(spec, get_backend("emulator"), examples=12, seed_=1)
    assert rep.difference is None
    assert rep.examples == 12 and rep.stopped_by == "examples"
    for c in rep.coverage.values():
        assert c.measured and 0 < c.blocks_seen <= c.blocks_total


def test_without_race_detection_the_missing_barrier_is_invisible():
    """Lockstep execution hides the missing __syncthreads: races are what finds it."""
    spec = load_spec(K / "reduce/i32_sequential_nosync.toml")
    rep = fuzz(spec, get_backend("emulator", detect_races=False), examples=15, seed_=0)
    assert rep.difference is None


def test_a_fault_in_the_reference_is_a_spec_error(tmp_path):
    text = (K / "transpose/tiled_nobounds.toml").read_text()
    # swap the sides: the faulting kernel becomes the reference
    ref = text.split("[reference]")[1].split("[candidate]")[0]
    cand = text.split("[candidate]")[1].split("[[param]]")[0]
    swapped = (text.split("[reference]")[0] + "[reference]" + cand + "[candidate]" + ref
               + "[[param]]" + text.split("[[param]]", 1)[1])
    p = tmp_path / "swapped.toml"
    p.write_text(swapped.replace('ptx = "', f'ptx = "{K / "transpose"}/'))
    with pytest.raises(ReferenceError_, match="reference faulted"):
        fuzz(load_spec(p), get_backend("emulator"), examples=20)


def test_real_mode_difference_beyond_the_tolerance_is_found():
    spec = load_spec(K / "matmul/tiled_floor_k.toml")      # real mode, skips the last k tile
    rep = fuzz(spec, get_backend("emulator"), examples=DEFAULT_EXAMPLES)
    assert rep.tolerance is not None and str(rep.tolerance) == "auto:4"
    assert rep.difference is not None and rep.difference.kind == "mismatch"


def test_time_budget_stops_early():
    spec = load_spec(K / "scan/blelloch.toml")
    rep = fuzz(spec, get_backend("emulator"), examples=10_000, time_budget=0.5)
    assert rep.stopped_by == "time budget" and 0 < rep.examples < 10_000
