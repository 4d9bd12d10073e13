"""The emulator's race detector orders accesses through release and acquire patterns
(`semantics.machine.happens_before`): a flag handoff with the fences the PTX memory model asks
for is no race, and one without them, or with fences of too narrow a scope, is."""

from __future__ import annotations

import numpy as np
import pytest

from semantics.machine import run_kernel
from semantics.machine.happens_before import Covered, HappensBefore
from semantics.ptx import parse_ptx

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _handoff(name: str, fence_w: str, fence_r: str, st_flag: str, ld_flag: str,
             data_store: str = "st.global.u32") -> str:
    """Global thread 0 writes data then a flag; global thread 32 spins on the flag, then
    reads the data (one CTA of 64 threads or two of 32: the same code)."""
    return f"""
.visible .entry {name}(.param .u64 {name}_data, .param .u64 {name}_flag, .param .u64 {name}_out)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [{name}_data];
  ld.param.u64 %rd2, [{name}_flag];
  ld.param.u64 %rd3, [{name}_out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r6, %ntid.x;
  mad.lo.s32 %r3, %r2, %r6, %r1;
  setp.eq.s32 %p1, %r3, 0;
  @%p1 bra WRITER;
  setp.ne.s32 %p2, %r3, 32;
  @%p2 bra DONE;
SPIN:
  {ld_flag} %r7, [%rd2];
  setp.eq.s32 %p3, %r7, 0;
  @%p3 bra SPIN;
  {fence_r}
  ld.global.u32 %r8, [%rd1];
  st.global.u32 [%rd3], %r8;
  bra.uni DONE;
WRITER:
  mov.u32 %r4, 42;
  {data_store} [%rd1], %r4;
  {fence_w}
  mov.u32 %r5, 1;
  {st_flag} [%rd2], %r5;
DONE:
  ret;
}}
"""


VOLATILE = ("st.volatile.global.u32", "ld.volatile.global.u32")
KERNELS = {
    "fenced_cta": ("membar.cta;", "membar.cta;", *VOLATILE),
    "fenced_gl": ("membar.gl;", "membar.gl;", *VOLATILE),
    "fence_acq_rel": ("fence.acq_rel.gpu;", "fence.acq_rel.gpu;", *VOLATILE),
    "release_acquire": ("", "", "st.release.gpu.global.u32", "ld.acquire.gpu.global.u32"),
    "no_fences": ("", "", *VOLATILE),
    "writer_fence_only": ("membar.gl;", "", *VOLATILE),
    "reader_fence_only": ("", "membar.gl;", *VOLATILE),
    "relaxed_flag": ("", "", "st.relaxed.gpu.global.u32", "ld.relaxed.gpu.global.u32"),
}
MODULE = parse_ptx(HEADER + "".join(_handoff(k, *v) for k, v in KERNELS.items()))


def _races(kernel: str, grid: int, block: int) -> list[str]:
    data, flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    res = run_kernel(MODULE, kernel, grid, block, [data, flag, out], detect_races=True)
    assert res.buffers[f"{kernel}_out"][0] == 42      # the handoff happened
    return [e.what for e in res.effects if e.kind == "race"]


# (kernel, grid, block, racy): one CTA of two warps, then two CTAs of one warp each
CASES = [
    ("fenced_cta", 1, 64, False),
    ("fenced_gl", 1, 64, False),
    ("fence_acq_rel", 1, 64, False),
    ("release_acquire", 1, 64, False),
    ("no_fences", 1, 64, True),
    ("writer_fence_only", 1, 64, True),
    ("reader_fence_only", 1, 64, True),
    ("relaxed_flag", 1, 64, True),
    ("fenced_gl", 2, 32, False),
    ("fence_acq_rel", 2, 32, False),
    ("release_acquire", 2, 32, False),
    ("fenced_cta", 2, 32, True),      # .cta fences do not reach another CTA
    ("no_fences", 2, 32, True),
]


@pytest.mark.parametrize("kernel,grid,block,racy", CASES,
                         ids=[f"{c[0]}-{c[1]}x{c[2]}" for c in CASES])
def test_a_flag_handoff_races_exactly_without_the_patterns(kernel, grid, block, racy):
    races = _races(kernel, grid, block)
    assert bool(races) == racy, races
    if racy:
        assert "data race on global memory" in races[0]


def test_coverage_by_thread_clock_and_by_cta_epoch():
    c = Covered({3: 2}, {1: 4})
    assert c.covers(3, 1, 0, 0) and not c.covers(3, 2, 0, 0)
    assert c.covers(40, 9, 1, 3) and not c.covers(40, 9, 1, 4)


def test_a_release_sequence_of_atomics_carries_earlier_releases():
    hb = HappensBefore(32)
    hb.fence([0], [0], cta_scope=False)                 # thread 0: fence, then an atomic
    t0 = hb.write_token(0, 0, release_op=False, cta_scope=False)
    hb.fence([64], [0], cta_scope=False)                # thread 64: fence, atomic on it
    t1 = hb.write_token(64, 0, release_op=False, cta_scope=False, before=t0)
    hb.read_token(100, 0, t1, acquire_op=True, cta_scope=False)
    assert hb.ordered(0, 0, 0, 100, 0) and hb.ordered(64, 0, 0, 100, 0)
    assert not hb.ordered(0, 1, 0, 100, 0)              # after thread 0's release: not ordered


def test_what_one_thread_acquired_reaches_its_cta_after_a_barrier():
    hb = HappensBefore(32)
    hb.fence([0], [0], cta_scope=False)
    token = hb.write_token(0, 0, release_op=False, cta_scope=False)
    hb.read_token(32, 0, token, acquire_op=True, cta_scope=False)     # CTA 1, thread 32
    assert hb.ordered(0, 0, 0, 32, 0)
    assert not hb.ordered(0, 0, 0, 33, 0)               # thread 33, same epoch: not yet
    assert hb.ordered(0, 0, 0, 33, 1)                   # after CTA 1's next barrier


# -- bar.warp.sync orders memory among the threads that take part (PTX ISA 9.7.13.2) --------

def _warp_exchange(sync: str, mask: str = "-1") -> str:
    """Each thread stores its id to shared memory, syncs (or not), and reads its neighbour's
    (lane + 1 mod 32): within one warp (`__syncwarp()` is `bar.warp.sync -1`)."""
    return HEADER + f"""
.visible .entry xchg(.param .u64 xchg_out)
{{
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 buf[256];
  ld.param.u64 %rd1, [xchg_out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;
  st.shared.u32 [%r4], %r1;
  {sync.format(mask=mask)}
  add.s32 %r5, %r1, 1;
  and.b32 %r5, %r5, 31;
  and.b32 %r8, %r1, -32;
  add.s32 %r5, %r5, %r8;
  shl.b32 %r6, %r5, 2;
  add.s32 %r7, %r2, %r6;
  ld.shared.u32 %r9, [%r7];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}}
"""


@pytest.mark.parametrize("sync,mask,races", [
    ("bar.warp.sync {mask};", "-1", False),           # __syncwarp(): ordered
    ("", "-1", True),                                  # nothing: a race within the warp
    ("bar.warp.sync {mask};", "65535", None),          # a mask leaving lanes out: UB first
])
def test_bar_warp_sync_orders_a_warps_shared_memory_exchange(sync, mask, races):
    m = parse_ptx(_warp_exchange(sync, mask))
    out = np.zeros(64, dtype=np.uint32)
    if races is None:
        with pytest.raises(Exception, match="membermask leaves out"):
            run_kernel(m, "xchg", grid=1, block=64, args=[out], detect_races=True)
        return
    res = run_kernel(m, "xchg", grid=1, block=64, args=[out], detect_races=True)
    found = [e for e in res.effects if e.kind == "race"]
    assert bool(found) == races, found
    lane = np.arange(64)
    assert (res.buffers["xchg_out"] == (lane & ~31) + ((lane + 1) & 31)).all()


def test_bar_warp_sync_orders_nothing_across_warps():
    # Thread t reads thread (t + 32) % 64: another warp; a warp barrier does not order them.
    src = _warp_exchange("bar.warp.sync {mask};").replace(
        "  add.s32 %r5, %r1, 1;\n  and.b32 %r5, %r5, 31;\n  and.b32 %r8, %r1, -32;\n"
        "  add.s32 %r5, %r5, %r8;\n", "  add.s32 %r5, %r1, 32;\n  and.b32 %r5, %r5, 63;\n")
    res = run_kernel(parse_ptx(src), "xchg", grid=1, block=64,
                     args=[np.zeros(64, dtype=np.uint32)], detect_races=True)
    assert any(e.kind == "race" for e in res.effects)


@pytest.mark.parametrize("name,expect", [
    ("synced", "equivalent"), ("nosync", "not-equivalent"),
    # half-warp tiles (tiled_partition<16>): two groups, each naming its half; reading the
    # other half races. The tiles were refuted with a race before groups (a wrong verdict).
    ("tiles16", "equivalent"), ("tiles16_across", "not-equivalent"),
    # the lower half alone, __syncwarp(0xffff) under a divergent branch
    ("lower16", "equivalent"),
])
def test_the_symbolic_race_log_orders_a_warp_through_bar_warp_sync(name, expect):
    # Over 256 launch shapes (the symbolic race log, testing off): with __syncwarp() the
    # shared-memory rotation is race free and equal to the global one; without it, a race.
    from verifier.api import load_pair, verify
    from pathlib import Path
    spec = Path(__file__).resolve().parents[1] / "data" / "warp_sync" / f"{name}.toml"
    v = verify(load_pair(spec), trials=0, timeout_s=60)
    assert v.kind == expect, v.reasons
    if expect == "equivalent":
        assert any(s.name == "races" and "no two conflict" in s.detail for s in v.stages)


@pytest.mark.parametrize("kernel,races", [("rotate16_tiles", False),
                                          ("rotate16_tiles_across", True)])
def test_the_emulator_orders_each_half_warp_tile_through_its_own_membermask(kernel, races):
    from pathlib import Path
    from semantics.ptx import parse_ptx_file
    ptx = Path(__file__).resolve().parents[1] / "data" / "warp_sync" / "rotate.ptx"
    x = np.arange(64, dtype=np.int32)
    res = run_kernel(parse_ptx_file(ptx), kernel, grid=1, block=64,
                     args=[x, np.zeros(64, dtype=np.int32), np.int32(64)], detect_races=True)
    assert any(e.kind == "race" for e in res.effects) == races


def test_without_warp_groups_the_tiles_would_race(monkeypatch):
    from pathlib import Path
    from semantics.machine.symbolic_races import SymbolicRaceLog
    from verifier.api import load_pair, verify
    monkeypatch.setattr(SymbolicRaceLog, "_group_synced", lambda self, a, b: False)
    spec = Path(__file__).resolve().parents[1] / "data" / "warp_sync" / "tiles16.toml"
    assert verify(load_pair(spec), trials=0, timeout_s=60).kind != "equivalent"
