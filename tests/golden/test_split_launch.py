"""Split symbolic launches (verifier/coverage/split_launch.py): one maximal launch per value
of the shape scalars outside the grid, the grid scalars symbolic, where one maximal launch
over every scalar does not decide and the shapes are too many to enumerate."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verifier.api import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.coverage.split_launch import SplitLaunch, grid_scalars
from verifier.emulate import run_side
from verifier.equiv import strategies
from verifier.spec import load_spec

DATA = Path(__file__).resolve().parents[1] / "data" / "split"


def test_auto_splits_only_claims_too_large_to_enumerate():
    assert any(isinstance(s, SplitLaunch) for s in strategies("auto", [], 1))
    assert not any(isinstance(s, SplitLaunch) for s in strategies("auto", [{"n": 1}] * 8, 1))
    assert not any(isinstance(s, SplitLaunch) for s in strategies("symbolic", [], 1))
    assert [type(s) for s in strategies("split", [], 1)] == [SplitLaunch]


def test_online_softmax_over_rows_and_columns():
    # Mode real: every column count is a different sum, so one maximal launch over both
    # scalars does not decide; per column count, one symbolic CTA stands for every row.
    spec = load_spec(DATA / "online_small.toml")
    assert grid_scalars(spec) == {"rows"}
    v = verify(spec, timeout_s=60)
    assert v.kind == EQUIVALENT, (v.reasons, v.stages)
    assert v.assignments == 24
    assert "in 8 symbolic maximal launch(es), one per value of cols (rows symbolic)" \
        in v.coverage
    # every slice decided on one symbolic CTA, its outputs shown equal as reals (only the
    # first launch, over both scalars, gave up its symbolic CTA)
    assert sum(s.name == "one symbolic CTA" for s in v.stages) == 1
    assert sum(s.name == "indexed outputs" and s.status == "ok" for s in v.stages) == 8
    assert any("one symbolic CTA" in s.detail and "cols=8" in s.detail for s in v.stages)
    assert any("max.f32 is the real maximum" in a for a in v.assumptions)


def test_a_refutation_in_one_slice_refutes_the_claim_and_replays():
    spec = load_spec(DATA / "welford_no_cross.toml")
    v = verify(spec, timeout_s=60, shapes="split")
    assert v.kind == NOT_EQUIVALENT, v.reasons
    cex = v.counterexample
    assert cex.scalars["cols"] >= 2 and 1 <= cex.scalars["rows"] <= 3
    for role, want in (("reference", cex.reference), ("candidate", cex.candidate)):
        inputs = {k: (x.copy() if isinstance(x, np.ndarray) else x)
                  for k, x in cex.inputs.items()}
        final, _ = run_side(spec.side(role), inputs, cex.scalars)
        for name, arr in want.items():
            assert np.array_equal(final[name].view(np.uint8), arr.view(np.uint8))


def test_a_claim_past_one_maximal_launch_is_proved_split_by_k():
    # The real-mode tiled matmul over M, N <= 64, K <= 32: 131,072 shapes, past the indexed
    # comparison's limit for one launch; per K, M and N stay symbolic (about a minute).
    spec = load_spec(DATA.parent / "matmul_big" / "real64.toml")
    v = verify(spec, timeout_s=60, jobs=2)
    assert v.kind == EQUIVALENT, (v.reasons, v.stages)
    assert v.assignments == 131072
    assert "in 32 symbolic maximal launch(es), one per value of K (M, N symbolic)" in v.coverage
