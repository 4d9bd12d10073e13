"""`keq fuzz` on real-mode pairs with the default (derived) tolerance: the corpus's equivalent
real pairs exit 0, a planted missing element in a long sum (tests/data/fuzz_sum) exits 1, and
the per-thread float-operation count the tolerance uses is what the kernels execute."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verifier.cli.main import main
from verifier.fuzz.backends import get_backend
from verifier.fuzz.op_counting import OpsCounting
from verifier.fuzz.report import ROLES
from verifier.fuzz.runner import fuzz
from verifier.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
K = ROOT / "kernels"
SUM = ROOT / "tests/data/fuzz_sum"


@pytest.mark.parametrize("pair, argv", [
    ("saxpy/fma_real", []),
    ("reduce/f32_tree_shfl_real", []),
    ("reduce/f32_sequential_real", []),
    ("matmul/tiled_real", ["--examples", "40"]),
])
def test_equivalent_real_pairs_exit_0_with_the_default_tolerance(pair, argv, capsys):
    rc = main(["fuzz", str(K / f"{pair}.toml"), *argv])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "tolerance auto:4 (derived)" in out


def test_a_reordered_long_sum_exits_0(capsys):
    """A tree of depth 9 against a chain of up to 512 adds: n is the chain's length."""
    rc = main(["fuzz", str(SUM / "serial.toml"), "--examples", "12", "--set", "n=512"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "(reference 9, candidate 512; counted per thread by the emulator)" in out


@pytest.mark.parametrize("argv", [[], ["--set", "n=512"], ["--set", "n=256"]])
def test_the_missing_last_element_exits_1(argv, tmp_path, capsys):
    rc = main(["fuzz", str(SUM / "drop_last.toml"), *argv, "--repro", str(tmp_path / "r.npz")])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert "Difference (mismatch): out differs in 1 of 1 element(s)" in out
    assert "on the example shown n = " in out


def test_the_missing_element_shrinks_to_one_element():
    rep = fuzz(load_spec(SUM / "drop_last.toml"), get_backend("emulator"), seed_=0)
    assert rep.difference is not None and rep.difference.scalars == {"n": 1}


class _NoPrepared:
    """A runner whose kernel cannot be wrapped (like the GPU backend's)."""


def test_per_thread_counts_and_the_fallbacks():
    """The emulator counts what one thread executes: 9 tree levels for 512 threads, n adds
    for the serial loop. Without an emulator runner (the GPU backend) a counting emulator run
    per scalar values gives the same; the static count (the last resort) bounds it above."""
    spec = load_spec(SUM / "serial.toml")
    rep = fuzz(spec, get_backend("emulator"), examples=3, fixed={"n": 300})
    assert rep.ops.ops_max == {"reference": 9, "candidate": 300}
    assert set(rep.ops.how.values()) == {"emulator"}

    replay = OpsCounting(spec, {r: _NoPrepared() for r in ROLES})
    assert set(replay.how.values()) == {"emulator replay"}
    values = {"n": 300, "in": np.ones(300, np.float32), "out": np.zeros(1, np.float32)}
    assert replay.count("reference", {"n": 300}, values) == 9
    assert replay.count("candidate", {"n": 300}, values) == 300
    assert len(replay.cache) == 2
    assert replay._static("reference", {"n": 300}) >= 9
    assert replay._static("candidate", {"n": 300}) >= 300


def test_a_given_tolerance_overrides_the_derived_one(capsys):
    rc = main(["fuzz", str(SUM / "drop_last.toml"), "--tolerance", "rel:1", "--examples", "10"])
    out = capsys.readouterr().out
    assert rc == 0 and "tolerance rel:1 (given with --tolerance)" in out
