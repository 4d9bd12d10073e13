"""The effects stage: what the symbolic runs recorded besides their values (DESIGN.md,
"Semantics written once": side channels, as in Alive2), and what each kind means for the
verdict. One place, used by the one-shape check and the symbolic launch alike.

- `approximation` (an `*.approx` function, uninterpreted symbolically): a stated assumption.
- `uninitialized` (a register or memory read before any write) and `nondeterministic` (a
  volatile special register, the order of contending atomics): nothing to decide here. The
  values the ISA leaves open are unspecified constants in the terms (`semantics.choices`),
  so the outputs stage proves the claim for every one of them or finds a model that names
  them, which the emulator replays.
- `undefined`: the result has no defined value. It stops the check (Inconclusive, named),
  unless it is refuted on its own (`semantics.machine.executor.UndefinedBehavior`).
"""

from __future__ import annotations

MODELLED = frozenset({"uninitialized", "nondeterministic"})


def judge_effects(ctx, launches: dict) -> str | None:
    """Record the approximations `launches` (role -> SymbolicLaunch) rest on as assumptions;
    the reason the claim cannot be decided, or None."""
    for role, launch in launches.items():
        for e in launch.effects:
            if e.kind == "approximation":
                ctx.assumptions.add(f"{e.what} is the same function in both kernels "
                                    f"(uninterpreted; {e.loc})")
            elif e.kind not in MODELLED:
                return f"{role}: {e.kind}: {e.what} at {e.loc}"
    return None


__all__ = ["judge_effects", "MODELLED"]
