"""cp.async (`semantics/ops/async_copy.py`, `semantics/machine/async_copies.py`): the values a
copy writes (whole, zero-filled past `src-size`, none under `ignore-src`) in both domains, and
its time in flight as race detection sees it, on the emulator and in the symbolic race log:
the destination read before the covering wait, another thread's read with no barrier after
the wait, and a buffer refilled while others read it are races; a double-buffered pipeline
with the right waits and barriers is not (tests/data/cp_async: nvcc's
`__pipeline_memcpy_async` pipeline proved equal to direct reads over every row count)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3

from semantics.errors import UnsupportedError
from semantics.machine import prepare, run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx
from verifier.api import load_pair, verify
from verifier.verdict import VerdictKind

DATA = Path(__file__).resolve().parents[1] / "data" / "cp_async"
THREADS = 32

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 out, .param .u32 lim)
{
.reg .pred %p<4>;
.reg .b32 %r<16>;
.reg .b64 %rd<10>;
.shared .align 16 .b8 tile[512];
ld.param.u64 %rd1, [a];
ld.param.u64 %rd5, [out];
ld.param.u32 %r9, [lim];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 16;
add.s64 %rd3, %rd1, %rd2;
mov.u32 %r2, tile;
shl.b32 %r3, %r1, 4;
add.u32 %r4, %r2, %r3;
"""
# %rd3: this thread's 16 source bytes, %r4: its 16 shared bytes, %r9: the `lim` parameter
# Every thread then writes the 16 shared bytes of its right neighbour (mod 32) to out.
TAIL = """
add.u32 %r5, %r1, 1;
and.b32 %r5, %r5, 31;
shl.b32 %r6, %r5, 4;
add.u32 %r7, %r2, %r6;
ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r7];
add.s64 %rd6, %rd5, %rd2;
st.global.v4.u32 [%rd6], {%r10, %r11, %r12, %r13};
ret;
}
"""
WAIT = "cp.async.commit_group;\ncp.async.wait_group 0;\nbar.sync 0;\n"


def _kernel(copy: str, sync: str = WAIT):
    return prepare(parse_ptx(HEAD + copy + "\n" + sync + TAIL, "t.ptx"), "k")


def _run(copy: str, sync: str = WAIT, lim: int = 16, races: bool = False):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, THREADS * 4, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(THREADS * 4, np.uint32)
    r = run_kernel(_kernel(copy, sync), None, (1, 1, 1), (THREADS, 1, 1),
                   {"a": a, "out": out, "lim": np.uint32(lim)}, detect_races=races)
    return a, r.buffers["out"], r


def _neighbour(chunks: np.ndarray) -> np.ndarray:
    """What the kernel outputs when each thread's shared chunk is `chunks[t]`."""
    return np.roll(chunks.reshape(THREADS, 4), -1, axis=0).reshape(-1)


def _bytes_kept(a: np.ndarray, size: int) -> np.ndarray:
    """Each thread's 16 source bytes with all but the first `size` zero."""
    b = a.view(np.uint8).reshape(THREADS, 16).copy()
    b[:, size:] = 0
    return b.reshape(-1).view(np.uint32)


@pytest.mark.parametrize("form", ["cg.shared.global [%r4], [%rd3], 16",
                                  "ca.shared.global [%r4], [%rd3], 16, 16",
                                  "cg.shared::cta.global.L2::128B [%r4], [%rd3], 16"])
def test_a_whole_copy_moves_the_source_bytes(form):
    a, out, r = _run(f"cp.async.{form};", races=True)
    assert out.tolist() == _neighbour(a).tolist()
    assert not [e for e in r.effects if e.kind == "race"]


@pytest.mark.parametrize("size", [0, 1, 3, 4, 7, 13, 16])
def test_src_size_reads_that_many_bytes_and_zero_fills_the_rest(size):
    _, imm, _ = _run(f"cp.async.ca.shared.global [%r4], [%rd3], 16, {size};")
    a, reg, _ = _run("cp.async.ca.shared.global [%r4], [%rd3], 16, %r9;", lim=size)
    assert imm.tolist() == reg.tolist() == _neighbour(_bytes_kept(a, size)).tolist()


def test_ignore_src_copies_zeros_where_the_predicate_holds():
    copy = "setp.lt.u32 %p1, %r1, 5;\ncp.async.ca.shared.global [%r4], [%rd3], 16, %p1;"
    a, out, _ = _run(copy)
    want = a.reshape(THREADS, 4).copy()
    want[:5] = 0
    assert out.tolist() == _neighbour(want.reshape(-1)).tolist()


def test_smaller_copies_move_their_bytes_only():
    a, out, _ = _run("cp.async.ca.shared.global [%r4], [%rd3], 8;\n"
                     "st.shared.u64 [%r4+8], 0;")
    assert out.tolist() == _neighbour(_bytes_kept(a, 8)).tolist()


def test_a_src_size_past_the_copy_is_undefined():
    with pytest.raises(UndefinedBehavior, match="src-size larger than cp-size"):
        _run("cp.async.ca.shared.global [%r4], [%rd3], 8, %r9;", lim=9)


def test_other_forms_are_refused_by_name():
    with pytest.raises(UnsupportedError, match="cp-size"):
        _run("cp.async.cg.shared.global [%r4], [%rd3], 8;")
    ptx = HEAD + "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes " \
                 "[%r4], [%rd3], 16, [%r2];\n" + TAIL
    with pytest.raises(UnsupportedError, match="cp.async.bulk"):
        prepare(parse_ptx(ptx, "t.ptx"), "k")


@pytest.mark.parametrize("sync, why", [
    ("", "still in flight"),                                   # never waited for
    ("cp.async.commit_group;\ncp.async.wait_group 1;\nbar.sync 0;\n", "still in flight"),
    ("cp.async.commit_group;\nbar.sync 0;\ncp.async.wait_group 0;\n", "no barrier between"),
    ("cp.async.wait_all;\n", "no barrier between"),            # landed, but not ordered
])
def test_reading_a_copy_before_it_is_waited_for_and_ordered_is_a_race(sync, why):
    _, _, r = _run("cp.async.cg.shared.global [%r4], [%rd3], 16;", sync, races=True)
    races = [e.what for e in r.effects if e.kind == "race"]
    assert races and why in races[0], races


def test_the_issuing_thread_reading_its_own_destination_early_is_a_race():
    copy = "cp.async.cg.shared.global [%r4], [%rd3], 16;\nld.shared.u32 %r14, [%r4];"
    _, _, r = _run(copy, races=True)
    assert any("still in flight" in e.what for e in r.effects if e.kind == "race")


def test_wait_all_then_a_barrier_orders_the_copy():
    _, _, r = _run("cp.async.cg.shared.global [%r4], [%rd3], 16;", "cp.async.wait_all;\n"
                   "bar.sync 0;\n", races=True)
    assert not [e for e in r.effects if e.kind == "race"]


def test_symbolic_values_are_the_source_elements():
    xs = [z3.BitVec(f"a[{i}]", 32) for i in range(THREADS * 4)]
    launch = run_symbolic(_kernel("cp.async.ca.shared.global [%r4], [%rd3], 16, %r9;"),
                          (1, 1, 1), (THREADS, 1, 1),
                          [SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * (THREADS * 4)), 12])
    got = [z3.simplify(g if z3.is_expr(g) else z3.BitVecVal(g, 32))
           for g in launch.buffers["out"]]
    want = _neighbour(np.array([x if i % 4 < 3 else z3.BitVecVal(0, 32)
                                for i, x in enumerate(xs)], dtype=object))
    assert all(g.eq(w) for g, w in zip(got, want))


@pytest.mark.parametrize("name, kind, why", [
    ("ok", VerdictKind.EQUIVALENT, ""),
    ("early", VerdictKind.NOT_EQUIVALENT, "still in flight"),
    ("nosync", VerdictKind.NOT_EQUIVALENT, "no barrier between"),
])
def test_the_pipelines_over_every_row_count_by_the_symbolic_race_log(name, kind, why):
    # trials=0: no random testing, so the symbolic race log alone decides (a race it finds
    # is replayed on the emulator before it is reported)
    v = verify(load_pair(DATA / f"{name}.toml"), trials=0)
    assert v.kind == kind, v.reasons
    if why:
        assert why in v.reasons[0] and v.counterexample is not None


@pytest.mark.parametrize("copy, sync, races", [
    ("cp.async.cg.shared.global [%r4], [%rd3], 16;", WAIT, False),
    # the issuing thread reads its own destination before the wait: in flight
    ("cp.async.cg.shared.global [%r4], [%rd3], 16;\nld.shared.u32 %r14, [%r4];", WAIT, True),
    # waited for, but the neighbour's read is not ordered after the wait
    ("cp.async.cg.shared.global [%r4], [%rd3], 16;", "cp.async.wait_all;\n", True),
    ("cp.async.cg.shared.global [%r4], [%rd3], 16;", "bar.sync 0;\n", True),
])
def test_the_symbolic_race_log_sees_the_copy_in_flight(copy, sync, races):
    xs = tuple(z3.BitVec(f"a[{i}]", 32) for i in range(THREADS * 4))
    launch = run_symbolic(_kernel(copy, sync), (1, 1, 1), (THREADS, 1, 1),
                          [SymBuffer(32, xs), SymBuffer(32, (0,) * (THREADS * 4)), 16],
                          detect_races=True)
    assert bool([r for r in launch.races if r.kind == "race"]) == races, launch.races


@pytest.mark.parametrize("name, kind", [("ok", VerdictKind.EQUIVALENT),
                                        ("early", VerdictKind.NOT_EQUIVALENT)])
def test_the_tensor_core_gemm_ladder_with_a_cp_async_pipeline(name, kind):
    # tests/data/mma_gemm: cp.async + ldmatrix + mma.m16n8k16 over a k loop, against the
    # fragments read from global memory, for 12 (M, N, K); the waits under the loop's
    # symbolic masks leave the maximal launch undecided, and each shape on its own decides
    v = verify(load_pair(DATA.parent / "mma_gemm" / f"{name}.toml"), trials=0)
    assert v.kind == kind, v.reasons


def test_the_mma_gemm_is_the_simt_gemm_as_reals():
    # tests/data/mma_gemm/real.toml: each mma read as the exact sum of its products (mode
    # real), against kernels/tensorcore's SIMT fp32 GEMM; the claim names that assumption
    v = verify(load_pair(DATA.parent / "mma_gemm" / "real.toml"), trials=0)
    assert v.kind == VerdictKind.EQUIVALENT, v.reasons
    assert any("exact sum of its products" in a for a in v.assumptions), v.assumptions
