"""The memory layout one launch runs under, and the kernel as that launch runs it.

The PTX ISA does not say where buffers and `.shared` variables lie (only their alignment:
256 bytes for a cudaMalloc'd buffer, the declared `.align` for a variable), so keq
- gives every shared variable a window of its own (`semantics.machine.memory`): an access
  computed from one variable that leaves it faults on the emulator and symbolically alike;
- finds, before running, every instruction where the numeric value of an address may
  become observable (`semantics.machine.layout_taint`): executing one records a "layout"
  effect, which stops a proof (the symbolic domain knows one layout only);
- confines each access whose address derives from some buffers or shared variables to
  them (`ConcreteMemory.confined`): one that lands in another faults in both domains, as on
  a GPU that put that one elsewhere (`a[t + 2^18]` is not `b[t]`, however far apart);
- has a second layout, "shifted" (`Choices.layout`), under which testing looks for a
  difference that the packed layout hides.
A SASS kernel keeps ptxas' layout (its shared offsets are fixed in the code).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from semantics.choices import LAYOUTS
from semantics.ir.nodes import Function
from semantics.machine.kernel import PreparedKernel, align_up, call_tree
from semantics.machine.memory import SHARED_SPACING, SHIFTED_SHARED_START, SharedVar


def shared_row_size(k: PreparedKernel, dynamic_shared: int) -> int:
    """Bytes of one CTA's compact shared-memory row."""
    rows = k.shared_rows or k.shared_offsets       # (SASS: the offsets are the row)
    if k.dynamic_shared_var:
        return rows.get(k.dynamic_shared_var, k.static_shared) + dynamic_shared
    return k.static_shared


def shared_vars(k: PreparedKernel, dynamic_shared: int) -> tuple[SharedVar, ...] | None:
    """The window of each shared variable in this launch (`k.shared_offsets`, the layout of
    `for_launch`), or None for one window from 0 (a SASS kernel, or none declared)."""
    if not k.shared_rows:
        return None
    return tuple(SharedVar(name, k.shared_offsets[name], row,
                           k.shared_sizes.get(name, dynamic_shared))
                 for name, row in k.shared_rows.items())


def _shifted_windows(k: PreparedKernel) -> dict[str, int]:
    """Shared variables in reverse order, from `SHIFTED_SHARED_START` in their windows."""
    names = list(reversed(k.shared_rows))
    return {name: align_up(i * SHARED_SPACING + SHIFTED_SHARED_START, k.shared_aligns[name])
            for i, name in enumerate(names)}


def _recording(sem: Callable, what: str) -> Callable:
    """`sem`, recording first that the numeric value of an address reaches `what` (the
    executor calls it only where some lane may run it)."""
    def run(x) -> None:
        x.effect("layout", what)
        sem(x)
    run.__wrapped__ = sem
    return run


def _confined(sem: Callable, regions: frozenset[str]) -> Callable:
    """`sem`, its accesses confined to `regions` (see `ConcreteMemory.confined`)."""
    def run(x) -> None:
        mem = x.port.mem
        before, mem.confined = mem.confined, regions
        try:
            sem(x)
        finally:
            mem.confined = before
    run.__wrapped__ = sem
    return run


def _region(base: str) -> str:
    """An analysis base as `ConcreteMemory.confined` names it (buffers by allocation)."""
    kind, _, name = base.partition(":")
    return f"global:{name}" if kind == "param" else \
        f"global:global:{name}" if kind == "global" else base


def for_launch(k: PreparedKernel, pointers: frozenset[str] | None,
               layout: str = "packed") -> PreparedKernel:
    """`k` (and every function it calls) as a launch with `pointers` (the parameters that
    are buffers; None: every 64-bit one) under `layout` runs it: each instruction where the
    numeric value of an address may be observed records a "layout" effect, each access
    stays inside what its address derives from, and the shared windows are the layout's.
    `k` itself when none of that changes anything."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown memory layout {layout!r} (one of: {', '.join(LAYOUTS)})")
    if not isinstance(k.fn, Function):
        return k                   # SASS: ptxas fixed the layout; no PTX to analyse
    key = (pointers, layout)
    got = k._launches.get(key)
    if got is not None:
        return got
    from semantics.machine.layout_taint import provenance
    found, accesses = provenance(k, pointers)
    windows = k.shared_offsets if layout == "packed" else _shifted_windows(k)
    if not found and not accesses and layout == "packed":
        k._launches[key] = k
        return k
    tree = [k, *call_tree(k)]
    copies: dict[str, PreparedKernel] = {}
    for f in tree:
        sems = list(f.semantics)
        for a in accesses:
            if a.function == f.name:
                sems[a.index] = _confined(sems[a.index], frozenset(map(_region, a.bases)))
        for finding in found:
            if finding.function == f.name:
                sems[finding.index] = _recording(sems[finding.index], finding.message)
        copies[f.name] = replace(f, semantics=sems, shared_offsets=windows, callees={},
                                 _launches={})
    for f in tree:
        copies[f.name].callees = {n: copies[n] for n in f.callees}
    k._launches[key] = copies[k.name]
    return copies[k.name]


__all__ = ["LAYOUTS", "for_launch", "shared_row_size", "shared_vars"]
