"""Special registers whose values the PTX ISA does not determine (PTX ISA 10, "Special
Registers"), each read as what the ISA promises and nothing more.

- Chosen afresh at every read (`Openness.FRESH`): `%warpid` and `%smid` ("may change during
  execution, e.g. due to rescheduling of threads following preemption"), the cycle counters
  `%clock`, `%clock_hi`, `%clock64`, the timers `%globaltimer*` and the performance counters
  `%pm*` ("their behavior is currently undefined"): a new unspecified value per read and
  warp (the threads of a warp read them at one moment), only bounded as the ISA says
  (`%warpid < %nwarpid`, `%smid < %nsmid`).
- Fixed for the machine (`Openness.FIXED`, the same for both kernels of a pair, which run on
  one GPU): `%nwarpid` ("the maximum number of warp identifiers": at least the block's warps)
  and `%nsmid` ("may be larger than the physical number of SMs").
- Fixed per launch: `%gridid` (the launch number), `%envreg<n>` (driver-defined),
  `%total_smem_size` and `%aggr_smem_size` (at least the shared memory the kernel uses:
  sizes are rounded to the allocation unit).
The emulator's natural values (what a GPU would plausibly report) stand for the zero fill,
so `keq run` shows ordinary numbers; a counterexample that needs others names them.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from semantics.choices import KeySpace
from semantics.errors import UnsupportedError

_FRESH_32 = {"%warpid", "%smid", "%clock", "%clock_hi", "%globaltimer_lo", "%globaltimer_hi"}
_FRESH_64 = {"%clock64", "%globaltimer"}
_PM = re.compile(r"^%pm[0-7](_64)?$")
_ENVREG = re.compile(r"^%envreg([0-9]|[12][0-9]|3[01])$")
NATURAL_WARPS = 64          # what the emulator reports as %nwarpid (sm_90: 64 warps per SM)
NATURAL_SMS = 132           # ... and as %nsmid (an H100 SXM has 132 SMs)


def is_open(name: str) -> bool:
    return name in _FRESH_32 or name in _FRESH_64 or name in (
        "%nwarpid", "%nsmid", "%gridid", "%total_smem_size", "%aggr_smem_size") \
        or bool(_PM.match(name)) or bool(_ENVREG.match(name))


def read_open(x, name: str) -> tuple[Any, int]:
    """(value, width) of an open special register for the executing lanes of `x`."""
    x.effect("nondeterministic", f"read of {name}, which the PTX ISA leaves open")
    d = x.d
    if name == "%nwarpid":
        return _at_least(x, _machine(x, name, NATURAL_WARPS), _warps(x), 32), 32
    if name == "%nsmid":
        return _at_least(x, _machine(x, name, NATURAL_SMS), 1, 32), 32
    if name == "%warpid":
        raw = _fresh(x, name, 32, _warp_in_cta(x))
        return d.urem(raw, read_open(x, "%nwarpid")[0], 32), 32
    if name == "%smid":
        raw = _fresh(x, name, 32, (x.global_tid // x.geom.threads_per_cta) % NATURAL_SMS)
        return d.urem(raw, read_open(x, "%nsmid")[0], 32), 32
    if name in _FRESH_32 or name in _FRESH_64 or _PM.match(name):
        w = 64 if name in _FRESH_64 or name.endswith("_64") else 32
        natural = np.full(x.geom.lanes, 0 if name.startswith("%pm") else 1000 + x.instr_index)
        return _fresh(x, name, w, natural), w
    if name == "%gridid":
        return _per_launch(x, name, 64, np.ones(x.geom.lanes, np.int64)), 64
    if _ENVREG.match(name):
        return _per_launch(x, name, 32, np.zeros(x.geom.lanes, np.int64)), 32
    used = x.k.static_shared + x.dynamic_shared
    return _at_least(x, _per_launch(x, name, 32, np.full(x.geom.lanes, used)), used, 32), 32


def refuse(x, name: str) -> None:
    raise UnsupportedError(f"special register {name} is not supported", x.ins.loc)


def _warps(x) -> int:
    return (x.geom.threads_per_cta + 31) // 32


def _warp_in_cta(x) -> np.ndarray:
    return x.lane_in_cta // 32


def _machine(x, name: str, natural: int):
    """A value of the GPU the pair runs on: one name for both kernels, every thread."""
    keys = x.lane_keys(KeySpace.CTA)
    same = type(keys)(keys.space, np.zeros_like(keys.exact), np.zeros_like(keys.local), True)
    return x.d.unspecified(f"gpu/{name}", 32, same, x.choices,
                           natural=np.full(x.geom.lanes, natural))


def _per_launch(x, name: str, w: int, natural: np.ndarray):
    """A value fixed for this kernel's launch: one name per run, every thread."""
    keys = x.lane_keys(KeySpace.CTA)
    same = type(keys)(keys.space, np.zeros_like(keys.exact), np.zeros_like(keys.local), True)
    return x.d.unspecified(f"{x.tag}/{name}", w, same, x.choices, natural=natural)


def _fresh(x, name: str, w: int, natural: np.ndarray):
    """A new value at every read: per warp, keyed by the read's count at this site."""
    counts = x.read_count(("sreg", name))
    keys = x.lane_keys(KeySpace.WARP).counted(counts)
    return x.d.unspecified(f"{x.tag}/{name}@{x.site}", w, keys, x.choices,
                           natural=natural)


def _at_least(x, v, least, w: int):
    """`max(v, least)` (unsigned): a maximum the ISA bounds from below."""
    d = x.d
    lo = d.from_ints(np.broadcast_to(np.asarray(least, dtype=np.int64), (x.geom.lanes,)), w)
    return d.ite(d.ult(v, lo, w), lo, v, w)


__all__ = ["is_open", "read_open", "refuse", "NATURAL_WARPS", "NATURAL_SMS"]
