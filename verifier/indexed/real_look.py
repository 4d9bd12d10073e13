"""Mode real in the indexed comparison: two stored terms that `SameAt`'s walk does not show
equal are equal as real numbers when their real readings (`verifier.real_mode`) are one term.

The stored terms read input elements as `Select(A, offset)` on an indexed buffer's array
(`semantics.machine.indexed_buffers`), the offset a term of the shape and the CTA. A load
reads, at each point, the element its offset names there (`SameAt.element`); two loads whose
element indices are equal at every point read one value everywhere, so both are read as one
real atom, named by the buffer and the indices (a digest of them). A load whose indices are
not a function of the point alone is not read (the comparison answers "not shown").

Equal readings are a proof at every point for every input (the atoms are universally
quantified, like any input's real value), under mode real's assumption (finite values), which
the caller prints. A selection whose condition reads a loaded element's bits is a reading of
that input both as bits and as a real: then nothing is shown.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import z3

from verifier.real_mode import NotReal, RealTranslator
from verifier.same_at import SameAt
from verifier.terms import TermMemo, any_subterm


@dataclass
class RealReadings:
    """What the indexed comparison needs for mode real: the width of each float out buffer
    (the others are compared as bits alone), and the assumptions the readings used."""
    widths: dict[str, int]
    notes: set[str] = field(default_factory=set)


class RealLook:
    """`look(a, b, width)`: are the stored terms `a` and `b` (elements of a float buffer of
    `width` bits) one real term? A translator per comparison universe (`same`'s points)."""

    def __init__(self, same: SameAt, dims: tuple[int, ...]) -> None:
        self.same = same
        self.dims = dims
        self.tr = RealTranslator(loads=self._load)
        self.free: TermMemo[bool] = TermMemo()

    def __call__(self, a, b, width: int) -> bool:
        if isinstance(a, (int, np.integer)) or isinstance(b, (int, np.integer)):
            return False
        try:
            ra, rb = self.tr.value(a, width), self.tr.value(b, width)
        except NotReal:
            return False
        if self.tr.mixed_inputs() or any(any_subterm(z3.is_select, c, self.free)
                                         for c in self.tr.condition_terms):
            return False
        return ra.eq(rb) or z3.simplify(ra).eq(z3.simplify(rb))

    def _load(self, t) -> str | None:
        arr, off = t.arg(0), t.arg(1)
        found = self.same.element(t.as_ast(), z3.Z3_OP_SELECT, [arr.as_ast(), off.as_ast()])
        if found is None:
            return None
        buffer, idx, valid = found
        idx = np.ascontiguousarray(np.broadcast_to(np.asarray(idx, dtype=np.int64), self.dims))
        digest = hashlib.sha256(idx.tobytes() + repr(valid).encode()).hexdigest()[:24]
        return f"keq!load!{buffer}!{digest}"


__all__ = ["RealLook", "RealReadings"]
