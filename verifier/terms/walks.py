"""Python z3 terms: identity (`term_id`), a memo that keeps its terms alive (`TermMemo`)
and the DAG walks (`subterms`, `any_subterm`). See the package's docstring for why.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterator, TypeVar

import z3

V = TypeVar("V")


def term_id(t) -> int:
    """The identity of a z3 term (its hash-consed AST's id)."""
    return t.get_id()


class TermMemo(Generic[V]):
    """A memo from z3 terms to values, keyed by `term_id`, that keeps its terms alive."""

    def __init__(self) -> None:
        self._values: dict[int, V] = {}
        self._terms: list = []

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, t) -> bool:
        return t.get_id() in self._values

    def get(self, t, default: V | None = None) -> V | None:
        return self._values.get(t.get_id(), default)

    def put(self, t, value: V) -> V:
        key = t.get_id()
        if key not in self._values:
            self._terms.append(t)
        self._values[key] = value
        return value

    def clear(self) -> None:
        """Forget every entry and let its term go."""
        self._values.clear()
        self._terms.clear()


def subterms(*terms, stop: Callable[[Any], bool] | None = None) -> Iterator:
    """Each distinct subterm of `terms` once, parents before children (a DAG walk); the
    children of a term `e` with `stop(e)` are not visited."""
    seen: set[int] = set()
    stack = list(terms)
    while stack:
        e = stack.pop()
        key = e.get_id()
        if key in seen:
            continue
        seen.add(key)
        yield e
        if stop is None or not stop(e):
            stack.extend(e.children())


def any_subterm(pred: Callable[[Any], bool], t, free: TermMemo[bool] | None = None) -> bool:
    """Does some subterm `e` of `t` (itself included) have `pred(e)`? `free` (kept across
    calls by the caller) remembers the subterms found to have none, so a later call over
    shared subterms does not walk them again."""
    free = TermMemo() if free is None else free
    walked = []
    for e in subterms(t, stop=lambda x: x in free):
        if e in free:
            continue
        if pred(e):
            return True
        walked.append(e)
    for e in walked:              # (none has it, and each was reached from t)
        free.put(e, True)
    return False


def is_input(e) -> bool:
    """An uninterpreted constant (a symbolic input or scalar)."""
    return z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED


def free_constants(*terms) -> list:
    """The uninterpreted constants `terms` mention."""
    return [e for e in subterms(*terms) if is_input(e)]


def function_names(*terms) -> set[str]:
    """The names of the uninterpreted functions (of one argument or more) `terms` apply."""
    return {e.decl().name() for e in subterms(*terms)
            if z3.is_app(e) and e.num_args() > 0
            and e.decl().kind() == z3.Z3_OP_UNINTERPRETED}


__all__ = ["TermMemo", "any_subterm", "free_constants", "function_names", "is_input",
           "subterms", "term_id"]
