"""Work split across worker processes (`keq verify --jobs N`): enumerated launch shapes, the
independent comparisons of one symbolic launch's outputs (`first_failure`, `each`), and
checks run beside the verifying process's own work (`Background`, `FirstFailureBeside`).

Each shape is an independent check (the caller's, `verifier.coverage.one_shape.check_shape`), so a
claim with many shapes (a transpose's 64 x 64) splits across cores. Workers are forked from
the verifying process and inherit its context; each returns, per shape, the verdict it forces
(or None) with the stages, solver obligations and assumptions that shape produced. Results
are consumed in shape order, so the verdict, the first failing shape and the certificate's
obligations are the same as a sequential run's; shapes not yet started are dropped at the
first failure.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

from verifier.run import Run
from verifier.verdict import INCONCLUSIVE, Verdict

# The forked workers' inputs (a fork copies them; nothing is pickled on the way in).
_JOB: dict = {}


def _check_one(index: int):
    ctx: Run = _JOB["ctx"]
    ctx.stages, ctx.obligations, ctx.assumptions = [], [], set()
    ctx.jobs = 1                     # (this worker is one of the processes)
    verdict = _JOB["check"](ctx, _JOB["envs"][index], _JOB["seed"])
    return index, verdict, ctx.stages, ctx.obligations, ctx.assumptions


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


def check_shapes_in_parallel(ctx: Run, envs: list[dict], seed: int, jobs: int,
                             check: Callable[[Run, dict, int], Verdict | None],
                             progress: Callable | None = None) -> tuple[int, Verdict | None]:
    """`check(ctx, env, seed)` for each of `envs` in order, with `jobs` processes. Returns
    (shapes consumed, the first verdict a shape forces or None); `ctx` receives every consumed
    shape's stages, obligations and assumptions, in shape order. An Inconclusive shape does
    not stop the others (one may still refute the claim): it is the answer only when none
    does."""
    _JOB.update(ctx=ctx, envs=envs, seed=seed, check=check)
    # Not multiprocessing.Pool: its workers are daemons, which may not fork the solver
    # processes of the portfolio.
    pool = ProcessPoolExecutor(min(jobs, len(envs)),
                               mp_context=multiprocessing.get_context("fork"))
    undecided = None
    try:
        for n, (index, verdict, stages, obligations, assumptions) in enumerate(
                pool.map(_check_one, range(len(envs)))):
            ctx.stages.extend(stages)
            ctx.obligations.extend(obligations)
            ctx.assumptions |= assumptions
            if progress:
                progress(n, len(envs), envs[index])
            if verdict is not None and verdict.kind != INCONCLUSIVE:
                return index + 1, verdict
            undecided = undecided or verdict
        return len(envs), undecided
    finally:
        # shapes not started are dropped; the few running finish (at most one per process)
        pool.shutdown(wait=True, cancel_futures=True)
        _JOB.clear()


def first_failure(count: int, check: Callable[[int], bool], jobs: int) -> int | None:
    """The smallest `i` in `range(count)` for which `check(i)` is False, or None: what a loop
    over them in order finds, with the indices shared among `jobs` processes (this one and
    `jobs - 1` forked from it, which inherit `check`'s state, z3 terms included: nothing is
    pickled). Each process takes every `jobs`-th index and stops at its first failure or
    once another process has failed at a smaller index; the smallest failure wins, so the
    answer is the sequential one. A worker that dies without answering (killed for memory)
    has its share checked here."""
    if not _forks(count, jobs):
        return next((i for i in range(count) if not check(i)), None)
    best = multiprocessing.get_context("fork").Value("q", count, lock=False)

    def share(k: int) -> int | None:        # (the smallest failure seen so far: `best`)
        for i in range(k, count, jobs):
            if i >= best.value:
                return None
            if not check(i):
                best.value = min(best.value, i)
                return i
        return None

    found = [f for f in _shared(share, jobs) if f is not None]
    return min(found) if found else None


def each(count: int, check: Callable[[int], bool], jobs: int) -> list[bool]:
    """`[check(i) for i in range(count)]`, the indices shared among `jobs` processes forked
    as in `first_failure` (nothing pickled on the way in). Each takes a contiguous run of
    indices: neighbouring checks share memoized work (a stencil's neighbouring elements
    read the same inputs), and what a worker's `check` leaves behind (memos) stays in the
    worker: the caller gets the answers only."""
    if not _forks(count, jobs):
        return [check(i) for i in range(count)]
    bounds = [count * k // jobs for k in range(jobs + 1)]
    runs = _shared(lambda k: [check(i) for i in range(bounds[k], bounds[k + 1])], jobs)
    return [answer for run in runs for answer in run]


class Background:
    """`work()` computed in a process forked from this one while this one goes on (a context
    manager: `with Background(work, jobs) as b: ...; b.result()`). With fewer than two
    `jobs`, or no fork, `result()` computes it here, when asked: the sequential order. The
    worker inherits `work`'s state (nothing pickled on the way in); its answer comes back
    pickled, so it must be plain data. A worker that dies or fails without answering has its
    work done again here, so the answer is the sequential one; leaving the block without
    asking ends the worker."""

    def __init__(self, work: Callable[[], Any], jobs: int) -> None:
        self.work = work
        self.process = self.recv = None
        self.done, self.answer = False, None
        if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
            mp = multiprocessing.get_context("fork")
            self.recv, send = mp.Pipe(duplex=False)

            def worker() -> None:
                try:
                    send.send(("ok", work()))
                except BaseException as e:       # reported, then done again in the parent
                    send.send(("error", repr(e)))

            self.process = mp.Process(target=worker)
            self.process.start()
            send.close()

    def result(self, instead: Callable[[], Any] | None = None) -> Any:
        """The work's answer; computed here when the worker gave none (by `instead`, when
        given: what must be done if the worker's share of some work is lost)."""
        if not self.done:
            status = "none"
            if self.process is not None:
                try:
                    status, answer = self.recv.recv()
                except EOFError:
                    status = "died"
                self.process.join()
            self.answer = answer if status == "ok" else (instead or self.work)()
            self.done = True
        return self.answer

    def __enter__(self) -> "Background":
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join()


class FirstFailureBeside:
    """`first_failure` begun in a worker now, and joined by this process when it is free
    (`result`): the indices are handed out in runs, in order, to whichever process asks
    next, so neither waits for the other's share (the bounds of logged accesses, while this
    process replays the write logs). A process stops at its first failure, or once a run
    starts past the smallest failure seen; every index below the final answer was claimed
    in order and checked, so the answer is the sequential one. A worker that dies loses the
    runs it held: everything is then checked again here, in order."""

    RUN = 32

    def __init__(self, count: int, check: Callable[[int], bool], jobs: int) -> None:
        self.count, self.check = count, check
        forks = jobs > 1 and "fork" in multiprocessing.get_all_start_methods()
        mp = multiprocessing.get_context("fork" if forks else None)
        self.next = mp.Value("q", 0)              # the next run's first index
        self.best = mp.Value("q", count)          # the smallest failure seen
        self.beside = Background(self._share, jobs) if forks else None

    def _share(self) -> int | None:
        while True:
            with self.next.get_lock():
                start = self.next.value
                self.next.value = start + self.RUN
            for i in range(start, min(start + self.RUN, self.count)):
                if i >= self.best.value:
                    return None
                if not self.check(i):
                    with self.best.get_lock():
                        self.best.value = min(self.best.value, i)
                    return i
            if start + self.RUN >= self.count:
                return None

    def __enter__(self) -> "FirstFailureBeside":
        return self

    def __exit__(self, *exc) -> None:
        if self.beside is not None:
            self.beside.__exit__(*exc)

    def result(self) -> int | None:
        mine = self._share()
        if self.beside is None:
            return mine
        theirs = self.beside.result(
            instead=lambda: next((i for i in range(self.count) if not self.check(i)), None))
        found = [i for i in (mine, theirs) if i is not None]
        return min(found) if found else None


def _forks(count: int, jobs: int) -> bool:
    return jobs > 1 and count >= 2 * jobs and "fork" in multiprocessing.get_all_start_methods()


def _shared(share: Callable[[int], Any], jobs: int) -> list:
    """`[share(k) for k in range(jobs)]`: share 0 here, the others in processes forked from
    this one (a share's answer comes back pickled). A worker that dies or fails without
    answering has its share done again here, so the answers are the sequential ones."""
    mp = multiprocessing.get_context("fork")

    def worker(k: int, send) -> None:
        try:
            send.send(("ok", share(k)))
        except BaseException as e:       # reported, then done again in the parent
            send.send(("error", repr(e)))

    workers = []
    try:
        for k in range(1, jobs):
            recv, send = mp.Pipe(duplex=False)
            p = mp.Process(target=worker, args=(k, send))
            p.start()
            send.close()
            workers.append((k, p, recv))
        answers = [share(0)]
        for k, p, recv in workers:
            try:
                status, answer = recv.recv()
            except EOFError:
                status, answer = "died", None
            p.join()
            answers.append(answer if status == "ok" else share(k))
        return answers
    finally:
        for _, p, _ in workers:
            if p.is_alive():
                p.terminate()
                p.join()
