"""The conformance suite: per instruction form, two backends agree bit for bit.

A *backend* runs one instruction line on a few lanes of concrete inputs and returns an
`Outcome` (destination values as ints/bools, and the effects it recorded). Two ship here:

- `concrete_backend`: the numpy domain.
- `symbolic_backend`: the z3 domain on a fresh variable per input lane; the concrete inputs are
  substituted into the resulting terms afterwards and simplified to constants.

Any future domain (SASS semantics, a GPU run through pycuda) is one more backend: a callable
`(case, inputs) -> Outcome`. Run it with

    conformance_suite(FORMS, reference=concrete_backend, candidate=my_backend)

or per form with `check_form(case, inputs, reference, candidate)`. `inputs` maps each input
register of the case to one value per lane (bit patterns; bools for predicates);
`draw_inputs(case)` is the hypothesis strategy that mixes random values with NaN payloads,
±0, ±inf, subnormals, max/min normals and integer extremes (0, 1, -1, INT_MIN, INT_MAX,
UINT_MAX, and width-1, width, width+1 for shift amounts), and `special_inputs(case)` a
deterministic sweep of those specials.

The table `FORMS` has one or more instruction lines for every scalar form of tiers 1 and 2 of
PTX-COVERAGE.md (and the rest of the bit family). Forms keq has no semantics for yet are kept in
the table and reported as skipped (`skipped_forms()`): when another family gains semantics for
them, the suite picks them up with no change here. Tier entries that are not scalar register
operations (memory, control flow, barriers, textures, tensor cores) are listed in `NON_SCALAR`
with the reason; the executor and memory tests cover them.

Approximate forms (`*.approx`): the symbolic domain makes them uninterpreted functions by
design, so values are not compared; both backends must record the approximation effect.
"""

from __future__ import annotations

# The suite lives in the package (`keq fuzz --semantics` runs it with a GPU as one side);
# this module re-exports its public names for the tests.
from semantics.conformance import (  # noqa: F401
    FORMS, NON_SCALAR, TIER1, TIER2, Backend, FormCase, Outcome, case, check_form,
    concrete_backend, conformance_suite, coverage_report, draw_inputs, skipped_forms,
    special_inputs, specials, supported_forms, symbolic_backend, value_strategy, scalar_forms,
    _fp_specials, _int_specials, _same,
)
