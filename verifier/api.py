"""keq's Python API: load a kernel pair, verify its claim, read a typed verdict. The command
line (`keq verify`, `keq tv`), the certificate prover, the pytest plugin and bench/ all go
through here, so a verdict from Python is the one `keq verify` prints.

    from verifier.api import load_pair, verify, VerdictKind

    pair = load_pair("kernels/saxpy/saxpy.toml")        # a pair spec (located errors)
    v = verify(pair, timeout_s=30, fixed={"n": 64})      # keyword options, as on the CLI
    v.kind is VerdictKind.EQUIVALENT                     # or NOT_EQUIVALENT, INCONCLUSIVE
    v.reasons, v.assumptions, v.coverage, v.stages       # why, under what, how covered
    v.counterexample                                     # NOT_EQUIVALENT: replayed inputs
    print("\\n".join(verdict_lines(v)))                   # the text `keq verify` prints
    verdict_json(v, spec=pair)                           # what `keq verify --json` prints

`verify`'s options: `fixed` (scalars pinned, as `--set`), `timeout_s` (per solver call),
`unroll`, `max_shapes`, `seed`, `solvers`, `dump_smt`, `trials` (random tests before the
solvers), `shapes` ("auto", "symbolic", "split", "enumerate"), `jobs` (processes), `progress` (an
object with `stage(Stage)` and/or a callable `(done, total, shape)`). Wrap a call in
`time_limit(seconds)` to bound the whole run (`TimeLimitReached`; the CLI then answers
Inconclusive). Bad specs raise `semantics.errors.KeqError` subclasses with a location;
`InternalError` is a keq bug.
"""

from __future__ import annotations

from pathlib import Path

from verifier.claim import claim_text
from verifier.counterexample import writers
from verifier.equiv import SHAPE_MODES, verify
from verifier.report import choices_line, verdict_json, verdict_lines
from verifier.spec import PairSpec, load_spec
from verifier.time_limit import TimeLimitReached, time_limit
from verifier.verdict import (EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, Counterexample,
                              InternalError, Stage, StageStatus, Verdict, VerdictKind)


def load_pair(path: str | Path) -> PairSpec:
    """The pair spec at `path` (TOML), checked; errors carry file:line:col."""
    return load_spec(path)


__all__ = ["EQUIVALENT", "INCONCLUSIVE", "NOT_EQUIVALENT", "SHAPE_MODES", "Counterexample",
           "InternalError", "PairSpec", "Stage", "StageStatus", "TimeLimitReached", "Verdict",
           "VerdictKind", "choices_line", "claim_text", "load_pair", "time_limit",
           "verdict_json", "verdict_lines", "verify", "writers"]
