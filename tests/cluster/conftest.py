"""A real local Ray cluster for the campaign tests: a head that runs no task (0 CPUs) and two
worker nodes of one CPU each, small object stores, no dashboard, its session files in a fresh
short directory under /tmp (Ray's socket paths must stay short, so not under tmp_path), all
of it shut down and removed when the tests of the module are done. Skipped without Ray."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

STORE = 80 * 2**20          # bytes of object store per node (Ray's minimum is 75 MiB)


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'keq[cluster]')")
    from ray.cluster_utils import Cluster
    tmp = tempfile.mkdtemp(prefix="keqray", dir="/tmp")
    os.makedirs(os.path.join(tmp, "ray"))
    old = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = tmp
    cluster = Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=0, include_dashboard=False, object_store_memory=STORE, temp_dir=tmp))
    try:
        cluster.workers = [cluster.add_node(num_cpus=1, object_store_memory=STORE)
                           for _ in range(2)]
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False,
                 configure_logging=False)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        if old is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = old
        shutil.rmtree(tmp, ignore_errors=True)
