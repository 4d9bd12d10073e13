"""`verifier.testing`: when a difference seen on the emulator is a counterexample, and the
other resolutions of what the PTX ISA leaves open that testing tries."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semantics.errors import KeqError
from semantics.machine.executor import Effect
from verifier.emulate import choices_of, run_side
from verifier.spec import load_spec
from verifier.testing import (alternatives, consulted, difference_under_choices,
                              proves_nothing)
from verifier.run import Run

ADV = Path(__file__).resolve().parents[1] / "data" / "adversarial"
LOC = None
UNINIT = Effect("uninitialized", "read of never-written shared memory", LOC)
UNDEF = Effect("undefined", "shfl from a lane that does not take part", LOC)
APPROX = Effect("approximation", "ex2.approx.f32", LOC)
ORDER = Effect("nondeterministic", "contending atomics whose order can change their outcome",
               LOC)


def test_what_proves_nothing_and_what_is_a_choice():
    assert proves_nothing([APPROX]) and proves_nothing([UNDEF, UNINIT])
    assert not proves_nothing([UNINIT, ORDER])
    assert consulted([UNINIT]) and consulted([ORDER]) and not consulted([APPROX])


def _ctx(spec) -> Run:
    return Run(spec, 10.0, 8, choices=choices_of(spec))


def _runs(ctx, scalars, inputs):
    return {role: run_side(ctx.spec.side(role),
                           {k: (v.copy() if isinstance(v, np.ndarray) else v)
                            for k, v in inputs.items()}, scalars, choices=ctx.choices, tag=role)
            for role in ("reference", "candidate")}


def test_a_float_sum_by_atomics_differs_in_another_order():
    # one float atomic per thread against the same adds by one thread in order: equal in
    # lane order (the emulator's default), not in the reverse order
    spec = load_spec(ADV / "atomic_sum_f32_bitexact.toml")
    ctx = _ctx(spec)
    x = np.array([1.0, 2.0 ** -24, 2.0 ** -24, -1.0] * 4, dtype=np.float32)
    inputs = {"x": x, "sum": np.zeros(1, np.float32), "n": 16}
    runs = _runs(ctx, {"n": 16}, inputs)
    assert np.array_equal(runs["reference"][0]["sum"], runs["candidate"][0]["sum"])
    found = difference_under_choices(ctx, {"n": 16}, inputs, runs, 0)
    assert found is not None
    choices, cand, diffs = found
    assert choices.schedule != "lane" and diffs[0][:2] == ("sum", 0)
    # and it is a legal execution the emulator gives again under those choices
    again, _ = run_side(spec.side("candidate"), dict(inputs, x=x.copy(),
                                                     sum=np.zeros(1, np.float32)),
                        {"n": 16}, choices=choices, tag="candidate")
    assert np.array_equal(again["sum"], cand["sum"])


def test_unwritten_shared_memory_with_zeros_right_differs_with_another_fill():
    spec = load_spec(ADV / "shared_unwritten_behind_branch.toml")
    ctx = _ctx(spec)
    x = np.full(32, 0x1234567, dtype=np.int32)          # every thread reads the unwritten half
    inputs = {"x": x, "out": np.zeros(32, np.int32), "n": 32}
    runs = _runs(ctx, {"n": 32}, inputs)
    assert np.array_equal(runs["reference"][0]["out"], runs["candidate"][0]["out"])
    found = difference_under_choices(ctx, {"n": 32}, inputs, runs, 0)
    assert found is not None and found[0].fill != "zero"


def test_a_reference_whose_outputs_depend_on_the_choices_is_an_error_about_the_spec(tmp_path):
    # the pair reversed: the reference reads the unwritten half
    text = (ADV / "shared_unwritten_behind_branch.toml").read_text()
    text = text.replace('kernel = "select_magic_zero"', 'kernel = "TMP"')
    text = text.replace('kernel = "select_magic_unwritten"', 'kernel = "select_magic_zero"')
    text = text.replace('kernel = "TMP"', 'kernel = "select_magic_unwritten"')
    (tmp_path / "p.toml").write_text(text.replace('"shared_uninit.ptx"',
                                                  f'"{ADV / "shared_uninit.ptx"}"'))
    spec = load_spec(tmp_path / "p.toml")
    ctx = _ctx(spec)
    inputs = {"x": np.full(32, 0x1234567, dtype=np.int32), "out": np.zeros(32, np.int32),
              "n": 32}
    runs = _runs(ctx, {"n": 32}, inputs)
    runs["candidate"][0]["out"][0] ^= 1           # (some difference, so the check runs)
    with pytest.raises(KeqError, match="reference's outputs depend on what the PTX ISA"):
        difference_under_choices(ctx, {"n": 32}, inputs, runs, 0)


def test_alternatives_differ_from_the_default_and_keep_the_target():
    spec = load_spec(ADV / "nan_commuted_add_f32_canonical.toml") \
        if hasattr(load_spec(ADV / "atomic_sum_i32.toml"), "target_assumptions") else None
    ctx = _ctx(spec or load_spec(ADV / "atomic_sum_i32.toml"))
    alts = alternatives(ctx, 3)
    assert {(c.fill, c.schedule) for c in alts} == {("pattern", "lane"), ("zero", "reverse"),
                                                    ("random:3", "random:3")}
    assert all(c.target == ctx.choices.target for c in alts)
