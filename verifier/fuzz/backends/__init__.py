"""Where a fuzzing example runs. A backend prepares both sides of a spec once and then runs
one side on one example at a time:

    backend = get_backend("emulator")            # or "pycuda"
    runners = backend.prepare(spec)              # {"reference": SideRunner, "candidate": ...}
    run = runners["candidate"].run(values, scalars)   # -> SideRun

`SideRun.final` holds every param's final value by spec name (None when the kernel faulted),
`fault` the fault (a KeqError: memory fault, barrier divergence, CUDA launch failure),
`effects` what the run recorded (approximations, races, ...), `coverage` the basic blocks and
branch directions that ran (None where the backend cannot see them). A runner with
`supports_choices = True` (the emulator's) also takes `run(values, scalars, choices)`: the
`semantics.choices.Choices` that resolve what the PTX ISA leaves open; elsewhere the hardware
makes them and the runner calls `run(values, scalars)`.
"""

from __future__ import annotations

from semantics.errors import KeqError
from verifier.fuzz.backends.base import Backend, SideRun, SideRunner

BACKENDS = ("emulator", "pycuda")


def get_backend(name: str, **kw) -> Backend:
    if name == "emulator":
        from verifier.fuzz.backends.emulator import EmulatorBackend
        return EmulatorBackend(**kw)
    if name == "pycuda":
        from verifier.fuzz.backends.pycuda import PycudaBackend
        return PycudaBackend(**kw)
    raise KeqError(f"unknown backend {name!r} (backends: {', '.join(BACKENDS)})")


__all__ = ["BACKENDS", "Backend", "SideRun", "SideRunner", "get_backend"]
