"""A side of several launches, run symbolically (`[[reference.then]]` in a pair spec).

A reference is often several kernels in order (mean, then variance, then normalize; QK^T,
softmax, PV), intermediate results in buffers the spec declares `scratch`. Launches on one
stream are ordered: each starts after the one before has finished and its writes are
visible (CUDA C++ Programming Guide, "Streams"). So the side runs its launches one after
another, each on the buffer contents the one before left; data races and bounds are each
launch's own (a launch boundary orders everything across it); what the side prints is the
launches' output in order; the claim compares the buffers the last launch leaves.

The concrete counterpart is `verifier.emulate.run_side`. A side of several launches is
checked one launch shape at a time (the symbolic maximal launch is one kernel's).
"""

from __future__ import annotations

from typing import Any

from semantics.machine.kernel import PreparedKernel
from semantics.machine.symbolic_run import SymBuffer, SymbolicLaunch, run_symbolic
from verifier.emulate import prepare_side
from verifier.spec import Side


def _prepared(run, role: str, j: int, side: Side) -> PreparedKernel:
    """Launch `j` of side `role`'s kernel, prepared once per run (launch 0 is
    `run.kernel(role)`)."""
    if j == 0:
        return run.kernel(role)
    key = f"{role}#{j}"
    k = run.prepared.get(key)
    if k is None:
        k = run.prepared[key] = prepare_side(side)
    return k


def run_launches(run, role: str, env: dict, values: dict[str, Any]) -> SymbolicLaunch:
    """Every launch of side `role` at the launch shape `env`, on the symbolic inputs
    `values` (by spec name); the result's `buffers` are keyed by spec name."""
    side = run.spec.side(role)
    values = dict(values)
    effects: list = []
    obligations: list = []
    races: list = []
    sums: dict = {}
    prints: list = []
    control = False
    for j, launch in enumerate(side.launches):
        k = _prepared(run, role, j, launch)
        grid, block = launch.launch(env)
        out = run_symbolic(k, grid, block, launch.kernel_args(values),
                           dynamic_shared=launch.dynamic_shared, unroll=run.unroll,
                           choices=run.choices, tag=role,
                           read_only=launch.read_only_params(k.fn.params),
                           views=launch.views_at(env) if launch.views else None)
        for name, kp in zip(launch.arg_names, k.fn.params):
            if kp.name in out.buffers:
                values[name] = SymBuffer(values[name].elem_bits, tuple(out.buffers[kp.name]))
        effects.extend(e for e in out.effects if e not in effects)
        obligations.extend(out.obligations)
        races.extend(out.races)
        sums.update(out.sums)
        prints.extend(out.prints)
        control |= out.symbolic_control
    buffers = {n: list(v.values) for n, v in values.items() if isinstance(v, SymBuffer)}
    return SymbolicLaunch(buffers, tuple(effects), control, tuple(obligations), tuple(races),
                          (), sums, tuple(prints))


__all__ = ["run_launches"]
