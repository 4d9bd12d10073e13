"""Handoffs through spin waits (tests/data/spin, CUDA compiled by nvcc 13): a release of a
flag and a wait on it with an acquire, across CTAs (`cuda::atomic_ref`, a volatile flag with
`__threadfence`, a wait with `__nanosleep`) and within a CTA (a volatile shared flag per
lane). The symbolic race log decides for every schedule that each wait ends on the one store
that ends it and orders the data through it (semantics/machine/symbolic_spins.py); planted
bugs are refuted (a race or a hang, replayed) or Inconclusive where only the schedule shows
them. Each of the two halves, removed, makes a test here fail."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from semantics.machine.symbolic_spins import SpinHandoffs
from verifier.api import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.spec import load_spec

DATA = Path(__file__).resolve().parents[1] / "data" / "spin"
SPECS = sorted(DATA.glob("*.toml"))
KINDS = {"equivalent": EQUIVALENT, "not-equivalent": NOT_EQUIVALENT,
         "inconclusive": INCONCLUSIVE}


def _verify(name: str, **kw):
    return verify(load_spec(DATA / f"{name}.toml"), timeout_s=120, jobs=1, **kw)


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_each_pair_reaches_its_expected_verdict(path):
    expect = tomllib.loads(path.read_text())["expect"]
    v = verify(load_spec(path), timeout_s=120, jobs=1)
    assert v.kind == KINDS[expect], v.reasons


def test_a_wait_across_ctas_states_the_progress_it_assumes():
    v = _verify("fixup_acquire")
    assert v.kind == EQUIVALENT
    assert any("spin wait" in a and "co-resident" in a for a in v.assumptions), v.assumptions
    inside = _verify("lanes_handoff")
    assert inside.kind == EQUIVALENT
    assert not any("spin wait" in a for a in inside.assumptions), inside.assumptions


def test_bugs_are_named():
    relaxed = _verify("fixup_relaxed")
    assert relaxed.kind == NOT_EQUIVALENT and "data race" in " ".join(relaxed.reasons)
    reset = _verify("fixup_reset")
    assert reset.kind == NOT_EQUIVALENT and "spins forever" in " ".join(reset.reasons)


def test_an_undecided_wait_is_inconclusive_without_testing():
    v = _verify("lanes_uninit", trials=0)
    assert v.kind == INCONCLUSIVE
    assert any("spin wait" in r and "more than one store" in r for r in v.reasons), v.reasons


def test_without_the_obligations_an_unsafe_wait_would_be_proved(monkeypatch):
    """The obligations are what stops the uninitialized flags (without them and without
    testing, keq would call the pair equivalent: wrongly)."""
    monkeypatch.setattr(SpinHandoffs, "obligations", lambda self, events: [])
    assert _verify("lanes_uninit", trials=0).kind == EQUIVALENT


def test_without_the_handoff_the_data_pair_stays_undecided(monkeypatch):
    monkeypatch.setattr(SpinHandoffs, "ordered", lambda self, w, r, fences, events: None)
    v = _verify("fixup_acquire")
    assert v.kind == INCONCLUSIVE
    assert any("may race" in r for r in v.reasons), v.reasons


def test_a_counter_wait_that_cannot_end_is_refuted_with_the_hang():
    # three arrivals awaited where two come: the symbolic run itself shows the wait cannot
    # end, and so does the emulator when testing is on
    for trials in (0, 8):
        v = _verify("arrive_count_three", trials=trials)
        assert v.kind == NOT_EQUIVALENT and "spins forever" in " ".join(v.reasons), v.reasons


def test_each_arrival_must_precede_the_value_that_ends_the_wait(monkeypatch):
    """An arrival orders its share before the reads only when no value the counter reaches
    without it ends the wait (`SpinWait.none_between`): with the check, waiting for one
    arrival of two is not proved; without it, it would be (wrongly)."""
    from semantics.machine.spin_waits import SpinWait
    assert _verify("arrive_count", trials=0).kind == EQUIVALENT
    assert _verify("arrive_count_one", trials=0).kind == INCONCLUSIVE
    monkeypatch.setattr(SpinWait, "none_between", lambda self, lo, hi, bound: True)
    assert _verify("arrive_count_one", trials=0).kind == EQUIVALENT


def test_turns_are_proved_through_the_chain_of_handoffs(monkeypatch):
    """CTA b's wait can only end after CTA b - 1's, so the handoffs chain (serial split-k):
    without the chain's transitive order the accumulator's earlier writes stay unordered
    with the later reads."""
    assert _verify("turns_status", trials=0).kind == EQUIVALENT
    assert _verify("turns_count", trials=0).kind == EQUIVALENT
    monkeypatch.setattr(SpinHandoffs, "_chained", lambda self, w, r, fences, events: False)
    assert _verify("turns_status", trials=0).kind == INCONCLUSIVE


def test_wrong_turns_are_refuted_by_the_symbolic_log_alone():
    for name in ("turns_any", "turns_early", "turns_shared"):
        v = _verify(name, trials=0)
        assert v.kind == NOT_EQUIVALENT and "data race" in " ".join(v.reasons), (name, v.reasons)


def test_parked_ctas_let_the_writer_run_on(monkeypatch):
    """Without parking, lockstep execution holds CTA 0 back where the CTAs reconverge while
    the others spin: keq could not run the turns (Inconclusive, never a refutation)."""
    from semantics.machine.termination import Parking
    monkeypatch.setattr(Parking, "park", lambda self, x, mask: False)
    assert _verify("turns_status").kind == INCONCLUSIVE


def test_a_wait_lockstep_cannot_schedule_is_not_refuted(monkeypatch):
    """Warps taking turns within a CTA: the guard turns the lockstep schedule's "spins
    forever" into Inconclusive; without it the pair was refuted, wrongly."""
    v = _verify("warps_turns")
    assert v.kind == INCONCLUSIVE and "holds back" in v.reasons[0], v.reasons
    from semantics.machine import executor
    monkeypatch.setattr(executor, "others_could_run", lambda x, mask: False)
    assert _verify("warps_turns").kind == NOT_EQUIVALENT


@pytest.mark.parametrize("name,expect", [
    ("fixup_acquire", EQUIVALENT), ("lanes_handoff", EQUIVALENT), ("arrive_count", EQUIVALENT),
    ("lanes_uninit", INCONCLUSIVE), ("arrive_count_one", INCONCLUSIVE),
    ("turns_status", INCONCLUSIVE),
])
def test_the_rules_for_symbolic_flags_decide_alone(monkeypatch, name, expect):
    """Where a flag's writers have symbolic conditions (a maximal launch over CTAs that may
    not exist) there is no concrete chain; the rules of symbolic_spins and spin_counters
    decide alone (chains then stay Inconclusive)."""
    from semantics.machine.spin_chains import Chain
    monkeypatch.setattr(Chain, "of", staticmethod(lambda accesses, reads, before: None))
    assert _verify(name, trials=0).kind == expect


def test_an_unscheduled_wait_in_a_worker_process_is_inconclusive():
    v = verify(load_spec(DATA / "warps_turns.toml"), timeout_s=120, jobs=2, shapes="enumerate",
               max_shapes=32)
    assert v.kind == INCONCLUSIVE and "holds back" in " ".join(v.reasons), v.reasons
