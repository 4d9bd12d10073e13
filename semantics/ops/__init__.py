"""Instruction semantics, each written once over a `Domain`.

One module per instruction family registers its semantic functions with `register`. A form is
*supported* when a semantic function accepts it; everything else that parses is kept in the IR
and refused by name (`semantics.errors.UnsupportedError`) by any stage that needs its meaning.
"""

from __future__ import annotations

from typing import Callable

from semantics.ir.nodes import Form

# opcode -> checker(form) -> semantic function or None (the form is not covered)
_REGISTRY: dict[str, Callable[[Form], Callable | None]] = {}


def register(opcode: str, resolver: Callable[[Form], Callable | None]) -> None:
    if opcode in _REGISTRY:
        raise ValueError(f"semantics for '{opcode}' registered twice")
    _REGISTRY[opcode] = resolver


def lookup(form: Form) -> Callable | None:
    """The semantic function of a form, or None when keq gives it no meaning (yet)."""
    resolver = _REGISTRY.get(form.opcode)
    return resolver(form) if resolver is not None else None


def is_supported(form: Form) -> bool:
    return lookup(form) is not None
