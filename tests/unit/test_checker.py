"""The warm checker (`verifier.checker`): its verdicts are `keq verify`'s for the same pair
(the kind, on corpus candidates and on mutants), the inputs that refuted one candidate are
tried first on the next, a budget ends in Inconclusive, `check_many` streams the same
verdicts from two processes, and bad candidates are errors with their location."""

from __future__ import annotations

from pathlib import Path

import pytest

from semantics.errors import KeqError, PtxSyntaxError
from verifier.api import load_pair, verify
from verifier.checker import Checker
from verifier.verdict import VerdictKind

K = Path(__file__).resolve().parents[2] / "kernels" / "vector_add"
VEC4 = K / "vector_add_vec4.ptx"
TEXT = VEC4.read_text()
# Mutants as an optimizer's search makes them: most wrong, one a no-op rewrite.
MUTANTS = {
    "sub": TEXT.replace("add.f32", "sub.f32", 1),
    "mul": TEXT.replace("add.f32", "mul.f32", 1),
    "all sub": TEXT.replace("add.f32", "sub.f32"),
    "same": TEXT.replace("add.f32 \t", "add.rn.f32 \t", 1),
}


@pytest.fixture(scope="module")
def checker():
    return Checker(K / "vec4.toml", timeout_s=30)


def test_the_kinds_are_those_keq_verify_gives(checker):
    notail = load_pair(K / "vec4_notail.toml")
    got = checker.check(notail.candidate.ptx, notail.candidate.kernel)
    assert got.kind == verify(notail).kind == VerdictKind.NOT_EQUIVALENT
    for name, text in MUTANTS.items():
        cold = verify(checker.pair_with(text), timeout_s=30)
        assert checker.check(text).kind == cold.kind, name
    assert MUTANTS["same"] != TEXT and checker.check(MUTANTS["same"]).kind == "equivalent"


def test_an_earlier_counterexample_refutes_the_next_candidate_first():
    c = Checker(K / "vec4.toml", timeout_s=30)
    first = c.check(MUTANTS["sub"])
    assert first.kind == "not-equivalent" and first.stages[0].name != "earlier counterexamples"
    again = c.check(MUTANTS["all sub"])
    assert again.kind == "not-equivalent"
    assert [s.name for s in again.stages] == ["earlier counterexamples"]
    assert again.counterexample.differences and "replayed" in again.coverage


def test_a_budget_ends_in_inconclusive_never_a_pass():
    v = Checker(K / "vec4.toml").check(VEC4, budget_s=0.01)
    assert v.kind == "inconclusive" and "budget of 0.01 s" in v.reasons[0]


def test_check_many_streams_the_verdicts_of_check_from_two_processes(checker):
    items = [(name, text, None) for name, text in MUTANTS.items()] + [("vec4", VEC4, None)]
    many = {j.label: j.verdict.kind for j in Checker(K / "vec4.toml", timeout_s=30)
            .check_many(items, jobs=2)}
    assert many == {name: checker.check(c).kind for name, c, _ in items}


def test_bad_candidates_are_located_errors(checker):
    with pytest.raises(KeqError, match="no .entry 'nope'"):
        checker.check(VEC4, "nope")
    with pytest.raises(PtxSyntaxError) as e:
        checker.check(TEXT.replace("ret;", "ret"))
    assert e.value.loc.line > 1
    with pytest.raises(KeqError, match="<candidate>:27:22: error: undefined symbol"):
        checker.check(TEXT.replace(",\n\t.param .u32 vector_add_vec4_param_3", "", 1))
    one = (".version 8.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry vector_add_vec4(.param .u64 p)\n{\nret;\n}\n")
    with pytest.raises(KeqError, match="has 1 parameter"):
        checker.check(one)
