"""Programmatic dependent launch (PDL): what a launch touches in global memory before its
threads run `griddepcontrol.wait`.

A launch made with programmatic stream serialization may start before the launch it
depends on has finished: once every CTA of that one has run
`griddepcontrol.launch_dependents` (or exited). Only `griddepcontrol.wait` makes the
earlier launch's memory operations complete and visible to the waiting thread (PTX ISA,
`griddepcontrol`; CUDA C++ Programming Guide, "Programmatic Dependent Launch"). So an access
a thread of the dependent launch makes before its wait is unordered with every access of
the launch before: where the two conflict (the same byte, one of them a write) it is a data
race. keq counts a launch-before's accesses all alike, those before its trigger too: the
guide promises no visibility of them without the wait.

`GlobalLog` records, for one concrete launch, which global bytes it reads and writes, and
each access made by a thread that has not yet waited (`verifier.emulate` compares two
launches' logs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from semantics.errors import SourceLoc


@dataclass(frozen=True)
class EarlyAccess:
    """An access by threads that had not run `griddepcontrol.wait` yet."""

    loc: SourceLoc
    kind: str              # "r", "w" or "a" (an atomic reads and writes)
    offsets: np.ndarray    # the global bytes (offsets into the launch's global memory)
    thread: str            # the first thread that made it


@dataclass
class GlobalLog:
    """The global bytes one launch reads and writes, and its accesses before the wait."""

    size: int
    read: np.ndarray = field(init=False)
    written: np.ndarray = field(init=False)
    early: list[EarlyAccess] = field(default_factory=list)
    waited: set[int] = field(default_factory=set)       # global thread ids past their wait

    def __post_init__(self) -> None:
        self.read = np.zeros(self.size, dtype=bool)
        self.written = np.zeros(self.size, dtype=bool)

    def access(self, x, flat: np.ndarray, nbytes: int, active: np.ndarray, kind: str) -> None:
        """Lanes `active` of executor `x` access `nbytes` at each global offset of `flat`."""
        offsets = (flat[:, None] + np.arange(nbytes)).ravel()
        if kind in "ra":
            self.read[offsets] = True
        if kind in "wa":
            self.written[offsets] = True
        tids = x.global_tid[active]
        early = np.array([int(t) not in self.waited for t in tids], dtype=bool)
        if early.any():
            own = (flat[early][:, None] + np.arange(nbytes)).ravel()
            self.early.append(EarlyAccess(x.ins.loc, kind, own,
                                          x.thread_name(int(active[np.argmax(early)]))))

    def wait(self, x, lanes: np.ndarray) -> None:
        """`griddepcontrol.wait` by `lanes` of executor `x`."""
        self.waited.update(int(t) for t in x.global_tid[lanes])


__all__ = ["EarlyAccess", "GlobalLog"]
