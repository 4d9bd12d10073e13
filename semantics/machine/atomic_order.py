"""The order in which contending atomics take effect, as a symbolic choice (PTX ISA 9.7.13.5,
atom: the atomics of different threads to one address take effect in an unspecified order).

When several lanes of one `atom`/`red` reach one address and the outcome depends on their
order (the old values are read, or the operation does not commute: exch, cas, inc, dec, a
float add), each lane gets an order key, an unspecified 32-bit value chosen afresh at every
execution (`semantics.choices`): lane j takes effect before lane i when `key_j < key_i`, or
the keys are equal and j < i. Every assignment of keys is a total order, and every total
order comes from one, so a claim proved for every key holds for every order; a model's keys
are an order the emulator replays (`ConcretePort.atomic` sorts by the same keys).

Each lane may take part or not (`conds`: its symbolic condition, True when certain):
- an update that adds a term independent of the old word (`delta`) needs no positions:
  lane i's old value is the word plus the increments of the lanes before it;
- any other update is run position by position: `rank_i` counts the lanes before i that take
  part, the word after p updates is the p-th lane's update of the word after p - 1, and lane
  i's old value is the word after `rank_i` updates. That is quadratic in the lanes of the
  address (and as deep), so the contention is bounded (`MAX_SEQUENTIAL`); past it the
  verifier tests other orders on the emulator, and is Inconclusive when none differs.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import z3

from semantics.errors import UnsupportedError

MAX_CONTENDERS = 256         # lanes of one address whose updates add an increment
MAX_SEQUENTIAL = 16          # ... whose updates do not (the positional model is quadratic)


def _term(v, w: int):
    return z3.BitVecVal(int(v), w) if isinstance(v, int) else v


def _cond(c):
    return z3.BoolVal(bool(c)) if isinstance(c, bool) else c


def before(keys: Sequence[Any], j: int, i: int):
    """Lane j (by position in the group) takes effect before lane i."""
    return z3.ULE(keys[j], keys[i]) if j < i else z3.ULT(keys[j], keys[i])


def contended(base, updates: Sequence[Callable[[Any], Any]], conds: Sequence[Any],
              keys: Sequence[Any], deltas: Sequence[Any] | None, w: int, loc
              ) -> tuple[list[Any], Any]:
    """(each lane's old value, the word after every lane that takes part) for lanes of one
    atomic at one address, in lane order. `updates[i](old) -> new` is lane i's update;
    `deltas[i]` its increment when every update is an add of a term independent of the word
    (else `deltas` is None)."""
    k = len(updates)
    most = MAX_CONTENDERS if deltas is not None else MAX_SEQUENTIAL
    if k > most:
        raise UnsupportedError(f"{k} contending atomics to one address whose outcome depends "
                               f"on their order (keq models at most {most} of them)", loc)
    base = _term(base, w)
    conds = [_cond(c) for c in conds]
    zero = z3.BitVecVal(0, w)
    if deltas is not None:
        inc = [z3.If(conds[j], _term(deltas[j], w), zero) for j in range(k)]
        olds = [z3.simplify(z3.Sum([base] + [z3.If(before(keys, j, i), inc[j], zero)
                                             for j in range(k) if j != i]))
                for i in range(k)]
        return olds, z3.Sum([base] + inc)
    rw = max(1, (k - 1).bit_length() + 1)
    one, none = z3.BitVecVal(1, rw), z3.BitVecVal(0, rw)
    ranks = [z3.Sum([none] + [z3.If(z3.And(conds[j], before(keys, j, i)), one, none)
                              for j in range(k) if j != i]) for i in range(k)]
    words = [base]
    for p in range(k):
        here = z3.BitVecVal(p, rw)
        nxt = words[-1]
        for i in reversed(range(k)):
            nxt = z3.If(z3.And(conds[i], ranks[i] == here), _term(updates[i](words[-1]), w),
                        nxt)
        words.append(nxt)
    olds = []
    for i in range(k):
        old = words[k - 1]
        for p in reversed(range(k - 1)):
            old = z3.If(ranks[i] == z3.BitVecVal(p, rw), words[p], old)
        olds.append(old)
    return olds, words[k]


__all__ = ["contended", "MAX_CONTENDERS", "MAX_SEQUENTIAL"]
