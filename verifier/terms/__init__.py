"""The one term layer of the verifier: walking z3 terms and remembering what was found.

Term identity is z3's AST id (`term_id`): z3 hash-conses, so two structurally equal terms
are one AST with one id. An id is only meaningful while its term lives: z3 reuses the id of
a freed AST, so a memo keyed by id that does not keep its terms alive may answer for a
different term later (a stale memo, and a wrong verdict). The memos here are the one place
that rule is written, and every memo of the verifier is one of them:

- `TermMemo` (`walks`) keys Python terms by `term_id` and keeps every key's term alive for
  as long as the memo lives;
- `RawTermMemo` (`raw`) is its counterpart for the hot walks over raw ASTs (ctypes handles
  read with `semantics.domains.z3raw`, no Python wrapper per node): keyed by `raw_key` (a
  live AST's address: read without calling libz3, where `raw_id` is a C call), it keeps
  each key's AST alive in a z3 AST vector (`Pins`: one C call a key, all let go in one);
- `ConjunctMemo` (`raw`) holds `z3raw.conjuncts`' own memo (keyed by z3 id inside
  `semantics`), with every condition it was asked about kept alive.

Walks are iterative over the DAG (each distinct subterm once): a tree walk, or a
recursive one, is exponential or overflows the stack on the shared sums of a reduction.
"""

from verifier.terms.raw import ConjunctMemo, Pins, RawTermMemo, raw_id, raw_key
from verifier.terms.walks import (TermMemo, any_subterm, free_constants, function_names,
                                  is_input, subterms, term_id)

__all__ = ["ConjunctMemo", "Pins", "RawTermMemo", "TermMemo", "any_subterm", "free_constants",
           "function_names", "is_input", "raw_id", "raw_key", "subterms", "term_id"]
