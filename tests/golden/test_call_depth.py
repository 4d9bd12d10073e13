"""Call depth (issue 32): a chain of 40 non-inlined device functions, past the old limit of
16, runs on the emulator and symbolically; recursion is refused by name, with its cycle.
Real nvcc output: tests/data/calls_deep/deep_calls.cu."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3

from semantics.errors import UnsupportedError
from semantics.machine import prepare, run_kernel
from semantics.machine.kernel import MAX_CALL_DEPTH
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx_file

PTX = Path(__file__).resolve().parents[1] / "data" / "calls_deep" / "deep_calls.ptx"


def _model(v: int) -> int:
    for i in range(39, 0, -1):          # f_i(v) = f_{i-1}(v ^ i) + i, f_0(v) = v + 1
        v ^= i
    return (v + 1 + sum(range(1, 40))) & 0xFFFFFFFF


def test_a_chain_of_forty_calls_runs_on_the_emulator():
    x = np.array([0, 5, -7, 123456], np.int32)
    y = np.zeros(4, np.int32)
    r = run_kernel(parse_ptx_file(PTX), "deep", 1, 32, [x, y, 4])
    want = np.array([_model(int(v) & 0xFFFFFFFF) for v in x], np.uint32).view(np.int32)
    assert np.array_equal(r.buffers["deep_param_1"], want)


def test_a_chain_of_forty_calls_runs_symbolically():
    k = prepare(parse_ptx_file(PTX), "deep")
    x = z3.BitVec("x", 32)
    out = run_symbolic(k, (1, 1, 1), (32, 1, 1),
                       [SymBuffer(32, (x,)), SymBuffer(32, (0,)), 1])
    y = out.buffers["deep_param_1"][0]
    for v in (0, 5, 0xFFFFFFF9):       # the term is the chain's function of x
        got = z3.simplify(z3.substitute(y, (x, z3.BitVecVal(v, 32))))
        assert got.as_long() == _model(v)


def test_recursion_is_refused_by_name_with_its_cycle():
    with pytest.raises(UnsupportedError, match=r"a recursive call \(_Z3fibi -> _Z3fibi\)"):
        prepare(parse_ptx_file(PTX), "recursive")


def test_the_limit_is_stated_and_past_the_old_one():
    assert MAX_CALL_DEPTH >= 40
