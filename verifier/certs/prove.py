"""Making a certificate: run verify (and optionally fuzz) on one pair and record the result."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifier.certs import format as fmt
from verifier.certs import store
from verifier.certs.errors import CertError
from verifier.certs.hashing import semantics_sha256, side_sha256, spec_sha256, sha256_text
from verifier.spec import PairSpec, load_spec


@dataclass(frozen=True)
class Proved:
    cert: dict
    texts: dict[str, str]          # sha256 -> SMT-LIB2 text of each obligation
    path: Path                     # where the certificate goes
    seconds: float


def fixed_from_sets(spec: PairSpec, sets: dict[str, Any] | list[str]) -> dict[str, Any]:
    """`--set` strings or a manifest's `set` table -> the fixed scalars (validated)."""
    from verifier.inputs import parse_set
    items = sets if isinstance(sets, list) else [f"{k}={v}" for k, v in sets.items()]
    return dict(parse_set(spec, item) for item in items)


def current_hashes(spec: PairSpec, spec_path: Path) -> tuple[str, dict[str, str]]:
    return spec_sha256(spec_path), {role: side_sha256(spec.side(role))
                                    for role in ("reference", "candidate")}


def _fuzz(spec: PairSpec, fixed: dict, examples: int, seed: int, backend: str) -> dict:
    from verifier.fuzz.backends import get_backend
    from verifier.fuzz.runner import fuzz
    b = get_backend(backend)
    rep = fuzz(spec, b, examples=examples, seed_=seed, fixed=fixed)
    diff = rep.difference.summary if rep.difference is not None else None
    return {"backend": rep.backend, "examples": rep.examples, "seed": seed, "difference": diff}


def prove(spec_path: str | Path, *, root: Path, proofs: Path, opts: fmt.ClaimOptions | None = None,
          sets: dict | list | None = None, fuzz_examples: int = 0, fuzz_seed: int = 0,
          fuzz_backend: str = "emulator", sign_key: str | None = None,
          spec: PairSpec | None = None) -> Proved:
    """Verify one pair under its claim and build (not write) its certificate."""
    from verifier.api import claim_text, verify
    t0 = time.perf_counter()
    spec_path = Path(spec_path).resolve()
    spec = spec or load_spec(spec_path)
    if opts is None:
        opts = fmt.ClaimOptions(fixed_from_sets(spec, sets or {}))
    elif sets is not None:
        raise CertError("give the fixed scalars in opts or in sets, not both")
    spec_hash, ptx_hashes = current_hashes(spec, spec_path)
    with tempfile.TemporaryDirectory(prefix="keq-prove-") as d:
        v = verify(spec, fixed=opts.fixed, timeout_s=opts.timeout_s, unroll=opts.unroll,
                   max_shapes=opts.max_shapes, seed=opts.seed, trials=opts.trials, dump_smt=d)
        texts = {}
        for ob in v.obligations:
            text = (Path(d) / f"{ob.sha256}.smt2").read_text()
            if sha256_text(text) != ob.sha256:
                raise CertError(f"internal: dumped obligation {ob.sha256} does not match its "
                                f"hash")
            texts[ob.sha256] = text
    path = store.cert_path(proofs, spec.name)
    files = {sha: store.obligation_relpath(path, sha) for sha in texts}
    fz = _fuzz(spec, opts.fixed, fuzz_examples, fuzz_seed, fuzz_backend) if fuzz_examples else None
    cert = fmt.build(spec=spec, spec_path=spec_path, root=root, spec_hash=spec_hash,
                     ptx_hashes=ptx_hashes, semantics_hash=semantics_sha256(),
                     claim_text=v.claim or claim_text(spec, opts.fixed), opts=opts, verdict=v,
                     obligation_files=files, fuzz=fz)
    if sign_key:
        from verifier.certs.signing import sign
        cert = sign(cert, sign_key)
    return Proved(cert, texts, path, time.perf_counter() - t0)


def write(p: Proved) -> None:
    store.write(p.path, p.cert, p.texts)
