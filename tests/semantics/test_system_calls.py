"""Runtime functions a module only declares (`semantics/machine/system_calls.py`): a failed
device `assert` (`call __assertfail`) and `trap` are traps (a fault of the kernel, with the
assertion's text), `vprintf` is a `printf` effect with an open result, and any other function
without a body is refused by name. Both domains: the emulator raises `Trap` where a lane
traps, the symbolic run raises it where a lane certainly traps and leaves a "trap"
obligation where it may."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3

from semantics.errors import UnsupportedError
from semantics.machine import prepare, run_kernel
from semantics.machine.memory import Trap
from semantics.machine.symbolic_port import LaunchShape
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx, parse_ptx_file

GATHER = Path(__file__).resolve().parents[2] / "kernels" / "gather"

TRAP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 out)
{
.reg .pred %p<2>;
.reg .b32 %r<4>;
.reg .b64 %rd<6>;
ld.param.u64 %rd1, [x];
ld.param.u64 %rd2, [out];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.u32 %r2, [%rd4];
setp.eq.u32 %p1, %r2, 7;
@%p1 trap;
add.s64 %rd5, %rd2, %rd3;
st.global.u32 [%rd5], %r2;
ret;
}
"""

EXTERN = """.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) mystery (.param .b32 a);
.visible .entry k(.param .u64 out)
{
.reg .b32 %r<3>;
mov.u32 %r1, %tid.x;
{
.param .b32 p0;
st.param.b32 [p0+0], %r1;
.param .b32 r0;
call.uni (r0), mystery, (p0);
ld.param.b32 %r2, [r0+0];
}
ret;
}
"""


def _encoder_args(inp, V=3, C=4):
    n = len(inp)
    return [np.zeros(n * C, np.float32), np.array(inp, np.int32),
            np.arange(V * C, dtype=np.float32), np.arange(n * C, dtype=np.float32),
            1, n, C, V]


def test_trap_faults_where_a_lane_runs_it_and_nowhere_else():
    k = prepare(parse_ptx(TRAP, "trap.ptx"), "k")
    out = np.zeros(4, np.uint32)
    r = run_kernel(k, None, (1, 1, 1), (4, 1, 1), [np.array([1, 2, 3, 4], np.uint32), out])
    assert r.buffers["out"].tolist() == [1, 2, 3, 4]
    with pytest.raises(Trap) as e:
        run_kernel(k, None, (1, 1, 1), (4, 1, 1), [np.array([1, 2, 7, 4], np.uint32), out])
    assert "the kernel executed 'trap'" in str(e.value)
    assert e.value.loc.line == 16 and "thread (2,0,0)" in e.value.thread


def test_trap_under_a_symbolic_condition_is_an_obligation():
    k = prepare(parse_ptx(TRAP, "trap.ptx"), "k")
    xs = tuple(z3.BitVec(f"x[{i}]", 32) for i in range(2))
    launch = run_symbolic(k, (1, 1, 1), (2, 1, 1), [SymBuffer(32, xs), SymBuffer(32, (0, 0))],
                          shape=LaunchShape((True,), {"x": 8, "out": 8}))
    traps = [o for o in launch.obligations if o.kind == "trap"]
    assert len(traps) == 1 and "the kernel executed 'trap'" in traps[0].what
    s = z3.Solver()
    s.add(traps[0].violation)
    assert s.check() == z3.sat
    assert z3.is_true(s.model().eval(z3.Or(xs[0] == 7, xs[1] == 7)))
    s.add(xs[0] != 7, xs[1] != 7)
    assert s.check() == z3.unsat


def test_trap_on_a_certain_lane_raises_in_the_symbolic_domain():
    k = prepare(parse_ptx(TRAP, "trap.ptx"), "k")
    with pytest.raises(Trap):
        run_symbolic(k, (1, 1, 1), (2, 1, 1), [SymBuffer(32, (7, 1)), SymBuffer(32, (0, 0))])


def test_a_failed_assert_traps_with_its_message():
    k = prepare(parse_ptx_file(GATHER / "encoder_forward_vec4_assert_off_by_one.ptx"),
                "encoder_forward_vec4_assert_off_by_one")
    ok = run_kernel(k, None, (1, 1, 1), (32, 1, 1), _encoder_args([0, 1, 0]))
    assert ok.buffers["encoder_forward_vec4_assert_off_by_one_param_0"][4:8].tolist() == \
        [8, 10, 12, 14]          # wte[1] + wpe[1]
    with pytest.raises(Trap) as e:
        run_kernel(k, None, (1, 1, 1), (32, 1, 1), _encoder_args([0, 2, 1]))
    text = str(e.value)
    assert "assertion `ix >= 0 && ix < V - 1` failed" in text
    assert "(gather/encoder_forward_vec4_assert_off_by_one.cu:15, in void " \
           "encoder_forward_vec4_assert_off_by_one(" in text
    assert "thread (1,0,0)" in e.value.thread       # the thread of token 1


def test_an_assert_that_holds_costs_nothing():
    k = prepare(parse_ptx_file(GATHER / "encoder_forward_vec4.ptx"), "encoder_forward_vec4")
    r = run_kernel(k, None, (1, 1, 1), (32, 1, 1), _encoder_args([2, 0, 1]))
    wte = np.arange(12, dtype=np.float32).reshape(3, 4)
    wpe = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = r.buffers["encoder_forward_vec4_param_0"]
    assert np.array_equal(out.reshape(3, 4), wte[[2, 0, 1]] + wpe)


def test_printf_prints_per_thread_what_its_format_says():
    # (what a kernel prints is an output: `verifier.printed` compares it)
    k = prepare(parse_ptx_file(GATHER / "encoder_forward_printf.ptx"), "encoder_forward_printf")
    r = run_kernel(k, None, (1, 1, 1), (32, 1, 1), _encoder_args([0, 9, 1]))
    assert not [e for e in r.effects if e.kind == "printf"]      # (a format keq reads)
    assert r.printed == {t: ("encoder: token 9 at (1) is out of range\n",) for t in range(4, 8)}
    clean = run_kernel(k, None, (1, 1, 1), (32, 1, 1), _encoder_args([0, 2, 1]))
    assert not clean.printed


def test_other_functions_without_a_body_are_refused_by_name():
    with pytest.raises(UnsupportedError, match="call of 'mystery', which has no body"):
        prepare(parse_ptx(EXTERN, "extern.ptx"), "k")
