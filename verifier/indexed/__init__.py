"""Indexed buffers over symbolic launch shapes: bounds and outputs decided shape by shape.

When splitting symbolic addresses by value is too costly (a transpose's `y * cols + x` over
symbolic `rows` and `cols`), the maximal launch runs with the spec's `in` and `out` buffers
*indexed* (`semantics.machine.indexed_buffers`; chosen up front when a buffer's length
mentions two shape scalars, else after splitting ran out of budget): loads from an `in` buffer are
`Select(A, offset)`, stores to an `out` buffer go to a write log. This module decides, by
evaluating the logged terms at every allowed shape with numpy (exact: the plan lists every
shape):

- bounds: every logged access is inside its buffer's length and aligned wherever its
  condition holds (`violation`);
- outputs: replaying each kernel's write log gives, per shape and element, a *code* for the
  term the kernel leaves there: the id of the input element a `Select` reads at that shape
  (the same id as that element's own term, which loads at concrete addresses return), the
  id of any other term, or the id of the element's initial contents when no store writes it.
  Equal codes at every shape where the element exists prove the element (the same term
  denotes the same function of the inputs). Where codes differ, the two stored terms are
  walked at once over the shapes where that pair of writes meets (`SameAt`: congruence,
  with shape-only parts evaluated and shape-only selections split; in mode real also an
  fma with a zero multiplicand read as its addend). A shape where neither
  shows equality, or where two threads write one element, is handed back (`Differs`) to be
  checked on its own, which either refutes it with a replayed counterexample or names a
  race.

Nothing here is approximate (beyond mode real's own reading of floats as reals): the condition
or offset of a logged access that depends on input data cannot be evaluated and raises
`NotIndexable` (the caller then says Inconclusive); a selection at such an offset is an opaque
term, equal only to the very same term.

The modules: `cells` (what is kept and answered), `bounds`, `codes` (a value's code at every
shape), `replay` (a write log replayed into codes), `second_look` (the term walk over pairs
of writes whose codes differ), `compare`, and `buffers` (setting the mode up).
"""

from verifier.indexed.bounds import first_outside, inside_at, violation, violation_of
from verifier.indexed.buffers import (CELLS, buffer_info, indexed_params, size_check,
                                      two_dimensional)
from verifier.indexed.cells import Differs, Layout, NotIndexable
from verifier.indexed.codes import Codes
from verifier.indexed.compare import compare, compare_apart
from verifier.indexed.real_look import RealReadings
from verifier.indexed.replay import replay_log, replay_logs
from verifier.indexed_buffer import IndexedBuffer
from verifier.same_at import SameAt  # (re-exported: the walk lives in its own module)

__all__ = ["CELLS", "Codes", "Differs", "IndexedBuffer", "Layout", "NotIndexable", "RealReadings",
           "SameAt",
           "buffer_info", "compare", "compare_apart", "first_outside", "indexed_params",
           "inside_at", "replay_log", "replay_logs", "size_check", "two_dimensional",
           "violation", "violation_of"]
