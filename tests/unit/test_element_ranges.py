"""A buffer's element range (`range = [lo, hi]` on an integer `in` buffer, issue 32): loaded
with located errors, printed in the claim, a constraint on every element in the solvers,
the values a gather's offset takes (`verifier.address_values`), and respected by every
concrete draw: random testing, solver models' replays, the fuzzer, and `--inputs` files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3
from hypothesis import given, settings

from semantics.errors import LocatedError
from verifier.address_values import offset_values
from verifier.claim import claim_text, symbolic_inputs
from verifier.counterexample import model_inputs
from verifier.fuzz.strategies import from_spec
from verifier.inputs import InputError, npz_buffers
from verifier.run import Run
from verifier.spec import load_spec, make_inputs

GATHER = Path(__file__).resolve().parents[2] / "kernels" / "gather"


@pytest.fixture(scope="module")
def spec():
    return load_spec(GATHER / "vec4.toml")


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = (GATHER / "vec4.toml").read_text()
    assert text.count(old) == 1, old
    for f in GATHER.glob("*.ptx"):
        (tmp_path / f.name).write_text(f.read_text())
    p = tmp_path / "pair.toml"
    p.write_text(text.replace(old, new))
    return p


def test_the_range_is_loaded_and_printed(spec):
    inp = spec.param("inp")
    assert [e.text for e in inp.elements] == ["0", "V - 1"]
    assert inp.element_bounds({"V": 5}) == (0, 4)
    assert spec.param("wte").elements is None
    assert "0 <= inp[*] <= V - 1" in claim_text(spec, {})


@pytest.mark.parametrize("old,new,msg", [
    ('range = [0, "V - 1"]', 'range = [0]', r"must be \[lo, hi\]"),
    ('range = [0, "V - 1"]', 'range = [0, "W - 1"]', "names 'W', which is not a param"),
    ('buffer = "s32"\nlength = "B * T"\naccess = "in"\nrange',
     'buffer = "s32"\nlength = "B * T"\naccess = "out"\nrange', "constrains inputs"),
    ('buffer = "s32"\nlength = "B * T"\naccess = "in"\nrange',
     'buffer = "f32"\nlength = "B * T"\naccess = "in"\nrange', "for integer buffers"),
])
def test_bad_ranges_are_located_errors(tmp_path, old, new, msg):
    with pytest.raises(LocatedError, match=msg) as e:
        load_spec(_variant(tmp_path, old, new))
    assert e.value.loc.line == 33


def test_an_empty_range_at_a_shape_is_a_located_error(tmp_path):
    s = load_spec(_variant(tmp_path, 'range = [0, "V - 1"]', 'range = [0, "V - 3"]'))
    assert s.param("inp").element_bounds({"V": 5}) == (0, 2)
    with pytest.raises(LocatedError, match=r"elements is empty: 0 > -1 at V=2"):
        s.param("inp").element_bounds({"V": 2})


def test_every_element_is_constrained_for_the_solvers(spec):
    env = {"B": 2, "T": 1, "C": 4, "V": 5}
    values, constraints, _ = symbolic_inputs(spec, env)
    inp = values["inp"].values
    s = z3.Solver()
    s.add(*constraints)
    for bad in (-1, 5):
        assert s.check(inp[1] == bad) == z3.unsat
    assert s.check(inp[1] == 4) == z3.sat


def test_the_constraint_follows_a_symbolic_bound(spec):
    values, constraints, _ = symbolic_inputs(spec, {"B": 1, "T": 1, "C": 4},
                                             {"inp": 1, "out": 4, "wte": 20, "wpe": 4})
    s = z3.Solver()
    s.add(*constraints)
    v, x = z3.BitVec("V", 32), values["inp"].values[0]
    assert s.check(v == 2, x == 2) == z3.unsat          # (V is 2 or 5 in this claim)
    assert s.check(v == 5, x == 4) == z3.sat


def test_a_gather_offset_takes_only_the_values_of_the_range():
    x = z3.BitVec("inp[0]", 32)
    off = z3.ZeroExt(32, x) * 16
    assert offset_values(off, True, {}, 1, 1 << 20) is None     # 2^32 values: refused
    got = offset_values(off, True, {}, 1, 1 << 20, {"inp[0]": (0, 4)})
    assert sorted(got) == [0, 16, 32, 48, 64]
    assert got[32].eq(x == 2)                  # the test restated on the element
    signed = offset_values(off, True, {}, 1, 1 << 20, {"inp[0]": (-1, 0)})
    assert sorted(signed) == [0, (0xFFFFFFFF * 16)]


def test_random_inputs_and_model_replays_stay_in_the_range(spec):
    env = {"B": 2, "T": 2, "C": 4, "V": 2}
    for seed in range(5):
        inputs = make_inputs(spec, env, np.random.default_rng(seed))
        assert set(inputs["inp"].tolist()) <= {0, 1}
    _, _, variables = symbolic_inputs(spec, env)
    run = Run(spec, timeout_s=1.0, unroll=1)
    # a model that mentions inp[0] (= 1) and not the other elements (0 by default, in range
    # here) nor... an out-of-range default is never written into the replay:
    _, replay = model_inputs(run, env, lambda v: 1 if str(v) == "inp[0]" else 7, variables, 0)
    assert replay["inp"][0] == 1 and set(replay["inp"][1:].tolist()) <= {0, 1}


def test_the_fuzzer_draws_in_the_range(spec):
    seen = set()

    @settings(max_examples=40, deadline=None, database=None)
    @given(from_spec(spec))
    def draw(values):
        lo, hi = spec.param("inp").element_bounds(values)
        assert lo <= values["inp"].min() and values["inp"].max() <= hi
        seen.update(values["inp"].tolist())
    draw()
    assert len(seen) > 1


def test_inputs_files_outside_the_range_are_refused(spec):
    env = {"B": 1, "T": 2, "C": 4, "V": 2}
    ok = {"inp": np.array([0, 1], np.int32)}
    assert npz_buffers(spec, ok, env, "in.npz", {})["inp"].tolist() == [0, 1]
    with pytest.raises(InputError, match=r"inp\[1\] = 2 is outside the spec's element range"):
        npz_buffers(spec, {"inp": np.array([0, 2], np.int32)}, env, "in.npz", {})
