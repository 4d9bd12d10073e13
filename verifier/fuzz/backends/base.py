"""What a fuzzing backend is and what one run of a side gives back (`verifier.fuzz.backends`
has the whole picture); the backends import these, the package's `get_backend` imports the
backends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from semantics.errors import KeqError


@dataclass
class SideRun:
    final: dict[str, Any] | None
    fault: KeqError | None = None
    effects: tuple = ()
    coverage: Any = None


class SideRunner(Protocol):
    role: str
    kernel: str

    def run(self, values: dict, scalars: dict) -> SideRun: ...


class Backend(Protocol):
    name: str
    measures_coverage: bool

    def prepare(self, spec) -> dict[str, SideRunner]: ...

    def describe(self) -> str: ...
