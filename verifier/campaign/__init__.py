"""Campaigns: sets of independent tasks (a gate's pairs, a checker's candidates, fuzz example
streams, a verification's enumerated launch shapes) run by one executor, on local processes
by default and on a Ray cluster when one is given (`--cluster`), with the same task functions
either way, so the verdicts are the same.

- `tasks`: the records (`Task` in, `Done` out, `Retry` for what was run again, `TaskLost`).
- `local`: `LocalExecutor`, this process or forked worker processes.
- `ray_cluster`: `RayExecutor`, Ray tasks (imported lazily: Ray is the `keq[cluster]` extra).
- `progress`: `Tally`, the live count of a long campaign on stderr.

A task is pure: a module-level function and plain arguments in, a record out. A worker that
dies mid-task has its task run again elsewhere (never counted as a pass); a result lost with
its node is computed again; each such run is a `Retry` the campaign's report lists.
"""

from __future__ import annotations

from verifier.campaign.local import LocalExecutor
from verifier.campaign.progress import Tally
from verifier.campaign.tasks import Done, Executor, Retry, Task, TaskLost, in_order


def executor_for(cluster: str | None = None, jobs: int = 1) -> Executor:
    """The executor a command's options ask for: a Ray cluster at `cluster` (an address
    `ray.init` takes: `ray://HOST:PORT`, `HOST:PORT` of a cluster's GCS, or `auto`), else
    `jobs` local processes (1: this process)."""
    if cluster:
        from verifier.campaign.ray_cluster import RayExecutor
        return RayExecutor(cluster)
    return LocalExecutor(jobs)


__all__ = ["Done", "Executor", "LocalExecutor", "Retry", "Tally", "Task", "TaskLost",
           "executor_for", "in_order"]
