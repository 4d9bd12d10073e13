"""Conformance: for every scalar instruction form of tiers 1-2 (and the bit family), the
concrete (numpy) and symbolic (z3) domains agree bit for bit on special and random operands.

One test per form line (a failure names the form). Lines whose form has no semantics yet are
skipped with that reason, and picked up automatically once a family covers them. See
`conformance.py` for the table, the operand strategies and how to run another backend.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from conformance import (
    FORMS, NON_SCALAR, TIER1, TIER2, FormCase, check_form, concrete_backend, draw_inputs,
    special_inputs, symbolic_backend,
)

MAX_EXAMPLES = 20
SWEEP_LANES = 24


def _id(c: FormCase) -> str:
    return c.line.split(" ", 1)[0] + ("" if c.line.count(" ") < 2 or "%" in c.line.split(",")[-1]
                                      else "[" + c.line.split(",")[-1].strip(" ;") + "]")


_IDS = [_id(c) for c in FORMS]
for i, name in enumerate(_IDS):          # disambiguate (e.g. shfl variants with other operands)
    if _IDS.count(name) > 1:
        _IDS[i] = f"{name}#{_IDS[:i].count(name)}"


@pytest.mark.parametrize("c", FORMS, ids=_IDS)
def test_form_conforms(c: FormCase):
    if not c.supported:
        pytest.skip(f"no semantics yet for {c.form.name}")
    check_form(c, special_inputs(c, lanes=SWEEP_LANES if c.is_lanewise else None),
               concrete_backend, symbolic_backend)

    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(draw_inputs(c))
    def random_operands(inputs):
        check_form(c, inputs, concrete_backend, symbolic_backend)

    random_operands()


def test_table_covers_every_tier_entry():
    """Every tier-1/2 entry is either a scalar form line of the table or listed as non-scalar
    with a reason; every line of the table parses to the tier entry it claims."""
    entries = {c.entry for c in FORMS}
    missing = [e for e in TIER1 + TIER2 if e not in entries and e not in NON_SCALAR]
    assert missing == []
    wrong = []
    for c in FORMS:
        if c.entry == "extra":
            continue
        g = c.form.generic_name()
        # a line may be a sibling of its entry (mad.hi under mad.lo, setp.lo under setp.lt)
        if g != c.entry and g.split(".")[0] != c.entry.split(".")[0]:
            wrong.append((c.line, g, c.entry))
    assert wrong == []


def test_a_broken_backend_is_caught():
    """The check can fail: a candidate that flips one bit of one lane is reported with the
    form, the lane and both values."""
    c = next(c for c in FORMS if c.line.startswith("add.s32"))

    def broken(case, inputs):
        out = symbolic_backend(case, inputs)
        out.values["%d"][1] ^= 1
        return out

    with pytest.raises(AssertionError, match=r"add\.s32: %d differs on lane 1"):
        check_form(c, {"%a": [1, 2, 3, 4], "%b": [5, 6, 7, 8]}, concrete_backend, broken)
