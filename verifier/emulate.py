"""Run one side of a pair spec on the concrete emulator, by spec param name.

Shared by `keq run` and the fuzzer's emulator backend: values by spec param name in, every
param's final value by spec param name out (buffers updated from the launch).
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from semantics.choices import Choices, Target
from semantics.machine import prepare, run_kernel
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
    `LaunchResult`. `run_kw` goes to `run_kernel` (detect_races=, coverage=, ...)."""
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
