"""Device-function calls (`call.uni` with .param arguments and results, as nvcc emits them for
`__noinline__` functions): the emulator runs the callee per active lane, divergent calls
included, and the symbolic domain gives the same results.

tests/data/calls.cu is the source; tests/data/calls.ptx is its nvcc 13.0 output
(`nvcc -ptx -arch=sm_90 -O3 calls.cu`), committed so the test needs no nvcc.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import z3

from semantics.machine import prepare, run_kernel
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx_file

PTX = Path(__file__).resolve().parents[1] / "data" / "calls.ptx"


def _model(x: np.ndarray, n: int, size: int):
    i = np.arange(size)
    live = i < n
    y = np.where(live, np.float32(2.0) * x + np.float32(1.0), 0).astype(np.float32)
    w = np.where(live, i.astype(np.int64) << (i % 7), 0)

    def twice_plus(v):
        return 2 * v + 1
    z = np.where(live, np.where(i % 3 == 0, twice_plus(i) + twice_plus(i + 1), -twice_plus(i)),
                 0).astype(np.int32)
    total = int(np.sum(i[live] & 1))
    return y, w, z, total


def test_calls_run_on_the_emulator():
    m = parse_ptx_file(PTX)
    assert any(ins.opcode == "call" for ins in m.entries["calls"].instructions)
    size, n = 256, 200
    x = np.random.default_rng(1).standard_normal(size).astype(np.float32)
    args = [x, np.zeros(size, np.float32), np.zeros(size, np.int64), np.zeros(size, np.int32),
            np.zeros(1, np.int32), n]
    res = run_kernel(m, "calls", 2, 128, args, detect_races=True)
    names = [p.name for p in m.entries["calls"].params]
    y, w, z, total = _model(x, n, size)
    assert np.array_equal(res.buffers[names[1]], y)
    assert np.array_equal(res.buffers[names[2]], w)
    assert np.array_equal(res.buffers[names[3]], z)
    assert int(res.buffers[names[4]][0]) == total
    assert not [e for e in res.effects if e.kind == "race"]


def test_calls_run_symbolically_with_the_same_results():
    k = prepare(parse_ptx_file(PTX), "calls")
    size, n = 64, 50
    xs = [z3.BitVec(f"x[{i}]", 32) for i in range(size)]
    launch = run_symbolic(k, (1, 1, 1), (64, 1, 1), [
        SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * size), SymBuffer(64, (0,) * size),
        SymBuffer(32, (0,) * size), SymBuffer(32, (0,)), n])
    names = [p.name for p in k.fn.params]
    xv = np.random.default_rng(2).standard_normal(size).astype(np.float32)
    y, w, z, total = _model(xv, n, size)
    subst = [(v, z3.BitVecVal(int(b), 32)) for v, b in zip(xs, xv.view(np.uint32))]
    for i, t in enumerate(launch.buffers[names[1]]):
        got = t if isinstance(t, int) else z3.simplify(z3.substitute(t, *subst)).as_long()
        assert got == int(y.view(np.uint32)[i])
    assert [v for v in launch.buffers[names[2]]] == [int(v) & (2**64 - 1) for v in w]
    assert [v for v in launch.buffers[names[3]]] == [int(v) & (2**32 - 1) for v in z]
    assert launch.buffers[names[4]] == [total]
