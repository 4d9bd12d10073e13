"""SASS instruction semantics, each written once over the same `Domain` as PTX's.

One module per family registers resolvers with `register("OPCODE", ...)`; a resolver maps a
SASS `Form` (opcode + modifiers in source order) to a semantic function `sem(x)` or None when
keq does not cover that form. `lookup(form)` asks every resolver of the opcode;
`semantics.sass.machine.prepare_sass` refuses an uncovered form by name and location.

A semantic function receives the SIMT executor `x` (`semantics.machine.executor.Executor`), as
PTX semantics do; SASS operands are read and written through `semantics.sass.ops.access`.
Where a SASS instruction computes what a PTX instruction computes, the function calls the PTX
semantics itself (`semantics.sass.ops.ptxcall`), so the arithmetic has one definition.
"""

from __future__ import annotations

from collections.abc import Callable

from semantics.ir.nodes import Form

_REGISTRY: dict[str, list[Callable[[Form], Callable | None]]] = {}
_LOADED = False


def register(*opcodes: str):
    """Decorator: `@register("IADD3", "UIADD3")` on a resolver `(form) -> sem | None`."""
    def wrap(resolver):
        for op in opcodes:
            _REGISTRY.setdefault(op, []).append(resolver)
        return resolver
    return wrap


def _load() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from semantics.sass.ops import (  # noqa: F401
            async_copy, control, float_ops, int_ops, memory, move, tensor)


def lookup(form: Form) -> Callable | None:
    _load()
    for resolver in _REGISTRY.get(form.opcode, ()):
        fn = resolver(form)
        if fn is not None:
            return fn
    return None


def is_supported(form: Form) -> bool:
    return lookup(form) is not None


def covered_opcodes() -> list[str]:
    _load()
    return sorted(_REGISTRY)
