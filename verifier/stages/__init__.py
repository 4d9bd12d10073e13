"""The stages of a verification, in order (docs/architecture.md): symbolic execution, bounds,
effects, races, outputs. Each is an object with `check(run, execution)`
(`verifier.stages.base`); both coverage of one launch shape and the symbolic maximal launch run
this one sequence. A new stage is a module here and an entry in `PIPELINE`."""

from __future__ import annotations

from verifier.stages.base import Execution, Maximal, Next, Stage, Undecided, run_stages
from verifier.stages.bounds import Bounds
from verifier.stages.effects import Effects
from verifier.stages.execute import Execute
from verifier.stages.outputs import Outputs
from verifier.stages.races import Races

PIPELINE: tuple[Stage, ...] = (Execute(), Bounds(), Effects(), Races(), Outputs())

__all__ = ["Execution", "Maximal", "Next", "PIPELINE", "Stage", "Undecided", "run_stages"]
