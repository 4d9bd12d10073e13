"""`txq` and `suq` (`semantics/ops/texture_query.py`), hand-written PTX (CUDA has no call
that emits them): the ISA's exact answers (extents, normalized_coords, filter_mode, 0 for
array_size / num_mipmap_levels / num_samples) in both domains, a symbolic extent stays the
launch's term; what the ISA leaves open (the extent of a missing axis, addressing-mode and
channel enumerations, a surface's memory layout) is a value fixed per object, an
`unspecified` effect, and the same in two kernels; txq.level and
force_unnormalized_coords stay unsupported."""

from __future__ import annotations

import numpy as np
import pytest
import z3

from semantics.machine import prepare, run_kernel
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.machine.views import View
from semantics.ops import is_supported
from semantics.ptx import parse_ptx

KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 t, .param .u64 out)
{
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [t];
ld.param.u64 %rd2, [out];
OP.QUERY.b32 %r1, [%rd1];
st.global.u32 [%rd2], %r1;
ret;
}
"""


def _kernel(query: str, op: str = "txq"):
    return prepare(parse_ptx(KERNEL.replace("OP", op).replace("QUERY", query), "t.ptx"),
                   "k")


TEX = View("texture", "t", "f32", (5, 3), "wrap", "linear", True)
SURF = View("surface", "t", "u32", (6,))


def _run(query, view, op="txq"):
    return run_kernel(_kernel(query, op), None, 1, 1,
                      {"t": np.zeros(15, np.uint32), "out": np.zeros(1, np.uint32)},
                      views={0: view})


def _symbolic(query, view, op="txq"):
    return run_symbolic(_kernel(query, op), (1, 1, 1), (1, 1, 1),
                        [SymBuffer(32, tuple(range(15))), SymBuffer(32, (0,))],
                        views={0: view})


@pytest.mark.parametrize("query, op, view, want", [
    ("width", "txq", TEX, 5), ("height", "txq", TEX, 3), ("normalized_coords", "txq", TEX, 1),
    ("filter_mode", "txq", TEX, 1), ("filter_mode", "txq", View("texture", "t", "f32", (4,)), 0),
    ("normalized_coords", "txq", View("texture", "t", "f32", (4,)), 0),
    ("array_size", "txq", TEX, 0), ("num_mipmap_levels", "txq", TEX, 0),
    ("num_samples", "txq", TEX, 0), ("width", "suq", SURF, 6), ("array_size", "suq", SURF, 0),
])
def test_documented_answers_are_exact_in_both_domains(query, op, view, want):
    r = _run(query, view, op)
    assert r.buffers["out"].tolist() == [want] and not r.effects
    launch = _symbolic(query, view, op)
    got = launch.buffers["out"][0]
    assert (got if isinstance(got, int) else z3.simplify(got).as_long()) == want
    assert not launch.effects


def test_a_symbolic_extent_is_the_launchs_term():
    w = z3.BitVec("w", 32)
    launch = _symbolic("width", View("texture", "t", "f32", (w, 3)))
    assert z3.eq(z3.simplify(launch.buffers["out"][0]), w)


@pytest.mark.parametrize("query, op, view", [
    ("depth", "txq", TEX), ("height", "suq", SURF), ("addr_mode_0", "txq", TEX),
    ("addr_mode_2", "txq", TEX), ("channel_data_type", "txq", TEX),
    ("channel_order", "suq", SURF), ("memory_layout", "suq", SURF),
])
def test_open_answers_are_unspecified_values_fixed_per_object(query, op, view):
    r = _run(query, view, op)
    assert [e.kind for e in r.effects] == ["unspecified"] and query.split("_")[0] in \
        r.effects[0].what
    a = _symbolic(query, view, op).buffers["out"][0]
    b = _symbolic(query, view, op).buffers["out"][0]
    assert not z3.is_bv_value(z3.simplify(a))            # (no guessed constant)
    s = z3.Solver()
    s.add(a != b)
    assert s.check() == z3.unsat                         # (the same in two kernels)


def test_the_emulators_stand_in_for_an_addressing_mode_is_the_isas_list_position():
    assert _run("addr_mode_1", TEX).buffers["out"].tolist() == [0]           # wrap
    clamp = View("texture", "t", "f32", (5, 3), "clamp")
    assert _run("addr_mode_0", clamp).buffers["out"].tolist() == [3]         # clamp_to_edge


@pytest.mark.parametrize("line", [
    "txq.level.width.b32 %r1, [%rd1], %r2;",
    "txq.force_unnormalized_coords.b32 %r1, [%rd1];",
    "suq.normalized_coords.b32 %r1, [%rd1];",
])
def test_mipmap_and_sampler_queries_stay_unsupported(line):
    src = KERNEL.replace("OP.QUERY.b32 %r1, [%rd1];", "mov.u32 %r2, 0;\n" + line)
    ins = [i for i in parse_ptx(src, "t.ptx").functions["k"].instructions
           if i.form.opcode in ("txq", "suq")]
    assert ins and not is_supported(ins[0].form)
