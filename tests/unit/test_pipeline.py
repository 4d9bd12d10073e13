"""The stage pipeline and the coverage strategies (verifier/stages, verifier/coverage;
docs/architecture.md): one sequence of stages runs for one launch shape and for the symbolic
maximal launch, a stage that cannot decide says what could (`Undecided`), and each strategy
turns that into its next step. Each test adds a stage as a newcomer would (one object with
`name` and `check`) and watches what the verdict does with it."""

from __future__ import annotations

from pathlib import Path

import pytest

import verifier.coverage.one_shape as one_shape
import verifier.coverage.symbolic_launch as symbolic_launch
from verifier.equiv import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.spec import load_spec
from verifier.stages import PIPELINE, Next, Undecided

ROOT = Path(__file__).resolve().parents[2]
VEC4 = ROOT / "kernels" / "vector_add" / "vec4.toml"
NOTAIL = ROOT / "kernels" / "vector_add" / "vec4_notail.toml"


class Raising:
    name = "raising"

    def __init__(self, next: Next) -> None:
        self.next = next
        self.seen: list[bool] = []

    def check(self, run, ex):
        self.seen.append(ex.maximal is not None)
        raise Undecided("a stage that cannot decide", self.next)


class Watching:
    name = "watching"

    def __init__(self) -> None:
        self.launches: list[set[str]] = []

    def check(self, run, ex):
        self.launches.append(set(ex.launches))
        return None


def _with(monkeypatch, stage, at: int) -> None:
    stages = PIPELINE[:at] + (stage,) + PIPELINE[at:]
    monkeypatch.setattr(one_shape, "PIPELINE", stages)
    monkeypatch.setattr(symbolic_launch, "PIPELINE", stages)


def test_the_pipeline_is_the_documented_sequence():
    assert [s.name for s in PIPELINE] == ["symbolic execution", "bounds", "effects", "races",
                                          "outputs"]


def test_a_stage_after_execution_sees_both_launches_at_every_shape(monkeypatch):
    watching = Watching()
    _with(monkeypatch, watching, 1)
    v = verify(load_spec(VEC4), fixed={"n": 9}, trials=0)
    assert v.kind == EQUIVALENT
    assert watching.launches == [{"reference", "candidate"}]


def test_undecided_by_anything_is_inconclusive_with_its_reason(monkeypatch):
    _with(monkeypatch, Raising(Next.NOTHING), 1)
    v = verify(load_spec(VEC4), fixed={"n": 9}, trials=0)
    assert v.kind == INCONCLUSIVE and v.reasons == ("a stage that cannot decide",)


def test_undecided_but_testable_is_refuted_by_testing_where_it_differs(monkeypatch):
    _with(monkeypatch, Raising(Next.TESTING), 1)
    spec = load_spec(NOTAIL)
    v = verify(spec, fixed={"n": 9}, trials=8)
    assert v.kind == NOT_EQUIVALENT and v.stages[-1].name == "random testing"
    v = verify(load_spec(VEC4), fixed={"n": 9}, trials=8)
    assert v.kind == INCONCLUSIVE


def test_undecided_at_one_shape_goes_to_the_logged_machinery_at_that_shape(monkeypatch):
    raising = Raising(Next.LOGGED)
    _with(monkeypatch, raising, 1)
    v = verify(load_spec(VEC4), fixed={"n": 9}, trials=0)
    # the one-shape run, then the maximal launch at that shape: both meet the stage
    assert raising.seen == [False, True]
    assert v.kind == INCONCLUSIVE
    assert "the symbolic launch cannot decide it either: a stage that cannot decide" in \
        v.reasons[0]


@pytest.mark.parametrize("shapes", ["symbolic", "auto"])
def test_undecided_over_the_maximal_launch_falls_back_to_the_next_strategy(monkeypatch, shapes):
    raising = Raising(Next.NOTHING)
    _with(monkeypatch, raising, 1)
    spec = load_spec(VEC4)
    v = verify(spec, trials=0, shapes=shapes)      # (2048 shapes: too many to enumerate)
    assert raising.seen[0] is True                 # the maximal launch met it first
    skipped = [s for s in v.stages if s.name == "symbolic shapes"]
    assert skipped and "a stage that cannot decide" in skipped[0].detail
    assert v.kind == INCONCLUSIVE
    if shapes == "symbolic":
        assert v.reasons[0] == "symbolic launch shapes: a stage that cannot decide"
    else:   # enumeration refuses too: both reasons are named
        assert "keq enumerates at most 16" in v.reasons[0]
        assert "symbolic launch shapes do not apply: a stage that cannot decide" in v.reasons[0]


class UndecidedOverTheMaximalLaunch:
    name = "undecided over the maximal launch"

    def check(self, run, ex):
        return run.inconclusive("the maximal launch cannot tell") if ex.maximal else None


def test_what_the_maximal_launch_leaves_undecided_enumeration_may_decide(monkeypatch):
    _with(monkeypatch, UndecidedOverTheMaximalLaunch(), 1)
    # 2048 shapes: more than enumeration takes by default, so the maximal launch's reason
    # stands (after the shape probes)
    v = verify(load_spec(VEC4), trials=0)
    assert v.kind == INCONCLUSIVE and v.reasons[0] == "the maximal launch cannot tell"
    # 12 shapes: more than auto enumerates first, few enough to check each on its own
    v = verify(_few(load_spec(NOTAIL)), trials=0)
    assert v.kind == NOT_EQUIVALENT and "each checked on its own" in v.coverage


def _few(spec):
    """`spec` with n allowed 12 values."""
    from dataclasses import replace
    n = spec.param("n")
    params = tuple(replace(p, values=tuple(range(1, 13)), range=None) if p is n else p
                   for p in spec.params)
    return replace(spec, params=params)
