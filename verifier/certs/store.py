"""Where certificates and their obligations live on disk.

    <proofs>/<pair name>.json                      the certificate (pair names contain '/')
    <proofs>/<pair name>.obligations/<sha256>.smt2.gz   each obligation's SMT-LIB2 text

Obligation files are gzip with no name and mtime 0, so proving twice writes identical bytes
(no churn in version control). They are addressed by the sha256 of the *uncompressed* text,
which is what the certificate records and what `keq check` and `keq gate` verify.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path, PurePosixPath

from verifier.certs.errors import CertError
from verifier.certs.hashing import sha256_text

CERT_SUFFIX = ".json"
OBLIGATIONS_SUFFIX = ".obligations"


def safe_name(name: str) -> str:
    """A pair name usable as a relative path under the proofs directory."""
    if not name or name.startswith("/") or "\\" in name \
            or any(part in ("", ".", "..") for part in name.split("/")):
        raise CertError(f"pair name {name!r} cannot name a certificate file (needs a relative "
                        f"path without '.' or '..' parts)")
    return name


def cert_path(proofs: Path, name: str) -> Path:
    return proofs / (safe_name(name) + CERT_SUFFIX)


def obligations_dir(cert: Path) -> Path:
    return cert.with_name(cert.name[: -len(CERT_SUFFIX)] + OBLIGATIONS_SUFFIX)


def obligation_relpath(cert: Path, sha: str) -> str:
    """The `file` entry of an obligation: relative to the certificate's directory."""
    return f"{obligations_dir(cert).name}/{sha}.smt2.gz"


def compress(text: str) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as g:
        g.write(text.encode())
    return buf.getvalue()


def read_obligation(cert: Path, rel: str) -> str:
    """The stored text (raises OSError / ValueError when missing or not gzip)."""
    path = cert.parent / rel
    if PurePosixPath(rel).is_absolute() or ".." in PurePosixPath(rel).parts:
        raise ValueError(f"obligation path {rel!r} leaves the proofs directory")
    try:
        return gzip.decompress(path.read_bytes()).decode()
    except (gzip.BadGzipFile, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"{rel}: not a gzip-compressed SMT-LIB2 text ({e})") from None


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(path)


def write(cert_file: Path, cert: dict, texts: dict[str, str]) -> None:
    """Write the certificate and exactly its obligations (old obligation files removed)."""
    odir = obligations_dir(cert_file)
    if odir.is_dir():
        for f in odir.glob("*.smt2.gz"):       # only what keq itself writes there
            f.unlink()
    for sha, text in texts.items():
        if sha256_text(text) != sha:
            raise CertError(f"internal: obligation text does not hash to {sha}")
        _atomic_write(odir / f"{sha}.smt2.gz", compress(text))
    if odir.is_dir() and not any(odir.iterdir()):
        odir.rmdir()
    _atomic_write(cert_file, (json.dumps(cert, sort_keys=True, indent=1,
                                         ensure_ascii=False) + "\n").encode())
