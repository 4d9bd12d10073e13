"""The gate's manifest: which pair specs are gated, under which claim, and where proofs live.

In pyproject.toml (under `[tool.keq]`) or in a keq.toml (the same keys at top level):

    [tool.keq]
    proofs = "proofs"                      # certificates, relative to this file
    specs = ["kernels/*/*.toml"]           # globs: every match with expect = "equivalent"
                                           # is gated unless excluded
    [[tool.keq.pair]]                      # the claim for one pair (also gates it if no
    spec = "kernels/vector_add/vec4.toml"  # glob matches it)
    set = { n = 1001 }                     # restricts the claim, as `keq verify --set`
    max_shapes = 16                        # verify options (how, not what, is proved)
    unroll = 64
    timeout = 60.0

    [[tool.keq.exclude]]                   # matched by a glob but not gated, and why
    spec = "kernels/histogram/shared.toml"
    reason = "data-dependent addresses are not supported yet"

Matched specs whose `expect` is not "equivalent" are listed as not gated (with their expect),
never silently dropped.
"""

from __future__ import annotations

import glob as globlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semantics.errors import SourceLoc
from verifier.certs.errors import CertError, LocatedCertError
from verifier.certs.format import ClaimOptions
from verifier.spec.toml_locations import TomlPositions

_TOP_KEYS = {"proofs", "specs", "pair", "exclude"}
_PAIR_KEYS = {"spec", "set", "max_shapes", "unroll", "timeout", "trials", "seed"}
_EXCLUDE_KEYS = {"spec", "reason"}


@dataclass(frozen=True)
class PairEntry:
    spec: Path                        # absolute
    rel: str                          # as a certificate names it (relative to root)
    sets: dict[str, Any] = field(default_factory=dict)    # raw `set` values (validated later)
    max_shapes: int = 16
    unroll: int = 64
    timeout_s: float = 60.0
    trials: int = 8
    seed: int = 0
    where: SourceLoc | None = None    # the [[pair]] table, for errors about it

    def options(self, fixed: dict[str, Any]) -> ClaimOptions:
        return ClaimOptions(fixed, self.max_shapes, self.unroll, self.timeout_s, self.trials,
                            self.seed)


@dataclass(frozen=True)
class Manifest:
    path: Path
    root: Path                        # the manifest's directory: paths are relative to it
    proofs: Path
    entries: tuple[PairEntry, ...]    # every spec matched or listed, in path order
    excluded: dict[str, str]          # rel spec path -> reason
    explicit: frozenset[str]          # rel paths listed with [[pair]] (gated whatever expect)


class _Reader:
    def __init__(self, path: Path, text: str, prefix: tuple) -> None:
        self.path, self.text, self.prefix = path, text, prefix
        self.pos = TomlPositions(text)
        self.lines = text.splitlines()

    def loc(self, keys: tuple, prefer: str = "value") -> SourceLoc:
        line, col = self.pos.find(self.prefix + keys, prefer)
        return SourceLoc(str(self.path), line, col)

    def error(self, msg: str, keys: tuple, prefer: str = "value") -> LocatedCertError:
        loc = self.loc(keys, prefer)
        text = self.lines[loc.line - 1] if 0 < loc.line <= len(self.lines) else None
        return LocatedCertError(msg, loc, text)

    def expect(self, value, types, what: str, keys: tuple):
        # TOML booleans are Python ints: `max_shapes = true` must not pass as 1.
        if not isinstance(value, types) or isinstance(value, bool):
            raise self.error(f"{what} must be {_type_name(types)}", keys)
        return value


def _type_name(types) -> str:
    names = {str: "a string", int: "an integer", float: "a number", list: "an array",
             dict: "a table"}
    ts = types if isinstance(types, tuple) else (types,)
    return " or ".join(names.get(t, t.__name__) for t in ts)


def find_manifest(start: Path | None = None) -> Path:
    """keq.toml, else a pyproject.toml with [tool.keq], in the current directory."""
    d = (start or Path.cwd())
    for name in ("keq.toml", "pyproject.toml"):
        p = d / name
        if p.is_file():
            if name == "keq.toml":
                return p
            try:
                if "keq" in tomllib.loads(p.read_text()).get("tool", {}):
                    return p
            except tomllib.TOMLDecodeError:
                return p        # load() reports the syntax error, located
    raise CertError(f"no manifest in {d}: write a keq.toml or a [tool.keq] section in "
                    f"pyproject.toml (see docs/certificates.md), or give --manifest FILE")


def load(path: str | Path) -> Manifest:
    path = Path(path).resolve()
    try:
        text = path.read_text()
    except OSError as e:
        raise CertError(f"{path}: cannot read the manifest: {e.strerror or e}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line, col = getattr(e, "lineno", 1) or 1, getattr(e, "colno", 1) or 1
        lines = text.splitlines()
        msg = str(e).split(" (at line")[0]
        raise LocatedCertError(f"not TOML: {msg}", SourceLoc(str(path), line, col),
                               lines[line - 1] if 0 < line <= len(lines) else None) from None
    if path.name == "pyproject.toml":
        prefix: tuple = ("tool", "keq")
        table = doc.get("tool", {}).get("keq")
        if table is None:
            raise CertError(f"{path}: no [tool.keq] section (see docs/certificates.md)")
    else:
        prefix, table = (), doc
    r = _Reader(path, text, prefix)
    r.expect(table, dict, "[tool.keq]" if prefix else "the manifest", ())
    for k in table:
        if k not in _TOP_KEYS:
            raise r.error(f"unknown key {k!r} (known: {', '.join(sorted(_TOP_KEYS))})", (k,),
                          "key")
    root = path.parent
    proofs = root / r.expect(table.get("proofs", "proofs"), str, "proofs", ("proofs",))
    matched: dict[str, Path] = {}
    specs = r.expect(table.get("specs", []), list, "specs", ("specs",))
    for i, pattern in enumerate(specs):
        r.expect(pattern, str, "each specs entry", ("specs", i))
        hits = sorted(globlib.glob(str(root / pattern), recursive=True))
        if not hits:
            raise r.error(f"{pattern!r} matches no file", ("specs", i))
        for h in hits:
            p = Path(h).resolve()
            matched[p.relative_to(root).as_posix()] = p
    entries: dict[str, PairEntry] = {}
    for i, t in enumerate(r.expect(table.get("pair", []), list, "pair", ("pair",))):
        e = _pair(r, root, t, i)
        if e.rel in entries:
            raise r.error(f"{e.rel} is listed twice", ("pair", i, "spec"))
        entries[e.rel] = e
    excluded: dict[str, str] = {}
    for i, t in enumerate(r.expect(table.get("exclude", []), list, "exclude", ("exclude",))):
        r.expect(t, dict, "each [[exclude]]", ("exclude", i))
        for k in t:
            if k not in _EXCLUDE_KEYS:
                raise r.error(f"unknown key {k!r} in [[exclude]] (known: spec, reason)",
                              ("exclude", i, k), "key")
        if "spec" not in t or "reason" not in t or not str(t.get("reason", "")).strip():
            raise r.error("an [[exclude]] needs `spec` and a non-empty `reason`",
                          ("exclude", i), "key")
        spec = r.expect(t["spec"], str, "spec", ("exclude", i, "spec"))
        rel = _rel(r, root, spec, ("exclude", i, "spec"))
        if rel in entries:
            raise r.error(f"{rel} is both a [[pair]] and excluded", ("exclude", i, "spec"))
        excluded[rel] = r.expect(t["reason"], str, "reason", ("exclude", i, "reason"))
    listed = frozenset(entries)
    for rel, p in matched.items():
        entries.setdefault(rel, PairEntry(p, rel))
    return Manifest(path, root, proofs, tuple(entries[k] for k in sorted(entries)),
                    excluded, listed)


def _rel(r: _Reader, root: Path, spec: str, keys: tuple) -> str:
    p = (root / spec).resolve()
    if not p.is_file():
        raise r.error(f"no such spec: {spec}", keys)
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        raise r.error(f"{spec} is outside the manifest's directory", keys) from None


def _pair(r: _Reader, root: Path, t, i: int) -> PairEntry:
    r.expect(t, dict, "each [[pair]]", ("pair", i))
    for k in t:
        if k not in _PAIR_KEYS:
            raise r.error(f"unknown key {k!r} in [[pair]] (known: "
                          f"{', '.join(sorted(_PAIR_KEYS))})", ("pair", i, k), "key")
    if "spec" not in t:
        raise r.error("a [[pair]] needs `spec`", ("pair", i), "key")
    spec = r.expect(t["spec"], str, "spec", ("pair", i, "spec"))
    rel = _rel(r, root, spec, ("pair", i, "spec"))
    sets = r.expect(t.get("set", {}), dict, "set", ("pair", i, "set"))
    for k, v in sets.items():
        r.expect(v, (int, float), f"set.{k}", ("pair", i, "set", k))

    def positive(key: str, types, default):
        v = r.expect(t.get(key, default), types, key, ("pair", i, key))
        if v <= 0 and key != "seed" and not (key == "trials" and v == 0):
            raise r.error(f"{key} must be positive", ("pair", i, key))
        return v

    return PairEntry((root / spec).resolve(), rel, dict(sets),
                     positive("max_shapes", int, 16), positive("unroll", int, 64),
                     float(positive("timeout", (int, float), 60.0)),
                     positive("trials", int, 8), positive("seed", int, 0),
                     r.loc(("pair", i), "key"))
