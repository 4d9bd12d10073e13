"""Words that atomic adds are still adding to, and the parts their sums are built from.

A histogram bin takes an increment per lane and per value the lane's index may take: `base +
If(data[0] == k, step0, 0) + If(data[1] == k, step1, 0) + ...` (`SymbolicPort.atomic`). The
increments are collected in a `PendingSum` and built as one n-ary sum when something reads the
word: one node of hundreds of addends instead of a chain of hundreds of binary ones (cheaper to
build and to walk).

`SumParts` records what such a node was built from, keyed by the node's address in libz3
(`key`): its base, its addends, and for each addend `If(test, step, 0)` the test and the step.
A verifier that takes output sums apart (`verifier.guarded_sums`) reads the parts from the
record instead of asking libz3 for every addend's children (a dozen foreign calls per addend,
262,144 addends for a histogram's two kernels). The record states facts about a term that
exists: `SumParts.node` keeps it alive, so no other term can take its address, and z3's
constructors build exactly the nodes they are given (no simplification), so the node's
arguments are the recorded terms, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from semantics.domains import z3raw


def key(raw) -> int:
    """The identity of a live z3 node: its address (a raw AST from `as_ast()` or a getter)."""
    return raw.value


@dataclass(frozen=True)
class SumParts:
    """`node` is `BvSum([base, *addends])`; `addends[j]` is `If(tests[j], steps[j],
    others[j])` where `tests[j]` is not None (else any term)."""

    node: z3.BitVecRef
    base: z3.BitVecRef
    addends: tuple[z3.BitVecRef, ...]
    tests: tuple[Any, ...]
    steps: tuple[Any, ...]
    others: tuple[Any, ...]


class PendingSum:
    """A word that atomic adds are still adding to: `base + addends[0] + addends[1] + ...`."""

    __slots__ = ("base", "addends", "tests", "steps", "others", "parted", "gen")

    def __init__(self, base) -> None:
        self.base = base
        self.addends: list = []
        self.tests: list = []
        self.steps: list = []
        self.others: list = []
        self.parted = False    # some addend's parts are given
        self.gen = -1          # its region's `writes` count when its bytes were last its own

    def add(self, addend, parts: tuple | None = None) -> None:
        """Add `addend`; `parts` (test, step, other) when it is `If(test, step, other)`."""
        self.addends.append(addend)
        test, step, other = parts if parts is not None else (None, None, None)
        self.tests.append(test)
        self.steps.append(step)
        self.others.append(other)
        self.parted |= parts is not None

    def term(self, record: dict[int, SumParts] | None = None):
        """The sum as one n-ary node; recorded in `record` (by `key`) when some addend's
        parts are given."""
        node = z3raw.BvSum([self.base, *self.addends])
        if record is not None and self.parted:
            record[key(node.as_ast())] = SumParts(node, self.base, tuple(self.addends),
                                                  tuple(self.tests), tuple(self.steps),
                                                  tuple(self.others))
        return node


__all__ = ["PendingSum", "SumParts", "key"]
