"""`verifier.parallel.first_failure`, `each` and `Background`: independent checks shared among
forked processes give the answers a loop in order gives (the first failure; every answer, in
order; the work's own answer), whatever finishes first, and a worker that dies has its share
checked again in the verifying process."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import z3

from replaying import assert_replays
from verifier.equiv import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.parallel import Background, FirstFailureBeside, each, first_failure
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


@pytest.mark.parametrize("jobs", [1, 2])
def test_background_work_answers_what_it_computes_while_this_process_goes_on(jobs):
    parent = os.getpid()
    x = z3.BitVec("x", 32)
    terms = [z3.simplify(x + i - i) for i in range(6)]        # built before the fork
    where: list[int] = []

    def work():
        where.append(os.getpid())
        return [t.eq(x) for t in terms]
    with Background(work, jobs) as b:
        mine = sum(range(1000))            # (this process's own work meanwhile)
        assert b.result() == [True] * 6 and b.result() == [True] * 6 and mine == 499500
    # one process: computed here, when asked; two: in the worker (its `where` is its own)
    assert where == ([parent] if jobs == 1 else [])


def test_background_work_whose_worker_dies_or_fails_is_done_here():
    parent = os.getpid()

    def dies():
        if os.getpid() != parent:
            os._exit(9)
        return "here"

    def fails():
        if os.getpid() != parent:
            raise MemoryError("worker")
        return "here"
    for work in (dies, fails):
        with Background(work, 2) as b:
            assert b.result() == "here"


def test_background_work_not_asked_for_ends_with_its_block():
    with Background(lambda: time.sleep(60), 2) as b:
        pass
    assert not b.process.is_alive()


@pytest.mark.parametrize("failing", [set(), {0}, {31}, {32}, {40, 41}, {5, 70, 99}, set(range(100))])
@pytest.mark.parametrize("jobs", [1, 2])
def test_the_first_failure_found_beside_this_process_is_the_sequential_one(failing, jobs):
    with FirstFailureBeside(100, lambda i: i not in failing, jobs) as beside:
        mine = sum(range(1000))                       # (this process's own work meanwhile)
        assert beside.result() == (min(failing) if failing else None) and mine == 499500


def test_a_worker_beside_that_dies_has_every_index_checked_here():
    parent = os.getpid()

    def check(i: int) -> bool:
        if os.getpid() != parent and i >= 40:
            os._exit(9)                   # after claiming a run, before finishing it
        return i != 45
    with FirstFailureBeside(100, check, 2) as beside:
        time.sleep(0.5)                   # (the worker takes runs and dies in one)
        assert beside.result() == 45


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
