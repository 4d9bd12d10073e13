"""`keq verify SPEC.toml`: prove a kernel pair equivalent, or show an input that breaks it."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from semantics.errors import KeqError
from verifier.api import (EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, SHAPE_MODES, Verdict,
                          claim_text, verdict_json, verdict_lines, verify, writers)
from verifier.inputs import SavedChoices, parse_set, save_npz
from verifier.cli.cluster_options import CLUSTER_HELP, executor_of
from verifier.parallel import default_jobs
from verifier.solvers import DEFAULT_SOLVERS
from verifier.spec import PairSpec, load_spec
from verifier.time_limit import DEFAULT_TIME_LIMIT_S, TimeLimitReached, time_limit
from verifier.cli.step_budget import add_step_budget

EXIT = {EQUIVALENT: 0, NOT_EQUIVALENT: 1, INCONCLUSIVE: 2}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="prove a kernel pair equivalent or find an input that breaks it",
        description="Check the claim of a pair spec: for every allowed scalar value and every "
                    "content of the buffers, both kernels leave the same out/inout contents, "
                    "stay in bounds and are race free. Integer scalars that shape the launch "
                    "(grid, lengths, assume) are covered by one symbolic maximal launch "
                    "(every allowed shape at once), or enumerated when there are few "
                    "(--shapes, --max-shapes); all other scalars and all buffer contents are "
                    "symbolic. A difference is reported only after it replays on the "
                    "emulator.",
        epilog="exit codes: 0 equivalent, 1 not equivalent, 2 inconclusive (never a pass: "
               "the reason is printed), 3 bad spec, bad input or usage, 4 internal error (a "
               "bug in keq, never a verdict; KEQ_DEBUG=1 prints its traceback)")
    p.add_argument("spec", metavar="SPEC.toml")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="sets",
                   help="fix a scalar param (repeatable): the claim is restricted to it")
    p.add_argument("--mode", choices=("bitexact", "real"),
                   help="override the spec's equivalence mode")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="solver timeout per query in seconds (default 60)")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT_S, metavar="S",
                   help="wall-clock limit of the whole run in seconds: past it the verdict "
                        "is INCONCLUSIVE, naming what was running (default "
                        f"{DEFAULT_TIME_LIMIT_S:.0f}; 0: none)")
    add_step_budget(p)
    p.add_argument("--unroll", type=int, default=64, metavar="N",
                   help="iterations of a data-dependent loop before giving up (default 64)")
    p.add_argument("--max-shapes", type=int, default=16, metavar="N",
                   help="launch shapes (scalar combinations) to enumerate at most (default "
                        "16); past it, when the symbolic launch cannot decide, the smallest "
                        "shape and one that testing flagged are checked on their own (a "
                        "difference there refutes the claim; nothing else is a pass)")
    p.add_argument("--shapes", choices=SHAPE_MODES, default="auto",
                   help="how launch shapes are covered: symbolic (one maximal launch), "
                        "split (one maximal launch per value of the scalars outside the grid, "
                        "the grid's symbolic), enumerate (each on its own), auto (symbolic "
                        "unless there are at most 4 shapes; then split where the shapes are "
                        "too many to enumerate, else enumeration; default)")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                   help="share independent checks among N processes: enumerated launch "
                        "shapes, access bounds and output comparisons of a symbolic launch "
                        "(default 0: one per core; 1: this process only); the verdict is "
                        "the same with any N")
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help=CLUSTER_HELP + "; the enumerated launch shapes go to the cluster, "
                        "the checks of one symbolic launch stay in local processes")
    p.add_argument("--solver", action="append", dest="solvers", metavar="NAME",
                   choices=("z3", "bitwuzla", "cvc5", "sparse"),
                   help="use this solver (repeatable; default: race z3, a search among "
                        "sparse inputs (bitwuzla, floating point only: finds differences, "
                        "never proves), bitwuzla and cvc5, whichever are installed)")
    p.add_argument("--dump-smt", metavar="DIR",
                   help="write every solver obligation as SMT-LIB2 (<sha256>.smt2) to DIR")
    p.add_argument("--trials", type=int, default=8, metavar="N",
                   help="random input sets to test per launch shape before solving "
                        "(default 8), after testing three shapes on the emulator before "
                        "the symbolic launch; 0: no testing, solve only")
    p.add_argument("--seed", type=int, default=0, help="seed for replay inputs (default 0)")
    p.add_argument("--save-counterexample", metavar="F.npz",
                   help="write a counterexample's inputs and both outputs (keq run format)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.set_defaults(run=run)


class _Progress:
    """One status line on a terminal (stderr, when `show`): the launch shape being checked
    and, during a long symbolic launch, each stage as it finishes. It always keeps what is
    running (`now`), which a time limit names."""

    def __init__(self, show: bool = True) -> None:
        self.what = ""
        self.now = "preparing the claim"
        self.show = show

    def __call__(self, i: int, total: int, env: dict) -> None:
        if any(v == "symbolic" for v in env.values()):
            self.what = f"checking every launch shape at once ({', '.join(sorted(env))} symbolic)"
        else:
            shape = ", ".join(f"{k}={v}" for k, v in sorted(env.items()))
            self.what = f"checking launch shape {i + 1}/{total} ({shape})"
        self._show(self.what)

    def stage(self, s) -> None:
        self._show(f"{self.what or 'checking'}: {s.name} {s.status} ({s.seconds:.1f} s)")
        self.now = f"{self.what or 'checking'}, after the stage '{s.name}'"

    def _show(self, line: str) -> None:
        self.now = line
        if self.show:
            print(f"\r  {line}\033[K", end="", file=sys.stderr, flush=True)


def _limited(spec: PairSpec, fixed: dict, seconds: float, progress: _Progress) -> Verdict:
    """The verdict when the whole-run time limit passed: Inconclusive, naming what ran."""
    return Verdict(INCONCLUSIVE, claim_text(spec, fixed),
                   reasons=(f"the whole-run time limit of {seconds:g} s (--time-limit) was "
                            f"reached while {progress.now}",),
                   seconds=seconds)


def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    if args.mode:
        spec = replace(spec, mode=args.mode)
    fixed = dict(parse_set(spec, item) for item in args.sets)
    if args.jobs < 0:
        raise KeqError(f"--jobs {args.jobs}: give 0 (one process per core) or more")
    if args.time_limit < 0:
        raise KeqError(f"--time-limit {args.time_limit}: give 0 (no limit) or more seconds")
    progress = _Progress(show=not args.json and sys.stderr.isatty())
    executor = executor_of(args) if args.cluster else None
    try:
        with time_limit(args.time_limit):
            v = verify(spec, fixed=fixed, timeout_s=args.timeout, unroll=args.unroll,
                       max_shapes=args.max_shapes, seed=args.seed,
                       solvers=tuple(args.solvers) if args.solvers else DEFAULT_SOLVERS,
                       dump_smt=args.dump_smt, trials=args.trials, shapes=args.shapes,
                       jobs=args.jobs if args.jobs > 0 else default_jobs(),
                       progress=progress, executor=executor)
    except TimeLimitReached:
        v = _limited(spec, fixed, args.time_limit, progress)
    finally:
        if executor is not None:
            executor.close()
    if not args.json and sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr)
    if args.save_counterexample and v.counterexample is not None:
        cex = v.counterexample
        save_npz(args.save_counterexample, spec, cex.inputs,
                 {"reference": cex.reference, "candidate": cex.candidate}
                 if cex.reference else None,
                 choices=SavedChoices.of(cex.choices, cex.shared_fill))
    written = {} if v.counterexample is None or not v.counterexample.differences else \
        writers(spec, v.counterexample)
    if args.json:
        print(json.dumps(verdict_json(v, written, spec), indent=2))
    else:
        print("\n".join(verdict_lines(v, written)))
        if args.save_counterexample and v.counterexample is not None:
            cex = v.counterexample
            saved = "" if SavedChoices.of(cex.choices, cex.shared_fill).is_default else \
                "; it carries the choices above, which the replay applies"
            print(f"wrote    {args.save_counterexample}  (replay: keq run {args.spec} "
                  f"--side candidate --inputs {args.save_counterexample}{saved})")
    return EXIT[v.kind]
