"""Shapes checked on their own (`verifier.coverage.probes`): the smallest allowed shape,
then the smallest where testing saw real-mode outputs far apart. They are checked when the
whole claim stays undecided (past the indexed-buffer size limit: tests/data/matmul_big), and
the smallest comes first, before the symbolic launch, where that launch is costly (the 32^3
matmuls: 32768 shapes x 1024 elements). A probe that is not equivalent refutes the claim;
equivalent probes never make the verdict a pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verifier.emulate import run_side
from verifier.api import INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.spec import load_spec

K = Path(__file__).resolve().parents[2] / "kernels"


def _replays(spec, cex) -> None:
    assert spec.check_assumptions({p.name: cex.scalars[p.name] for p in spec.scalars
                                   if p.name in cex.scalars})
    assert cex.differences
    for role, want in (("reference", cex.reference), ("candidate", cex.candidate)):
        inputs = {k: (x.copy() if isinstance(x, np.ndarray) else x)
                  for k, x in cex.inputs.items()}
        final, _ = run_side(spec.side(role), inputs, cex.scalars)
        for name, arr in want.items():
            assert np.array_equal(final[name].view(np.uint8), arr.view(np.uint8))


def test_the_zero_padding_bug_is_refuted_over_the_whole_claim_at_the_smallest_shape():
    spec = load_spec(K / "matmul/tiled_bitexact.toml")
    v = verify(spec, timeout_s=60)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert "K=1, M=1, N=1 checked on its own" in v.coverage
    assert "before the symbolic launch (33554432 output cells over 32768 shapes)" in v.coverage
    assert not any(s.name == "symbolic execution" and "symbolic)" in s.detail
                   for s in v.stages)                   # no maximal launch was run
    _replays(spec, v.counterexample)
    # the -0.0 accumulation: the reference's bit pattern is 0x80000000, the candidate's 0
    (_, _, ref, cand), = v.counterexample.differences
    assert (ref, cand) == (0x8000_0000, 0)
    assert any(s.name == "shape probe" and s.status == "failed" for s in v.stages)


def test_the_dropped_k_tile_is_refuted_in_real_mode_over_the_whole_claim():
    spec = load_spec(K / "matmul/tiled_floor_k.toml")
    v = verify(spec, timeout_s=60)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    _replays(spec, v.counterexample)


def test_equivalent_probes_leave_the_claim_inconclusive_and_say_where_they_looked():
    spec = load_spec(Path(__file__).resolve().parents[1] / "data/matmul_big/real64.toml")
    # (one maximal launch only: auto would prove it by split launches, test_split_launch.py)
    v = verify(spec, timeout_s=60, shapes="symbolic")
    assert v.kind == INCONCLUSIVE
    assert "elements of 'C' to compare, more than" in v.reasons[0]
    assert v.reasons[-1] == "checked on their own, these shapes are equivalent: K=1, M=1, N=1"


def test_a_shape_testing_flagged_is_probed_when_the_smallest_is_equivalent(tmp_path):
    # K from 16 to 31: the smallest shape has whole k tiles (no bug there); the bug needs
    # K % 16 != 0, which testing at the largest shape shows as far-apart real outputs.
    text = (K / "matmul/tiled_floor_k.toml").read_text()
    text = text.replace('"matmul_naive.ptx"', f'"{K / "matmul/matmul_naive.ptx"}"')
    text = text.replace('"matmul_tiled_floor_k.ptx"',
                        f'"{K / "matmul/matmul_tiled_floor_k.ptx"}"')
    for name, rng in (("M", "[1, 2]"), ("N", "[1, 2]"), ("K", "[16, 31]")):
        text = text.replace(f'name = "{name}"\nscalar = "s32"\nrange = [1, 32]',
                            f'name = "{name}"\nscalar = "s32"\nrange = {rng}')
    assert "range = [1, 32]" not in text
    (tmp_path / "pair.toml").write_text(text)
    spec = load_spec(tmp_path / "pair.toml")
    # (one maximal launch, then probes: auto would also try split launches, one per K)
    v = verify(spec, timeout_s=60, shapes="symbolic")
    assert v.kind == NOT_EQUIVALENT, (v.reasons, v.stages)
    # the smallest shape (K=16) was checked on its own and is equivalent; the refuting check
    # is at a shape testing flagged
    assert any(s.detail == "K=16, M=1, N=1" for s in v.stages)
    probes = [s for s in v.stages if s.name == "shape probe"]
    assert probes[-1].status == "failed" and "K=16" not in probes[-1].detail
    assert v.counterexample.scalars["K"] % 16 != 0
    _replays(spec, v.counterexample)
