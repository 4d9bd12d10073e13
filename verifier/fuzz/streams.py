"""A fuzz campaign split into example streams (`keq fuzz --streams K`): stream k draws its
share of the examples with seed SEED + k, as one campaign task (`fuzz_stream`: the spec and
options in, its `FuzzReport` out), on local processes or a Ray cluster (`verifier.campaign`);
a stream on the GPU backend asks Ray for a GPU. Every stream runs to its end, and the merged
report takes the difference of the first stream (in stream order) that found one, so the
report is the same wherever the streams ran. Coverage merges as the best stream's per
kernel (the blocks seen are counted, not listed)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from verifier.campaign import Executor, Task, Tally
from verifier.fuzz.backends import get_backend
from verifier.fuzz.report import FuzzReport, KernelCoverage, OpsStats
from verifier.fuzz.runner import fuzz
from verifier.spec import PairSpec

GPU_BACKENDS = ("pycuda",)


def fuzz_stream(spec: PairSpec, backend: str, backend_kw: dict, options: dict) -> FuzzReport:
    """One stream (a campaign task): the backend is built in the worker (a GPU's context
    lives there)."""
    return fuzz(spec, get_backend(backend, **backend_kw), **options)


def stream_tasks(spec: PairSpec, backend: str, backend_kw: dict, *, streams: int,
                 examples: int, seed_: int, **options: Any) -> list[Task]:
    """The streams' tasks: stream k has examples[k] examples and seed SEED + k."""
    shares = [examples * (k + 1) // streams - examples * k // streams for k in range(streams)]
    return [Task(f"stream {k} (seed {seed_ + k})", fuzz_stream,
                 (spec, backend, backend_kw, dict(options, examples=n, seed_=seed_ + k)),
                 gpus=1 if backend in GPU_BACKENDS else 0)
            for k, n in enumerate(shares) if n > 0]


def fuzz_streams(spec: PairSpec, backend: str, backend_kw: dict, executor: Executor, *,
                 streams: int, examples: int, seed_: int, progress: bool = False,
                 **options: Any) -> FuzzReport:
    """The merged report of `streams` streams run by `executor`."""
    t0 = time.perf_counter()
    tasks = stream_tasks(spec, backend, backend_kw, streams=streams, examples=examples,
                         seed_=seed_, **options)
    tally = Tally(len(tasks), kinds=("differences", "clean"), show=progress,
                  what="fuzz streams")
    reports: list[FuzzReport | None] = [None] * len(tasks)
    for done in executor.run(tasks):
        reports[done.index] = done.value
        tally.add("differences" if done.value.difference is not None else "clean",
                  len(executor.retries))
    tally.finish()
    merged = merge([r for r in reports if r is not None], spec, examples, seed_)
    merged.seconds = time.perf_counter() - t0 - merged.shrink_seconds
    return merged


def merge(reports: list[FuzzReport], spec: PairSpec, examples: int, seed_: int) -> FuzzReport:
    first = reports[0]
    found = next((r for r in reports if r.difference is not None), None)
    stopped = "difference" if found else \
        "time budget" if any(r.stopped_by == "time budget" for r in reports) else "examples"
    scalars: dict[str, set] = {}
    for r in reports:
        for name, values in r.scalar_values.items():
            scalars.setdefault(name, set()).update(values)
    return replace(first, spec=spec, seed=seed_, examples_requested=examples,
                   examples=sum(r.examples for r in reports),
                   shrink_runs=sum(r.shrink_runs for r in reports),
                   shrink_seconds=max(r.shrink_seconds for r in reports),
                   stopped_by=stopped, difference=found.difference if found else None,
                   coverage=_best_coverage(reports), scalar_values=scalars,
                   ops=_ops(reports), varied_examples=sum(r.varied_examples for r in reports))


def _best_coverage(reports: list[FuzzReport]) -> dict[str, KernelCoverage]:
    out: dict[str, KernelCoverage] = {}
    for r in reports:
        for role, c in r.coverage.items():
            have = out.get(role)
            if have is None or (c.blocks_seen, c.branches_seen) > (have.blocks_seen,
                                                                    have.branches_seen):
                out[role] = c
    return out


def _ops(reports: list[FuzzReport]) -> OpsStats | None:
    stats = [r.ops for r in reports if r.ops is not None]
    if not stats:
        return None
    ops_max: dict[str, int] = {}
    for s in stats:
        for role, n in s.ops_max.items():
            ops_max[role] = max(ops_max.get(role, 0), n)
    return OpsStats(dict(stats[0].how), ops_max, max(s.magnitude_max for s in stats),
                    max(s.scale_max for s in stats))
