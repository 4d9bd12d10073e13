"""`--max-steps`, shared by the commands that run kernels on the emulator (verify, fuzz,
run); `verifier.cli.main` applies it to the whole command (`step_budget_of`)."""

from __future__ import annotations

import argparse

from semantics.machine.termination import DEFAULT_MAX_STEPS


def add_step_budget(p: argparse.ArgumentParser) -> None:
    """`--max-steps`: the emulator's step budget per thread (`semantics.machine.termination`)."""
    p.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, metavar="N",
                   help="instructions one thread may execute on the emulator before its loop "
                        f"is named as not finishing (default {DEFAULT_MAX_STEPS:,})")


__all__ = ["add_step_budget"]
