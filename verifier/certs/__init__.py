"""Proof certificates and the gate (DESIGN.md, "Certificates"; docs/certificates.md).

Modules, each importing only those above it:
    errors     CertError (bad input, exit 3)
    hashing    canonical JSON, normalized PTX, spec and semantics hashes
    format     the certificate format: build, body hash, load + JSON Schema check
    store      files on disk: <proofs>/<pair>.json and its compressed obligations
    signing    ed25519 (PyNaCl, optional)
    manifest   [tool.keq] / keq.toml: which pairs are gated, under which claim
    prove      verify a pair and build its certificate
    check      static checks and the independent re-check
    gate       the gate over a manifest
    reports    text, JSON, JUnit XML, SARIF 2.1.0
"""

from verifier.certs.errors import CertError
from verifier.certs.format import SCHEMA_VERSION, ClaimOptions, load as load_certificate

__all__ = ["CertError", "ClaimOptions", "SCHEMA_VERSION", "load_certificate"]
