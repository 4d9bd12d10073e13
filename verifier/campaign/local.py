"""Local executor: the tasks in this process (one job) or in worker processes forked from it
(`jobs` > 1: a fork inherits this process's warm state, a checker's prepared reference
included, and only the tasks' arguments and results are pickled)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator, Sequence

from verifier.campaign.tasks import (Attempts, Done, Retry, RetryCause, Task, TaskLost)


def call(fn, args):
    """What a worker runs (module level: workers import it by name)."""
    return fn(*args)


class LocalExecutor:
    def __init__(self, jobs: int = 1) -> None:
        self.jobs = max(1, jobs)
        self.retries: list[Retry] = []
        self.name = "this process" if self.jobs == 1 else f"{self.jobs} local processes"

    def run(self, tasks: Sequence[Task]) -> Iterator[Done]:
        if self.jobs == 1 or len(tasks) <= 1 or \
                "fork" not in multiprocessing.get_all_start_methods():
            for i, t in enumerate(tasks):
                yield Done(i, t.key, t.fn(*t.args))
            return
        yield from self._pooled(tasks)

    def _pooled(self, tasks: Sequence[Task]) -> Iterator[Done]:
        """The tasks in a pool of forked workers. A worker that dies (killed for memory, or
        by hand) breaks the pool: every unfinished task is run again in a fresh one (a
        `Retry` each), up to MAX_ATTEMPTS times; a task never gets a result it did not
        compute."""
        attempts = Attempts()
        todo = list(range(len(tasks)))
        while todo:
            pool = ProcessPoolExecutor(min(self.jobs, len(todo)),
                                       mp_context=multiprocessing.get_context("fork"))
            broken: list[int] = []
            try:
                futures: dict[Future, int] = {}
                for i in todo:
                    attempts.start(i)
                    futures[pool.submit(call, tasks[i].fn, tasks[i].args)] = i
                pending = set(futures)
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in finished:
                        i = futures[f]
                        try:
                            value = f.result()
                        except BrokenProcessPool:
                            broken.append(i)
                            continue
                        yield Done(i, tasks[i].key, value, attempts.counts[i])
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            todo = sorted(broken)
            for i in todo:
                self.retries.append(Retry(tasks[i].key, RetryCause.WORKER_DIED,
                                          attempts.counts[i],
                                          "a local worker process died; the pool's unfinished "
                                          "tasks are run again"))
                if attempts.exhausted(i):
                    raise TaskLost(f"{tasks[i].key}: its worker died on each of "
                                   f"{attempts.counts[i]} attempts; no verdict")

    def close(self) -> None:
        pass
