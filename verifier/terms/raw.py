"""Raw z3 ASTs (ctypes handles, `semantics.domains.z3raw`): identity, pinning and memos.

The hot walks of the verifier (term evaluation, the shape-only test, the guarded-sum and
same-term walks) read raw ASTs: a Python wrapper per node cost most of their time. Their
memos are `RawTermMemo`s, keyed by `raw_key` (the AST's address) and keeping each key's AST
alive for as long as the memo lives, so no key can come to stand for another term: z3 frees
an AST when its last reference goes and reuses its address and its id.

Why the address and not z3's id: both identify a live AST (z3 hash-conses, so one structure
is one AST), but reading the address is an attribute of the ctypes handle, where the id is
a call into libz3 (0.2 us; a walk makes a million lookups). `raw_id` is the id, for where a
raw term's identity must agree with `term_id` of a Python term.

Why a z3 AST vector (`Pins`) and not a list of Python terms: pinning a key is then one
direct call into libz3 and no Python object, and a memo's keys are let go in one call when
it goes (a list of Python terms frees them one object at a time).
"""

from __future__ import annotations

import ctypes
from typing import Generic, Iterable, TypeVar

import z3
from z3 import z3core

from semantics.domains import z3raw

V = TypeVar("V")

_CTX = z3.main_ctx()
_REF = _CTX.ref()          # (the main context's handle: fixed for the life of the process)
_READ = z3raw.read


def _libz3(name: str):
    """libz3's function `name`, called with no conversion of its arguments and no error
    check, as `z3raw` calls its getters: every argument must be a ctypes object (a Python
    int would be passed as a C int). For calls that cannot fail on live objects; z3core's
    own checked wrapper where z3core is laid out differently (slower, same answers)."""
    wrapper = getattr(z3core, name)
    f = getattr((wrapper.__defaults__ or (None,))[-1], "f", None)
    if not isinstance(f, ctypes._CFuncPtr):
        return wrapper
    direct = type(f)(ctypes.cast(f, ctypes.c_void_p).value)
    direct.restype, direct.argtypes = f.restype, None
    return direct


_MK_VECTOR = _libz3("Z3_mk_ast_vector")
_VECTOR_INC = _libz3("Z3_ast_vector_inc_ref")
_VECTOR_DEC = _libz3("Z3_ast_vector_dec_ref")
_PUSH = _libz3("Z3_ast_vector_push")
_RESIZE = _libz3("Z3_ast_vector_resize")
_SIZE = _libz3("Z3_ast_vector_size")


def raw_id(ctx, ast) -> int:
    """The z3 id of raw AST `ast` in context handle `ctx` (`term_id` of its Python term)."""
    return _READ.ast_id(ctx, ast)


def raw_key(ast) -> int:
    """The identity of a live raw AST as a `RawTermMemo` key: its address (see the module's
    docstring)."""
    return ast.value


class Pins:
    """Keeps z3 terms alive for as long as it lives: raw ASTs (`add`) or Python terms
    (`append`, so that it stands where a list of terms was handed over as `pin=`)."""

    __slots__ = ("_vector",)

    def __init__(self) -> None:
        self._vector = None
        vector = _MK_VECTOR(_REF)
        _VECTOR_INC(_REF, vector)
        self._vector = vector

    def add(self, ast) -> None:
        """Keep raw AST `ast` (a ctypes handle, never a Python int) alive."""
        _PUSH(_REF, self._vector, ast)

    def append(self, t) -> None:
        """Keep the Python term `t` alive (its AST: the wrapper itself may go)."""
        _PUSH(_REF, self._vector, t.as_ast())

    def __len__(self) -> int:
        return int(_SIZE(_REF, self._vector))

    def clear(self) -> None:
        """Let every term go (those nothing else holds are freed)."""
        _RESIZE(_REF, self._vector, ctypes.c_uint(0))

    def __del__(self) -> None:
        # (at interpreter exit the context or this module may already be gone)
        if self._vector is not None and _CTX.ctx is not None and _VECTOR_DEC is not None:
            _VECTOR_DEC(_REF, self._vector)
            self._vector = None


class RawTermMemo(Generic[V]):
    """A memo from raw z3 ASTs to values, keyed by `raw_key`, that keeps each key's AST alive
    for as long as the memo lives (`Pins`). Values may hold other raw ASTs, or their ids or
    keys, only of subterms of their key: those live as long as the key does.

    `by_key(raw_key(ast), default)` is `get` for a walk that has the key already (a bound
    `dict.get`: no Python call in between, the walks' hot path)."""

    __slots__ = ("_values", "_pins", "by_key")

    def __init__(self) -> None:
        self._values: dict[int, V] = {}
        self._pins = Pins()
        self.by_key = self._values.get

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, ast) -> bool:
        return ast.value in self._values

    def get(self, ast, default: V | None = None) -> V | None:
        return self._values.get(ast.value, default)

    def put(self, ast, value: V) -> V:
        values = self._values
        if ast.value not in values:
            _PUSH(_REF, self._pins._vector, ast)     # (`Pins.add`, inlined: once per key)
        values[ast.value] = value
        return value

    def values(self) -> Iterable[V]:
        return self._values.values()

    def clear(self) -> None:
        """Forget every entry and let its AST go."""
        self._values.clear()
        self._pins.clear()


class ConjunctMemo:
    """`z3raw.conjuncts` and `z3raw.literals` of raw conditions, memoized per node in z3raw's
    own memo (a dict keyed by z3 id, filled by `semantics`): every condition asked about is
    kept alive, and with it every node that memo holds (each is one of its subterms)."""

    __slots__ = ("_memo", "_asked")

    def __init__(self) -> None:
        self._memo: dict = {}
        self._asked: RawTermMemo[bool] = RawTermMemo()

    def _hold(self, cond) -> None:
        if self._asked.by_key(cond.value) is None:
            self._asked.put(cond, True)

    def conjuncts(self, cond) -> list:
        """`z3raw.conjuncts(cond)`: (raw term, negated) per conjunct of raw Boolean `cond`."""
        self._hold(cond)
        return z3raw.conjuncts(cond, self._memo)

    def literals(self, cond) -> list:
        """`z3raw.literals(cond)`: (raw literal, raw truth value) pairs that hold wherever
        raw Boolean `cond` does."""
        self._hold(cond)
        return z3raw.literals(cond, self._memo)


__all__ = ["ConjunctMemo", "Pins", "RawTermMemo", "raw_id", "raw_key"]
