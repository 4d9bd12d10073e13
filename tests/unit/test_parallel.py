"""`verifier.parallel.first_failure` and `each`: independent checks shared among forked
processes give the answers a loop in order gives (the first failure; every answer, in order),
whatever finishes first, and a worker that dies has its share checked again in the verifying
process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import z3

from replaying import assert_replays
from verifier.equiv import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.parallel import each, first_failure
from verifier.spec import load_spec

D = Path(__file__).resolve().parents[1] / "data" / "matmul_order"


@pytest.mark.parametrize("failing", [set(), {0}, {7}, {3, 4}, {5, 17, 18, 29}, set(range(30))])
@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_the_first_failure_is_the_sequential_one(failing, jobs):
    assert first_failure(30, lambda i: i not in failing, jobs) == \
        (min(failing) if failing else None)


@pytest.mark.parametrize("count", [0, 1, 5, 30])
@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_each_answer_comes_back_in_order(count, jobs):
    assert each(count, lambda i: i % 3 == 1 or i == 17, jobs) == \
        [i % 3 == 1 or i == 17 for i in range(count)]


def test_a_worker_that_dies_has_its_answers_found_here():
    parent = os.getpid()

    def check(i: int) -> bool:
        if os.getpid() != parent:
            os._exit(9)
        return i in (4, 11)
    assert each(20, check, 2) == [i in (4, 11) for i in range(20)]


def test_workers_read_the_state_they_were_forked_with():
    # z3 terms built before the fork are the workers' to read: nothing is pickled
    x = z3.BitVec("x", 32)
    terms = [z3.simplify(x + i - i) for i in range(12)]
    assert first_failure(12, lambda i: terms[i].eq(x), 2) is None
    terms[9] = x + 1
    assert first_failure(12, lambda i: terms[i].eq(x), 2) == 9


def test_a_worker_that_dies_has_its_share_checked_here():
    parent = os.getpid()

    def check(i: int) -> bool:
        if os.getpid() != parent:
            os._exit(9)                   # as if killed for memory, mid-share
        return i != 11
    assert first_failure(20, check, 2) == 11


def test_the_term_walk_gives_the_sequential_verdict_in_two_processes():
    spec = load_spec(D / "tiled.toml")
    one = verify(spec, timeout_s=60, trials=0)
    two = verify(spec, timeout_s=60, trials=0, jobs=2)
    assert one.kind == two.kind == EQUIVALENT
    # the transposed B tile: the walk hands back the same shape, refuted there on its own
    spec = load_spec(D / "bt.toml")
    one = verify(spec, timeout_s=60, trials=0)
    two = verify(spec, timeout_s=60, trials=0, jobs=2)
    assert one.kind == two.kind == NOT_EQUIVALENT
    assert one.coverage == two.coverage
    assert one.counterexample.scalars == two.counterexample.scalars
    assert_replays(spec, two.counterexample)
