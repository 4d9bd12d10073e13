"""The adversarial pairs (tests/data/adversarial/README.md): one or more per behaviour the PTX
ISA leaves undefined, unspecified or nondeterministic. Each reaches its spec's `expect`, and
every refutation reproduces on the emulator with the choices it names: its outputs differ as
reported, or the candidate faults, races or never ends there, as reported."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from semantics.errors import KeqError
from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError
from semantics.machine.termination import step_budget_of
from verifier.emulate import run_side
from verifier.api import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.spec import load_spec

ADV = Path(__file__).resolve().parents[1] / "data" / "adversarial"
SPECS = sorted(ADV.glob("*.toml"))


def _copies(inputs: dict) -> dict:
    return {k: (a.copy() if isinstance(a, np.ndarray) else a) for k, a in inputs.items()}


def _replay_outputs(spec, cex) -> None:
    """Both kernels, re-run on the counterexample's inputs and choices, leave exactly the
    outputs it reports, and those differ."""
    finals = {}
    for role, want in (("reference", cex.reference), ("candidate", cex.candidate)):
        final, _ = run_side(spec.side(role), _copies(cex.inputs), cex.scalars,
                            shared_fill=cex.shared_fill or None, choices=cex.choices, tag=role)
        for name, arr in want.items():
            assert np.array_equal(final[name].view(np.uint8), arr.view(np.uint8)), (role, name)
        finals[role] = final
    name, index = cex.differences[0][:2]
    ref, cand = finals["reference"][name], finals["candidate"][name]
    assert ref.view(np.uint8).tobytes() != cand.view(np.uint8).tobytes()
    assert index < ref.size


def _replay_fault_or_race(spec, cex) -> None:
    """The candidate, re-run on the counterexample's inputs and choices with the race
    detector, faults, never ends, or races, as the note says."""
    try:
        _, result = run_side(spec.side("candidate"), _copies(cex.inputs), cex.scalars,
                             detect_races=True, shared_fill=cex.shared_fill or None,
                             choices=cex.choices, tag="candidate")
    except (MemoryFault, ExecutionError) as e:
        assert str(e).split(" (")[0][:40] in cex.note, (str(e), cex.note)
        return
    races = [e.what for e in result.effects if e.kind == "race"]
    assert races and races[0] in cex.note, (races, cex.note)


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_adversarial_pair_reaches_its_expected_verdict(path):
    if tomllib.loads(path.read_text())["expect"] == "bad-spec":
        # refused with a located error (exit 3), before anything runs
        with pytest.raises(KeqError) as err:
            load_spec(path)
        assert f"{path.name}:" in err.value.render() and "threads per block" in str(err.value)
        return
    spec = load_spec(path)
    # (the kernels here are tiny: a tenth of the default step budget ends the ones that
    # never stop ten times sooner, and leaves the others far from it)
    with step_budget_of(100_000):
        _reaches_expect(spec)


def _reaches_expect(spec) -> None:
    v = verify(spec, timeout_s=120)
    assert v.kind == spec.expect, (v.reasons, v.counterexample and v.counterexample.note)
    if v.kind == NOT_EQUIVALENT:
        cex = v.counterexample
        assert cex is not None
        if cex.differences:
            _replay_outputs(spec, cex)
        else:
            _replay_fault_or_race(spec, cex)
    elif v.kind == INCONCLUSIVE:
        assert v.reasons and v.reasons[0]          # named
    else:
        assert v.kind == EQUIVALENT and all(s.status in ("ok", "unsat") for s in v.stages)


def test_every_adversarial_spec_is_listed_with_a_kernel_source():
    """Each pair's kernels come from a file the README lists (real CUDA where it can be
    written in CUDA, hand-written PTX where it cannot)."""
    readme = (ADV / "README.md").read_text()
    for path in SPECS:
        doc = tomllib.loads(path.read_text())
        for role in ("reference", "candidate"):
            src = Path(doc[role]["ptx"])
            cu = src.with_suffix(".cu")
            assert f"`{cu.name}`" in readme or f"`{src.name}`" in readme, (path.name, src.name)
