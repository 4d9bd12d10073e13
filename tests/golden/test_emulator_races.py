"""The emulator's race detector on the corpus: every planted missing-barrier bug is reported as
a race naming both accesses, and no correct kernel reports one (no false alarms)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semantics.machine import run_kernel
from semantics.ptx import parse_ptx_file

K = Path(__file__).resolve().parents[2] / "kernels"
rng = np.random.default_rng(7)
N = 300
INTS = rng.integers(-100, 100, N).astype(np.int32)
BYTES = rng.integers(0, 256, N).astype(np.uint8)
A = rng.random((32, 32), dtype=np.float32)
B = rng.random((32, 32), dtype=np.float32)


def _args(family: str):
    if family == "reduce":
        return [INTS.copy(), np.zeros(2, np.int32), N], 2, 256
    if family == "scan":
        return [INTS[:256].copy(), np.zeros(256, np.int32), 256], 1, 256
    if family == "histogram":
        return [BYTES.copy(), np.zeros(256, np.uint32), N], 2, 256
    return [A, B, np.zeros((32, 32), np.float32), 32, 32, 32], (2, 2), (16, 16)


CASES = [
    ("reduce/reduce_interleaved", "reduce_interleaved_i32", False),
    ("reduce/reduce_sequential", "reduce_sequential_i32", False),
    ("reduce/reduce_warp_shfl", "reduce_warp_shfl_i32", False),
    ("reduce/reduce_tree_shfl", "reduce_tree_shfl_i32", False),
    ("reduce/reduce_sequential_nosync_i32", None, True),
    ("scan/scan_hillis_steele", None, False),
    ("scan/scan_blelloch", None, False),
    ("scan/scan_hillis_steele_1buf", None, True),
    ("histogram/histogram_global", None, False),
    ("histogram/histogram_shared", None, False),
    ("histogram/histogram_shared_noinit_sync", None, True),
    ("histogram/histogram_shared_nomerge_sync", None, True),
    ("matmul/matmul_naive", None, False),
    ("matmul/matmul_tiled", None, False),
    ("matmul/matmul_tiled_nosync2", None, True),
]


@pytest.mark.parametrize("path,kernel,racy", CASES, ids=[c[0] for c in CASES])
def test_races_are_reported_exactly_for_the_racy_kernels(path, kernel, racy):
    m = parse_ptx_file(K / f"{path}.ptx")
    args, grid, block = _args(path.split("/")[0])
    res = run_kernel(m, kernel or next(iter(m.entries)), grid, block, args, detect_races=True)
    races = [e for e in res.effects if e.kind == "race"]
    assert bool(races) == racy, [e.what for e in races]
    for e in races:
        assert "data race on shared memory" in e.what and " and " in e.what
        assert e.what.count(".ptx:") == 2          # both accesses, with their PTX lines


def test_race_detection_is_off_by_default():
    m = parse_ptx_file(K / "reduce/reduce_sequential_nosync_i32.ptx")
    args, grid, block = _args("reduce")
    res = run_kernel(m, next(iter(m.entries)), grid, block, args)
    assert not [e for e in res.effects if e.kind == "race"]


def test_a_global_write_race_between_ctas_is_reported():
    ptx = """.version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %ctaid.x;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""
    from semantics.ptx import parse_ptx
    res = run_kernel(parse_ptx(ptx), "k", 2, 1, [np.zeros(1, np.uint32)], detect_races=True)
    races = [e.what for e in res.effects if e.kind == "race"]
    assert races and "block (1,0,0)" in races[0] and "block (0,0,0)" in races[0]


def test_coverage_counts_blocks_and_branch_directions():
    m = parse_ptx_file(K / "reduce/reduce_interleaved.ptx")
    args, grid, block = _args("reduce")
    res = run_kernel(m, "reduce_interleaved_i32", grid, block, args, coverage=True)
    cov = res.coverage
    assert cov.blocks_total == len(cov.blocks_seen) > 3
    assert 0 < len(cov.branches_seen) <= cov.branches_total
    one = run_kernel(m, "reduce_interleaved_i32", 1, 256, [INTS[:1].copy(), np.zeros(1, np.int32), 1],
                     coverage=True).coverage
    assert len(one.branches_seen) <= len(cov.branches_seen)


def test_lanes_of_one_store_race_whatever_they_write_unless_the_claim_allows_equal_values():
    """The PTX memory model: two weak stores to one address unordered by a barrier are a
    data race, whatever the values; `allow = ["benign-write-races"]` lets equal values pass
    (by name, printed in the claim), never different ones."""
    from semantics.choices import Choices, Target
    from semantics.ptx import parse_ptx
    body = """.version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    {value}
    st.global.u32 [%rd1], %r2;
    ret;
}}
"""
    same = parse_ptx(body.format(value="mov.u32 %r2, 7;"))
    diff = parse_ptx(body.format(value="mov.u32 %r2, %r1;"))
    out = np.zeros(1, np.uint32)
    allowed = Choices(target=Target.from_names((), allow=("benign-write-races",)))

    def races(m, **kw) -> list:
        r = run_kernel(m, "k", 1, 32, [out.copy()], detect_races=True, **kw)
        return [e for e in r.effects if e.kind == "race"]
    assert races(same) and races(diff)
    assert not races(same, choices=allowed) and races(diff, choices=allowed)
