"""Enumerated launch shapes checked by several worker processes (`keq verify --jobs N`).

Each shape is an independent check (`verifier.equiv.check_assignment`), so a claim with many
shapes (a transpose's 64 x 64) splits across cores. Workers are forked from the verifying
process and inherit its context; each returns, per shape, the verdict it forces (or None) with
the stages, solver obligations and assumptions that shape produced. Results are consumed in
shape order, so the verdict, the first failing shape and the certificate's obligations are the
same as a sequential run's; shapes not yet started are dropped at the first failure.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable

from verifier.verdict import Verdict, _Ctx

# The forked workers' inputs (a fork copies them; nothing is pickled on the way in).
_JOB: dict = {}


def _check_one(index: int):
    from verifier.equiv import check_assignment
    ctx: _Ctx = _JOB["ctx"]
    ctx.stages, ctx.obligations, ctx.assumptions = [], [], set()
    verdict = check_assignment(ctx, _JOB["envs"][index], _JOB["seed"])
    return index, verdict, ctx.stages, ctx.obligations, ctx.assumptions


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


def check_shapes_in_parallel(ctx: _Ctx, envs: list[dict], seed: int, jobs: int,
                             progress: Callable | None = None) -> tuple[int, Verdict | None]:
    """Check `envs` in order with `jobs` processes. Returns (shapes consumed, the first
    verdict a shape forces or None); `ctx` receives every consumed shape's stages,
    obligations and assumptions, in shape order."""
    _JOB.update(ctx=ctx, envs=envs, seed=seed)
    # Not multiprocessing.Pool: its workers are daemons, which may not fork the solver
    # processes of the portfolio.
    pool = ProcessPoolExecutor(min(jobs, len(envs)),
                               mp_context=multiprocessing.get_context("fork"))
    try:
        for n, (index, verdict, stages, obligations, assumptions) in enumerate(
                pool.map(_check_one, range(len(envs)))):
            ctx.stages.extend(stages)
            ctx.obligations.extend(obligations)
            ctx.assumptions |= assumptions
            if progress:
                progress(n, len(envs), envs[index])
            if verdict is not None:
                return index + 1, verdict
        return len(envs), None
    finally:
        # shapes not started are dropped; the few running finish (at most one per process)
        pool.shutdown(wait=True, cancel_futures=True)
        _JOB.clear()
