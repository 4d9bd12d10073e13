"""Shape probes: when no strategy decides the whole claim, a few small shapes checked on
their own can still refute it (sound: each is in the claim). The smallest allowed shape comes
first (small scopes find most bugs, and small shapes are cheap to check), then the smallest
shape where testing saw real-mode outputs far apart (`run.suspects`)."""

from __future__ import annotations

import time

from verifier.counterexample import shape_text
from verifier.coverage.base import Covered, Scope
from verifier.coverage.one_shape import check_shape
from verifier.run import Run
from verifier.verdict import INCONCLUSIVE, NOT_EQUIVALENT, Verdict

PROBES = 2            # shapes checked on their own when the whole claim stays undecided


def probe_shapes(run: Run, scope: Scope) -> list[dict]:
    """The shapes to probe, at most PROBES, none already checked."""
    sp = scope.plan
    if sp is None or not sp.shapes:
        return []
    picks = [dict(scope.fixed, **sp.shapes[0])]
    picks += sorted(run.suspects, key=lambda e: (sum(e.values()), sorted(e.items())))
    out: list[dict] = []
    for env in picks:
        if env not in out and env not in scope.checked and len(out) < PROBES:
            out.append(env)
    return out


def probe(run: Run, envs: list[dict], seed: int) -> tuple[Verdict | None, list[dict]]:
    """Check each shape in `envs` on its own; the first that is not equivalent is the verdict.
    Returns it (or None) and the shapes proved on their own."""
    probed: list[dict] = []
    for env in envs:
        t0 = time.perf_counter()
        probed.append(env)
        v = check_shape(run, env, seed)
        status = "ok" if v is None else ("failed" if v.kind == NOT_EQUIVALENT else "inconclusive")
        run.stage("shape probe", status, t0, f"{shape_text(env)} on its own")
        if v is not None and v.kind == NOT_EQUIVALENT:
            return v, probed
        if v is not None:
            probed.pop()      # undecided there: it shows nothing
    return None, probed


def when_undecided(run: Run, scope: Scope, reasons: tuple[str, ...], count: int = 0,
                   coverage: str = "") -> Covered:
    """The whole claim is undecided: probe; a refutation there is the verdict, else
    Inconclusive with `reasons` and the shapes proved on their own."""
    v, probed = probe(run, probe_shapes(run, scope), scope.seed)
    if v is not None:
        return Covered(v, 1, f"{shape_text(probed[-1])} checked on its own (the whole claim "
                             f"is undecided: {reasons[0]})")
    probed = scope.early + probed
    if probed:
        reasons += ("checked on their own, these shapes are equivalent: "
                    + ", ".join(shape_text(e) for e in probed),)
    return Covered(Verdict(INCONCLUSIVE, "", reasons), count, coverage)


__all__ = ["PROBES", "probe", "probe_shapes", "when_undecided"]
