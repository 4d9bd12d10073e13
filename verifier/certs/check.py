"""Checking a certificate: the static checks the gate runs on every pair (hashes, staleness,
verdict, stored obligations, signature) and the independent re-check (`keq check`,
`keq gate --recheck`): re-derive the obligations from the kernels and re-solve the stored ones
with a different solver."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from semantics.errors import KeqError
from verifier.certs import format as fmt
from verifier.certs import store
from verifier.certs.hashing import semantics_sha256, sha256_text
from verifier.certs.prove import current_hashes, fixed_from_sets

# Finding codes (the gate's reasons; SARIF rule ids are "keq/<code>").
MISSING, MALFORMED, EDITED, WRONG_PAIR = "missing", "malformed", "edited", "wrong-pair"
STALE, NOT_EQUIVALENT, FUZZ = "stale", "not-equivalent", "fuzz-difference"
SIGNATURE, RECHECK, SPEC = "signature", "recheck", "spec-error"
CODES = {
    MISSING: "no certificate for a gated pair",
    MALFORMED: "the certificate is not valid JSON or breaks the schema",
    EDITED: "the certificate or an obligation file no longer matches its hash (edited by hand)",
    WRONG_PAIR: "the certificate is for another pair",
    STALE: "a kernel, the spec, keq's semantics or the claim changed after the certificate "
           "was made",
    NOT_EQUIVALENT: "the certified verdict is not Equivalent",
    FUZZ: "fuzzing recorded in the certificate found a difference",
    SIGNATURE: "unsigned, untrusted or bad signature (--trusted-keys)",
    RECHECK: "re-deriving or re-solving the obligations disagrees with the certificate",
    SPEC: "the pair spec does not load",
}


@dataclass(frozen=True)
class Finding:
    code: str
    message: str


def _short(h: str) -> str:
    return h[:12]


def stored_obligations(cert: dict, cert_file: Path) -> tuple[dict[str, str], list[Finding]]:
    """sha256 -> text of every stored obligation whose file matches its hash; and a finding for
    each that does not."""
    texts, out = {}, []
    for ob in cert["obligations"]:
        try:
            text = store.read_obligation(cert_file, ob["file"])
        except OSError as e:
            out.append(Finding(EDITED, f"obligation file {ob['file']} is missing "
                                       f"({e.strerror or e})"))
            continue
        except ValueError as e:
            out.append(Finding(EDITED, f"obligation file {e}"))
            continue
        if sha256_text(text) != ob["sha256"]:
            out.append(Finding(EDITED, f"obligation file {ob['file']} does not hash to the "
                                       f"certified {_short(ob['sha256'])}... (changed after "
                                       f"proving)"))
            continue
        texts[ob["sha256"]] = text
    return texts, out


def static_findings(cert: dict, cert_file: Path, *, spec, spec_path: Path, rel: str | None,
                    expected_fixed: dict[str, Any] | None, trusted: dict | None) -> list[Finding]:
    """Every reason the gate rejects this certificate without re-solving anything. `rel`: the
    spec path the manifest names (None: do not compare); `expected_fixed`: the manifest's
    claim restriction (None: do not compare)."""
    out: list[Finding] = []
    if cert["certificate_sha256"] != fmt.body_sha256(cert):
        out.append(Finding(EDITED, "certificate_sha256 does not match the certificate's "
                                   "contents (edited by hand)"))
    if trusted is not None:
        from verifier.certs.signing import check as check_sig
        why = check_sig(cert, trusted)
        if why:
            out.append(Finding(SIGNATURE, why))
    pair = cert["pair"]
    if pair["name"] != spec.name or (rel is not None and pair["spec"]["path"] != rel):
        out.append(Finding(WRONG_PAIR, f"certificate is for {pair['name']} "
                                       f"({pair['spec']['path']}), not {spec.name}"
                                       + (f" ({rel})" if rel else "")))
        return out      # staleness against another pair's files says nothing more
    spec_hash, ptx = current_hashes(spec, spec_path)
    if pair["spec"]["sha256"] != spec_hash:
        out.append(Finding(STALE, f"the spec {pair['spec']['path']} changed since the "
                                  f"certificate was made"))
    for role in ("reference", "candidate"):
        if pair[role]["sha256"] != ptx[role]:
            out.append(Finding(STALE, f"the {role} kernel {pair[role]['ptx']} changed since "
                                      f"the certificate was made"))
    if cert["keq"]["semantics_sha256"] != semantics_sha256():
        out.append(Finding(STALE, f"keq's semantics changed since the certificate was made "
                                  f"(keq {cert['keq']['version']}, semantics "
                                  f"{_short(cert['keq']['semantics_sha256'])}..., now "
                                  f"{_short(semantics_sha256())}...)"))
    if expected_fixed is not None and cert["claim"]["fixed"] != fmt.json_fixed(expected_fixed):
        out.append(Finding(STALE, f"the claim differs from the manifest: certificate fixes "
                                  f"{_fmt(cert['claim']['fixed'])}, manifest "
                                  f"{_fmt(expected_fixed)}"))
    v = cert["verdict"]
    if v["kind"] != "equivalent":
        why = f": {v['reasons'][0]}" if v["reasons"] else ""
        out.append(Finding(NOT_EQUIVALENT, f"certified verdict is {v['kind']}{why}"))
    if cert["fuzz"] and cert["fuzz"]["difference"]:
        out.append(Finding(FUZZ, f"fuzzing found a difference: {cert['fuzz']['difference']}"))
    out.extend(stored_obligations(cert, cert_file)[1])
    return out


def _fmt(fixed: dict) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(fixed.items())) + "}" if fixed \
        else "nothing (the spec's full ranges)"


# -- the independent re-check ------------------------------------------------------------------

RESOLVE_ORDER = ("bitwuzla", "cvc5", "z3")


@dataclass(frozen=True)
class Resolved:
    sha256: str
    recorded: str          # solver:answer in the certificate
    solver: str            # who re-solved it ("" when nobody could)
    answer: str
    independent: bool      # a different solver than the recorded one
    detail: str = ""


def _engine(solver: str) -> str:
    """The solver program behind a portfolio member (`sparse` is bitwuzla): two members of
    one engine are not independent of each other."""
    from verifier.solvers import BACKENDS
    backend = BACKENDS.get(solver)
    return backend.engine if backend is not None else solver


def resolve_stored(text: str, recorded_solver: str, timeout_s: float) -> Resolved:
    """Re-solve a stored text with the first usable solver whose engine differs from the
    recorded one's; only when none of them decides (a z3-only text, a timeout) with the
    recorded solver, not independent."""
    from verifier.solvers import get_backend
    tried = []
    recorded_engine = _engine(recorded_solver)
    order = [s for s in RESOLVE_ORDER if _engine(s) != recorded_engine] + [recorded_solver]
    for name in order:
        try:
            backend = get_backend(name)
        except ValueError:
            continue
        ok, why = backend.available()
        if not ok:
            tried.append(f"{name}: not installed")
            continue
        r = backend.check(text, timeout_s)
        if r.definitive:
            return Resolved(sha256_text(text), recorded_solver, name, r.answer,
                            _engine(name) != recorded_engine, "; ".join(tried))
        tried.append(f"{name}: {r.answer} {r.detail}".strip()[:200])
    return Resolved(sha256_text(text), recorded_solver, "", "none", False, "; ".join(tried))


@dataclass(frozen=True)
class Recheck:
    findings: tuple[Finding, ...]
    resolved: tuple[Resolved, ...]
    notes: tuple[str, ...]             # how the evidence was re-derived, what is not independent
    seconds: float


def recheck(cert: dict, cert_file: Path, spec, *, timeout_s: float | None = None) -> Recheck:
    """Re-run verify on the certified claim, dumping the obligations; require the same verdict
    and the same obligation hashes; re-solve every stored obligation with another solver."""
    from verifier.api import verify
    t0 = time.perf_counter()
    findings: list[Finding] = []
    notes: list[str] = []
    o = cert["options"]
    timeout = timeout_s if timeout_s is not None else o["timeout_s"]
    with tempfile.TemporaryDirectory(prefix="keq-check-") as d:
        try:
            fixed = fixed_from_sets(spec, cert["claim"]["fixed"])
            v = verify(spec, fixed=fixed, timeout_s=timeout,
                       unroll=o["unroll"], max_shapes=o["max_shapes"], seed=o["seed"],
                       trials=o["trials"], dump_smt=d)
        except KeqError as e:
            findings.append(Finding(RECHECK, f"re-running verify fails: {e}"))
            return Recheck(tuple(findings), (), (), time.perf_counter() - t0)
        derived = {p.stem for p in Path(d).glob("*.smt2")}
    certified = {ob["sha256"] for ob in cert["obligations"]}
    if v.kind != cert["verdict"]["kind"]:
        findings.append(Finding(RECHECK, f"re-running verify gives {v.kind}, the certificate "
                                         f"says {cert['verdict']['kind']}"
                                         + (f" ({v.reasons[0]})" if v.reasons else "")))
    if derived != certified:
        extra, gone = sorted(derived - certified), sorted(certified - derived)
        findings.append(Finding(RECHECK, "the obligations derived from the kernels now differ "
                                         f"from the certified ones ({len(extra)} new, "
                                         f"{len(gone)} certified but not derived"
                                         + (f", e.g. {_short(gone[0])}..." if gone else "")
                                         + ")"))
    stages = {(s.name, s.detail) for s in v.stages}
    if fmt.IDENTICAL_TERMS in cert["verdict"]["evidence"]:
        same = any("identical terms" in detail for _, detail in stages)
        notes.append("identical output terms re-derived by re-running verify (no solver "
                     "involved)" if same else
                     "the certificate cites identical terms, the re-run did not show them")
    if fmt.REAL_CHECK in cert["verdict"]["evidence"]:
        notes.append("mode real: the real-arithmetic obligations are re-solved by z3 only, "
                     "NOT by an independent solver")
    if fmt.INDEXED in cert["verdict"]["evidence"]:
        same = any(name == "indexed outputs" for name, _ in stages)
        notes.append("indexed outputs re-derived by re-running verify (evaluation at every "
                     "allowed shape; no solver involved)" if same else
                     "the certificate cites indexed outputs, the re-run did not show them")
    if fmt.EVALUATED in cert["verdict"]["evidence"]:
        notes.append("launch-shape conditions re-derived by re-running verify (evaluation at "
                     "every allowed shape; no solver involved)")
    texts, bad = stored_obligations(cert, cert_file)
    findings.extend(bad)
    resolved = []
    for ob in cert["obligations"]:
        text = texts.get(ob["sha256"])
        if text is None:
            continue
        if ob["answer"] not in ("sat", "unsat"):
            notes.append(f"{ob['name']}: recorded {ob['answer']}, nothing to confirm")
            continue
        r = resolve_stored(text, ob["solver"], timeout)
        resolved.append(r)
        if r.answer == "none":
            findings.append(Finding(RECHECK, f"{ob['name']} ({_short(ob['sha256'])}...): no "
                                             f"solver confirmed {ob['answer']} ({r.detail})"))
        elif r.answer != ob["answer"]:
            findings.append(Finding(RECHECK, f"{ob['name']} ({_short(ob['sha256'])}...): "
                                             f"{r.solver} answers {r.answer}, the certificate "
                                             f"says {ob['solver']}: {ob['answer']}"))
        elif not r.independent:
            notes.append(f"{ob['name']} ({_short(ob['sha256'])}...): re-solved by "
                         f"{r.solver} only, the recorded solver's engine, not independent "
                         f"({r.detail or 'no other solver reads this text'})")
    return Recheck(tuple(findings), tuple(resolved), tuple(notes), time.perf_counter() - t0)


def find_spec(cert: dict, cert_file: Path, root: Path | None) -> tuple[Path, Path]:
    """(root, spec path) for a certificate: under --root, else the current directory or the
    nearest directory above the certificate where the spec path exists."""
    rel = cert["pair"]["spec"]["path"]
    candidates = [root] if root is not None else [Path.cwd(), *cert_file.resolve().parents]
    for r in candidates:
        if (r / rel).is_file():
            return r.resolve(), (r / rel).resolve()
    from verifier.certs.errors import CertError
    where = f"under --root {root}" if root is not None else \
        "in the current directory or any directory above the certificate"
    raise CertError(f"{cert_file}: its spec {rel} is not {where} (give --root DIR)")
