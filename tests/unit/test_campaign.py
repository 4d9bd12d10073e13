"""The campaign executors without a cluster (`verifier.campaign`): local processes give each
task's result once, in any order, and `in_order` restores the task order; a local worker that
dies has its task run again and reported, and one that always dies is lost, never a result;
without Ray, `--cluster` is a one-line error (exit 3); the live count goes to stderr only."""

from __future__ import annotations

import io
import os
import sys

import pytest

from verifier.campaign import LocalExecutor, Tally, Task, TaskLost, in_order
from verifier.cli.main import main

SPEC = os.path.join(os.path.dirname(__file__), "..", "..", "kernels", "vector_add",
                    "vec4.toml")


def square(x: int) -> int:
    return x * x


def dies_once(flag: str, x: int) -> int:
    """Exits its worker process the first time (a marker file says it did)."""
    if not os.path.exists(flag):
        open(flag, "w").close()
        os._exit(1)
    return x


@pytest.mark.parametrize("jobs", [1, 2])
def test_local_processes_give_each_result_once_and_in_order(jobs):
    tasks = [Task(str(i), square, (i,)) for i in range(7)]
    ex = LocalExecutor(jobs)
    assert sorted(d.value for d in ex.run(tasks)) == [i * i for i in range(7)]
    assert list(in_order(LocalExecutor(jobs), tasks)) == [i * i for i in range(7)]
    assert ex.retries == []


def test_a_local_worker_that_dies_has_its_task_run_again(tmp_path):
    flag = str(tmp_path / "died")
    tasks = [Task("a", square, (3,)), Task("dies", dies_once, (flag, 5))]
    ex = LocalExecutor(2)
    got = {d.key: d.value for d in ex.run(tasks)}
    assert got == {"a": 9, "dies": 5}
    assert "dies" in {r.key for r in ex.retries}
    assert all(r.cause.name == "WORKER_DIED" for r in ex.retries)


def test_a_local_task_that_always_kills_its_worker_is_lost():
    ex = LocalExecutor(2)
    with pytest.raises(TaskLost, match="no verdict"):
        list(ex.run([Task("a", square, (2,)), Task("dies", os._exit, (1,))]))


def test_cluster_without_ray_is_a_one_line_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)          # (import ray raises ImportError)
    assert main(["gate", "--manifest", "pyproject.toml", "--cluster", "auto"]) == 3
    err = capsys.readouterr().err
    assert "Ray is not installed" in err and "keq[cluster]" in err and "Traceback" not in err
    assert main(["fuzz", SPEC, "--streams", "2", "--cluster", "auto"]) == 3


def test_the_live_count_names_each_kind():
    out = io.StringIO()
    t = Tally(3, stream=out, show=True, what="gate")
    t.add("proved")
    t.add("refuted", retried=1)
    assert out.getvalue().splitlines()[-1] == \
        "  gate: done 2/3 · proved 1 · refuted 1 · inconclusive 0 · retried 1"
    quiet = io.StringIO()
    Tally(1, stream=quiet).add("proved")                  # not a terminal, not asked: silent
    assert quiet.getvalue() == ""
