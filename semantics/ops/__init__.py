"""Instruction semantics, each written once over a `Domain`.

One module per instruction family registers its semantic functions with `register`. A form is
*supported* when a semantic function accepts it; everything else that parses is kept in the IR
and refused by name (`semantics.errors.UnsupportedError`) by any stage that needs its meaning.
"""

from __future__ import annotations

from typing import Callable

from semantics.ir.nodes import Form

# opcode -> resolvers; a resolver maps a form to its semantic function, or None when it does
# not cover that form (an opcode may be covered by several families: `add` on ints and floats).
_REGISTRY: dict[str, list[Callable[[Form], Callable | None]]] = {}
_LOADED = False


def register(*opcodes: str):
    """Decorator: `@register("add", "sub")` on a resolver `(form) -> semantic fn | None`."""
    def wrap(resolver: Callable[[Form], Callable | None]):
        for op in opcodes:
            _REGISTRY.setdefault(op, []).append(resolver)
        return resolver
    return wrap


def _load_families() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        import semantics.ops.families  # noqa: F401  (registers every family)


def lookup(form: Form) -> Callable | None:
    """The semantic function of a form, or None when keq gives it no meaning (yet)."""
    _load_families()
    for resolver in _REGISTRY.get(form.opcode, ()):
        fn = resolver(form)
        if fn is not None:
            return fn
    return None


def is_supported(form: Form) -> bool:
    return lookup(form) is not None
