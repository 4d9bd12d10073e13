"""Run one kernel on the symbolic domain: buffers hold solver terms, results come back as
per-element terms (plain ints where the result does not depend on symbolic data).

Every CTA of the launch is one batch (lanes = all threads), so global memory, atomics and
cross-CTA effects behave exactly as in the emulator's batched schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

import numpy as np
import z3

from semantics.choices import Choices
from semantics.domains.symbolic import SymbolicDomain
from semantics.machine.executor import Effect, Executor, Geometry
from semantics.machine.indexed_buffers import IndexedAccess
from semantics.machine.kernel import PreparedKernel
from semantics.machine.layout import for_launch, shared_row_size, shared_vars
from semantics.machine.memory import ConcreteMemory, GlobalLayout
from semantics.machine.run import add_views, param_bits
from semantics.machine.views import View
from semantics.machine.pending_sums import SumParts
from semantics.machine.symbolic_races import RacePair, SymbolicRaceLog
from semantics.machine.symbolic_port import LaunchShape, ShapeObligation, SymbolicPort


@dataclass(frozen=True)
class SymBuffer:
    """A global buffer of `len(values)` elements of `elem_bits` each (ints or z3 terms)."""

    elem_bits: int
    values: tuple[Any, ...]


@dataclass(frozen=True)
class SymbolicLaunch:
    buffers: dict[str, list]          # PTX param name -> final element values
    effects: tuple[Effect, ...]
    symbolic_control: bool            # some branch or guard depended on symbolic data
    obligations: tuple[ShapeObligation, ...] = ()   # with a LaunchShape: bounds to prove
    races: tuple[RacePair, ...] = ()                # with detect_races: conflicting accesses
    indexed: tuple[IndexedAccess, ...] = ()         # with `indexed`: the logged accesses
    # the sums of atomic increments among the terms, as built (`pending_sums`): node -> parts
    sums: Mapping[int, SumParts] = field(default_factory=dict)
    prints: tuple = ()        # what printf calls print (`system_calls.Printed`), in order


def run_symbolic(k: PreparedKernel, grid: tuple[int, int, int], block: tuple[int, int, int],
                 args: Sequence[SymBuffer | int | float | z3.BitVecRef], *, dynamic_shared: int = 0,
                 unroll: int | None = 64, max_steps: int | None = None,
                 shape: LaunchShape | None = None, special_terms: dict | None = None,
                 detect_races: bool = False, prune=None, resolver=None,
                 settle=None, possible=None,
                 indexed: dict[str, tuple[str, str]] | None = None,
                 choices: Choices | None = None, tag: str = "k",
                 read_only: Collection[str] = (),
                 views: Mapping[int, View] | None = None) -> SymbolicLaunch:
    """`shape` makes this a maximal launch standing for every shape it allows (see
    `semantics.machine.symbolic_port`); `special_terms` gives special registers symbolic
    values (%nctaid); `detect_races` logs every access with its condition and returns the
    conflicting pairs (`semantics.machine.symbolic_races`); `prune(mask)` drops infeasible lanes
    at loop re-entry; `settle(mask)` makes lane masks that decide alike at every allowed shape
    concrete (see `Executor`); `resolver(offset, condition)` lists the values a symbolic
    address offset takes (see `SymbolicPort._resolve`); `possible(cond)` says whether a lane
    condition may hold (for shared memory written under symbolic conditions);
    `indexed` (PTX parameter -> ("in" | "out", label)) addresses those buffers without splitting
    symbolic offsets (`semantics.machine.indexed_buffers`), their accesses come back in
    `indexed`. `tag` names this run in the names of the values the PTX ISA leaves open
    (`semantics.choices`; a pair's role), and `choices.target` holds the claim's assumptions
    about the target GPU. `read_only` names the buffer parameters the kernel must not write.
    `views`: the texture and surface object parameters, as `run_kernel` takes them."""
    params = k.fn.params
    if len(args) != len(params):
        raise ValueError(f"{k.name} takes {len(params)} arguments, {len(args)} given")
    # The packed layout only (its addresses are concrete): an instruction where an address's
    # numeric value may show records a "layout" effect, which stops a proof.
    k = for_launch(k, frozenset(p.name for p, a in zip(params, args) if isinstance(a, SymBuffer)))
    layout = GlobalLayout()
    allocs = {}
    values: dict = {}
    for p, a in zip(params, args):
        if isinstance(a, SymBuffer):
            nbytes = a.elem_bits // 8
            alloc = layout.allocate(p.name, nbytes * len(a.values))
            allocs[p.name] = (alloc, a)
            values[p.name] = (alloc.base, p.size_bytes * 8)
        elif isinstance(a, z3.BitVecRef):       # a symbolic scalar parameter
            # (a __half is passed as `.param .align 2 .b8 p[2]`: its bytes, all of them)
            if a.size() != max(p.type.bits, (p.size_bytes or 0) * 8):
                raise ValueError(f"{p.name}: a {a.size()}-bit term for a .{p.type.name} param")
            values[p.name] = (a, (p.size_bytes or 0) * 8)
        else:
            values[p.name] = (param_bits(a, p), (p.size_bytes or 0) * 8)
    for name, var in k.global_vars.items():
        alloc = layout.allocate(f"global:{name}", var.size_bytes or 0)
        values[("global-var", name)] = alloc.base
    add_views(params, values, views)
    mem = ConcreteMemory(layout, {}, read_only=frozenset(read_only))
    benign = choices is not None and choices.target.benign_write_races
    port = SymbolicPort(mem, races=SymbolicRaceLog(block[0] * block[1] * block[2], benign)
                        if detect_races else None)
    port.resolver = resolver
    port.possible = possible
    for alloc, buf in allocs.values():
        nbytes = buf.elem_bits // 8
        for i, v in enumerate(buf.values):
            port.preset("global", alloc.base + i * nbytes, nbytes, v)
    ctas = tuple((x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0]))
    geom = Geometry(block, grid, ctas)
    threads = geom.threads_per_cta
    shared = shared_row_size(k, dynamic_shared)
    mem.new_batch(np.arange(geom.lanes, dtype=np.int64) // threads, len(ctas), shared,
                  k.local_size, shared_vars=shared_vars(k, dynamic_shared))
    if shape is not None:
        if len(shape.exists) != len(ctas):
            raise ValueError(f"{len(shape.exists)} existence conditions for {len(ctas)} CTAs")
        port.use_shape(shape, np.arange(geom.lanes, dtype=np.int64) // threads,
                       {name: alloc for name, (alloc, _) in allocs.items()})
    if indexed:
        port.use_indexed(indexed, {name: alloc for name, (alloc, _) in allocs.items()})
    # (mode real: concrete float results that round stay terms, `real_exactness`)
    real = choices is not None and choices.target.real_floats
    ex = Executor(k, SymbolicDomain(geom.lanes, real_floats=real), port, geom, values,
                  max_steps=max_steps,
                  dynamic_shared=dynamic_shared, unroll=unroll, special_terms=special_terms,
                  prune=prune, settle=settle, choices=choices, tag=tag)
    ex.run()
    out: dict[str, list] = {}
    for name, (alloc, buf) in allocs.items():
        nbytes = buf.elem_bits // 8
        base = alloc.base - mem.base
        out[name] = [port._read(mem.g, base + i * nbytes, nbytes) for i in range(len(buf.values))]
    return SymbolicLaunch(out, tuple(ex.effects), ex.symbolic_control,
                          tuple(port.obligations),
                          tuple(port.races.pairs()) if port.races is not None else (),
                          tuple(port.indexed.accesses) if port.indexed is not None else (),
                          port.sums, tuple(ex.prints))
