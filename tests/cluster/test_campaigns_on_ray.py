"""Campaigns on a real local Ray cluster (two worker nodes, conftest.py): the gate and
`Checker.check_many` give the same results on it as on local processes; a worker node killed
mid-campaign has its tasks run again on the other, none counted as a pass that did not run,
and the report names them; fuzz streams on the GPU backend ask Ray for a GPU each."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from verifier.campaign import LocalExecutor, Task, TaskLost
from verifier.campaign.ray_cluster import RayExecutor, ray_options
from verifier.certs import manifest as mf
from verifier.certs.gate import FAIL, PASS, gate_pair, run_gate
from verifier.checker import Checker
from verifier.cli.main import main
from verifier.fuzz.streams import stream_tasks
from verifier.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
# Fast pairs of the corpus (their --recheck re-derives and re-solves in about a second each)
PAIRS = ("reduce/i32_sequential", "reduce/i32_tree_shfl", "reduce/i32_warp_shfl",
         "reduce/f32_tree_shfl_bitexact", "transpose/tiled_nobounds_aligned",
         "vector_add/lineinfo")
VEC4 = ROOT / "kernels" / "vector_add" / "vector_add_vec4.ptx"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """The pairs' kernels and committed certificates, copied, with a manifest gating them."""
    ws = tmp_path_factory.mktemp("ws")
    for family in {p.split("/")[0] for p in PAIRS}:
        shutil.copytree(ROOT / "kernels" / family, ws / "kernels" / family)
        shutil.copytree(ROOT / "proofs" / family, ws / "proofs" / family)
    (ws / "keq.toml").write_text('proofs = "proofs"\nspecs = []\n' + "".join(
        f'\n[[pair]]\nspec = "kernels/{p}.toml"\n' for p in PAIRS))
    return ws


def outcomes(rep) -> dict:
    return {r.name: (r.status, [f.code for f in r.findings]) for r in rep.results}


def test_the_gate_gives_the_same_results_on_ray_as_locally(ray_cluster, workspace, capsys):
    m = mf.load(workspace / "keq.toml")
    local = run_gate(m, do_recheck=True, executor=LocalExecutor(2))
    ray = run_gate(m, do_recheck=True, executor=RayExecutor(ray_cluster.address))
    assert outcomes(ray) == outcomes(local) == {p: (PASS, []) for p in PAIRS}
    assert [r.note for r in ray.results] == [r.note for r in local.results]
    assert ray.ran_on.startswith("Ray at") and "2 CPUs" in ray.ran_on and not ray.retries
    # the command: the same report, with where it ran; a tampered pair fails there too
    cert = workspace / "proofs" / "reduce" / "i32_tree_shfl.json"
    saved = cert.read_text()
    cert.write_text(saved.replace('"kind": "equivalent"', '"kind": "inconclusive"'))
    try:
        assert main(["gate", "--manifest", str(workspace / "keq.toml"), "--json",
                     "--cluster", ray_cluster.address]) == 1
    finally:
        cert.write_text(saved)
    out = json.loads(capsys.readouterr().out)
    status = {p["name"]: p["status"] for p in out["pairs"]}
    assert status.pop("reduce/i32_tree_shfl") == FAIL and set(status.values()) == {PASS}
    assert out["ran_on"].startswith("Ray at") and out["retried"] == []


def _held_on(node_id: str, marks: str, fn, *args):
    """`fn(*args)`, except on node `node_id`, where the task marks that it started and then
    waits (to be killed with its node): the test removes a node it knows is busy, whatever
    the machine's load."""
    import time

    import ray
    if ray.get_runtime_context().get_node_id() == node_id:
        Path(marks, f"started-{os.getpid()}").write_text(node_id)
        time.sleep(600)
    return fn(*args)


def test_a_worker_killed_mid_campaign_has_its_task_run_again(ray_cluster, workspace,
                                                            tmp_path):
    """A node is removed while it runs a task (held there until then): that task runs again
    on the remaining node and every pair still arrives, passed because it ran (the gate's own
    finding otherwise), the retry reported."""
    import sys
    import threading
    import time

    import ray
    # (the workers cannot import this test module: `_held_on` travels by value)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    m = mf.load(workspace / "keq.toml")
    entries = [e for e in m.entries]
    victim = ray_cluster.workers[1]
    tasks = [Task(e.rel, _held_on, (victim.node_id, str(tmp_path), gate_pair, m, e, True,
                                    None)) for e in entries]
    executor = RayExecutor(ray_cluster.address)

    def remove_when_busy() -> None:
        while not list(tmp_path.glob("started-*")):
            time.sleep(0.1)
        ray_cluster.remove_node(victim)
    remover = threading.Thread(target=remove_when_busy, daemon=True)
    remover.start()
    got = {}
    try:
        for done in executor.run(tasks):
            got[done.key] = (done.value.status, done.attempts)
    finally:
        remover.join(timeout=60)
        ray_cluster.workers[1] = ray_cluster.add_node(num_cpus=1,
                                                      object_store_memory=80 * 2**20)
        ray_cluster.wait_for_nodes()
    assert sorted(got) == sorted(e.rel for e in entries)
    assert {status for status, _ in got.values()} == {PASS}
    retried = {r.key for r in executor.retries}
    assert retried, "the removed node was running a task: it must have been run again"
    assert all(got[key][1] >= 2 for key in retried)          # each ran again to its result
    assert all(r.cause.name in ("NODE_DIED", "WORKER_DIED") for r in executor.retries)
    assert all(r.line().startswith(r.key) for r in executor.retries)


def test_a_task_that_always_loses_its_worker_is_lost_never_passed(ray_cluster):
    executor = RayExecutor(ray_cluster.address)
    with pytest.raises(TaskLost, match="no verdict"):
        # (the worker process exits mid-task, as if killed)
        list(executor.run([Task("dies", os._exit, (1,))]))
    assert [r.attempt for r in executor.retries] == [1, 2, 3]
    assert {r.cause.name for r in executor.retries} == {"WORKER_DIED"}


def test_check_many_gives_the_same_verdicts_on_ray(ray_cluster):
    text = VEC4.read_text()
    items = [("vec4", VEC4, None), ("sub", text.replace("add.f32", "sub.f32", 1), None),
             ("same", text.replace("add.f32 \t", "add.rn.f32 \t", 1), None)]
    spec = ROOT / "kernels" / "vector_add" / "vec4.toml"
    local = {j.label: j.verdict.kind for j in Checker(spec, timeout_s=30).check_many(items)}
    c = Checker(spec, timeout_s=30)
    on_ray = {j.label: j.verdict.kind
              for j in c.check_many(items, cluster=ray_cluster.address)}
    assert on_ray == local == {"vec4": "equivalent", "sub": "not-equivalent",
                               "same": "equivalent"}
    assert c.retries == []


def test_gpu_fuzz_streams_ask_ray_for_a_gpu(ray_cluster):
    spec = load_spec(ROOT / "kernels" / "vector_add" / "vec4.toml")
    gpu = stream_tasks(spec, "pycuda", {}, streams=2, examples=10, seed_=0)
    cpu = stream_tasks(spec, "emulator", {}, streams=2, examples=10, seed_=0)
    assert [ray_options(t)["num_gpus"] for t in gpu] == [1, 1]
    assert [ray_options(t)["num_gpus"] for t in cpu] == [0, 0]
    assert all(ray_options(t)["max_retries"] == 0 for t in gpu + cpu)
    # this cluster has no GPU: refused at once, by name, rather than waiting forever
    assert main(["fuzz", str(ROOT / "kernels" / "vector_add" / "vec4.toml"), "--backend",
                 "pycuda", "--streams", "2", "--cluster", ray_cluster.address]) == 3


def test_fuzz_streams_report_the_same_on_ray_as_locally(ray_cluster, capsys, tmp_path):
    spec = str(ROOT / "kernels" / "vector_add" / "vec4_notail.toml")
    args = ["fuzz", spec, "--examples", "30", "--streams", "2", "--json",
            "--repro", str(tmp_path / "r.npz")]
    reports = []
    for extra in ([], ["--cluster", ray_cluster.address]):
        assert main(args + extra) == 1
        out = json.loads(capsys.readouterr().out)
        reports.append((out["difference"], out["examples"], out["campaign"]["retried"]))
    assert reports[0] == reports[1]


@pytest.mark.parametrize("spec, kind", [("tiled_nobounds_aligned", "equivalent"),
                                        ("tiled_nobounds", "not-equivalent")])
def test_verify_checks_enumerated_shapes_on_ray_with_the_local_verdict(ray_cluster, capsys,
                                                                      spec, kind):
    args = ["verify", str(ROOT / "kernels" / "transpose" / f"{spec}.toml"), "--set",
            "rows=32", "--shapes", "enumerate", "--max-shapes", "64", "--json"]
    got = []
    for extra in (["-j", "1"], ["--cluster", ray_cluster.address]):
        main(args + extra)
        v = json.loads(capsys.readouterr().out)
        cex = v.get("counterexample") or {}
        got.append((v["verdict"], v["launch_shapes"], cex.get("scalars"),
                    [(s["name"], s["status"]) for s in v["stages"]]))
    assert got[0] == got[1] and got[0][0] == kind
