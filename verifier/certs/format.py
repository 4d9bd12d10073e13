"""The certificate format (version 1): building one from a verdict, and reading one back.

A certificate is a JSON object (docs/certificates.md has an annotated example). Everything but
`certificate_sha256` and `signature` is the *body*; `certificate_sha256` is the sha256 of the
body's canonical JSON, and a signature signs those same bytes. The body holds no wall-clock
time (stage and solver seconds are dropped), so proving the same pair twice gives the same
body, up to which solver of the portfolio answered first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from semantics import __version__
from semantics.errors import SourceLoc
from verifier.certs.errors import CertError, LocatedCertError
from verifier.certs.hashing import canonical_json, sha256_bytes

SCHEMA_VERSION = 1
FORMAT = "keq-certificate"

# How the evidence of an Equivalent verdict can be re-derived (keq check says which it did).
IDENTICAL_TERMS = "identical output terms (after z3's simplifier): no solver needed"
REAL_CHECK = ("mode real: the real-arithmetic obligations are z3's dialect (reals); keq check "
              "re-solves them with z3, not independently")
INDEXED = ("in/out buffers indexed: every output element compared at every allowed shape by "
           "evaluating both kernels' write logs, and where those differ by walking both "
           "stored terms at once (exact, no solver); keq check re-derives it by re-running "
           "verify")
EVALUATED = ("launch-shape conditions decided by evaluation at every allowed shape (exact, "
             "no solver); keq check re-derives them by re-running verify")


@dataclass(frozen=True)
class ClaimOptions:
    """How verify was run. `fixed` restricts the claim (it is part of what is proved); the
    rest only says how it was checked: an Equivalent verdict covers every launch shape of the
    claim whatever `max_shapes`, and a loop bound hit is Inconclusive, never Equivalent."""

    fixed: dict[str, Any]
    max_shapes: int = 16
    unroll: int = 64
    timeout_s: float = 60.0
    trials: int = 8
    seed: int = 0

    def options_json(self) -> dict:
        return {"max_shapes": self.max_shapes, "unroll": self.unroll,
                "timeout_s": float(self.timeout_s), "trials": self.trials, "seed": self.seed}


def schema() -> dict:
    text = resources.files("verifier.certs").joinpath("certificate.schema.json").read_text()
    return json.loads(text)


def body_of(cert: dict) -> dict:
    return {k: v for k, v in cert.items() if k not in ("certificate_sha256", "signature")}


def body_bytes(cert: dict) -> bytes:
    return canonical_json(body_of(cert))


def body_sha256(cert: dict) -> str:
    return sha256_bytes(body_bytes(cert))


def json_fixed(fixed: dict[str, Any]) -> dict[str, int | float]:
    """Fixed scalars as JSON numbers (float params come as numpy floats; float32 -> float is
    exact, and `keq check` reads them back through `--set` parsing, so they round-trip)."""
    return {k: (int(v) if isinstance(v, (int, np.integer)) else float(v))
            for k, v in sorted(fixed.items())}


def _evidence(verdict) -> list[str]:
    out = []
    if any("identical terms" in s.detail for s in verdict.stages):
        out.append(IDENTICAL_TERMS)
    if any(s.name == "indexed outputs" for s in verdict.stages):
        out.append(INDEXED)
    if any(s.name == "outputs (real)" for s in verdict.stages):
        out.append(REAL_CHECK)
    coverage = getattr(verdict, "coverage", "")
    if "symbolic" in coverage:
        out.append(EVALUATED)
        out.append(f"coverage: {coverage}")
    if verdict.obligations:
        out.append(f"{len(verdict.obligations)} solver obligation(s), SMT-LIB2 stored")
    cex = getattr(verdict, "counterexample", None)
    if cex is not None:
        given = ", ".join(f"{k}={v}" for k, v in sorted(cex.scalars.items()))
        what = (", ".join(f"{n}[{i}]" for n, i, _, _ in cex.differences[:4])
                or (cex.note or "").splitlines()[0][:120])
        out.append(f"counterexample replayed on the emulator at {given}: {what}")
    return out


def _side_json(side, root: Path, ptx_hash: str) -> dict:
    out = _launch_json(side, root)
    out["sha256"] = ptx_hash
    if getattr(side, "then", ()):
        out["then"] = [_launch_json(s, root) for s in side.then]   # (sha256 covers them all)
    return out


def _launch_json(side, root: Path) -> dict:
    return {"ptx": rel(side.ptx, root), "kernel": side.kernel,
            "grid": [e.text if isinstance(e.text, str) else str(e.text) for e in side.grid],
            "block": [e.text if isinstance(e.text, str) else str(e.text) for e in side.block]}


def rel(path: Path, root: Path) -> str:
    """Paths in a certificate are relative to the root (the manifest's directory), POSIX."""
    p = Path(path).resolve()
    try:
        return p.relative_to(root.resolve()).as_posix()
    except ValueError:
        raise CertError(f"{path} is outside the root {root}: certificates name files relative "
                        f"to the root (give --root, or a manifest above both)") from None


def build(*, spec, spec_path: Path, root: Path, spec_hash: str, ptx_hashes: dict[str, str],
          semantics_hash: str, claim_text: str, opts: ClaimOptions, verdict,
          obligation_files: dict[str, str], fuzz: dict | None) -> dict:
    """The certificate body (unsigned, with its hash)."""
    scalars = []
    for p in spec.scalars:
        scalars.append({"name": p.name, "type": p.type,
                        "range": list(p.range) if p.range is not None else None,
                        "values": list(p.values) if p.values is not None else None})
    obligations = []
    for ob in verdict.obligations:
        obligations.append({
            "name": ob.name, "sha256": ob.sha256, "answer": ob.answer, "solver": ob.solver,
            "version": ob.version, "cached": bool(ob.cached),
            "answers": {r.solver: r.answer for r in ob.results},
            "file": obligation_files[ob.sha256]})
    cert = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "keq": {"version": __version__, "semantics_sha256": semantics_hash},
        "pair": {"name": spec.name,
                 "spec": {"path": rel(spec_path, root), "sha256": spec_hash},
                 "reference": _side_json(spec.reference, root, ptx_hashes["reference"]),
                 "candidate": _side_json(spec.candidate, root, ptx_hashes["candidate"])},
        "claim": {"text": claim_text, "mode": spec.mode, "fixed": json_fixed(opts.fixed),
                  "scalars": scalars, "assume": [a.text for a in spec.assume],
                  "allow": list(spec.allow),
                  "target_assumptions": list(spec.target_assumptions)},
        "options": opts.options_json(),
        "verdict": {"kind": verdict.kind, "reasons": list(verdict.reasons),
                    "assumptions": list(verdict.assumptions),
                    "launch_shapes": verdict.assignments,
                    # how the launch shapes were covered (symbolic / enumerated), when verify
                    # says so
                    "coverage": str(getattr(verdict, "coverage", "") or ""),
                    "stages": [{"name": s.name, "status": s.status, "detail": s.detail}
                               for s in verdict.stages],
                    "evidence": _evidence(verdict)},
        "obligations": obligations,
        "fuzz": fuzz,
    }
    cert["certificate_sha256"] = body_sha256(cert)
    cert["signature"] = None
    return cert


def _json_loc(path: Path, text: str, pos: int) -> SourceLoc:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return SourceLoc(str(path), line, col)


def _locate_key(text: str, keys: list) -> int:
    """Best effort: the offset of the last string key of a JSON path, for error carets."""
    pos = 0
    for k in keys:
        if isinstance(k, str):
            i = text.find(json.dumps(k) + ":", pos)
            if i >= 0:
                pos = i
    return pos


def schema_errors(cert: Any) -> list[tuple[list, str]]:
    """(path, message) for each way `cert` breaks the JSON Schema (jsonschema validates)."""
    import jsonschema
    v = jsonschema.Draft202012Validator(schema())
    return [(list(e.absolute_path), e.message)
            for e in sorted(v.iter_errors(cert), key=lambda e: list(map(str, e.absolute_path)))]


def load(path: str | Path) -> dict:
    """Read and schema-check a certificate; a `LocatedCertError` (exit 3) when it is not one."""
    path = Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError as e:
        raise CertError(f"{path}: not UTF-8 text ({e})") from None
    try:
        cert = json.loads(text)
    except json.JSONDecodeError as e:
        loc = _json_loc(path, text, e.pos)
        raise LocatedCertError(f"not JSON: {e.msg}", loc, _line(text, loc.line)) from None
    errs = schema_errors(cert)
    if errs:
        keys, msg = errs[0]
        where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys) or "."
        loc = _json_loc(path, text, _locate_key(text, keys))
        more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
        raise LocatedCertError(f"not a keq certificate (schema v{SCHEMA_VERSION}): "
                               f"{where.lstrip('.') or 'top level'}: {msg}{more}", loc,
                               _line(text, loc.line))
    return cert


def _line(text: str, line: int) -> str | None:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None
