"""The error a pair spec keq cannot accept raises: a `LocatedError` (file:line:col)."""

from __future__ import annotations

from semantics.errors import LocatedError


class SpecError(LocatedError):
    """A pair spec keq cannot accept."""
