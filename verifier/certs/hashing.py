"""What a certificate hashes, and how (docs/certificates.md, "What is hashed").

- Canonical JSON: sorted keys, no whitespace, UTF-8; the bytes every certificate hash and
  signature is taken over, so re-serializing a certificate never changes its hash.
- Kernels: the parsed PTX module printed back by keq's own printer (a SASS side: the parsed
  listing printed back by the SASS printer). Comments, blank lines and layout do not reach the
  IR, so editing them leaves a certificate valid; any instruction, declaration or directive
  change shows up in the printed text and makes it stale.
- Spec: the TOML document as data (canonical JSON of what tomllib reads), so comments and
  layout are free but every value counts.
- Semantics: every source file of the `semantics` package (relative path and bytes, sorted),
  the SASS semantics included (pair specs may name SASS sides): a change to what an
  instruction means invalidates every certificate proved under the old meaning, even when the
  kernels did not change.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

import semantics
from semantics.ptx import parse_ptx_file
from semantics.ptx.printer import print_module


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode())


def normalized_ptx(path: str | Path) -> str:
    """The module as keq reads it (a located PtxSyntaxError propagates for bad PTX)."""
    return print_module(parse_ptx_file(path))


def ptx_sha256(path: str | Path) -> str:
    return sha256_text(normalized_ptx(path))


def side_sha256(side) -> str:
    """The hash of a side's kernel: normalized PTX, or for a SASS side the listing parsed and
    printed back by keq's SASS printer (a `.cubin` is disassembled first), so only what keq
    reads counts."""
    if getattr(side, "then", ()):
        # several launches: each one's PTX and kernel, in order
        return sha256_text("\n".join(f"{ptx_sha256(s.ptx)} {s.kernel}" for s in side.launches))
    if getattr(side, "isa", "ptx") == "ptx":
        return ptx_sha256(side.ptx)
    from semantics.sass.printer import print_sass
    return sha256_text(print_sass(side.module))


def spec_sha256(path: str | Path) -> str:
    with open(path, "rb") as f:
        return sha256_bytes(canonical_json(tomllib.load(f)))


# Subpackages of `semantics` that no proof depends on: verify reads PTX only (a spec's `sass`
# is not read yet), and nothing outside semantics/sass imports it. Remove an entry the day
# verify uses it, or certificates will not go stale when its meaning changes.
NOT_IN_PROOFS: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def semantics_sha256() -> str:
    """Computed once per process: the package does not change under a running keq."""
    return tree_sha256(Path(semantics.__file__).resolve().parent, NOT_IN_PROOFS)


def tree_sha256(root: Path, exclude: tuple[str, ...] = ()) -> str:
    """Every *.py under `root` (relative path and bytes, sorted), top-level `exclude`d."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts):
        rel = f.relative_to(root).as_posix()
        if rel.split("/")[0] in exclude:
            continue
        data = f.read_bytes()
        # Length-prefixed so that moving bytes between a name and a file cannot collide.
        h.update(f"{len(rel)}:{rel}:{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()
