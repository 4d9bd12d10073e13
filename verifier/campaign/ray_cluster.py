"""Ray executor: each task a Ray task (one CPU, and `num_gpus` for a task that needs a GPU),
submitted with Ray's own retries off so that every loss is seen here: a task whose worker or
node died, or whose result was lost with its node, is submitted again (a `Retry` each, up to
MAX_ATTEMPTS) and never yields a value it did not compute. An error the task itself raised
(bad input) is raised here as it would be locally. Ray is imported here only (`keq[cluster]`)."""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from semantics.errors import KeqError
from verifier.campaign.local import call
from verifier.campaign.tasks import Attempts, Done, Retry, RetryCause, Task, TaskLost

INSTALL = "pip install 'keq[cluster]'"


def import_ray():
    try:
        import ray
    except ImportError:
        raise KeqError(f"--cluster: Ray is not installed ({INSTALL})") from None
    return ray


def ray_options(task: Task) -> dict[str, Any]:
    """What a task asks Ray for: one CPU, its GPUs, and no retries of Ray's own (they would
    be invisible to the campaign's report; the executor resubmits instead)."""
    return {"num_cpus": 1, "num_gpus": task.gpus, "max_retries": 0,
            "retry_exceptions": False, "name": f"keq:{task.key}"[:120]}


def loss_cause(ray, error: BaseException) -> RetryCause | None:
    """Why a task gave no result, when the cause is the cluster's (None: the task's own)."""
    ex = ray.exceptions
    if isinstance(error, ex.NodeDiedError):
        return RetryCause.NODE_DIED
    if isinstance(error, (ex.WorkerCrashedError, ex.OutOfMemoryError)):
        return RetryCause.WORKER_DIED
    if isinstance(error, (ex.ObjectLostError, ex.ObjectFetchTimedOutError)):
        return RetryCause.RESULT_LOST
    return None


class RayExecutor:
    def __init__(self, address: str) -> None:
        self.ray = ray = import_ray()
        self.address = address
        self.retries: list[Retry] = []
        self.owns = not ray.is_initialized()
        if self.owns:
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False,
                         configure_logging=False)
            except Exception as e:          # (ConnectionError, ValueError, grpc's errors)
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise KeqError(f"--cluster {address}: cannot connect to Ray: {first}") \
                    from None
        res = ray.cluster_resources()
        self.cpus, self.gpus = int(res.get("CPU", 0)), int(res.get("GPU", 0))
        self.name = f"Ray at {address} ({self.cpus} CPUs, {self.gpus} GPUs)"
        self.remote = ray.remote(call)

    def run(self, tasks: Sequence[Task]) -> Iterator[Done]:
        ray = self.ray
        need = max((t.gpus for t in tasks), default=0)
        if need and self.gpus < need:
            raise KeqError(f"--cluster {self.address}: the tasks need a GPU each and the "
                           f"cluster has {self.gpus}")
        attempts = Attempts()
        refs: dict[Any, int] = {}

        def submit(i: int) -> None:
            attempts.start(i)
            t = tasks[i]
            refs[self.remote.options(**ray_options(t)).remote(t.fn, t.args)] = i

        for i in range(len(tasks)):
            submit(i)
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                i = refs.pop(ref)
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    own = getattr(e, "cause", None)             # the task's own error
                    if isinstance(own, Exception):
                        raise own from None
                    raise
                except Exception as e:
                    cause = loss_cause(ray, e)
                    if cause is None:
                        raise
                    self._lost(tasks[i], cause, attempts.counts[i], e)
                    if attempts.exhausted(i):
                        raise TaskLost(f"{tasks[i].key}: lost on each of "
                                       f"{attempts.counts[i]} attempts ({cause.value}); "
                                       f"no verdict") from None
                    submit(i)
                    continue
                yield Done(i, tasks[i].key, value, attempts.counts[i])

    def _lost(self, task: Task, cause: RetryCause, attempt: int, error: Exception) -> None:
        detail = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        self.retries.append(Retry(task.key, cause, attempt, detail))

    def close(self) -> None:
        if self.owns and self.ray.is_initialized():
            self.ray.shutdown()
            self.owns = False
