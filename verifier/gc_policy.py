"""How often a keq process runs Python's cyclic garbage collector.

A verification builds millions of small objects that are never part of a reference cycle:
z3 term wrappers, tuples of term ids, node records, numpy scalars. Each is a container the
collector tracks, and its default young-generation pass (every 700 net allocations) walks
them over and over, long after they are alive for good: 11 % of the term walk's time on
tiled_real, 1 s of the histogram's 10 s (py-spy --native, session 15). Cycles do occur
(exception tracebacks, generator frames), so the collector stays on, 140 times less often.

Measured (`bench/against.py`, the default thresholds against these, interleaved, 2 runs each):
histogram/shared 9.96 -> 8.79 s, matmul/tiled_real 11.91 -> 11.12 s, vector_add/vec4 3.90 ->
3.77 s; peak memory unchanged (250 MB, 1.8 GB).
"""

from __future__ import annotations

import gc

YOUNG = 100_000     # net allocations of tracked objects between two young passes (default 700)
OLDER = 20          # passes of each generation before the next one up (default 10, 10)


def collect_less() -> None:
    """Set this process's collector thresholds (`YOUNG`, `OLDER`); for the command line and
    the benchmarks, which own their process (a library call leaves the caller's alone)."""
    gc.set_threshold(YOUNG, OLDER, OLDER)
