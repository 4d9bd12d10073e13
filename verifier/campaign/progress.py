"""The live count of a long campaign on stderr (`done 7/19 · proved 5 · refuted 1 ·
inconclusive 1 · retried 1`), shown when stderr is a terminal or when asked; never on stdout,
so `--json` stays clean."""

from __future__ import annotations

import sys
from typing import TextIO

KINDS = ("proved", "refuted", "inconclusive")


class Tally:
    def __init__(self, total: int, *, kinds: tuple[str, ...] = KINDS,
                 stream: TextIO | None = None, show: bool | None = None,
                 what: str = "") -> None:
        self.stream = stream or sys.stderr
        self.show = self.stream.isatty() if show is None else show
        self.total, self.what = total, what
        self.counts = {k: 0 for k in kinds}
        self.done = 0
        self.retried = 0
        self.live = self.stream.isatty()          # a terminal: one line, rewritten

    def add(self, kind: str | None, retried: int = 0) -> None:
        """One task done (`kind`: one of the kinds, or None for none of them)."""
        self.done += 1
        if kind is not None:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        self.retried = retried
        self.print()

    def line(self) -> str:
        parts = [f"done {self.done}/{self.total}"]
        parts += [f"{k} {n}" for k, n in self.counts.items()]
        if self.retried:
            parts.append(f"retried {self.retried}")
        return (f"{self.what}: " if self.what else "") + " · ".join(parts)

    def print(self) -> None:
        if not self.show:
            return
        if self.live:
            print(f"\r  {self.line()}\033[K", end="", file=self.stream, flush=True)
        else:
            print(f"  {self.line()}", file=self.stream, flush=True)

    def finish(self) -> None:
        if self.show and self.live:
            print("\r\033[K", end="", file=self.stream, flush=True)
