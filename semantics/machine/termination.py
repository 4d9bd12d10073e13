"""Every run ends: a step budget, and loops that spin without progress.

A kernel may loop forever for some input (a `while (x[i] != 0)`, a spin on a flag no thread
will set). Two things end it:
- the step budget (`Executor.max_steps`, instructions issued per lockstep path, which bounds
  what any one thread executes): past it the run raises `NonTermination`, naming the loop;
- a loop that comes back to a block with the same lanes, the same register values and no
  memory written since spins forever unless another thread changes memory. If another path
  of this divergent branch or of an enclosing one is waiting (the writer of a flag this loop
  reads), it runs first, as independent thread scheduling would let it; if lanes of other
  CTAs can run, the spinning CTAs are set aside until they have (`Parking`); otherwise the lanes never
  finish: `NonTermination` where that is certain, an obligation of the symbolic launch where
  it depends on the inputs (the verifier then finds an input, and the emulator shows it).
A candidate that does not terminate where the reference does is not equivalent; a reference
that does not terminate is an error about the spec.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import numpy as np

from semantics.errors import UnsupportedError

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
        self.seen: dict[tuple[int, int], tuple[dict, int, int]] = {}
        self.last: tuple | None = None     # the state `spinning` compared with

    def spinning(self, x, pc: int, entry) -> bool:
        key = (pc, id(entry))
        state = (dict(x.regs), _writes(x.port), _shared_reads(x.port))
        prev = self.seen.get(key)
        self.seen[key] = state
        self.last = prev
        if prev is None or prev[1] != state[1]:
            return False
        before, now = prev[0], state[0]
        return before.keys() == now.keys() and all(_same_value(before[r], now[r]) for r in now)

    def reads_shared(self, x) -> bool:
        """Did the pass `spinning` just found load memory another thread may write?"""
        return self.last is None or self.last[2] != _shared_reads(x.port)

    def forget(self, pc: int, entry) -> None:
        self.seen.pop((pc, id(entry)), None)


def _shared_reads(port) -> int:
    count = getattr(port, "shared_reads", None)
    return -1 if count is None else count


def others_could_run(x, mask) -> bool:
    """Could lanes other than those spinning in `mask` change memory first: lanes of other
    CTAs that are parked or live on the stack, or lanes of a spinning CTA waiting on the
    stack (where lockstep execution reconverges them, which independent thread scheduling
    would let them pass) that can reach a write without passing a CTA barrier (which would
    wait for the spinning lanes)?"""
    if x._parking.parked:
        return True
    d = x.d
    spinning = _maybe_lanes(mask)
    ctas = np.isin(x.cta_of_lane, np.unique(x.cta_of_lane[spinning]))
    live = d.pnot(x._threads_exited())
    elsewhere = _as_pred(d, ~ctas)
    mates = _as_pred(d, ctas & ~spinning)
    writes = writes_before_barrier(x.k)
    return any(d.may_any(d.pand(d.pand(e[2], elsewhere), live)) or
               (e[0] in writes and d.may_any(d.pand(d.pand(e[2], mates), live)))
               for e in x.stack[:-1])


_WRITES = frozenset({"st", "atom", "red", "sust", "sured", "call", "stmatrix", "wmma", "cp",
                     "multimem", "tensormap"})


def writes_before_barrier(k) -> frozenset[int]:
    """The blocks of kernel `k` from whose start a thread can reach an instruction that may
    write memory without passing a CTA barrier (`bar.sync`, `bar.red`, `barrier.sync`;
    `bar.warp.sync` and `bar.arrive` do not hold it); computed once per kernel."""
    cached = k.analyses.get("writes-before-barrier")
    if cached is not None:
        return cached
    blocks, instrs = k.cfg.blocks, k.instrs
    direct: dict[int, bool | None] = {}        # True: writes; False: a barrier first
    for b in blocks:
        direct[b.index] = None
        for ins in instrs[b.start:b.end]:
            op = getattr(ins, "opcode", None)
            form = getattr(ins, "form", None)
            if op is None or form is None or op in _WRITES:
                direct[b.index] = True
                break
            if op in ("bar", "barrier") and "warp" not in form.flags and \
                    "arrive" not in form.flags:
                direct[b.index] = False
                break
    out = set()
    for b in blocks:                           # (reachability over blocks that pass through)
        seen, todo = set(), [b.index]
        while todo:
            i = todo.pop()
            if i in seen or i < 0:
                continue
            seen.add(i)
            if direct[i] is True:
                out.add(b.index)
                break
            if direct[i] is None:
                todo.extend(blocks[i].succs)
    k.analyses["writes-before-barrier"] = result = frozenset(out)
    return result


class Unscheduled(UnsupportedError):
    """A loop spins while threads that lockstep execution holds back could change what it
    reads: whether it ends depends on a schedule keq does not explore (Inconclusive)."""


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


class Parking:
    """CTAs set aside while they spin, so that other CTAs run on: lockstep execution keeps
    every CTA on one stack, so a CTA that waits for another's store made after a point where
    their paths reconverge (CUTLASS-style turns: CTA b waits for CTA b - 1's flag, which it
    stores after a barrier) would spin with the writer held back. CTAs share nothing but
    global memory, so running one later is a schedule the GPU may choose (with the progress
    the claim assumes: `semantics.machine.symbolic_spins`)."""

    def __init__(self) -> None:
        self.parked: list[tuple[list, int]] = []    # (their stack entries, writes then)

    def park(self, x, mask) -> bool:
        """Set aside the CTAs of the lanes spinning in `mask` (`x`: the executor), when lanes
        of other CTAs may run (on the stack, or parked with memory written since). Returns
        whether it did (the stack changed)."""
        d, stack = x.d, x.stack
        spinning = np.unique(x.cta_of_lane[_maybe_lanes(mask)])
        inside = np.isin(x.cta_of_lane, spinning)
        outside = _as_pred(d, ~inside)
        runnable = any(e[0] != e[1] and d.may_any(d.pand(e[2], outside)) for e in stack)
        writes = _writes(x.port)
        if not runnable and not any(w < writes for _, w in self.parked):
            return False
        own = _as_pred(d, inside)
        self.parked.append(([[e[0], e[1], d.pand(e[2], own)] for e in stack], writes))
        for e in stack:
            e[2] = d.pand(e[2], outside)
        return True

    def resume(self, stack: list) -> bool:
        """Put the CTAs parked longest back on the (empty) stack; False when none are."""
        if not self.parked:
            return False
        entries, _ = self.parked.pop(0)
        stack.extend(entries)
        return True


def _maybe_lanes(mask) -> np.ndarray:
    return np.array([not (isinstance(m, (bool, np.bool_)) and not m) for m in mask]) \
        if not isinstance(mask, np.ndarray) else mask.astype(bool)


def _as_pred(d, arr: np.ndarray):
    """A concrete lane vector as the domain's predicate."""
    return d.pnot(d.eq(d.from_ints(arr.astype(np.int64), 1), d.const(0, 1), 1))


def loop_name(x, pc: int) -> str:
    block = x.k.cfg.blocks[pc]
    label = block.labels[0] if block.labels else f"block {pc}"
    return f"the loop at {label} ({x.k.instrs[block.start].loc})"


__all__ = ["step_budget", "step_budget_of", "LoopWatch", "Parking", "Unscheduled", "sibling",
           "loop_name", "others_could_run", "writes_before_barrier",
           "DEFAULT_MAX_STEPS"]
