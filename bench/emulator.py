"""Throughput of keq's concrete SIMT emulator against two CPU peers, side by side in one run.

For each kernel, three runners do the same computation with the same decomposition (one CUDA
block = one Triton program):

  keq      semantics.machine.run_kernel on the committed PTX (kernels/*/NAME.ptx)
  triton   Triton's CPU interpreter (TRITON_INTERPRET=1, torch CPU tensors) on the equivalent
           @triton.jit kernel below
  numba    numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) on the equivalent @cuda.jit kernel
           below (it runs every CUDA thread as a Python thread)

Work is counted in thread-instructions: the PTX instructions keq executes, summed over threads
(the executor's `thread_instrs` counter: each basic-block run adds its length times the lanes that
entered it). The peers run no PTX, so each peer is credited with keq's count for the same kernel
at the same size: "thread-instr/s" is the same work divided by each runner's time, and keq/peer
is a time ratio.

A peer whose full-size run is estimated (from a small calibration run) to take longer than
--peer-budget seconds runs at the largest smaller size that fits; its full-size time is then
extrapolated linearly in thread-instructions, and the table marks it.

Every output (keq's and the peers') is checked against numpy before anything is timed.

  python bench/emulator.py            # full sizes (keq's venv: peers shown as not installed)
  /tmp/keq-bench-venv/bin/python bench/emulator.py          # with the peers (see bench/README.md)
  /tmp/keq-bench-venv/bin/python bench/emulator.py --quick  # small sizes, a smoke run
"""

from __future__ import annotations

import os

# Both peers read these at import time; set them before anything can import triton or numba.
os.environ["TRITON_INTERPRET"] = "1"
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import argparse  # noqa: E402
import importlib.metadata as md  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from semantics.machine import prepare, run_kernel  # noqa: E402
import semantics.machine.run as _run_mod  # noqa: E402
from semantics.ptx import parse_ptx_file  # noqa: E402

KERNELS = ROOT / "kernels"


# ---------------------------------------------------------------------------------------------
# Cases: a keq kernel, the numpy reference, and the peers' equivalents
# ---------------------------------------------------------------------------------------------

@dataclass
class Case:
    key: str
    title: str
    ptx: str                                   # relative to kernels/
    kernel: str
    full: int                                  # size parameter at full size
    quick: int
    smaller: Callable[[int], int]              # next size down the ladder
    min_size: int
    describe: Callable[[int], str]             # size -> "n=..." text
    inputs: Callable[[int, np.random.Generator], dict]
    launch: Callable[[int], tuple]             # size -> (grid, block)
    keq_args: Callable[[dict, int], list]
    out: str                                   # name of the output in `inputs`
    out_param: int                             # index of the output among the .entry params
    expected: Callable[[dict], np.ndarray]
    triton: str | None                         # names of the peer runners (functions below)
    numba: str | None
    peer_sizes: dict = field(default_factory=dict)


def _vec_inputs(n, rng):
    return {"a": rng.standard_normal(n).astype(np.float32),
            "b": rng.standard_normal(n).astype(np.float32),
            "c": np.zeros(n, np.float32), "n": n}


def _mm_inputs(N, rng):
    # Small integers: every product and partial sum is exact in f32, so any summation order
    # (numpy's, an fma chain, tl.dot) gives the same bits and outputs compare exactly.
    return {"A": rng.integers(-4, 5, N * N).astype(np.float32),
            "B": rng.integers(-4, 5, N * N).astype(np.float32),
            "C": np.zeros(N * N, np.float32), "N": N}


def _red_inputs(dtype):
    def make(n, rng):
        # |x| < 2^20: a 256-element sum stays far from int32 overflow and exact in f32.
        x = rng.integers(-(1 << 20), 1 << 20, n) if dtype == np.int32 else rng.integers(-64, 65, n)
        return {"in": x.astype(dtype), "out": np.zeros(n // 256, dtype), "n": n}
    return make


def _halve_n(n):
    return n // 2


def _halve_mm(N):
    return N // 2


CASES = [
    Case("vector_add", "vector add c = a + b (f32)", "vector_add/vector_add.ptx", "vector_add",
         1 << 20, 1 << 14, _halve_n, 256, lambda n: f"n={n}", _vec_inputs,
         lambda n: ((n + 255) // 256, 256),
         lambda d, n: [d["a"], d["b"], d["c"], n], "c", 2,
         lambda d: d["a"] + d["b"], "triton_vector_add", "numba_vector_add"),
    Case("matmul_naive", "matmul naive, one thread per C element (f32)",
         "matmul/matmul_naive.ptx", "matmul_naive",
         256, 32, _halve_mm, 16, lambda N: f"{N}x{N}", _mm_inputs,
         lambda N: ((N // 16, N // 16), (16, 16)),
         lambda d, N: [d["A"], d["B"], d["C"], N, N, N], "C", 2,
         lambda d: (d["A"].reshape(d["N"], -1) @ d["B"].reshape(d["N"], -1)).ravel(),
         "triton_matmul_naive", "numba_matmul_naive"),
    Case("matmul_tiled", "matmul tiled, 16x16 shared-memory tiles (f32)",
         "matmul/matmul_tiled.ptx", "matmul_tiled",
         256, 32, _halve_mm, 16, lambda N: f"{N}x{N}", _mm_inputs,
         lambda N: ((N // 16, N // 16), (16, 16)),
         lambda d, N: [d["A"], d["B"], d["C"], N, N, N], "C", 2,
         lambda d: (d["A"].reshape(d["N"], -1) @ d["B"].reshape(d["N"], -1)).ravel(),
         "triton_matmul_tiled", "numba_matmul_tiled"),
    Case("reduce_i32", "block reduction, sequential addressing, 256/block (int32)",
         "reduce/reduce_sequential.ptx", "reduce_sequential_i32",
         1 << 20, 1 << 14, _halve_n, 256, lambda n: f"n={n}", _red_inputs(np.int32),
         lambda n: (n // 256, 256),
         lambda d, n: [d["in"], d["out"], n], "out", 1,
         lambda d: d["in"].reshape(-1, 256).sum(axis=1, dtype=np.int32),
         "triton_reduce", "numba_reduce_i32"),
    Case("reduce_f32", "block reduction, sequential addressing, 256/block (f32)",
         "reduce/reduce_sequential.ptx", "reduce_sequential_f32",
         1 << 20, 1 << 14, _halve_n, 256, lambda n: f"n={n}", _red_inputs(np.float32),
         lambda n: (n // 256, 256),
         lambda d, n: [d["in"], d["out"], n], "out", 1,
         lambda d: d["in"].reshape(-1, 256).sum(axis=1, dtype=np.float32),
         "triton_reduce", "numba_reduce_f32"),
]


# ---------------------------------------------------------------------------------------------
# keq
# ---------------------------------------------------------------------------------------------

_prepared: dict = {}


def _kernel(case: Case):
    key = (case.ptx, case.kernel)
    if key not in _prepared:
        _prepared[key] = prepare(parse_ptx_file(str(KERNELS / case.ptx)), case.kernel)
    return _prepared[key]


def keq_run(case: Case, d: dict, size: int, count: bool = False):
    """Run keq; return (output array, thread-instructions or None)."""
    k = _kernel(case)
    grid, block = case.launch(size)
    args = case.keq_args(d, size)
    if not count:
        res = run_kernel(k, None, grid, block, args)
        return res.buffers[k.fn.params[case.out_param].name], None
    totals: list[int] = []
    base = _run_mod.Executor

    class Counting(base):   # run_kernel builds one Executor per batch of CTAs
        def run(self):
            super().run()
            totals.append(getattr(self, "thread_instrs", -1))

    _run_mod.Executor = Counting
    try:
        res = run_kernel(k, None, grid, block, args)
    finally:
        _run_mod.Executor = base
    n = None if any(t < 0 for t in totals) else sum(totals)
    return res.buffers[k.fn.params[case.out_param].name], n


# ---------------------------------------------------------------------------------------------
# Peers. Each runner takes the inputs dict and returns the output as a numpy array.
# ---------------------------------------------------------------------------------------------

_peer_cache: dict = {}


def _triton():
    if "triton" in _peer_cache:
        return _peer_cache["triton"]
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def vector_add(a, b, c, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(c + offs, tl.load(a + offs, mask=m) + tl.load(b + offs, mask=m), mask=m)

    @triton.jit
    def matmul_naive(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
        # One program per 16x16 block of C; k = 0..K-1 in order, as in matmul_naive.cu.
        rm = tl.program_id(1) * BM + tl.arange(0, BM)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K):
            a = tl.load(A + rm * K + k, mask=rm < M, other=0.0)
            b = tl.load(B + k * N + rn, mask=rn < N, other=0.0)
            acc += a[:, None] * b[None, :]
        tl.store(C + rm[:, None] * N + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def matmul_tiled(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        # One program per 16x16 block of C; one 16x16x16 tile product per k tile.
        rm = tl.program_id(1) * BM + tl.arange(0, BM)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(A + rm[:, None] * K + rk[None, :],
                        mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(B + rk[:, None] * N + rn[None, :],
                        mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        tl.store(C + rm[:, None] * N + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def reduce(inp, out, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(inp + offs, mask=offs < n, other=0)
        tl.store(out + pid, tl.sum(x, axis=0))

    _peer_cache["triton"] = (torch, vector_add, matmul_naive, matmul_tiled, reduce)
    return _peer_cache["triton"]


def triton_vector_add(d):
    torch, k, *_ = _triton()
    a, b = torch.from_numpy(d["a"]), torch.from_numpy(d["b"])
    c = torch.zeros_like(a)
    n = d["n"]
    k[((n + 255) // 256,)](a, b, c, n, BLOCK=256)
    return c.numpy()


def _triton_mm(which, d):
    torch, _, naive, tiled, _ = _triton()
    N = d["N"]
    A, B = torch.from_numpy(d["A"]), torch.from_numpy(d["B"])
    C = torch.zeros(N * N, dtype=torch.float32)
    grid = (N // 16, N // 16)
    if which == "naive":
        naive[grid](A, B, C, N, N, N, BM=16, BN=16)
    else:
        tiled[grid](A, B, C, N, N, N, BM=16, BN=16, BK=16)
    return C.numpy()


def triton_matmul_naive(d):
    return _triton_mm("naive", d)


def triton_matmul_tiled(d):
    return _triton_mm("tiled", d)


def triton_reduce(d):
    torch, *_, k = _triton()
    x = torch.from_numpy(d["in"])
    n = d["n"]
    out = torch.zeros(n // 256, dtype=x.dtype)
    k[(n // 256,)](x, out, n, BLOCK=256)
    return out.numpy()


def _numba():
    # The simulator runs a kernel by swapping the `cuda` it finds in the kernel's *globals* for
    # a fake module, so `cuda` must be a module global here, not a local captured by closure.
    global cuda, numba
    if "numba" in _peer_cache:
        return _peer_cache["numba"]
    import numba
    from numba import cuda
    if not getattr(cuda, "simulator_enabled", True) and not cuda.is_available():
        raise RuntimeError("numba.cuda is not the simulator (NUMBA_ENABLE_CUDASIM was not "
                           "honoured)")

    @cuda.jit
    def vector_add(a, b, c, n):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < n:
            c[i] = a[i] + b[i]

    @cuda.jit
    def matmul_naive(A, B, C, M, N, K):
        row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if row < M and col < N:
            acc = numba.float32(0.0)
            for k in range(K):
                acc += A[row * K + k] * B[k * N + col]
            C[row * N + col] = acc

    @cuda.jit
    def matmul_tiled(A, B, C, M, N, K):
        As = cuda.shared.array((16, 16), numba.float32)
        Bs = cuda.shared.array((16, 16), numba.float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * 16 + ty
        col = cuda.blockIdx.x * 16 + tx
        acc = numba.float32(0.0)
        for t in range((K + 15) // 16):
            ka = t * 16 + tx
            kb = t * 16 + ty
            As[ty, tx] = A[row * K + ka] if row < M and ka < K else numba.float32(0.0)
            Bs[ty, tx] = B[kb * N + col] if kb < K and col < N else numba.float32(0.0)
            cuda.syncthreads()
            for k in range(16):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row * N + col] = acc

    def make_reduce(dt):
        @cuda.jit
        def reduce_sequential(inp, out, n):
            sdata = cuda.shared.array(256, dt)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            sdata[tid] = inp[i] if i < n else 0
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if tid < s:
                    sdata[tid] += sdata[tid + s]
                cuda.syncthreads()
                s >>= 1
            if tid == 0:
                out[cuda.blockIdx.x] = sdata[0]
        return reduce_sequential

    _peer_cache["numba"] = (vector_add, matmul_naive, matmul_tiled,
                            make_reduce(numba.int32), make_reduce(numba.float32))
    return _peer_cache["numba"]


def numba_vector_add(d):
    k = _numba()[0]
    c = np.zeros_like(d["a"])
    n = d["n"]
    k[(n + 255) // 256, 256](d["a"], d["b"], c, n)
    return c


def _numba_mm(i, d):
    k = _numba()[i]
    N = d["N"]
    C = np.zeros(N * N, np.float32)
    k[(N // 16, N // 16), (16, 16)](d["A"], d["B"], C, N, N, N)
    return C


def numba_matmul_naive(d):
    return _numba_mm(1, d)


def numba_matmul_tiled(d):
    return _numba_mm(2, d)


def _numba_reduce(i, d):
    k = _numba()[i]
    n = d["n"]
    out = np.zeros(n // 256, d["in"].dtype)
    k[n // 256, 256](d["in"], out, n)
    return out


def numba_reduce_i32(d):
    return _numba_reduce(3, d)


def numba_reduce_f32(d):
    return _numba_reduce(4, d)


# ---------------------------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------------------------

@dataclass
class Row:
    runner: str
    size: str = ""
    work: int | None = None          # thread-instructions at the size run
    seconds: float | None = None     # measured time at the size run
    rate: float | None = None        # thread-instructions per second
    full_seconds: float | None = None  # extrapolated full-size time (when it ran smaller)
    note: str = ""


def _check(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        bad = np.nonzero(got != want)[0] if got.shape == want.shape else []
        where = f" first mismatch at {int(bad[0])}: {got[bad[0]]!r} != {want[bad[0]]!r}" \
            if len(bad) else ""
        raise AssertionError(f"{name}: output differs from numpy ({got.dtype}{got.shape} vs "
                             f"{want.dtype}{want.shape}){where}")


def _timed(fn, repeats):
    best = float("inf")
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


class Bench:
    def __init__(self, args):
        self.args = args
        self.rng = np.random.default_rng(args.seed)
        self.work_cache: dict = {}

    def keq_work(self, case, size):
        """keq's thread-instruction count at `size`, with keq's output checked."""
        key = (case.key, size)
        if key not in self.work_cache:
            d = case.inputs(size, self.rng)
            out, work = keq_run(case, d, size, count=True)
            _check(f"keq {case.kernel} at {case.describe(size)}", out, case.expected(d))
            self.work_cache[key] = work
        return self.work_cache[key]

    def run_keq(self, case, size) -> Row:
        row = Row("keq (PTX)", case.describe(size))
        row.work = self.keq_work(case, size)          # also verifies and warms up
        d = case.inputs(size, self.rng)
        row.seconds, out = _timed(lambda: keq_run(case, d, size)[0], self.args.repeats)
        _check(f"keq {case.kernel}", out, case.expected(d))
        if row.work:
            row.rate = row.work / row.seconds
        return row

    def run_peer(self, label, fn, case, size) -> Row:
        row = Row(label)
        budget = self.args.peer_budget
        # Warm up at the smallest size (first calls import and trace), then calibrate a bit
        # larger; both outputs are checked.
        tiny = size
        while tiny > case.min_size:
            tiny = case.smaller(tiny)
        d = case.inputs(tiny, self.rng)
        _check(f"{label} {case.key} at {case.describe(tiny)}", fn(d), case.expected(d))
        # Calibrate at a small size, then step up to the largest size whose time, predicted
        # from the latest (largest) run, fits the budget; a few steps at most, since small runs
        # are overhead-heavy and underestimate the rate.
        ladder = [size]
        while ladder[-1] > case.min_size:
            ladder.append(case.smaller(ladder[-1]))
        ladder.reverse()                                 # ascending, ends at `size`
        i = 0
        while i + 1 < len(ladder) and self.keq_guess(case, ladder[i + 1]) <= 1 << 17:
            i += 1
        for _ in range(4):
            d = case.inputs(ladder[i], self.rng)
            row.seconds, out = _timed(lambda: fn(d), 1)
            _check(f"{label} {case.key} at {case.describe(ladder[i])}", out, case.expected(d))
            row.work = self.keq_work(case, ladder[i])
            run_size = ladder[i]
            rate = row.work / row.seconds
            j = i
            while j + 1 < len(ladder) and self.keq_guess(case, ladder[j + 1]) / rate <= budget:
                j += 1
            if j == i:
                break
            i = j
        row.size = case.describe(run_size)
        row.rate = row.work / row.seconds
        if run_size != size:
            row.full_seconds = self.keq_work(case, size) / row.rate
            row.note = "*"
        return row

    def keq_guess(self, case, size):
        """Thread-instructions at `size` without running keq there (scaled from a small run)."""
        if (case.key, size) in self.work_cache:
            return self.work_cache[(case.key, size)]
        base = size
        while base > case.min_size:
            base = case.smaller(base)
        w = self.keq_work(case, base)
        if case.key.startswith("matmul"):
            return w * (size / base) ** 3
        return w * size / base


def _fmt_rate(x):
    return "-" if x is None else f"{x:.3g}"


def _fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 100 else f"{x:.0f}")


def _versions() -> str:
    parts = [f"Python {platform.python_version()}"]
    for p in ("keq", "numpy", "triton", "torch", "numba", "llvmlite"):
        try:
            parts.append(f"{p} {md.version(p)}")
        except md.PackageNotFoundError:
            parts.append(f"{p} (not installed)")
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
        if rev:
            parts[1] += f" (git {rev}{'+dirty' if dirty else ''})"
    except (OSError, subprocess.SubprocessError):
        pass
    return ", ".join(parts)


def _cpu() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        avail = len(os.sched_getaffinity(0))
    except AttributeError:
        avail = os.cpu_count()
    return f"{avail} CPUs available ({os.cpu_count()} online){', ' + model if model else ''}; " \
           f"{platform.system()} {platform.machine()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, seconds)")
    ap.add_argument("--only", nargs="*", metavar="CASE",
                    help=f"run only these cases: {', '.join(c.key for c in CASES)}")
    ap.add_argument("--no-peers", action="store_true", help="time keq only")
    ap.add_argument("--peer-budget", type=float, default=None, metavar="S",
                    help="max seconds for one peer run before it is shrunk and extrapolated "
                         "(default 20, --quick 5)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="keq timed runs per case, best taken (default 2, --quick 1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.peer_budget is None:
        args.peer_budget = 5.0 if args.quick else 20.0
    if args.repeats is None:
        args.repeats = 1 if args.quick else 2
    cases = [c for c in CASES if not args.only or c.key in args.only]
    bench = Bench(args)

    t_start = time.perf_counter()
    print("keq emulator throughput vs CPU peers" + (" (--quick sizes)" if args.quick else ""))
    print(f"machine:  {_cpu()}")
    print(f"versions: {_versions()}")
    print("work:     thread-instructions = PTX instructions keq executes, summed over threads "
          "(executor counter);\n          each peer is credited with keq's count for the same "
          "kernel and size, so keq/peer = peer time / keq time for the same work")
    print("peers:    triton = Triton CPU interpreter (TRITON_INTERPRET=1, torch CPU tensors), "
          "one program per CUDA block;\n          numba = numba CUDA simulator "
          "(NUMBA_ENABLE_CUDASIM=1), same per-thread code as the .cu source")
    print("checks:   every output (keq and peers) equals numpy's before it is timed")

    peers = [] if args.no_peers else [("triton", "triton interpreter"),
                                      ("numba", "numba cudasim")]
    summary = []
    status = 0
    for case in cases:
        size = case.quick if args.quick else case.full
        grid, block = case.launch(size)
        print(f"\n== {case.key}: {case.title}; {case.describe(size)}, grid {grid}, "
              f"block {block}; kernels/{case.ptx} :: {case.kernel}")
        rows: list[Row] = []
        try:
            keq = bench.run_keq(case, size)
        except Exception as e:  # noqa: BLE001 - report and go on with the other cases
            print(f"   keq: skipped, {type(e).__name__}: {str(e).splitlines()[0]}")
            if not isinstance(e, _skippable()):
                traceback.print_exc()
                status = 1
            continue
        rows.append(keq)
        for attr, label in peers:
            fname = getattr(case, attr)
            try:
                rows.append(bench.run_peer(label, globals()[fname], case, size))
            except ImportError as e:
                rows.append(Row(label, note=f"not installed ({e.name or e})"))
            except Exception as e:  # noqa: BLE001
                rows.append(Row(label, note=f"failed: {type(e).__name__}: "
                                            f"{str(e).splitlines()[0] if str(e) else ''}"))
                if isinstance(e, AssertionError):
                    status = 1
        hdr = f"   {'runner':<20}{'size':>11}{'thread-instr':>15}{'time s':>10}" \
              f"{'thr-instr/s':>13}{'full-size s':>13}{'keq/peer':>10}"
        print(hdr)
        for r in rows:
            if r.seconds is None:
                print(f"   {r.runner:<20}  {r.note}")
                continue
            ratio = "-" if r is keq or not (keq.rate and r.rate) else f"{keq.rate / r.rate:.2f}x"
            full = r.full_seconds if r.full_seconds is not None else r.seconds
            print(f"   {r.runner:<20}{r.size + r.note:>11}{r.work or 0:>15,}{_fmt_s(r.seconds):>10}"
                  f"{_fmt_rate(r.rate):>13}{_fmt_s(full):>13}{ratio:>10}")
            if r is not keq and keq.rate and r.rate:
                summary.append((case.key, r.runner, keq.rate / r.rate, bool(r.note)))
        if any(r.note == "*" for r in rows):
            print("   * ran smaller than full size (its estimated full-size time exceeds "
                  f"--peer-budget {args.peer_budget:g} s); full-size s = keq's full-size "
                  "thread-instr / the rate measured there (linear extrapolation)")
    if summary:
        print("\nsummary keq/peer (>1: keq faster; * = peer extrapolated): " + "; ".join(
            f"{k} vs {p.split()[0]} {r:.2f}x{'*' if x else ''}" for k, p, r, x in summary))
        slower = [s for s in summary if s[2] < 1]
        print("keq faster than every peer on every kernel: " +
              ("yes" if not slower else "NO (" + ", ".join(f"{k} vs {p.split()[0]}"
                                                            for k, p, _, _ in slower) + ")"))
    print(f"\ntotal bench time {time.perf_counter() - t_start:.0f} s")
    return status


def _skippable():
    from semantics.errors import UnsupportedError
    return (UnsupportedError,)


if __name__ == "__main__":
    sys.exit(main())
