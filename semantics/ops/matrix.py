"""Warp-level matrix data movement: ldmatrix, stmatrix and movmatrix on 8x8 matrices of
16-bit elements (`.m8n8`, `.b16`).

What the PTX ISA specifies (section 9.7.14.5, "Warp-level matrix instructions": 9.7.14.5.15
ldmatrix, 9.7.14.5.16 stmatrix, 9.7.14.5.17 movmatrix; figures "ldmatrix fragment layout",
"stmatrix fragment layout", "movmatrix source/result matrix fragment layout"):
- `.x1/.x2/.x4` move 1, 2 or 4 matrices; each matrix's eight rows start at the addresses
  that eight threads give: threads 0-7 matrix 0, 8-15 matrix 1, 16-23 matrix 2, 24-31 matrix
  3 (the other threads' addresses are not used). A row is 16 bytes, naturally aligned.
- Fragment layout: register k of lane i holds, of matrix k, row i/4, columns 2*(i%4) (low
  half) and 2*(i%4)+1 (high half): four consecutive lanes hold one row. `.trans` moves the
  matrix in column-major order: lane i then holds column i/4, rows 2*(i%4) and 2*(i%4)+1.
  stmatrix is the inverse (the same layout, stored); movmatrix gives, in that layout, the
  transpose of the matrix its source registers hold in it.
- `.shared{::cta}`, or generic addressing that must point into shared memory (else
  undefined). The accesses are weak memory operations.
- `.sync.aligned`: every thread of the warp executes the same instruction; otherwise, or if a
  thread of the warp has exited, the behaviour is undefined (keq: `Executor.undefined_if`).

Other shapes and types (`.m16n16`, `.m8n16`, `.m16n8`, `.b8` and the packed 4/6-bit source
formats of sm_100) have no semantics here: the resolvers return None and they are refused by
name. Lane geometry (which lane of a warp gives what) is concrete in every domain, so it is
built with plain Python ints; values move with `gather` over those lanes, and halves with
extract/concat.
"""

from __future__ import annotations

from typing import Any, Callable

from semantics.errors import PtxSyntaxError
from semantics.ir.operands import Vec
from semantics.ir.types import TYPES
from semantics.machine.memory import SHARED_WINDOW, WINDOW_SIZE
from semantics.ops import register

B32 = TYPES["b32"]
_COUNTS = {"x1": 1, "x2": 2, "x4": 4}
_SHARED = ("shared", "shared::cta")


class Warp:
    """Where each lane's warp lies in a batch (lanes of one CTA, 32 from its first), as plain
    ints, and the lane plans of `pick`: computed once per launch geometry (`warp_of`)."""

    def __init__(self, x) -> None:
        n = self.n = x.geom.lanes
        base = [int(b) for b in x.warp_base]
        cta = [int(c) for c in x.cta_of_lane]
        self.lane = [int(t) % 32 for t in x.lane_in_cta]
        # per lane k of a warp: does each lane's warp have it (a block's last warp may be
        # partial), and which batch lane it is (the lane itself where it does not exist:
        # `converged` makes reading it undefined behaviour)
        self.present = [[base[i] + k < n and cta[base[i] + k] == cta[i] for i in range(n)]
                        for k in range(32)]
        self.at = [[base[i] + k if self.present[k][i] else i for i in range(n)]
                   for k in range(32)]
        self.plans: dict[tuple, Any] = {}

    def missing(self, needed: int) -> list[bool]:
        """The lanes whose warp lacks one of its lanes 0..needed-1."""
        key = ("missing", needed)
        if key not in self.plans:
            self.plans[key] = [not all(p) for p in zip(*self.present[:needed])]
        return self.plans[key]

    def plan(self, key: tuple, rule: Callable[[int], tuple[int, int]]):
        """`pick`'s gather index per lane and, per vector used, the lanes that use it."""
        hit = self.plans.get(key)
        if hit is None:
            picks = [rule(lane) for lane in self.lane]
            index = [self.at[k][i] for i, (_, k) in enumerate(picks)]
            used = {v: [p == v for p, _ in picks] for v in sorted({v for v, _ in picks})}
            hit = self.plans[key] = (index, used)
        return hit


_WARPS: dict = {}        # launch geometry -> its `Warp` (a few geometries per process)


def warp_of(x) -> Warp:
    warp = _WARPS.get(x.geom)
    if warp is None:
        if len(_WARPS) >= 16:
            _WARPS.clear()
        warp = _WARPS[x.geom] = Warp(x)
    return warp


def _where(d, bools: list[bool]):
    """A concrete per-lane condition as the domain's predicate."""
    return d.pnot(d.eq(d.from_ints([int(b) for b in bools], 1), d.const(0, 1), 1))


def pick(d, warp: Warp, vectors: list, w: int, key: tuple,
          rule: Callable[[int], tuple[int, int]]):
    """Per lane: `vectors[v]` at lane `k` of its warp, where `(v, k) = rule(its lane id)`
    (`key` names the rule, for the plan's cache). One gather per vector used, merged by
    concrete lane conditions (no term per choice)."""
    index, used = warp.plan(key, rule)
    out = None
    for v, lanes in used.items():
        got = d.gather(vectors[v], index, w)
        out = got if out is None else d.ite(_where(d, lanes), got, out, w)
    return out


def split_halves(d, words: list) -> list:
    """32-bit lane vectors as their 16-bit halves: [w0.lo, w0.hi, w1.lo, w1.hi, ...]."""
    return [d.extract(v, hi, hi - 15, 32) for v in words for hi in (15, 31)]


def converged(x, warp: Warp, needed: int, what: str) -> None:
    """`.sync.aligned`: undefined behaviour where a lane executes this while a thread of its
    warp does not (a divergent path, a guard, an exited thread), or where one of the warp's
    lanes 0..needed-1, which give its addresses or data, does not exist (a partial warp)."""
    d = x.d
    running = d.bool_to_bv(x.mask, 1)
    absent = d.pconst(False)
    for k in range(32):
        idle = d.eq(d.gather(running, warp.at[k], 1), d.const(0, 1), 1)
        absent = d.por(absent, d.pand(_where(d, warp.present[k]), idle))
    x.undefined_if(absent, f"'{x.form.name}' executed while another thread of the warp is "
                           f"not executing it (.sync.aligned: the whole warp executes it)")
    missing = warp.missing(needed)
    if any(missing):
        x.undefined_if(_where(d, missing), f"'{x.form.name}' in a warp of fewer than {needed} "
                                           f"threads: {what} come from threads that do not exist")


def vector_registers(x, i: int, count: int) -> tuple:
    """The `count` registers of vector operand `i` (`{%r1, %r2}`; one bare register for .x1)."""
    op = x.operand(i)
    elems = op.elems if isinstance(op, Vec) else (op,)
    if len(elems) != count:
        raise PtxSyntaxError(f"'{x.form.name}' takes {count} register(s) in its vector "
                             f"operand, not {len(elems)}", x.ins.loc)
    return elems


def _row_addresses(x, i: int, warp: Warp, rows: int):
    """(the shared-space row address each lane gives, the lanes whose address is used: lanes
    0..rows-1 of each warp). A generic address must point into shared memory (UB else)."""
    d = x.d
    used = d.pand(x.mask, _where(d, [lane < rows for lane in warp.lane]))
    addr = x.address(i)
    if x.form.flags & set(_SHARED):
        return addr, used
    low = d.const(SHARED_WINDOW, 64)
    inside = d.pand(d.ule(low, addr, 64),
                    d.ult(addr, d.const(SHARED_WINDOW + WINDOW_SIZE, 64), 64))
    x.undefined_if(d.pand(used, d.pnot(inside)),
                   f"'{x.form.name}' with a generic address outside shared memory")
    return d.sub(addr, low, 64), used


def _ldmatrix(x) -> None:
    d = x.d
    num = _count(x.form)
    dst = vector_registers(x, 0, num)
    warp = warp_of(x)
    converged(x, warp, 8 * num, "row addresses")
    addr, used = _row_addresses(x, 1, warp, 8 * num)
    # Each used lane reads its row: four words, word c = columns 2c (low) and 2c+1 (high).
    row = [x.load("shared", d.add(addr, d.const(4 * c, 64), 64) if c else addr, 4,
                  mask=used, align=16 if c == 0 else 4) for c in range(4)]
    if not x.form.has("trans"):
        for k, reg in enumerate(dst):
            # lane i: row i/4 of matrix k (given by lane 8k + i/4), word i%4 of it
            x.write(reg, pick(d, warp, row, 32, ("ld", k),
                               lambda i, k=k: (i % 4, 8 * k + i // 4)), B32)
        return
    halves = split_halves(d, row)            # halves[e]: column e of the row
    for k, reg in enumerate(dst):
        # lane i, half j: column i/4 of row 2*(i%4)+j (given by lane 8k + 2*(i%4) + j)
        lo, hi = (pick(d, warp, halves, 16, ("ld.trans", k, j),
                        lambda i, k=k, j=j: (i // 4, 8 * k + 2 * (i % 4) + j))
                  for j in (0, 1))
        x.write(reg, d.concat(hi, lo, 16, 16), B32)


def _stmatrix(x) -> None:
    d = x.d
    num = _count(x.form)
    regs = [x.read(e, B32) for e in vector_registers(x, 1, num)]
    warp = warp_of(x)
    converged(x, warp, 32, "matrix fragments")
    addr, used = _row_addresses(x, 0, warp, 8 * num)
    trans = x.form.has("trans")
    halves = split_halves(d, regs)           # halves[2k + j]: half j of register k

    def matrix(i: int) -> int:          # (lanes past 8*num store nothing: any register)
        return min(i // 8, num - 1)
    for c in range(4):
        # lane 8k + r stores row r of matrix k; word c of it is columns 2c and 2c+1
        if not trans:                   # held by lane 4r + c, register k
            word = pick(d, warp, regs, 32, ("st", num, c),
                         lambda i, c=c: (matrix(i), 4 * (i % 8) + c))
        else:                           # column-major: element e of row r is held by lane
            lo, hi = (pick(d, warp, halves, 16, ("st.trans", num, e),  # 4e + r/2, half
                            lambda i, e=e: (2 * matrix(i) + i % 2,  # r%2 of register k
                                            4 * e + (i % 8) // 2))
                      for e in (2 * c, 2 * c + 1))
            word = d.concat(hi, lo, 16, 16)
        x.store("shared", d.add(addr, d.const(4 * c, 64), 64) if c else addr, 4, word,
                mask=used, align=16 if c == 0 else 4)


def _movmatrix(x) -> None:
    """Lane i's result, half j, is the source's row 2*(i%4)+j, column i/4: held by lane
    4*(2*(i%4)+j) + (i/4)/2, in its half (i/4)%2."""
    d = x.d
    warp = warp_of(x)
    converged(x, warp, 32, "matrix fragments")
    halves = split_halves(d, [x.read(1, B32)])
    lo, hi = (pick(d, warp, halves, 16, ("mov", j),
                    lambda i, j=j: ((i // 4) % 2, 4 * (2 * (i % 4) + j) + (i // 4) // 2))
              for j in (0, 1))
    x.write(0, d.concat(hi, lo, 16, 16), B32)


def _count(form) -> int:
    return next(n for f, n in _COUNTS.items() if form.has(f))


def _m8n8_b16(form, extra: set[str]) -> bool:
    """`.sync.aligned.m8n8` with one of .x1/.x2/.x4, flags within `extra`, type .b16."""
    base = {"sync", "aligned", "m8n8"}
    nums = form.flags & set(_COUNTS)
    return base <= form.flags and len(nums) == 1 and form.flags - base - nums <= extra and \
        len(form.flags & set(_SHARED)) <= 1 and [t.name for t in form.types] == ["b16"]


@register("ldmatrix")
def _resolve_ldmatrix(form):
    return _ldmatrix if _m8n8_b16(form, {"trans", *_SHARED}) else None


@register("stmatrix")
def _resolve_stmatrix(form):
    return _stmatrix if _m8n8_b16(form, {"trans", *_SHARED}) else None


@register("movmatrix")
def _resolve_movmatrix(form):
    ok = form.flags == {"sync", "aligned", "m8n8", "trans"} and \
        [t.name for t in form.types] == ["b16"]
    return _movmatrix if ok else None
