"""Benchmark the corpus gate (`keq gate --recheck` over the manifest in pyproject.toml: every
gated pair re-derived and re-solved, one campaign task per pair) on 1 and 2 local worker
processes and on a local Ray cluster of two one-CPU worker nodes, all in one run: the
speedup per worker, and Ray's overhead against local processes (both with two workers).
The Ray figure includes each Ray worker's first import of keq (z3, numpy), not the cluster's
start (printed apart). Results must agree across the three runs, else the bench fails.

    python bench/cluster.py                   # about 2 min on the 2-core project machine
    python bench/cluster.py --pairs 8         # the first 8 gated pairs only
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verifier.campaign import LocalExecutor  # noqa: E402
from verifier.certs import manifest as mf  # noqa: E402
from verifier.certs.gate import run_gate  # noqa: E402

STORE = 80 * 2**20


def start_cluster():
    """A head with no CPU and two worker nodes of one CPU each (as tests/cluster)."""
    import ray
    from ray.cluster_utils import Cluster
    tmp = tempfile.mkdtemp(prefix="keqray", dir="/tmp")
    os.makedirs(os.path.join(tmp, "ray"))
    os.environ["RAY_TMPDIR"] = tmp
    cluster = Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=0, include_dashboard=False, object_store_memory=STORE, temp_dir=tmp))
    for _ in range(2):
        cluster.add_node(num_cpus=1, object_store_memory=STORE)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False,
             configure_logging=False)
    return cluster, tmp


def timed_gate(m, executor):
    t0 = time.perf_counter()
    rep = run_gate(m, do_recheck=True, executor=executor)
    return time.perf_counter() - t0, {r.spec: (r.status, len(r.findings)) for r in rep.results}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=0, help="the first N gated pairs (0: all)")
    args = ap.parse_args()
    m = mf.load(ROOT / "pyproject.toml")
    if args.pairs:
        keep = {e.rel for e in m.entries if e.rel in m.explicit}
        keep = set(sorted(keep)[:args.pairs])
        m = replace(m, entries=tuple(e for e in m.entries if e.rel in keep))
    gated = sum(e.rel in m.explicit for e in m.entries)
    print(f"keq gate --recheck over {gated} gated pairs; {platform.processor() or 'cpu'}, "
          f"{os.cpu_count()} cores, python {platform.python_version()}")
    one, res1 = timed_gate(m, LocalExecutor(1))
    print(f"  1 local process          {one:7.2f} s")
    two, res2 = timed_gate(m, LocalExecutor(2))
    print(f"  2 local processes        {two:7.2f} s   speedup {one / two:.2f}x "
          f"({one / two / 2:.2f} per worker)")
    t0 = time.perf_counter()
    cluster, tmp = start_cluster()
    started = time.perf_counter() - t0
    try:
        from verifier.campaign.ray_cluster import RayExecutor
        on_ray, res3 = timed_gate(m, RayExecutor(cluster.address))
    finally:
        import ray
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"  Ray, 2 worker nodes      {on_ray:7.2f} s   speedup {one / on_ray:.2f}x "
          f"({one / on_ray / 2:.2f} per worker); against 2 local processes "
          f"{on_ray / two:.2f}x the time (overhead {on_ray - two:+.2f} s)")
    print(f"  (the cluster's start: {started:.2f} s, not counted above)")
    if not res1 == res2 == res3:
        print("RESULTS DIFFER between the runs", file=sys.stderr)
        return 1
    print(f"  results identical in the three runs ({sum(s == 'pass' for s, _ in res1.values())} "
          f"passed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
