"""Run one kernel on the concrete emulator: numpy arrays and scalars in, arrays out."""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass, field
from typing import Callable, Collection, Mapping, Sequence

import numpy as np

from semantics.choices import Choices, KeySpace
from semantics.domains.concrete import ConcreteDomain
from semantics.errors import KeqError
from semantics.ir.nodes import Module
from semantics.machine.concrete_port import ConcretePort
from semantics.machine.executor import Effect, Executor, Geometry, thread_name_of
from semantics.machine.kernel import PreparedKernel, prepare
from semantics.machine.layout import for_launch, shared_row_size, shared_vars
from semantics.machine.memory import ConcreteMemory, GlobalLayout
from semantics.machine.grid_dependency import GlobalLog
from semantics.machine.printf_format import render
from semantics.machine.races import RaceDetector
from semantics.machine.views import View, view_key

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class Coverage:
    """Which basic blocks and branch directions (block, taken) of the kernel ran."""

    blocks_total: int
    blocks_seen: frozenset[int]
    branches_total: int
    branches_seen: frozenset[tuple[int, bool]]

    def merge(self, other: "Coverage") -> "Coverage":
        return Coverage(self.blocks_total, self.blocks_seen | other.blocks_seen,
                        self.branches_total, self.branches_seen | other.branches_seen)


@dataclass(frozen=True)
class LaunchResult:
    buffers: dict[str, np.ndarray]      # every pointer argument's final contents, by name
    effects: tuple[Effect, ...]
    coverage: Coverage | None = None
    # With detect_races: per pointer argument, the last store to each of its bytes, as
    # "block (..) thread (..) at FILE:LINE:COL", or "" where no thread wrote it.
    writers: dict[str, Callable[[int], str]] | None = None
    # What each thread printed (global thread id -> its lines, in order), where any did.
    printed: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    # With log_global: the global bytes touched and the accesses before griddepcontrol.wait,
    # and each pointer argument's bytes among them (offset, size) by name
    global_log: GlobalLog | None = None
    global_ranges: Mapping[str, tuple[int, int]] = field(default_factory=dict)


def _dim3(v: int | Sequence[int], what: str) -> Dim3:
    t = (v, 1, 1) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    t = tuple(t) + (1,) * (3 - len(t))
    if len(t) != 3 or any(x < 1 for x in t):
        raise KeqError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    return t  # type: ignore[return-value]


def param_bits(value, p) -> int:
    """A scalar argument as the bits of the kernel parameter `p`. A byte-array parameter
    (nvcc passes a `__half` as `.param .align 2 .b8 p[2]`) takes a numpy scalar's own bytes."""
    nbytes = p.size_bytes or 0
    if nbytes * 8 > p.type.bits and isinstance(value, np.generic) and \
            value.dtype.itemsize == nbytes:
        return int.from_bytes(np.asarray(value).tobytes(), "little")
    return scalar_bits(value, p.type.name, max(p.type.bits, nbytes * 8))


def scalar_bits(value, ptype_name: str, bits: int) -> int:
    """A Python/numpy scalar as the bit pattern of a `.param` of the given type."""
    if ptype_name.startswith(("f", "bf")) and isinstance(value, (float, np.floating, int,
                                                                  np.integer)):
        if bits == 16:
            raw = np.array([value], dtype=np.float64)
            from semantics.domains.fp_numpy import from_f64, round_to
            fmt = "bf16" if ptype_name.startswith("bf") else "f16"
            return int(from_f64(fmt, round_to(fmt, "rn", raw))[0])
        if bits == 32:
            return struct.unpack("<I", struct.pack("<f", float(value)))[0]
        if bits == 64:
            return struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    if isinstance(value, (float, np.floating)):
        raise KeqError(f"a float value {value!r} was given for an integer parameter")
    return int(value) & ((1 << bits) - 1)


def run_kernel(module: Module | PreparedKernel, kernel: str | None, grid, block,
               args: Sequence | Mapping, *, dynamic_shared: int = 0,
               ctas_per_batch: int | None = None, max_steps: int | None = None,
               detect_races: bool = False, coverage: bool = False,
               shared_fill: int | None = None, choices: Choices | None = None,
               tag: str = "k", read_only: Collection[str] = (),
               views: Mapping[int, View] | None = None,
               log_global: bool = False) -> LaunchResult:
    """Run `kernel` with `args` in .entry parameter order (or a mapping by PTX param name).

    numpy arrays become global buffers (pointer parameters get their addresses); other values
    are scalars. Returns every buffer's final contents under its parameter name.
    `detect_races` reports data races as "race" effects (see `semantics.machine.races`);
    `coverage` records the basic blocks and branch directions that ran; `choices` resolves
    what the PTX ISA leaves open (never-written registers and memory, volatile special
    registers, the order of contending atomics: `semantics.choices`; by default zeros and
    lane order), `tag` names this run in the names of those values (a pair's role);
    `shared_fill`, when given, is the byte every CTA's shared memory holds at launch;
    `read_only` names the buffer parameters the kernel must not write (a write faults).
    `views` (parameter index -> `View`): the parameters that are texture or surface objects;
    each is passed a numpy array (its texels) and the kernel gets its address as the handle.
    `log_global` records the global bytes the launch touches and its accesses before
    `griddepcontrol.wait` (`LaunchResult.global_log`, `semantics.machine.grid_dependency`).
    """
    choices = choices if choices is not None else Choices()
    k = module if isinstance(module, PreparedKernel) else prepare(module, kernel)
    grid3, block3 = _dim3(grid, "grid"), _dim3(block, "block")
    threads = block3[0] * block3[1] * block3[2]
    if threads > 1024:
        raise KeqError(f"block of {threads} threads exceeds the 1024-thread limit")
    params = k.fn.params
    if isinstance(args, Mapping):
        missing = [p.name for p in params if p.name not in args]
        if missing:
            raise KeqError(f"missing argument(s) for {k.name}: {', '.join(missing)}")
        values = [args[p.name] for p in params]
    else:
        if len(args) != len(params):
            raise KeqError(f"{k.name} takes {len(params)} argument(s), {len(args)} given")
        values = list(args)
    # The launch's memory layout (`Choices.layout`), and the kernel as it runs there: each
    # instruction where an address's numeric value may show records a "layout" effect.
    k = for_launch(k, frozenset(p.name for p, v in zip(params, values)
                                if isinstance(v, np.ndarray)), choices.layout)
    layout = GlobalLayout(shifted=choices.layout == "shifted")
    buffers: dict[str, np.ndarray] = {}
    param_values: dict = {}
    allocs = {}
    for p, v in zip(params, values):
        if isinstance(v, np.ndarray):
            a = layout.allocate(p.name, v.nbytes)
            allocs[p.name] = (a, v)
            buffers[p.name] = v
            param_values[p.name] = (a.base, p.size_bytes * 8)
        else:
            param_values[p.name] = (param_bits(v, p),
                                    (p.size_bytes or 0) * 8)
    for name, var in k.global_vars.items():
        a = layout.allocate(f"global:{name}", var.size_bytes or 0)
        param_values[("global-var", name)] = a.base
    add_views(params, param_values, views)
    mem = ConcreteMemory(layout, buffers, read_only=frozenset(read_only))
    races = RaceDetector(threads, choices.target.benign_write_races) if detect_races else None
    port = ConcretePort(mem, races=races)
    if log_global:
        port.global_log = GlobalLog(mem.g.size)
    blocks_seen: set[int] = set()
    branches_seen: set[tuple[int, bool]] = set()
    shared_size = shared_row_size(k, dynamic_shared)
    windows = shared_vars(k, dynamic_shared)
    if ctas_per_batch is None:
        ctas_per_batch = max(1, 65536 // threads)
    all_ctas = [(x, y, z) for z, y, x in itertools.product(range(grid3[2]), range(grid3[1]),
                                                             range(grid3[0]))]
    effects: list[Effect] = []
    printed: dict[int, list[str]] = {}
    for i in range(0, len(all_ctas), ctas_per_batch):
        batch = tuple(all_ctas[i:i + ctas_per_batch])
        geom = Geometry(block3, grid3, batch)
        domain = ConcreteDomain(geom.lanes)
        lanes = np.arange(geom.lanes, dtype=np.int64)
        gtid = _global_tids(geom)
        ctas = gtid[::threads] // threads
        shared0 = shared_fill if shared_fill is not None else choices.memory(
            f"{tag}/shared/", KeySpace.CTA, ctas, np.zeros_like(ctas), shared_size)
        local0 = choices.memory(f"{tag}/local/", KeySpace.THREAD, gtid, gtid % threads,
                                k.local_size)
        mem.new_batch(lanes // threads, len(batch), shared_size, k.local_size, shared0, local0,
                      windows)
        if races is not None:
            races.new_batch()
        ex = Executor(k, domain, port, geom, param_values, max_steps=max_steps,
                      dynamic_shared=dynamic_shared, choices=choices, tag=tag)
        ex.run()
        effects.extend(e for e in ex.effects if e not in effects)
        _render_prints(ex.prints, printed)
        blocks_seen |= ex.blocks_seen
        branches_seen |= ex.branches_seen
    out = {}
    for name, (a, v) in allocs.items():
        raw = mem.buffer(name)
        out[name] = raw.view(v.dtype).reshape(v.shape).copy()
    cov = None
    if coverage:
        branches_total = sum(2 for b in k.cfg.blocks if b.fallthrough is not None
                             and b.branch_target is not None)
        cov = Coverage(len(k.cfg.blocks), frozenset(blocks_seen), branches_total,
                       frozenset(branches_seen))
    writers = None
    if races is not None:
        geom = Geometry(block3, grid3, ())
        writers = {name: _last_writer(races, geom, a.base - mem.base)
                   for name, (a, v) in allocs.items()}
    return LaunchResult(out, tuple(effects), cov, writers,
                        {t: tuple(lines) for t, lines in sorted(printed.items())},
                        port.global_log,
                        {name: (a.base - mem.base, v.nbytes) for name, (a, v) in allocs.items()})


def _render_prints(prints, printed: dict[int, list[str]]) -> None:
    """Append each executing lane's text of every call in `prints` (in the order they ran,
    which is each thread's program order) to its thread's lines."""
    for p in prints:
        reads = p.format.reads()
        for lane in np.flatnonzero(p.mask):
            buffer = {o: int(v[lane]) for (o, _), v in zip(reads, p.args)}
            printed.setdefault(int(p.gtid[lane]), []).append(render(p.format, buffer))


def add_views(params, param_values: dict, views: Mapping[int, View] | None) -> None:
    """Record each texture or surface object under its handle (its buffer's address)."""
    for i, view in (views or {}).items():
        value = param_values.get(params[i].name)
        if value is None or params[i].type.bits != 64:
            raise KeqError(f"parameter {params[i].name} of the texture or surface "
                           f"'{view.name}' is not a 64-bit handle")
        param_values[view_key(value[0])] = view


def _global_tids(geom: Geometry) -> np.ndarray:
    """Each lane's global thread id (CTA-major, x fastest), as the executor numbers them."""
    t = geom.threads_per_cta
    gx, gy, _ = geom.grid
    ctas = np.array(geom.ctas, dtype=np.int64).reshape(-1, 3)
    linear = ctas[:, 0] + ctas[:, 1] * gx + ctas[:, 2] * gx * gy
    return (linear[:, None] * t + np.arange(t)[None, :]).reshape(-1)


def _last_writer(races: RaceDetector, geom: Geometry, start: int) -> Callable[[int], str]:
    """byte offset in the buffer -> who stored it last (read from the race detector's shadow
    of global memory after the launch)."""
    def who(byte: int) -> str:
        sh = races.shadows.get("global")
        if sh is None or start + byte >= sh.w_tid.size or sh.w_tid[start + byte] < 0:
            return ""
        return (f"{thread_name_of(geom, int(sh.w_tid[start + byte]))} at "
                f"{races.locs[int(sh.w_ins[start + byte])]}")
    return who
