"""Obligations that are one question up to a renaming of their symbols, solved once.

An elementwise kernel asks the same question of every element: `(x[i] + x[i]) + x[i]` against
`3 * x[i]` is one obligation per i, each the others with `x[i]` renamed. Satisfiability does
not change under a bijective renaming of the free symbols (constants and uninterpreted
functions, sorts kept), so the solver cache (`portfolio.Cache`) keys an obligation by the
sha256 of its *canonical* text: every declared symbol renamed `|c<i>|` in the order it first
occurs in the assertion, declarations in that order. A model found for one is the model of
another with the names mapped back (`Canonical.original`); the caller replays it as usual.
The obligation's own sha256 (its text as written) is still what certificates record.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from verifier.solvers.smtlib import Decl, Obligation

_TOKEN = re.compile(r"\|[^|]*\||[^\s()|]+")


@dataclass(frozen=True)
class Canonical:
    sha256: str
    names: tuple[str, ...]          # the obligation's symbols, in canonical order

    def canonical(self, model: dict | None) -> dict | None:
        """`model` (by the obligation's names) by canonical names."""
        if model is None:
            return None
        index = {n: i for i, n in enumerate(self.names)}
        return {f"c{index[k]}": v for k, v in model.items() if k in index}

    def original(self, model: dict | None) -> dict | None:
        """`model` (by canonical names) by the obligation's names."""
        if model is None:
            return None
        return {self.names[int(k[1:])]: v for k, v in model.items()
                if k.startswith("c") and k[1:].isdigit() and int(k[1:]) < len(self.names)}


def canonical(obligation: Obligation) -> Canonical:
    """The canonical form of `obligation` (module docstring)."""
    decls = {d.name: d for d in obligation.decls}
    order: dict[str, int] = {}
    head, body = [], []
    for line in obligation.text.split("\n"):
        (head if line.startswith(("(set-logic", "(declare-fun")) else body).append(line)

    def rename(m: re.Match) -> str:
        tok = m.group(0)
        name = tok[1:-1] if tok.startswith("|") else tok
        if name not in decls:
            return tok
        i = order.setdefault(name, len(order))
        return f"|c{i}|"

    text = _TOKEN.sub(rename, "\n".join(body))
    for name in decls:               # (declared, never used: last, in the given order)
        order.setdefault(name, len(order))
    names = tuple(sorted(order, key=order.__getitem__))
    logic = next((h for h in head if h.startswith("(set-logic")), "")
    lines = [logic] + [_declaration(f"c{i}", decls[n]) for i, n in enumerate(names)] + [text]
    sha = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return Canonical(sha, names)


def _declaration(name: str, d: Decl) -> str:
    return f"(declare-fun |{name}| ({' '.join(d.domain)}) {d.range})"


__all__ = ["Canonical", "canonical"]
