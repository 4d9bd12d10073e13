"""Tensor cores on silicon: every floating-point `mma.sync` form keq models, on random and
adversarial inputs, through keq's emulator (the sm_90 model) and an NVIDIA GPU, bit for bit;
each GPU result also checked against the bound refutations rely on (verifier/mma_bounds.py).

    python bench/silicon_tensor_cores.py --dry-run          # here: no GPU, no pycuda
    python bench/silicon_tensor_cores.py --out docs/tensor-cores-silicon.md   # on a GPU

--dry-run assembles every generated kernel with `ptxas -arch=sm_90`, runs the emulator on
every instance and checks it against the bound and (a sample) against semantics.tensor_core
computed from the matrices; exit 1 on any failure. A GPU run does the same, then runs each
kernel on the GPU (pycuda), writes the table, and exits 1 when any GPU result lies outside
keq's bound (a soundness problem); mismatches with the emulator are reported, exit 0.
docs/semantics-silicon.md, "Tensor cores", says what to do with the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.silicon.check import FormRun, emulate_form  # noqa: E402
from bench.silicon.forms import FORMS, SKIPPED, Form, assemble, kernel_ptx  # noqa: E402
from bench.silicon.report import GpuResult, dry_line, markdown  # noqa: E402

PER_SET = 300                    # 7-8 sets: 2,100-2,400 mma instances per form


def select(patterns: list[str] | None) -> list[Form]:
    """The forms whose name contains any of `patterns` (all without)."""
    if not patterns:
        return list(FORMS)
    return [f for f in FORMS if any(p in f.name for p in patterns)]


def assemble_all(forms: list[Form]) -> list[str]:
    """ptxas's complaints, one line per failing form (ptxas missing: one line)."""
    if shutil.which("ptxas") is None:
        return ["ptxas is not on PATH: the kernels cannot be assembled here"]
    return [f"{f.name}: {err}" for f in forms if (err := assemble(kernel_ptx(f)))]


def emulate_all(forms: list[Form], per_set: int, seed: int, sets: list[str] | None,
                jobs: int) -> list[FormRun]:
    """The emulator's side of every form, in `jobs` forked processes (before any CUDA
    context exists: a forked child must not inherit one)."""
    args = [(f, per_set, seed, sets) for f in forms]
    if jobs <= 1:
        return [emulate_form(*a) for a in args]
    with ProcessPoolExecutor(jobs, mp_context=get_context("fork")) as pool:
        return list(pool.map(emulate_form, *zip(*args)))


def dry_failures(runs: list[FormRun]) -> int:
    bad = 0
    for run in runs:
        print(dry_line(run), flush=True)
        bad += len(run.outside) + len(run.model_diffs)
        for e in (run.outside + run.model_diffs)[:3]:
            print(f"    {e.set}#{e.instance} D[{e.row}][{e.col}] {e.results} args "
                  f"{[hex(x) for x in e.args]}")
    return bad


def gpu_all(runs: list[FormRun]) -> tuple[dict[str, GpuResult], str, str]:
    from bench.silicon.gpu import compare, gpu_bounds, open_gpu, run_gpu   # lazy: pycuda
    drv, device, driver = open_gpu()
    out = {}
    for run in runs:
        dev, how = run_gpu(drv, run.form, run)
        total, same, diffs = compare(run, dev)
        bounded, outside = gpu_bounds(run, dev)
        out[run.form.name] = GpuResult(total, same, diffs, total - same, bounded, outside, how)
        print(f"{run.form.name:44s} GPU: {same}/{total} bit-exact, "
              f"{len(outside)} outside the bound ({how})", flush=True)
    return out, device, driver


def _commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="no GPU: assemble, emulate, bound")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "tensor-cores-silicon.md")
    ap.add_argument("--per-set", type=int, default=PER_SET, help="instances per input set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--forms", nargs="*", help="only forms whose name contains one of these")
    ap.add_argument("--sets", nargs="*", help="only these input sets (bench/silicon/inputs.py)")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    t0 = time.perf_counter()
    forms = select(a.forms)
    problems = assemble_all(forms)
    for p in problems:
        print(f"ASSEMBLY FAILED {p}")
    if problems and a.dry_run:
        return 1                 # on a GPU machine without ptxas the driver's JIT decides
    for name, why in SKIPPED.items():
        print(f"{name:44s} skipped: {why}")
    runs = emulate_all(forms, a.per_set, a.seed, a.sets, a.jobs)
    bad = dry_failures(runs)
    print(f"{len(runs)} forms, {sum(r.instances for r in runs)} mma instances, emulator "
          f"in bound {sum(r.inside for r in runs)}/{sum(r.bounded for r in runs)} bounded "
          f"elements, {time.perf_counter() - t0:.0f} s")
    if bad:
        print(f"EMULATOR FAILED: {bad} element(s) outside the bound or off the model")
    if a.dry_run:
        return 1 if bad else 0
    gpu, device, driver = gpu_all(runs)
    command = "python bench/silicon_tensor_cores.py " + " ".join(argv or sys.argv[1:])
    a.out.write_text(markdown(runs, gpu, device, driver, command, _commit(), SKIPPED))
    outside = sum(len(g.outside) for g in gpu.values())
    print(f"wrote {a.out}; {time.perf_counter() - t0:.0f} s")
    if outside:
        print(f"SOUNDNESS PROBLEM: {outside} GPU result(s) outside keq's bound", file=sys.stderr)
    return 1 if outside or bad else 0


if __name__ == "__main__":
    sys.exit(main())
