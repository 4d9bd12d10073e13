"""Interpretations of the instruction semantics.

`concrete.ConcreteDomain` runs on numpy arrays (one element per lane, whole CTAs per call);
`symbolic.SymbolicDomain` builds z3 terms, keeping concrete lanes as plain ints. Both implement
the primitive contract of `base.Domain`; `tests/semantics` checks they agree bit for bit.
"""
