"""The same executor runs on the symbolic domain: a whole corpus kernel with symbolic input
buffers gives, per output element, a term that evaluates to exactly what the concrete emulator
computes on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
import z3

from semantics.domains.symbolic import SymbolicDomain
from semantics.errors import UnsupportedError
from semantics.machine import prepare, run_kernel
from semantics.machine.executor import Executor, Geometry
from semantics.machine.memory import ConcreteMemory, GlobalLayout
from semantics.machine.symbolic_port import SymbolicPort
from semantics.ptx import parse_ptx_file

N = 40


def _symbolic_run(path, kernel, n, elem_bits, grid, block, out_init):
    k = prepare(parse_ptx_file(path), kernel)
    layout = GlobalLayout()
    names = [p.name for p in k.fn.params]
    allocs = [layout.allocate(names[i], n * elem_bits // 8) for i in range(3)]
    mem = ConcreteMemory(layout, {names[2]: out_init})
    port = SymbolicPort(mem)
    inputs = {}
    for j in range(2):
        for i in range(n):
            v = z3.BitVec(f"in{j}_{i}", elem_bits)
            inputs[v] = (j, i)
            port.preset("global", allocs[j].base + i * elem_bits // 8, elem_bits // 8, v)
    geom = Geometry(block, grid, tuple((x, 0, 0) for x in range(grid[0])))
    d = SymbolicDomain(geom.lanes)
    threads = block[0]
    lanes = np.arange(geom.lanes)
    mem.new_batch(lanes // threads, grid[0], k.static_shared, k.local_size)
    params = {names[i]: (allocs[i].base, 64) for i in range(3)}
    params[names[3]] = (n, 32)
    ex = Executor(k, d, port, geom, params)
    ex.run()
    outs = [port._read(mem.g, allocs[2].base - layout.allocs[0].base + i * elem_bits // 8,
                       elem_bits // 8) for i in range(n)]
    return outs, inputs, ex


def test_vector_add_runs_symbolically_and_agrees_with_the_emulator():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32).view(np.float32)
    b = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32).view(np.float32)
    c0 = np.zeros(N, np.float32)
    outs, inputs, _ = _symbolic_run("kernels/vector_add/vector_add.ptx", "vector_add", N, 32,
                                    (1, 1, 1), (64, 1, 1), c0)
    conc = run_kernel(parse_ptx_file("kernels/vector_add/vector_add.ptx"), "vector_add", 1, 64,
                      [a, b, c0.copy(), N]).buffers
    want = list(conc.values())[2].view(np.uint32)
    subst = [(v, z3.BitVecVal(int((a if j == 0 else b).view(np.uint32)[i]), 32))
             for v, (j, i) in inputs.items()]
    symbolic_terms = 0
    for i, term in enumerate(outs):
        if isinstance(term, int):
            got = term
        else:
            symbolic_terms += 1
            got = z3.simplify(z3.substitute(term, *subst))
            # NaN results: fp.to_ieee_bv of NaN is unspecified, but the ops canonicalize it.
            got = got.as_long() if z3.is_bv_value(got) else None
            if got is None:
                s = z3.Solver()
                r = z3.BitVec("r", 32)
                s.add(r == z3.substitute(term, *subst))
                assert s.check() == z3.sat
                got = s.model()[r].as_long()
        assert got == int(want[i]), f"element {i}: symbolic {got:#x} vs emulator {int(want[i]):#x}"
    assert symbolic_terms == N


def test_a_data_dependent_address_is_refused_by_name():
    # The histogram indexes bins by input data: with symbolic inputs the address is symbolic.
    k = prepare(parse_ptx_file("kernels/histogram/histogram_global.ptx"), "histogram_global")
    assert k.fn.name == "histogram_global"
    layout = GlobalLayout()
    names = [p.name for p in k.fn.params]
    data = layout.allocate(names[0], 32)
    bins = layout.allocate(names[1], 256 * 4)
    mem = ConcreteMemory(layout, {})
    port = SymbolicPort(mem)
    for i in range(32):
        port.preset("global", data.base + i, 1, z3.BitVec(f"d{i}", 8))
    geom = Geometry((32, 1, 1), (1, 1, 1), ((0, 0, 0),))
    mem.new_batch(np.zeros(32, np.int64), 1, k.static_shared, k.local_size)
    params = {names[0]: (data.base, 64), names[1]: (bins.base, 64), names[2]: (32, 32)}
    ex = Executor(k, SymbolicDomain(32), port, geom, params)
    with pytest.raises(UnsupportedError, match="data-dependent"):
        ex.run()
