"""The gate: every pair the manifest gates must have a certificate that is present, well
formed, unedited, for that pair, fresh (kernels, spec, semantics and claim unchanged),
Equivalent, and with --recheck confirmed by re-deriving and re-solving its obligations.

Each gated pair is one campaign task (`gate_pair`, a spec path and options in, a `PairResult`
out), run by the executor given (`verifier.campaign`: this process by default, local
processes, or a Ray cluster), so the results are the same wherever they ran; the report
lists the tasks that were run again because a worker died."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from semantics.errors import KeqError
from verifier.campaign import Executor, LocalExecutor, Retry, Task, Tally
from verifier.certs import format as fmt
from verifier.certs import store
from verifier.certs.check import (MALFORMED, MISSING, SPEC, Finding, recheck,
                                  static_findings)
from verifier.certs.errors import CertError
from verifier.certs.manifest import Manifest, PairEntry
from verifier.certs.prove import fixed_from_sets

PASS, FAIL, EXCLUDED, NOT_GATED = "pass", "fail", "excluded", "not-gated"


@dataclass(frozen=True)
class PairResult:
    spec: str                          # relative to the manifest
    name: str                          # the spec's pair name ("" when it does not load)
    status: str                        # pass | fail | excluded | not-gated
    findings: tuple[Finding, ...] = ()
    note: str = ""                     # why excluded / not gated; recheck notes
    certificate: str = ""              # relative to the manifest
    seconds: float = 0.0


@dataclass(frozen=True)
class GateReport:
    manifest: Path
    results: tuple[PairResult, ...]
    recheck: bool
    seconds: float
    ran_on: str = "this process"       # the executor (`verifier.campaign`)
    retries: tuple[Retry, ...] = ()    # tasks run again after their worker died

    @property
    def ok(self) -> bool:
        return all(r.status != FAIL for r in self.results)

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)


def _relto(p: Path, root: Path) -> str:
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(p)


def gate_pair(m: Manifest, e: PairEntry, do_recheck: bool, trusted: dict | None,
              spec=None, recheck_timeout_s: float | None = None) -> PairResult:
    """One gated pair's result (a campaign task: plain data in, a `PairResult` out)."""
    from verifier.spec import load_spec
    t0 = time.perf_counter()
    if spec is None:
        try:
            spec = load_spec(e.spec)
        except KeqError as err:
            return PairResult(e.rel, "", FAIL, (Finding(SPEC, str(err)),),
                              seconds=time.perf_counter() - t0)
    try:
        fixed = fixed_from_sets(spec, e.sets)
    except KeqError as err:
        where = f"{e.where}: " if e.where else ""
        return PairResult(e.rel, spec.name, FAIL,
                          (Finding(SPEC, f"{where}the manifest's `set`: {err}"),),
                          seconds=time.perf_counter() - t0)
    cert_file = store.cert_path(m.proofs, spec.name)
    crel = _relto(cert_file, m.root)

    def done(findings, note=""):
        return PairResult(e.rel, spec.name, FAIL if findings else PASS, tuple(findings), note,
                          crel, time.perf_counter() - t0)

    if not cert_file.is_file():
        return done([Finding(MISSING, f"no certificate at {crel} (make one: keq prove "
                                      f"--manifest {m.path.name} {e.rel})")])
    try:
        cert = fmt.load(cert_file)
    except (CertError, OSError) as err:
        msg = err.render() if isinstance(err, KeqError) else str(err)
        return done([Finding(MALFORMED, msg.splitlines()[0])])
    findings = static_findings(cert, cert_file, spec=spec, spec_path=e.spec, rel=e.rel,
                               expected_fixed=fixed, trusted=trusted)
    note = ""
    if do_recheck and not findings:
        r = recheck(cert, cert_file, spec, timeout_s=recheck_timeout_s)
        findings.extend(r.findings)
        solved = [x for x in r.resolved if x.independent]
        parts = list(r.notes)
        if cert["obligations"]:
            parts.insert(0, f"re-solved {len(solved)}/{len(cert['obligations'])} "
                            f"obligation(s) with another solver")
        note = "; ".join(parts)
    return done(findings, note)


def _duplicate_names(results: list[PairResult]) -> list[PairResult]:
    """Certificates are stored by pair name: two gated specs with one name would share one
    certificate, so both fail, naming each other."""
    by: dict[str, list[str]] = {}
    for r in results:
        if r.status in (PASS, FAIL) and r.name:
            by.setdefault(r.name, []).append(r.spec)
    out = []
    for r in results:
        others = [s for s in by.get(r.name, []) if s != r.spec] if r.status in (PASS, FAIL) \
            else []
        if others:
            f = Finding(SPEC, f"pair name {r.name!r} is also the name of {', '.join(others)}: "
                              f"each gated spec needs its own name (certificates are stored "
                              f"by name)")
            r = PairResult(r.spec, r.name, FAIL, r.findings + (f,), r.note, r.certificate,
                           r.seconds)
        out.append(r)
    return out


def run_gate(m: Manifest, *, do_recheck: bool = False, trusted: dict | None = None,
             progress: Tally | bool = False, recheck_timeout_s: float | None = None,
             executor: Executor | None = None) -> GateReport:
    """Gate every pair of `m`; the gated ones as tasks of `executor` (default: this
    process). `progress`: a live count on stderr (a `Tally`, or True for one)."""
    from verifier.spec import load_spec
    t0 = time.perf_counter()
    executor = executor or LocalExecutor(1)
    results: list[PairResult | None] = []
    tasks: list[Task] = []
    slots: list[int] = []
    for e in m.entries:
        if e.rel in m.excluded:
            results.append(PairResult(e.rel, "", EXCLUDED, note=m.excluded[e.rel]))
            continue
        if e.rel not in m.explicit:
            try:
                spec = load_spec(e.spec)
            except KeqError as err:
                results.append(PairResult(e.rel, "", FAIL, (Finding(SPEC, str(err)),)))
                continue
            if spec.expect != "equivalent":
                results.append(PairResult(e.rel, spec.name, NOT_GATED,
                                          note=f"expect = {spec.expect!r}"))
                continue
        slots.append(len(results))
        results.append(None)
        tasks.append(Task(e.rel, gate_pair, (m, e, do_recheck, trusted, None,
                                             recheck_timeout_s)))
    tally = progress if isinstance(progress, Tally) else \
        Tally(len(tasks), kinds=(PASS, FAIL), show=progress, what="gate")
    retried0 = len(executor.retries)
    for done in executor.run(tasks):
        results[slots[done.index]] = done.value
        tally.add(done.value.status, len(executor.retries) - retried0)
    tally.finish()
    final = _duplicate_names([r for r in results if r is not None])
    for rel, why in sorted(m.excluded.items()):
        if not any(r.spec == rel for r in final):
            final.append(PairResult(rel, "", EXCLUDED, note=why))
    return GateReport(m.path, tuple(final), do_recheck, time.perf_counter() - t0,
                      executor.name, tuple(executor.retries[retried0:]))
