"""Errors of the certificate layer. Bad input (an unreadable certificate, manifest or key) is a
`CertError`, a `KeqError`: the CLI prints it located and exits 3. A certificate that reads but
does not hold up (stale, edited, not equivalent) is not an error: it is a finding, exit 1."""

from __future__ import annotations

from semantics.errors import KeqError, LocatedError


class CertError(KeqError):
    """A certificate, manifest or key keq cannot read (exit 3)."""


class LocatedCertError(LocatedError, CertError):
    """The same, at a place in a file (`file:line:col: error: ...`)."""
