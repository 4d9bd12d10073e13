"""The effects stage: what the symbolic runs recorded besides their values (DESIGN.md,
"Semantics written once": side channels, as in Alive2), and what each kind means for the
verdict. One place, used by the one-shape check and the symbolic launch alike.

- `approximation` (an `*.approx` function, uninterpreted symbolically): a stated assumption.
- `uninitialized` (a register or memory read before any write) and `nondeterministic` (a
  volatile special register, the order of contending atomics): nothing to decide here. The
  values the ISA leaves open are unspecified constants in the terms (`semantics.choices`),
  so the outputs stage proves the claim for every one of them or finds a model that names
  them, which the emulator replays.
- `unspecified` (the NaN an f32 operation returns, ...): uninterpreted functions of the
  inputs in the terms; a refutation must hold for every one of them.
- `undefined`: the result has no defined value. It stops the check (Inconclusive, named),
  unless it is refuted on its own (`semantics.machine.executor.UndefinedBehavior`).
- `printf` (a call of `vprintf` keq cannot read: a format that is not a module string, `%s`,
  `%p`, `%n`; `semantics.machine.system_calls`): what it prints cannot be compared. It stops
  the check (Inconclusive, named) unless the claim says `allow = ["printf-ignored"]`, which
  the claim prints. The calls keq reads are compared as outputs (`verifier.printed`).
- `progress`: a spin wait in global memory waits for another CTA's store
  (`semantics.machine.symbolic_spins`); the PTX ISA promises CTAs no progress with respect to
  one another, so the claim assumes that the CTA it waits for runs (a stated assumption).
- `layout`: the numeric value of an address may reach an output, a stored value or a branch
  (`semantics.machine.layout_taint`). The symbolic domain knows one memory layout, the PTX
  ISA none, so it stops the check (Inconclusive, named); testing under another layout
  (`verifier.testing`) refutes the claim where that shows a difference.
- `fragment`: an instruction read an element of a `wmma` fragment, or a `wmma` got registers
  that are not one whole fragment (`semantics.machine.fragments`). The PTX ISA leaves the
  fragment layout unspecified and keq models one, so it stops the check (Inconclusive, named),
  and an emulator run under keq's layout is no evidence (`verifier.testing.proves_nothing`).
"""

from __future__ import annotations

MODELLED = frozenset({"uninitialized", "nondeterministic"})
# Values the hardware fixes as functions of an instruction's inputs (the NaN an f32 add
# returns): modelled too (uninterpreted functions), but evidence only when it holds for every
# such function (`verifier.counterexample`).
FIXED_FUNCTIONS = frozenset({"unspecified"})


def judge_effects(ctx, launches: dict) -> str | None:
    """Record the approximations `launches` (role -> SymbolicLaunch) rest on as assumptions;
    the reason the claim cannot be decided, or None."""
    for role, launch in launches.items():
        for e in launch.effects:
            if e.kind == "approximation":
                ctx.assumptions.add(f"{e.what} is the same function in both kernels "
                                    f"(uninterpreted; {e.loc})")
            elif e.kind == "progress":
                ctx.assumptions.add(e.what)
            elif e.kind == "printf":
                if "printf-ignored" not in ctx.spec.allow:
                    return (f"the {role} calls {e.what} at {e.loc}: what it prints is not "
                            f"compared (allow = [\"printf-ignored\"] leaves it out of the "
                            f"claim)")
            elif e.kind == "fragment":
                return (f"{role}: {e.what} at {e.loc}; the PTX ISA leaves the layout of wmma "
                        f"fragments unspecified")
            elif e.kind == "layout":
                return (f"{role}: the numeric value of an address reaches {e.what} at "
                        f"{e.loc}; memory layout is unspecified")
            elif e.kind not in MODELLED | FIXED_FUNCTIONS:
                return f"{role}: {e.kind}: {e.what} at {e.loc}"
    return None


__all__ = ["judge_effects", "MODELLED", "FIXED_FUNCTIONS"]
