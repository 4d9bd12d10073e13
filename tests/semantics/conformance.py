"""The conformance suite, as the tests use it: see `semantics.conformance` for what it checks
and how to run another backend (SASS, a GPU) against it."""

from __future__ import annotations

# The suite lives in the package (`keq fuzz --semantics` runs it with a GPU as one side);
# this module re-exports its public names for the tests.
from semantics.conformance import (  # noqa: F401
    FORMS, NON_SCALAR, TIER1, TIER2, Backend, FormCase, Outcome, case, check_form,
    concrete_backend, conformance_suite, coverage_report, draw_inputs, skipped_forms,
    special_inputs, specials, supported_forms, symbolic_backend, value_strategy, scalar_forms,
    _fp_specials, _int_specials, _same,
)
