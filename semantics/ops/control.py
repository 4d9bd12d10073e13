"""Control flow: bra, ret, exit, trap. The executor acts on these at the end of a basic block
(divergence, reconvergence, thread exit); their semantic functions only mark them supported."""

from __future__ import annotations

from semantics.ops import register


def _terminator(x) -> None:  # pragma: no cover - the executor never calls it
    raise AssertionError("control instructions are executed by the SIMT loop")


@register("bra", "ret", "exit", "trap")
def _resolve(form):
    if form.opcode == "bra" and not form.flags <= {"uni"}:
        return None
    return _terminator
