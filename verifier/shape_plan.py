"""The launch shapes a claim allows, as one plan (`ShapePlan`): the symbolic shape scalars,
every allowed combination, and the maximal launch that covers them all (each kernel's largest
grid, its one block, each buffer's largest length). `verifier.coverage.symbolic_launch` runs that launch;
`plan_at` is the plan of one fixed shape (the symbolic launch's machinery at a point)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from verifier.claim import launch_scalars
from verifier.counterexample import scalar_domain, shape_text
from verifier.spec import PairSpec

MAX_COMBINATIONS = 2_000_000     # shapes enumerated (cheaply) to find the maximal launch


class ShapeFallback(Exception):
    """This claim cannot be checked with symbolic shapes (the reason says why)."""


class CheckAt(ShapeFallback):
    """Everything else holds at every shape, but at the shape `env` the kernels may differ
    (`why`): the caller checks that shape on its own, which refutes it or names a race."""

    def __init__(self, env: dict[str, int], why: str) -> None:
        super().__init__(f"{why} at {shape_text(env)}")
        self.env, self.why = env, why


@dataclass(frozen=True)
class ShapePlan:
    names: tuple[str, ...]                          # the symbolic shape scalars
    shapes: tuple[dict[str, int], ...]              # every allowed combination (for sampling)
    grids: dict[str, tuple[int, int, int]]          # maximal grid per role
    blocks: dict[str, tuple[int, int, int]]
    lengths: dict[str, int]                         # maximal length per buffer
    axes: tuple[tuple[int, ...], ...]               # each name's values (`ShapeSpace`)

    @property
    def count(self) -> int:
        return len(self.shapes)


def plan(spec: PairSpec, fixed: dict[str, int]) -> ShapePlan:
    """The maximal launch of a claim: raises ShapeFallback when there is none."""
    names = tuple(p.name for p in spec.scalars
                  if p.name in launch_scalars(spec) and p.name not in fixed)
    if spec.reference.then or spec.candidate.then:
        raise ShapeFallback("a side of several launches is checked one launch shape at a "
                            "time")
    if not names:
        raise ShapeFallback("no scalar shapes the launch")
    axes = []
    total = 1
    for n in names:
        dom = scalar_domain(spec.param(n))
        if dom is None:
            raise ShapeFallback(f"scalar '{n}' shapes the launch and has no range")
        # An `assume` about this scalar alone (`K % 16 == 0`) narrows its axis up front: the
        # grid of values (`verifier.shape_space`) is then no larger than it must be.
        alone = [a for a in spec.assume if a.names <= {n} | set(fixed)]
        dom = [v for v in dict.fromkeys(dom) if all(a.eval(dict(fixed, **{n: v})) for a in alone)]
        axes.append(dom)
        total *= len(dom)
    if total > MAX_COMBINATIONS:
        raise ShapeFallback(f"{total} shape combinations (at most {MAX_COMBINATIONS})")
    at_once = _plan_at_once(spec, fixed, names, axes)
    if at_once is not None:
        return at_once
    # (somewhere a shape is refused: the loop below evaluates shape by shape and says where)
    shapes = []
    grids = {"reference": [1, 1, 1], "candidate": [1, 1, 1]}
    blocks: dict[str, set] = {"reference": set(), "candidate": set()}
    lengths = {p.name: 0 for p in spec.buffers}
    for combo in itertools.product(*axes):
        env = dict(fixed)
        env.update(zip(names, combo))
        if not spec.check_assumptions(env):
            continue
        shapes.append({n: env[n] for n in names})
        for role in grids:
            grid, block = spec.side(role).launch(env)      # raises on a bad grid or block
            grids[role] = [max(a, b) for a, b in zip(grids[role], grid)]
            blocks[role].add(block)
        for p in spec.buffers:
            lengths[p.name] = max(lengths[p.name], p.length_of(env))
    if not shapes:
        raise ShapeFallback("no launch shape satisfies the ranges and `assume`")
    for role, bs in blocks.items():
        if len(bs) > 1:
            raise ShapeFallback(f"the {role}'s block shape depends on the scalars")
    return ShapePlan(names, tuple(shapes), {r: tuple(g) for r, g in grids.items()},
                     {r: next(iter(b)) for r, b in blocks.items()}, lengths,
                     tuple(tuple(a) for a in axes))


class _LeftToTheLoop(Exception):
    """(`_plan_at_once` only: the loop over shapes says what is wrong, and where.)"""


def _plan_at_once(spec: PairSpec, fixed: dict[str, int], names: tuple[str, ...],
                  axes: list[list[int]]) -> ShapePlan | None:
    """`plan`'s loop over every combination, evaluated at all of them at once (numpy arrays
    of Python ints: the same arithmetic). Anything the loop would raise (a grid or block
    dimension below 1, a negative length, a division by zero) or fail on (a block that
    depends on the scalars) is left to it: this returns only what the loop returns, and
    None when it cannot tell."""
    try:
        return _at_once(spec, fixed, names, axes)
    except (_LeftToTheLoop, ZeroDivisionError):     # (the latter: a launch expression's)
        return None


def _at_once(spec: PairSpec, fixed: dict[str, int], names: tuple[str, ...],
             axes: list[list[int]]) -> ShapePlan:
    grid = np.meshgrid(*[np.array(a, dtype=object) for a in axes], indexing="ij")
    env: dict[str, Any] = dict(fixed)
    env.update((n, g.reshape(-1)) for n, g in zip(names, grid))
    total = grid[0].size
    ok = np.ones(total, dtype=bool)
    for p in spec.scalars:                 # (names take their domain's values: in range)
        if p.name in fixed and not p.allows(fixed[p.name]):
            ok[:] = False
    for a in spec.assume:
        ok &= np.broadcast_to(np.asarray(a.eval_many(env), dtype=bool), (total,))
    if not ok.any():
        raise _LeftToTheLoop
    at = {n: v[ok] for n, v in env.items() if n in names}
    env.update(at)

    def most(e, least: int) -> int:
        """`e`'s largest value; below `least` somewhere, the loop raises the error."""
        v = e.eval_many(env)
        lo, hi = (min(v), max(v)) if isinstance(v, np.ndarray) else (v, v)
        if lo < least:
            raise _LeftToTheLoop
        return int(hi)

    grids, blocks = {}, {}
    for role in ("reference", "candidate"):
        side = spec.side(role)
        grids[role] = tuple([most(e, 1) for e in side.grid] + [1] * (3 - len(side.grid)))
        block = [e.eval_many(env) for e in side.block]
        if any(isinstance(b, np.ndarray) and (b != b[0]).any() for b in block):
            raise _LeftToTheLoop           # (the loop says the block depends on the scalars)
        block = [int(b[0]) if isinstance(b, np.ndarray) else int(b) for b in block]
        if min(block) < 1:
            raise _LeftToTheLoop
        blocks[role] = tuple(block + [1] * (3 - len(block)))
    lengths = {p.name: most(p.length, 0) for p in spec.buffers}
    columns = [at[n].tolist() for n in names]
    shapes = tuple(dict(zip(names, combo)) for combo in zip(*columns))
    return ShapePlan(names, shapes, grids, blocks, lengths, tuple(tuple(a) for a in axes))


def plan_at(spec: PairSpec, env: dict[str, int]) -> ShapePlan:
    """A plan of the one launch shape `env` fixes: the symbolic launch's machinery (every
    access logged with its condition, addresses that depend on input data split by value)
    at a single shape, for what the per-shape check cannot decide on its own."""
    if spec.reference.then or spec.candidate.then:
        raise ShapeFallback("the logged machinery runs one kernel per side; this side has "
                            "several launches")
    grids, blocks = {}, {}
    for role in ("reference", "candidate"):
        grid, block = spec.side(role).launch(env)
        grids[role], blocks[role] = tuple(grid), tuple(block)
    return ShapePlan((), ({},), grids, blocks, {p.name: p.length_of(env) for p in spec.buffers},
                     ())
