"""`allow = ["nan-any"]`: a claim that does not compare NaN payloads (issue 31's NaN policy),
printed in the claim, used by the solvers, random testing, replays and the fuzzer alike
(tests/data/renamed: (x + x) + x against 3 * x, and a wrong 2 * x)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from verifier.api import load_pair, verify
from verifier.cli.main import main
from verifier.testing import differences

D = Path(__file__).resolve().parents[1] / "data" / "renamed"


def test_without_payloads_the_pair_is_equivalent_and_the_claim_says_so():
    spec = load_pair(D / "triple_nan_any.toml")
    v = verify(spec, trials=0)
    assert v.kind == "equivalent" and "allowing nan-any" in v.claim
    # the same pair comparing payloads: which NaN an f32 add or mul returns is the
    # hardware's, so nothing is proved, and nothing is refuted either
    assert verify(replace(spec, allow=()), trials=0).kind == "inconclusive"


def test_a_real_difference_is_still_refuted_and_replayed():
    v = verify(load_pair(D / "double_nan_any.toml"), trials=0)
    assert v.kind == "not-equivalent"
    (d, *_) = v.counterexample.differences
    nan = [np.isnan(np.uint32(x).view(np.float32)) for x in (d[2], d[3])]
    assert not all(nan)


def test_testing_counts_two_nans_as_equal_only_under_nan_any():
    spec = load_pair(D / "triple_nan_any.toml")
    ref = {"y": np.array([np.nan, 1.0, np.nan], np.float32)}
    cand = {"y": np.array([1.0, 1.0, np.nan], np.float32)}
    cand["y"].view(np.uint32)[2] = 0x7FC00001              # another payload
    assert [d[1] for d in differences(spec, ref, cand)] == [0]
    assert [d[1] for d in differences(replace(spec, allow=()), ref, cand)] == [0, 2]


def test_the_fuzzer_compares_the_claim_s_way(capsys, tmp_path):
    repro = ["--repro", str(tmp_path / "r.npz")]
    assert main(["fuzz", str(D / "triple_nan_any.toml"), "--examples", "40", *repro]) == 0
    assert main(["fuzz", str(D / "double_nan_any.toml"), "--examples", "40", *repro]) == 1
    capsys.readouterr()
