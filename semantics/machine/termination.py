"""Every run ends: a step budget, and loops that spin without progress.

A kernel may loop forever for some input (a `while (x[i] != 0)`, a spin on a flag no thread
will set). Two things end it:
- the step budget (`Executor.max_steps`, instructions issued per lockstep path, which bounds
  what any one thread executes): past it the run raises `NonTermination`, naming the loop;
- a loop that comes back to a block with the same lanes, the same register values and no
  memory written since spins forever unless another thread changes memory. If another path
  of this divergent branch or of an enclosing one is waiting (the writer of a flag this loop
  reads), it runs first, as independent thread scheduling would let it; otherwise the lanes never
  finish: `NonTermination` where that is certain, an obligation of the symbolic launch where
  it depends on the inputs (the verifier then finds an input, and the emulator shows it).
A candidate that does not terminate where the reference does is not equivalent; a reference
that does not terminate is an error about the spec.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import numpy as np

DEFAULT_MAX_STEPS = 1_000_000
# The budget a run gets when its caller names none: the commands' `--max-steps`, set for the
# whole process (forked workers inherit it) by `step_budget_of`.
_BUDGET = [DEFAULT_MAX_STEPS]


def step_budget() -> int:
    """Instructions per lockstep path a run may issue when its caller names no budget."""
    return _BUDGET[0]


@contextmanager
def step_budget_of(steps: int) -> Iterator[None]:
    """Every run started inside gets `steps` as its budget (`--max-steps`)."""
    if steps < 1:
        raise ValueError(f"a step budget of {steps} instructions: give 1 or more")
    before = _BUDGET[0]
    _BUDGET[0] = steps
    try:
        yield
    finally:
        _BUDGET[0] = before


def _same_value(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            a.shape == b.shape and bool(np.array_equal(a, b))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return all(x is y or (_plain(x) and _plain(y) and x == y) or
                   (not _plain(x) and not _plain(y) and x.get_id() == y.get_id())
                   for x, y in zip(a, b))
    return False


def _plain(v) -> bool:
    return isinstance(v, (int, bool, np.integer, np.bool_))


class LoopWatch:
    """The state each block was last entered with on the current path (its stack entry): a
    re-entry with the same register values and no memory written since is a spin. (The
    lanes then take the same path again, so the mask needs no comparing: a symbolic mask
    grows a conjunct per iteration without changing.)"""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, int], tuple[dict, int]] = {}

    def spinning(self, x, pc: int, entry) -> bool:
        key = (pc, id(entry))
        state = (dict(x.regs), _writes(x.port))
        prev = self.seen.get(key)
        self.seen[key] = state
        if prev is None or prev[1] != state[1]:
            return False
        before, now = prev[0], state[0]
        return before.keys() == now.keys() and all(_same_value(before[r], now[r]) for r in now)

    def forget(self, pc: int, entry) -> None:
        self.seen.pop((pc, id(entry)), None)


def _writes(port) -> int:
    count = getattr(port, "write_count", None)
    return count() if count is not None else 0


def sibling(stack: list, d) -> int | None:
    """The index of the nearest waiting path below the top of `stack` (some lane in it), or
    None. A divergence pushes its two paths together, with one reconvergence point; the
    lower one waits until the upper one (or, once that one diverged in turn, the
    reconvergence entry that replaced it, which keeps the point) is done. So an entry waits
    when the entry above it has its reconvergence point: that finds the other path of this
    divergence and of every enclosing one (a spin inside `if (t == 0)` of CTA 1 waits for a
    store on CTA 0's side of an outer branch)."""
    for i in range(len(stack) - 2, -1, -1):
        entry = stack[i]
        if entry[1] == stack[i + 1][1] and entry[0] != entry[1] and d.may_any(entry[2]):
            return i
    return None


def loop_name(x, pc: int) -> str:
    block = x.k.cfg.blocks[pc]
    label = block.labels[0] if block.labels else f"block {pc}"
    return f"the loop at {label} ({x.k.instrs[block.start].loc})"


__all__ = ["step_budget", "step_budget_of", "LoopWatch", "sibling", "loop_name", "DEFAULT_MAX_STEPS"]
