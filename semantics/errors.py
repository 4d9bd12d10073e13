"""Errors that carry the offending object and where it came from.

Every user-facing error renders as ``file:line:col: error: message`` followed by the offending
line and a caret, the format compilers use, so editors and CI logs can jump to it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in a source file; 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class KeqError(Exception):
    """Base of every error keq reports to a user (exit code 3 at the CLI)."""

    def render(self) -> str:
        return f"error: {self}"


class LocatedError(KeqError):
    """An error at a place in a file, rendered with the source line and a caret."""

    def __init__(self, message: str, loc: SourceLoc, line_text: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.line_text = line_text

    def __reduce__(self):
        # (picklable with its location: a forked worker's error reaches the parent whole)
        return type(self), (self.message, self.loc, self.line_text)

    def render(self) -> str:
        out = f"{self.loc}: error: {self.message}"
        if self.line_text is not None:
            text = self.line_text.rstrip("\n").expandtabs(1)
            caret = " " * max(self.loc.col - 1, 0) + "^"
            out += f"\n{text}\n{caret}"
        return out

    def __str__(self) -> str:
        return f"{self.loc}: error: {self.message}"


class PtxSyntaxError(LocatedError):
    """Text that is not PTX keq can read."""


class UnsupportedError(LocatedError):
    """A construct that parses but has no semantics: refused by name, never skipped."""


class ShapeMachineryNeeded(UnsupportedError):
    """What one fixed-input symbolic run cannot decide but the symbolic launch's machinery
    can (accesses logged with their conditions, obligations decided by a solver): a
    data-dependent address, or an access or undefined behaviour under a data-dependent
    condition. The verifier runs the shape again that way."""

