"""Run one side of a pair spec on the concrete emulator, by spec param name.

Shared by `keq run` and the fuzzer's emulator backend: values by spec param name in, every
param's final value by spec param name out (buffers updated from the launch).
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from semantics.choices import Choices, Target
from semantics.machine import Effect, LaunchResult, prepare, run_kernel
from semantics.machine.kernel import PreparedKernel
from verifier.printed import PRINTED
from verifier.spec import Side
from verifier.spec.model import DEFAULT_ARCH


class EmulatedSide(NamedTuple):
    """One side run on the emulator: every param's final value by spec name, and the launch
    result (effects, races, coverage)."""
    final: dict[str, Any]
    result: Any


def prepare_side(side: Side) -> PreparedKernel:
    """Prepare a side's kernel once (parsing and preparing dominate small launches). A SASS
    side (`sass`/`cubin` in the spec) is prepared by `semantics.sass.machine.prepare_sass`,
    with the parameter types the spec declares (buffers are 64-bit addresses)."""
    if getattr(side, "isa", "ptx") != "ptx":
        from semantics.ir.types import TYPES
        from semantics.sass.machine import prepare_sass
        types = [TYPES[t] for t in side.param_types] if side.param_types else None
        return prepare_sass(side.module, side.kernel, types)
    return prepare(side.module, side.kernel)


def choices_of(spec) -> Choices:
    """The default resolution of what the ISA leaves open for a pair: zeros and lane order
    on the emulator, narrowed by the target assumptions the spec names (both domains)."""
    return Choices(target=Target.from_names(getattr(spec, "target_assumptions", ()),
                                            real_floats=spec.mode == "real",
                                            allow=getattr(spec, "allow", ()),
                                            arch=getattr(spec, "arch", "") or DEFAULT_ARCH))


def run_side(side: Side, values: Mapping[str, Any], scalars: Mapping[str, Any], *,
             prepared: PreparedKernel | None = None, **run_kw) -> EmulatedSide:
    """Launch `side` with `values` (every param by spec name; buffers are not modified).

    Returns the `EmulatedSide`: every param's final value by spec name, and the
    `LaunchResult`. `run_kw` goes to `run_kernel` (detect_races=, coverage=, ...). A side
    of several launches runs them in order, each on the buffers the one before left; the
    result holds all their effects and what they printed (in launch order), and neither the
    last writers nor coverage (one kernel's notions)."""
    if side.then:
        return _run_launches(side, values, scalars, prepared, run_kw)
    grid, block = side.launch(scalars)
    args = side.kernel_args(values)
    k = prepared if prepared is not None else prepare_side(side)
    result = run_kernel(k, None, grid, block, args, dynamic_shared=side.dynamic_shared,
                        read_only=side.read_only_params(k.fn.params),
                        views=side.views_at(scalars) if side.views else None, **run_kw)
    kparams = k.fn.params
    final: dict[str, Any] = dict(values)
    for name, kp in zip(side.arg_names, kparams):
        if kp.name in result.buffers:
            final[name] = result.buffers[kp.name]
    if result.printed:
        final[PRINTED] = dict(result.printed)
    return EmulatedSide(final, result)


_PREPARED: dict[tuple, tuple[Any, PreparedKernel]] = {}


def _prepared(side: Side) -> PreparedKernel:
    """A later launch's kernel, prepared once per parsed module (fuzzing runs a side
    thousands of times; the module is kept with it, so its id is not reused)."""
    key = (side.kernel, id(side.module))
    hit = _PREPARED.get(key)
    if hit is None:
        hit = _PREPARED[key] = (side.module, prepare_side(side))
    return hit[1]


def _run_launches(side: Side, values, scalars, prepared, run_kw) -> EmulatedSide:
    final: dict[str, Any] = dict(values)
    effects: list = []
    printed: dict[int, tuple[str, ...]] = {}
    logged = bool(run_kw.get("detect_races"))
    # The launches still possibly running when the next one starts: (side, its global bytes
    # by spec name) of the last stream-ordered launch and every programmatic one after it (a
    # programmatic launch may trigger its dependent before the launch it waits for ends)
    running: list[tuple] = []
    for j, launch in enumerate(side.launches):
        k = prepared if j == 0 and prepared is not None else _prepared(launch)
        final, result = run_side(launch, final, scalars, prepared=k,
                                 **(dict(run_kw, log_global=True) if logged else run_kw))
        effects.extend(e for e in result.effects if e not in effects)
        if logged:
            touched = _by_spec_name(launch, k, result)
            if launch.programmatic:
                for before in running:
                    effects.extend(_early_races(before, launch, touched, result.global_log))
            else:
                running = []
            running.append((launch, touched))
        for t, lines in final.pop(PRINTED, {}).items():
            printed[t] = printed.get(t, ()) + lines
    if printed:
        final[PRINTED] = printed
    return EmulatedSide(final, LaunchResult({}, tuple(effects), None, None,
                                            dict(sorted(printed.items()))))


def _by_spec_name(launch: Side, k: PreparedKernel, result) -> dict[str, tuple]:
    """Per buffer (spec name): its global bytes' offset in the launch's memory, and which
    of them the launch read and wrote."""
    log, out = result.global_log, {}
    for name, kp in zip(launch.arg_names, k.fn.params):
        if kp.name in result.global_ranges:
            off, n = result.global_ranges[kp.name]
            out[name] = (off, n, log.read[off:off + n].copy(), log.written[off:off + n].copy())
    return out


def _early_races(before: tuple, launch: Side, touched: dict, log) -> list:
    """The races of a programmatic launch's accesses before `griddepcontrol.wait` with an
    earlier launch that may still run (`semantics.machine.grid_dependency`): the first per
    access site."""
    prev, prev_touched = before
    out = []
    for e in log.early:
        for name, (off, n, _, _) in touched.items():
            if name not in prev_touched:
                continue
            mine = e.offsets[(e.offsets >= off) & (e.offsets < off + n)] - off
            _, _, read, written = prev_touched[name]
            other = written if e.kind == "r" else (read | written)
            hit = mine[other[mine]] if mine.size else mine
            if hit.size:
                what = {"r": "read", "w": "write", "a": "atomic"}[e.kind]
                out.append(Effect("race", f"data race on '{name}' (byte {int(hit[0])}): "
                                  f"{what} by {e.thread} at {e.loc} before its "
                                  f"griddepcontrol.wait, and {prev.kernel}'s "
                                  f"{'write' if e.kind == 'r' else 'access'} in an earlier "
                                  f"launch that may still run (programmatic dependent launch: "
                                  f"only the wait orders them)", e.loc))
                break
    return out
