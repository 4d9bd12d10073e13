"""The portfolio: race (or run all of) the available solvers on an obligation, in processes.

Members (`DEFAULT_SOLVERS`, in the order they start, at most one per core at a time): z3;
`sparse`, a counterexample search with bitwuzla among the inputs whose buffers are zero past
their first three elements (floating-point obligations only, a few seconds at most: it
answers sat or unknown, never unsat, so it can shorten a refutation and never decides a
proof, `backends.SparseBackend`); bitwuzla; cvc5.

Each solver runs in its own forked process, so a solver that ignores its own time limit is
killed (at the timeout plus a grace period) and reported as `timeout`. In `race` mode the first
definitive answer (sat/unsat) wins and the others are killed; in `all` mode every solver runs
to its answer or timeout. Two definitive answers that differ raise `SolverDisagreement`, never
a verdict.

Models. The winner's model is used as it comes: z3's, bitwuzla's or cvc5's values for the
obligation's declared bit-vector / Boolean constants. With `validate=True` (the default) it is
then checked in this process by z3: the constants are fixed to the model's values in the
original term (fp.to_ieee_bv included) and z3 decides the rest (only uninterpreted functions
and the unspecified NaN bits remain free), under `validate_timeout_s`. A model that z3 refutes
raises `SolverDisagreement`; one z3 cannot decide in time is kept, and `detail` says so.

Cache. Keyed by the sha256 of the canonical text; only definitive answers are stored (a longer
timeout may settle an `unknown`). In memory, and as `<sha256>.json` under a directory if given.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from pathlib import Path

import z3

from verifier.solvers.backends import DEFINITIVE, Result, get_backend
from verifier.solvers.canonical import canonical
from verifier.solvers.smtlib import Obligation

# In this order: with two cores, z3 and the sparse search (a few seconds at most, and only
# for floating-point obligations with many input elements) start first, then bitwuzla.
DEFAULT_SOLVERS = ("z3", "sparse", "bitwuzla", "cvc5")
KILL_GRACE_S = 2.0


class InternalSolverError(RuntimeError):
    """A bug in keq or in a solver; never a verdict."""


class SolverDisagreement(InternalSolverError):
    pass


@dataclass
class Budget:
    """A total time budget shared by many `solve` calls."""

    total_s: float
    start: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        return max(0.0, self.total_s - (time.monotonic() - self.start))


class Cache:
    """sha256 of the canonical text (`verifier.solvers.canonical`: the same question up to a
    renaming of its symbols) -> {answer, solver, version, model by canonical names,
    seconds}."""

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        self.memory: dict[str, dict] = {}
        self.directory = Path(directory) if directory is not None else None
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)

    def get(self, sha: str) -> dict | None:
        hit = self.memory.get(sha)
        if hit is None and self.directory is not None:
            path = self.directory / f"{sha}.json"
            if path.exists():
                hit = self.memory[sha] = json.loads(path.read_text())
        return hit

    def put(self, sha: str, result: Result) -> None:
        if result.answer not in DEFINITIVE:
            return
        entry = {"answer": result.answer, "solver": result.solver, "version": result.version,
                 "model": result.model, "seconds": round(result.seconds, 6)}
        self.memory[sha] = entry
        if self.directory is not None:
            path = self.directory / f"{sha}.json"
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(entry, sort_keys=True, indent=1) + "\n")
            tmp.replace(path)


@dataclass(frozen=True)
class SolveResult:
    answer: str                                   # sat | unsat | unknown | timeout | error
    model: dict[str, int | bool] | None
    solver: str                                   # the winner ("" when none)
    version: str
    seconds: float                                # wall time of this call
    sha256: str
    name: str
    results: tuple[Result, ...] = ()              # every solver that answered
    skipped: tuple[tuple[str, str], ...] = ()     # (solver, why) not run
    cached: bool = False
    detail: str = ""

    @property
    def definitive(self) -> bool:
        return self.answer in DEFINITIVE

    def to_json(self) -> dict:
        """Deterministic-order record for certificates (per solver answers)."""
        return {"name": self.name, "sha256": self.sha256, "answer": self.answer,
                "solver": self.solver, "version": self.version,
                "answers": {r.solver: r.answer for r in self.results}}


def dump(obligation: Obligation, directory: str | os.PathLike) -> Path:
    """Write the obligation's canonical text as `<sha256>.smt2` under `directory`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{obligation.sha256}.smt2"
    path.write_text(obligation.text)
    return path


def _worker(conn, solver: str, obligation: Obligation, timeout_s: float) -> None:
    try:
        r = get_backend(solver).check(obligation, timeout_s)
    except BaseException as e:          # the backend already catches; belt and braces
        r = Result("error", None, 0.0, solver, "?", f"{type(e).__name__}: {e}")
    try:
        conn.send(r)
    finally:
        conn.close()


def _fork_context():
    try:
        return mp.get_context("fork")
    except ValueError:
        return None


def _run_parallel(obligation, solvers, timeout_s, race, jobs) -> list[Result]:
    ctx = _fork_context()
    if ctx is None:      # no fork (not Linux): run one after another, in process
        out = []
        for s in solvers:
            out.append(get_backend(s).check(obligation, timeout_s))
            if race and out[-1].definitive:
                break
        return out
    t0 = time.perf_counter()
    queue = list(solvers)
    procs: dict = {}                    # every process started: conn -> (solver, process, end)
    pending: dict = {}                  # those not answered yet
    results: list[Result] = []

    def start(s):
        recv, send = ctx.Pipe(duplex=False)
        # Fork: the child inherits the obligation (z3 terms cannot be pickled).
        p = ctx.Process(target=_worker, args=(send, s, obligation, timeout_s), daemon=True)
        p.start()
        send.close()
        procs[recv] = pending[recv] = (s, p, time.monotonic() + timeout_s + KILL_GRACE_S)

    def receive(conn):
        s, p, _ = pending.pop(conn)
        try:
            results.append(conn.recv())
        except EOFError:
            results.append(Result("error", None, time.perf_counter() - t0, s,
                                  get_backend(s).version, f"solver process died ({p.exitcode})"))

    def overdue(conn):
        s, p, _ = pending.pop(conn)
        p.kill()
        results.append(Result("timeout", None, time.perf_counter() - t0, s,
                              get_backend(s).version, "killed after the time limit"))

    try:
        while queue or pending:
            while queue and len(pending) < jobs:
                start(queue.pop(0))
            now = time.monotonic()
            for conn in [c for c, (_, _, end) in pending.items() if end <= now]:
                overdue(conn)
            if not pending:
                continue
            left = min(end for _, _, end in pending.values()) - time.monotonic()
            for conn in wait(list(pending), timeout=max(0.0, left)):
                receive(conn)
            if race and any(r.definitive for r in results):
                # Answers that are already there (to catch a disagreement), no waiting.
                for conn in wait(list(pending), timeout=0):
                    receive(conn)
                break
    finally:
        for conn, (s, p, _) in procs.items():
            if p.is_alive():
                p.kill()
            p.join()
            conn.close()
    return results


def validate_model(obligation: Obligation, model: dict[str, int | bool],
                   timeout_s: float = 30.0) -> str:
    """sat: the model satisfies phi (with z3 choosing UFs and NaN bits); unsat: it does not;
    unknown: z3 could not tell in time."""
    subs = []
    for d in obligation.decls:
        if d.domain or d.name not in model:
            continue
        v = model[d.name]
        if d.width is not None:
            subs.append((z3.BitVec(d.name, d.width), z3.BitVecVal(int(v), d.width)))
        elif d.range == "Bool":
            subs.append((z3.Bool(d.name), z3.BoolVal(bool(v))))
    phi = z3.substitute(obligation.phi, *subs) if subs else obligation.phi
    phi = z3.simplify(phi)
    if z3.is_true(phi):
        return "sat"
    if z3.is_false(phi):
        return "unsat"
    s = z3.Solver()
    s.set("timeout", max(1, int(timeout_s * 1000)))
    s.add(phi)
    return str(s.check())


def solve(obligation: Obligation | z3.BoolRef, solvers=DEFAULT_SOLVERS, timeout_s: float = 60.0,
          mode: str = "race", *, budget: Budget | None = None, cache: Cache | None = None,
          dump_dir: str | os.PathLike | None = None, validate: bool = True,
          validate_timeout_s: float = 60.0, jobs: int | None = None) -> SolveResult:
    """Decide `obligation` with a portfolio. See the module docstring.

    `solvers` is also the order of preference: at most `jobs` solver processes run at once
    (default: the number of CPUs), the next one starting when one gives up. `timeout_s` is
    per solver run, capped by what is left of `budget`."""
    if mode not in ("race", "all"):
        raise ValueError(f"mode must be 'race' or 'all', not {mode!r}")
    if not isinstance(obligation, Obligation):
        obligation = Obligation(obligation)
    t0 = time.perf_counter()
    sha = obligation.sha256
    if dump_dir is not None:
        dump(obligation, dump_dir)

    def done(answer, model=None, solver="", version="", results=(), skipped=(), cached=False,
             detail=""):
        return SolveResult(answer, model, solver, version, time.perf_counter() - t0, sha,
                           obligation.name, tuple(results), tuple(skipped), cached, detail)

    canon = canonical(obligation) if cache is not None else None
    if canon is not None:
        hit = cache.get(canon.sha256)
        if hit is not None:
            return done(hit["answer"], canon.original(hit.get("model")), hit["solver"],
                        hit["version"], cached=True, detail="cache hit")

    skipped: list[tuple[str, str]] = []
    run: list[str] = []
    for s in dict.fromkeys(solvers):
        backend = get_backend(s)
        ok, why = backend.available()
        if ok:
            why = backend.supports(obligation)
        if why:
            skipped.append((s, why))
        else:
            run.append(s)
    if not run:
        # (e.g. `--solver cvc5` on a Float16 obligation, or the sparse search alone on one
        # without floating point): undecided, never an error
        return done("unknown", skipped=skipped, detail="no solver takes this obligation: " +
                    "; ".join(f"{s}: {why}" for s, why in skipped))

    limit = timeout_s if budget is None else min(timeout_s, budget.remaining())
    if limit <= 0:
        return done("timeout", skipped=skipped, detail="total budget exhausted")

    jobs = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    results = _run_parallel(obligation, run, limit, race=(mode == "race"), jobs=jobs)
    definitive = [r for r in results if r.definitive]
    if len({r.answer for r in definitive}) > 1:
        raise SolverDisagreement(
            f"solvers disagree on {obligation.name} ({sha}): "
            + ", ".join(f"{r.solver} {r.version}: {r.answer}" for r in definitive))
    if not definitive:
        answers = {r.answer for r in results}
        answer = "timeout" if "timeout" in answers else ("unknown" if "unknown" in answers
                                                         else "error")
        detail = "; ".join(f"{r.solver}: {r.answer} {r.detail}".strip() for r in results)
        return done(answer, results=results, skipped=skipped, detail=detail)

    win = min(definitive, key=lambda r: r.seconds)
    detail = ""
    if win.answer == "sat" and validate:
        check = validate_model(obligation, win.model or {}, validate_timeout_s)
        if check == "unsat":
            raise SolverDisagreement(
                f"{win.solver} {win.version} answered sat on {obligation.name} ({sha}) with "
                f"a model z3 refutes: {win.model}")
        detail = "model validated by z3" if check == "sat" else "model NOT validated (z3: unknown)"
    if canon is not None:
        cache.put(canon.sha256, replace(win, model=canon.canonical(win.model)))
    return done(win.answer, win.model, win.solver, win.version, results, skipped, detail=detail)
