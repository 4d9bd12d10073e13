"""Enumerated launch shapes as campaign tasks (`keq verify --cluster`): each shape is checked
by `shape_task` in a worker that rebuilds the run from plain data (the spec and the run's
options; z3 terms do not travel), and the results are consumed in shape order, so the
verdict, the first failing shape and the recorded evidence are a sequential run's."""

from __future__ import annotations

from typing import Callable

from verifier.campaign import Executor, Task, in_order
from verifier.coverage.one_shape import check_shape
from verifier.run import Run
from verifier.solvers import Cache
from verifier.spec import PairSpec
from verifier.verdict import INCONCLUSIVE, Verdict


def shape_task(spec: PairSpec, options: dict, env: dict[str, int], seed: int):
    """One shape's check in a fresh run: (verdict or None, stages, obligations,
    assumptions)."""
    run = Run(spec, cache=Cache(), **options)
    v = check_shape(run, env, seed)
    return v, list(run.stages), list(run.obligations), set(run.assumptions)


def check_shapes_on(executor: Executor, run: Run, envs: list[dict], seed: int,
                    progress: Callable | None = None) -> tuple[int, Verdict | None]:
    """As `verifier.parallel.check_shapes_in_parallel`, with the shapes as `executor`'s
    tasks: (shapes consumed, the first verdict a shape forces or None)."""
    options = dict(timeout_s=run.timeout_s, unroll=run.unroll, solvers=run.solvers,
                   trials=run.trials, choices=run.choices)
    tasks = [Task(f"shape {','.join(f'{k}={v}' for k, v in env.items())}", shape_task,
                  (run.spec, options, env, seed)) for env in envs]
    undecided = None
    for n, (verdict, stages, obligations, assumptions) in enumerate(in_order(executor, tasks)):
        run.stages.extend(stages)
        run.obligations.extend(obligations)
        run.assumptions |= assumptions
        if progress:
            progress(n, len(envs), envs[n])
        if verdict is not None and verdict.kind != INCONCLUSIVE:
            return n + 1, verdict
        undecided = undecided or verdict      # (a later shape may still refute the claim)
    return len(envs), undecided
