"""Kernel-pair specs: the TOML contract a user writes (DESIGN.md, "The pair spec").

This module is the user-facing contract for reading a spec. `load_spec(path)` reads the TOML,
checks every key against the format below, and returns frozen dataclasses; anything it does not
accept is a `LocatedError` rendered as ``file:line:col: error: message`` with the offending line
and a caret under the key or value (inside an expression string: under the bad token).

Format (paths are relative to the TOML file)::

    name = "family/pair"               # required, non-empty string
    description = "..."                # optional string
    mode = "bitexact"                  # required: bitexact | real
    expect = "equivalent"              # required: equivalent | not-equivalent | inconclusive
    assume = ["n % 4 == 0"]            # optional: predicates over integer scalar params

    [reference]                        # required, and [candidate] likewise
    ptx = "k.ptx"                      # required; must exist and parse
    sass = "k.sm_90.sass"              # optional; must exist (not read yet)
    kernel = "k"                       # required; an .entry of the PTX
    grid = ["ceil_div(n, 256)", 1, 1]  # required: 1 to 3 ints or integer expressions
    block = [256, 1, 1]                # required, likewise
    args = ["a", "b", "c", "n"]        # optional: the .entry params in order, by spec param name
    dynamic_shared = 16                # optional: dynamic (extern) shared memory bytes, default 0

    [[param]]                          # one per parameter, in .entry order unless `args`
    name = "a"                         # required identifier, unique
    buffer = "f32"                     # exactly one of buffer / scalar; element type
    length = "n"                       # buffer only, required: elements, integer expression
    access = "in"                      # buffer only, required: in | out | inout | scratch
    # scalar = "s32"; range = [lo, hi] (inclusive) | values = [...] (scalar only, optional)

Types: f16 bf16 f32 f64 s8 s16 s32 s64 u8 u16 u32 u64. In numpy a bf16 buffer is a uint16
array of bit patterns; every other type maps to the numpy dtype of the same name.

Expressions (grid, block, length, assume) are parsed by a small recursive-descent parser, never
`eval`: integer literals, integer scalar param names, ``+ - * // %``, unary minus,
parentheses, ``ceil_div(a, b)``, ``min(a, b, ...)``, ``max(a, b, ...)``; `assume` entries are
predicates: comparisons ``== != < <= > >=`` (chains like ``1 <= n <= 8`` allowed), combined
with ``and`` / ``or`` / ``not``. ``//`` and ``%`` are Python's floor division and modulo.

Without `args`, the spec's params map to the kernel's .entry params in order and their counts
must match; with `args`, the listed params do (params a side does not list are not passed to
it; each param must be used by at least one side). A buffer maps to a 64-bit .param (its
address); a scalar to a .param of the same width.

API: `load_spec(path) -> PairSpec`; `Side.launch(scalars) -> (grid, block)`;
`Side.kernel_args(values) -> list` (values by spec param name, in .entry order);
`ParamSpec.length_of(scalars)`; `PairSpec.check_assumptions(scalars) -> bool`;
`draw_scalars(spec, rng, fixed=None)` (uniform within range/values, rejection sampling under
`assume`); `make_inputs(spec, scalars, rng)` (random bit patterns for every buffer: the claim
covers every content of in/inout buffers and every initial content of out buffers).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from semantics.errors import KeqError, LocatedError, SourceLoc

MODES = ("bitexact", "real")
EXPECTS = ("equivalent", "not-equivalent", "inconclusive")
ACCESS = ("in", "out", "inout", "scratch")
TYPES = ("f16", "bf16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")
TOP_KEYS = ("name", "description", "mode", "expect", "assume", "reference", "candidate", "param")
SIDE_KEYS = ("ptx", "sass", "kernel", "grid", "block", "args", "dynamic_shared")
BUFFER_KEYS = ("name", "buffer", "length", "access")
SCALAR_KEYS = ("name", "scalar", "range", "values")

_DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
           "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
DRAW_ATTEMPTS = 10_000


def dtype_of(type_name: str) -> np.dtype:
    """The numpy dtype holding values of a spec type (bf16: uint16 bit patterns)."""
    return np.dtype(_DTYPES[type_name])


def type_bits(type_name: str) -> int:
    return 16 if type_name == "bf16" else int(type_name[1:])


def int_bounds(type_name: str) -> tuple[int, int]:
    bits = type_bits(type_name)
    if type_name[0] == "s":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def is_float_type(type_name: str) -> bool:
    return type_name[0] in "fb"


# ------------------------------------------------------------------ locating TOML keys

Path_ = tuple  # a key path: ("param", 2, "range", 0)


class TomlPositions:
    """Where each key and value of a TOML document is: a small scanner, not a full parser
    (tomllib has already accepted the text; this only maps key paths to line/col).

    `key[path]` is the position of the key (or of the `[table]` header for a table,
    `[[array]]` header for an array-of-tables element); `value[path]` the first character of
    the value (a string's opening quote; an array element's first character)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.key: dict[tuple, tuple[int, int]] = {}
        self.value: dict[tuple, tuple[int, int]] = {}
        self._aot: dict[tuple, int] = {}
        self.i = 0
        self.line = 1
        self.col = 1
        try:
            self._scan()
        except (IndexError, ValueError):   # best effort: keep whatever was mapped
            pass

    # -- character cursor
    def _peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < len(self.text) else ""

    def _adv(self, n: int = 1) -> None:
        for _ in range(n):
            if self.i >= len(self.text):
                return
            if self.text[self.i] == "\n":
                self.line += 1
                self.col = 1
            else:
                self.col += 1
            self.i += 1

    def _skip_ws(self, newlines: bool = False) -> None:
        while True:
            c = self._peek()
            if c in (" ", "\t", "\r") and c:
                self._adv()
            elif newlines and c == "\n":
                self._adv()
            elif c == "#":
                while self._peek() not in ("\n", ""):
                    self._adv()
            else:
                return

    def _pos(self) -> tuple[int, int]:
        return (self.line, self.col)

    def _scan(self) -> None:
        table: tuple = ()
        while self.i < len(self.text):
            self._skip_ws(newlines=True)
            if self.i >= len(self.text):
                break
            if self._peek() == "[":
                pos = self._pos()
                aot = self._peek(1) == "["
                self._adv(2 if aot else 1)
                keys = self._key()
                self._skip_ws()
                self._adv(2 if aot else 1)
                if aot:
                    k = tuple(keys)
                    idx = self._aot.get(k, -1) + 1
                    self._aot[k] = idx
                    table = k + (idx,)
                    self.key.setdefault(k, pos)
                else:
                    table = tuple(keys)
                self.key[table] = pos
                continue
            pos = self._pos()
            keys = self._key()
            path = table + tuple(keys)
            self.key[path] = pos
            self._skip_ws()
            if self._peek() == "=":
                self._adv()
            self._skip_ws()
            self._value(path)
            while self._peek() not in ("\n", ""):
                self._adv()

    def _key(self) -> list[str]:
        keys = []
        while True:
            self._skip_ws()
            c = self._peek()
            if c in ('"', "'"):
                keys.append(self._string_text())
            else:
                start = self.i
                while self._peek() and (self._peek().isalnum() or self._peek() in "_-"):
                    self._adv()
                keys.append(self.text[start:self.i])
            self._skip_ws()
            if self._peek() == ".":
                self._adv()
                continue
            return keys

    def _string_text(self) -> str:
        q = self._peek()
        triple = self.text.startswith(q * 3, self.i)
        self._adv(3 if triple else 1)
        start = self.i
        while self.i < len(self.text):
            if q == '"' and self._peek() == "\\":
                self._adv(2)
                continue
            if triple and self.text.startswith(q * 3, self.i):
                s = self.text[start:self.i]
                self._adv(3)
                return s
            if not triple and self._peek() == q:
                s = self.text[start:self.i]
                self._adv()
                return s
            self._adv()
        return self.text[start:]

    def _value(self, path: tuple) -> None:
        self.value[path] = self._pos()
        c = self._peek()
        if c in ('"', "'"):
            self._string_text()
        elif c == "[":
            self._adv()
            idx = 0
            while True:
                self._skip_ws(newlines=True)
                if self._peek() in ("]", ""):
                    self._adv()
                    return
                self.key[path + (idx,)] = self._pos()
                self._value(path + (idx,))
                idx += 1
                self._skip_ws(newlines=True)
                if self._peek() == ",":
                    self._adv()
        elif c == "{":
            self._adv()
            while True:
                self._skip_ws()
                if self._peek() in ("}", ""):
                    self._adv()
                    return
                pos = self._pos()
                keys = self._key()
                p = path + tuple(keys)
                self.key[p] = pos
                self._skip_ws()
                if self._peek() == "=":
                    self._adv()
                self._skip_ws()
                self._value(p)
                self._skip_ws()
                if self._peek() == ",":
                    self._adv()
        else:
            while self._peek() not in (",", "]", "}", "\n", "#", ""):
                self._adv()

    def find(self, path: tuple, prefer: str = "value") -> tuple[int, int]:
        """Position of `path` (its value, or its key), else of the nearest enclosing path."""
        p = tuple(path)
        while True:
            first, second = (self.value, self.key) if prefer == "value" else (self.key, self.value)
            if p in first:
                return first[p]
            if p in second:
                return second[p]
            if not p:
                return (1, 1)
            p = p[:-1]


class _Ctx:
    """The file being loaded: raises located errors at key paths."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.file = str(path)
        self.text = text
        self.lines = text.splitlines()
        self.pos = TomlPositions(text)

    def loc(self, path: tuple, prefer: str = "value", offset: int = 0) -> SourceLoc:
        line, col = self.pos.find(path, prefer)
        return SourceLoc(self.file, line, col + offset)

    def line_text(self, line: int) -> str | None:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else None

    def error(self, message: str, path: tuple, prefer: str = "value",
              offset: int = 0) -> LocatedError:
        loc = self.loc(path, prefer, offset)
        return SpecError(message, loc, self.line_text(loc.line))


class SpecError(LocatedError):
    """A pair spec keq cannot accept."""


def _where(path: tuple) -> str:
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else k)
    return out


# ------------------------------------------------------------------ expressions

_TOKEN = re.compile(r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|"
                    r"(?P<op>//|==|!=|<=|>=|[-+*%()<>,/=!]))")
_FUNCS = {"ceil_div": 2, "min": -2, "max": -2}   # arity; negative: at least that many
_KEYWORDS = ("and", "or", "not")
_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class ExprError(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True)
class Node:
    kind: str            # int | name | neg | bin | call | cmp | and | or | not
    offset: int          # where in the text (0-based)
    value: Any = None    # int value, name, operator, function name, comparison ops
    args: tuple["Node", ...] = ()

    @property
    def is_bool(self) -> bool:
        return self.kind in ("cmp", "and", "or", "not")


def _eval(n: Node, env: Mapping[str, int]):
    k = n.kind
    if k == "int":
        return n.value
    if k == "name":
        return int(env[n.value])
    if k == "neg":
        return -_eval(n.args[0], env)
    if k == "bin":
        a, b = _eval(n.args[0], env), _eval(n.args[1], env)
        op = n.value
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            raise ZeroDivisionError
        return a // b if op == "//" else a % b
    if k == "call":
        vals = [_eval(a, env) for a in n.args]
        if n.value == "ceil_div":
            if vals[1] == 0:
                raise ZeroDivisionError
            return -(-vals[0] // vals[1])
        return min(vals) if n.value == "min" else max(vals)
    if k == "cmp":
        vals = [_eval(a, env) for a in n.args]
        return all(_CMP[op](a, b) for op, a, b in zip(n.value, vals, vals[1:]))
    if k == "and":
        return all(_eval(a, env) for a in n.args)
    if k == "or":
        return any(_eval(a, env) for a in n.args)
    if k == "not":
        return not _eval(n.args[0], env)
    raise AssertionError(k)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks: list[tuple[str, str, int]] = []   # (kind, text, offset)
        i = 0
        while True:
            while i < len(text) and text[i].isspace():
                i += 1
            if i >= len(text):
                break
            m = _TOKEN.match(text, i)
            if m is None:
                raise ExprError(f"unexpected character {text[i]!r}", i)
            kind = m.lastgroup
            tok = m.group(kind)
            start = m.start(kind)
            if kind == "name" and tok in _KEYWORDS:
                kind = "kw"
            self.toks.append((kind, tok, start))
            i = m.end()
        self.toks.append(("end", "", len(text)))
        self.k = 0

    def peek(self):
        return self.toks[self.k]

    def take(self):
        t = self.toks[self.k]
        self.k += 1
        return t

    def expect(self, tok: str) -> None:
        kind, t, off = self.take()
        if t != tok or kind not in ("op",):
            what = "end of expression" if kind == "end" else repr(t)
            raise ExprError(f"expected {tok!r}, found {what}", off)

    def parse(self) -> Node:
        if self.peek()[0] == "end":
            raise ExprError("empty expression", 0)
        n = self.or_()
        kind, t, off = self.peek()
        if kind != "end":
            raise ExprError(f"unexpected {t!r}", off)
        return n

    def _need(self, n: Node, want_bool: bool, what: str) -> Node:
        if n.is_bool != want_bool:
            raise ExprError(f"{what} needs {'a predicate' if want_bool else 'an integer'} "
                            f"operand, found {'a predicate' if n.is_bool else 'an integer'}",
                            n.offset)
        return n

    def or_(self) -> Node:
        n = self.and_()
        parts = [n]
        while self.peek()[:2] == ("kw", "or"):
            self.take()
            parts.append(self.and_())
        if len(parts) == 1:
            return n
        for p in parts:
            self._need(p, True, "'or'")
        return Node("or", n.offset, None, tuple(parts))

    def and_(self) -> Node:
        n = self.not_()
        parts = [n]
        while self.peek()[:2] == ("kw", "and"):
            self.take()
            parts.append(self.not_())
        if len(parts) == 1:
            return n
        for p in parts:
            self._need(p, True, "'and'")
        return Node("and", n.offset, None, tuple(parts))

    def not_(self) -> Node:
        kind, t, off = self.peek()
        if (kind, t) == ("kw", "not"):
            self.take()
            return Node("not", off, None, (self._need(self.not_(), True, "'not'"),))
        return self.cmp()

    def cmp(self) -> Node:
        n = self.add()
        ops, args = [], [n]
        while self.peek()[0] == "op" and self.peek()[1] in _CMP:
            _, t, off = self.take()
            ops.append(t)
            args.append(self.add())
        if self.peek()[1] in ("=", "!") and self.peek()[0] == "op":
            _, t, off = self.peek()
            raise ExprError(f"unexpected {t!r} (comparisons are == != < <= > >=)", off)
        if not ops:
            return n
        for a in args:
            self._need(a, False, "a comparison")
        return Node("cmp", n.offset, tuple(ops), tuple(args))

    def add(self) -> Node:
        n = self.mul()
        while self.peek()[0] == "op" and self.peek()[1] in "+-":
            _, t, off = self.take()
            r = self.mul()
            self._need(n, False, f"'{t}'")
            self._need(r, False, f"'{t}'")
            n = Node("bin", off, t, (n, r))
        return n

    def mul(self) -> Node:
        n = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "//", "%", "/"):
            _, t, off = self.take()
            if t == "/":
                raise ExprError("'/' is not allowed: use '//' (integer division) or ceil_div",
                                off)
            r = self.unary()
            self._need(n, False, f"'{t}'")
            self._need(r, False, f"'{t}'")
            n = Node("bin", off, t, (n, r))
        return n

    def unary(self) -> Node:
        kind, t, off = self.peek()
        if (kind, t) == ("op", "-"):
            self.take()
            return Node("neg", off, None, (self._need(self.unary(), False, "'-'"),))
        if (kind, t) == ("op", "+"):
            self.take()
            return self._need(self.unary(), False, "'+'")
        return self.atom()

    def atom(self) -> Node:
        kind, t, off = self.take()
        if kind == "int":
            return Node("int", off, int(t))
        if kind == "name":
            if self.peek()[:2] == ("op", "("):
                if t not in _FUNCS:
                    raise ExprError(f"unknown function {t!r} (known: ceil_div, min, max)", off)
                self.take()
                args = []
                if self.peek()[:2] != ("op", ")"):
                    while True:
                        args.append(self._need(self.or_(), False, f"{t}()"))
                        if self.peek()[:2] == ("op", ","):
                            self.take()
                            continue
                        break
                self.expect(")")
                arity = _FUNCS[t]
                if (arity > 0 and len(args) != arity) or (arity < 0 and len(args) < -arity):
                    need = f"{arity}" if arity > 0 else f"at least {-arity}"
                    raise ExprError(f"{t}() takes {need} arguments, {len(args)} given", off)
                return Node("call", off, t, tuple(args))
            if t in _FUNCS:
                raise ExprError(f"{t} is a function: write {t}(a, b)", off)
            return Node("name", off, t)
        if (kind, t) == ("op", "("):
            n = self.or_()
            self.expect(")")
            return n
        what = "end of expression" if kind == "end" else repr(t)
        raise ExprError(f"expected a number, a name or '(', found {what}", off)


@dataclass(frozen=True)
class Expr:
    """A parsed spec expression. `text` is what the user wrote (ints are kept as ints)."""

    text: str
    node: Node = field(repr=False)
    loc: SourceLoc | None = field(default=None, repr=False, compare=False)
    line_text: str | None = field(default=None, repr=False, compare=False)

    @property
    def is_predicate(self) -> bool:
        return self.node.is_bool

    @property
    def names(self) -> frozenset[str]:
        out: set[str] = set()

        def walk(n: Node) -> None:
            if n.kind == "name":
                out.add(n.value)
            for a in n.args:
                walk(a)
        walk(self.node)
        return frozenset(out)

    def eval(self, env: Mapping[str, int]):
        missing = sorted(self.names - set(env))
        if missing:
            raise self._error(f"no value for {', '.join(missing)} in {self.text!r}")
        try:
            return _eval(self.node, env)
        except ZeroDivisionError:
            vals = ", ".join(f"{k}={env[k]}" for k in sorted(self.names))
            raise self._error(f"division by zero in {self.text!r} at {vals}") from None

    def _error(self, message: str) -> KeqError:
        if self.loc is None:
            return KeqError(message)
        return SpecError(message, self.loc, self.line_text)

    def __str__(self) -> str:
        return self.text


def parse_expr(text: str | int, *, predicate: bool = False) -> Expr:
    """Parse an expression (raises `ExprError` with a 0-based offset into `text`)."""
    if isinstance(text, bool):
        raise ExprError("a boolean is not an expression", 0)
    if isinstance(text, int):
        return Expr(str(text), Node("int", 0, text))
    node = _Parser(text).parse()
    if predicate and not node.is_bool:
        raise ExprError("expected a predicate (a comparison such as 'n % 4 == 0')", 0)
    if not predicate and node.is_bool:
        raise ExprError("expected an integer expression, found a predicate", node.offset)
    return Expr(text, node)


# ------------------------------------------------------------------ the spec

@dataclass(frozen=True)
class ParamSpec:
    name: str
    kind: str                          # "buffer" | "scalar"
    type: str                          # element type (buffer) or scalar type
    length: Expr | None = None         # buffers
    access: str | None = None          # buffers: in | out | inout | scratch
    range: tuple | None = None         # scalars: inclusive (lo, hi)
    values: tuple | None = None        # scalars: allowed values

    @property
    def is_buffer(self) -> bool:
        return self.kind == "buffer"

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"

    @property
    def dtype(self) -> np.dtype:
        return dtype_of(self.type)

    @property
    def is_float(self) -> bool:
        return is_float_type(self.type)

    def length_of(self, scalars: Mapping[str, int]) -> int:
        if self.length is None:
            raise KeqError(f"param {self.name!r} is a scalar, it has no length")
        n = self.length.eval(scalars)
        if n < 0:
            raise self.length._error(f"length of {self.name!r} is {n} (negative) at "
                                     + ", ".join(f"{k}={scalars[k]}" for k in sorted(self.length.names)))
        return n

    def allows(self, value) -> bool:
        """Whether a scalar value is in this param's range/values (and its type)."""
        if self.is_float:
            v = float(value)
            if self.values is not None:
                return any(v == float(x) or (v != v and x != x) for x in self.values)
            if self.range is not None:
                return self.range[0] <= v <= self.range[1]
            return True
        if isinstance(value, (float, np.floating)) or not isinstance(value, (int, np.integer)):
            return False
        v = int(value)
        lo, hi = int_bounds(self.type)
        if not lo <= v <= hi:
            return False
        if self.values is not None:
            return v in self.values
        if self.range is not None:
            return self.range[0] <= v <= self.range[1]
        return True

    def describe_domain(self) -> str:
        if self.values is not None:
            return f"one of {list(self.values)}"
        if self.range is not None:
            return f"in [{self.range[0]}, {self.range[1]}]"
        if self.is_float:
            return f"any {self.type}"
        lo, hi = int_bounds(self.type)
        return f"in [{lo}, {hi}] ({self.type})"


@dataclass(frozen=True)
class Side:
    role: str                           # "reference" | "candidate"
    ptx: Path                           # resolved against the TOML's directory
    kernel: str
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    args: tuple[str, ...] | None = None
    sass: Path | None = None
    dynamic_shared: int = 0             # bytes of dynamic (extern .shared) memory per CTA
    arg_names: tuple[str, ...] = ()     # spec param names in .entry order (args or all)
    module: Any = field(default=None, repr=False, compare=False)   # the parsed PTX Module

    def launch(self, scalars: Mapping[str, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        def dims(exprs: tuple[Expr, ...], what: str) -> tuple[int, int, int]:
            vals = [e.eval(scalars) for e in exprs]
            for e, v in zip(exprs, vals):
                if v < 1:
                    env = ", ".join(f"{k}={scalars[k]}" for k in sorted(e.names))
                    raise e._error(f"[{self.role}] {what} dimension {e.text!r} is {v} "
                                   f"(must be >= 1)" + (f" at {env}" if env else ""))
            return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]
        return dims(self.grid, "grid"), dims(self.block, "block")

    def kernel_args(self, values: Mapping[str, Any]) -> list:
        """Values (by spec param name) in this kernel's .entry parameter order."""
        return [values[n] for n in self.arg_names]


@dataclass(frozen=True)
class PairSpec:
    path: Path
    name: str
    mode: str
    expect: str
    assume: tuple[Expr, ...]
    description: str
    reference: Side
    candidate: Side
    params: tuple[ParamSpec, ...]

    def side(self, role: str) -> Side:
        if role not in ("reference", "candidate"):
            raise KeqError(f"no side {role!r} (reference or candidate)")
        return self.reference if role == "reference" else self.candidate

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def scalars(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.is_scalar)

    @property
    def buffers(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.is_buffer)

    def check_assumptions(self, scalars: Mapping[str, Any]) -> bool:
        """True when every scalar is in its range/values and every `assume` holds."""
        for p in self.scalars:
            if p.name in scalars and not p.allows(scalars[p.name]):
                return False
        return all(a.eval(scalars) for a in self.assume)

    def failed_assumption(self, scalars: Mapping[str, Any]) -> Expr | None:
        for a in self.assume:
            if not a.eval(scalars):
                return a
        return None


# ------------------------------------------------------------------ loading

def load_spec(path: str | Path) -> PairSpec:
    """Read and check a pair spec; raise `SpecError` (located) on anything wrong."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise KeqError(f"{p}: cannot read the spec: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(f"not a UTF-8 text file ({e.reason})", SourceLoc(str(p), 1, 1)) from None
    return loads_spec(text, p)


_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def loads_spec(text: str, path: str | Path = "<spec>") -> PairSpec:
    p = Path(path)
    ctx = _Ctx(p, text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _TOML_AT.search(msg)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        msg = _TOML_AT.sub("", msg).strip()
        raise SpecError(f"invalid TOML: {msg}", SourceLoc(str(p), line, col),
                        ctx.line_text(line)) from None
    return _Loader(ctx, doc).spec()


class _Loader:
    def __init__(self, ctx: _Ctx, doc: dict) -> None:
        self.ctx = ctx
        self.doc = doc
        self.base = ctx.path.parent

    def err(self, message: str, path: tuple, prefer: str = "value", offset: int = 0):
        return self.ctx.error(message, path, prefer, offset)

    def keys(self, table: dict, path: tuple, allowed: tuple, what: str) -> None:
        for k in table:
            if k not in allowed:
                raise self.err(f"unknown key {k!r} in {what} (allowed: {', '.join(allowed)})",
                               path + (k,), prefer="key")

    def need(self, table: dict, key: str, path: tuple, what: str, typ: type | tuple,
             tname: str) -> Any:
        if key not in table:
            raise self.err(f"missing key {key!r} in {what}", path, prefer="key")
        return self.typed(table[key], path + (key,), typ, tname, key)

    def typed(self, v, path: tuple, typ, tname: str, key: str) -> Any:
        if isinstance(v, bool) and bool not in (typ if isinstance(typ, tuple) else (typ,)):
            ok = False
        else:
            ok = isinstance(v, typ)
        if not ok:
            raise self.err(f"{_where(path)} must be {tname}, found {_tname(v)}", path)
        return v

    def choice(self, table: dict, key: str, path: tuple, what: str, allowed: tuple) -> str:
        v = self.need(table, key, path, what, str, "a string")
        if v not in allowed:
            raise self.err(f"{key} {v!r} is not one of: {', '.join(allowed)}", path + (key,))
        return v

    def expr(self, v, path: tuple, *, predicate: bool = False, scalars: dict | None = None,
             what: str = "expression") -> Expr:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise self.err(f"{_where(path)} must be an integer or an expression string, "
                           f"found {_tname(v)}", path)
        loc = self.ctx.loc(path)
        line_text = self.ctx.line_text(loc.line)
        # offset of the expression text inside the line: after the opening quote
        quote = 1 if isinstance(v, str) else 0
        try:
            e = parse_expr(v, predicate=predicate)
        except ExprError as ex:
            raise self.err(f"bad {what} {v!r}: {ex.message}", path,
                           offset=quote + ex.offset) from None
        e = Expr(e.text, e.node, loc, line_text)
        if scalars is not None:
            self._check_names(e.node, v, path, quote, scalars, what)
        return e

    def _check_names(self, n: Node, text, path, quote, scalars: dict, what: str) -> None:
        if n.kind == "name":
            p = scalars.get(n.value)
            if p is None:
                kind = self.all_params.get(n.value)
                if kind is None:
                    msg = (f"{what} {text!r} names {n.value!r}, which is not a param "
                           f"(scalars: {', '.join(scalars) or 'none'})")
                elif kind.get("buffer") is not None:
                    msg = f"{what} {text!r} names {n.value!r}, a buffer, not a scalar"
                else:
                    msg = (f"{what} {text!r} names {n.value!r}, a {kind.get('scalar')} scalar; "
                           f"expressions range over integer scalars")
                raise self.err(msg, path, offset=quote + n.offset)
        for a in n.args:
            self._check_names(a, text, path, quote, scalars, what)

    def spec(self) -> PairSpec:
        d = self.doc
        self.keys(d, (), TOP_KEYS, "the spec")
        name = self.need(d, "name", (), "the spec", str, "a string")
        if not name.strip():
            raise self.err("name must not be empty", ("name",))
        description = ""
        if "description" in d:
            description = self.typed(d["description"], ("description",), str, "a string",
                                     "description")
        mode = self.choice(d, "mode", (), "the spec", MODES)
        expect = self.choice(d, "expect", (), "the spec", EXPECTS)
        for side in ("reference", "candidate"):
            self.need(d, side, (), "the spec", dict, f"a table [{side}]")
        params = self.params()
        int_scalars = {p.name: p for p in params if p.is_scalar and not p.is_float}
        # lengths are checked once all params are known
        params = tuple(
            ParamSpec(p.name, p.kind, p.type,
                      self.expr(self.doc["param"][i]["length"], ("param", i, "length"),
                                scalars=int_scalars, what="length")
                      if p.is_buffer else None, p.access, p.range, p.values)
            for i, p in enumerate(params))
        assume: list[Expr] = []
        if "assume" in d:
            a = d["assume"]
            if isinstance(a, str):
                a = [a]
                paths = [("assume",)]
            else:
                self.typed(a, ("assume",), list, "a list of predicate strings", "assume")
                paths = [("assume", i) for i in range(len(a))]
            for v, pth in zip(a, paths):
                if not isinstance(v, str):
                    raise self.err(f"{_where(pth)} must be a predicate string, found "
                                   f"{_tname(v)}", pth)
                assume.append(self.expr(v, pth, predicate=True, scalars=int_scalars,
                                        what="assumption"))
        ref = self.side("reference", params, int_scalars)
        cand = self.side("candidate", params, int_scalars)
        if ref.args is not None or cand.args is not None:
            used = set(ref.arg_names) | set(cand.arg_names)
            for i, p in enumerate(params):
                if p.name not in used:
                    raise self.err(f"param {p.name!r} is passed to neither kernel (add it to "
                                   f"an `args` list or remove it)", ("param", i, "name"))
        return PairSpec(self.ctx.path, name, mode, expect, tuple(assume), description, ref,
                        cand, params)

    def params(self) -> list[ParamSpec]:
        d = self.doc
        if "param" not in d:
            raise self.err("missing [[param]] entries (one per kernel parameter)", (),
                           prefer="key")
        plist = d["param"]
        if not isinstance(plist, list) or not all(isinstance(x, dict) for x in plist):
            raise self.err("param must be an array of tables ([[param]])", ("param",))
        if not plist:
            raise self.err("no [[param]] entries", ("param",))
        self.all_params = {}
        out = []
        for i, t in enumerate(plist):
            path = ("param", i)
            what = f"param[{i}]"
            name = self.need(t, "name", path, what, str, "a string")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", name):
                raise self.err(f"param name {name!r} is not an identifier", path + ("name",))
            if name in _KEYWORDS or name in _FUNCS:
                raise self.err(f"param name {name!r} is reserved", path + ("name",))
            if name in self.all_params:
                raise self.err(f"duplicate param name {name!r}", path + ("name",))
            self.all_params[name] = t
            what = f"param {name!r}"
            has_b, has_s = "buffer" in t, "scalar" in t
            if has_b == has_s:
                raise self.err(f"{what} needs exactly one of 'buffer' (element type) or "
                               f"'scalar' (type)", path + (("scalar",) if has_b else ()),
                               prefer="key")
            if has_b:
                self.keys(t, path, BUFFER_KEYS, f"buffer param {name!r}")
                typ = self.need(t, "buffer", path, what, str, "a type name string")
                if typ not in TYPES:
                    raise self.err(f"unknown buffer type {typ!r} (types: {', '.join(TYPES)})",
                                   path + ("buffer",))
                if "length" not in t:
                    raise self.err(f"missing key 'length' in buffer {what}", path, prefer="key")
                access = self.choice(t, "access", path, f"buffer {what}", ACCESS)
                out.append(ParamSpec(name, "buffer", typ, None, access))
            else:
                self.keys(t, path, SCALAR_KEYS, f"scalar param {name!r}")
                typ = self.need(t, "scalar", path, what, str, "a type name string")
                if typ not in TYPES:
                    raise self.err(f"unknown scalar type {typ!r} (types: {', '.join(TYPES)})",
                                   path + ("scalar",))
                rng, vals = None, None
                num = (int, float) if is_float_type(typ) else int
                numname = "numbers" if is_float_type(typ) else "integers"
                if "range" in t and "values" in t:
                    raise self.err(f"{what} has both 'range' and 'values'; give one",
                                   path + ("values",), prefer="key")
                if "range" in t:
                    r = t["range"]
                    if (not isinstance(r, list) or len(r) != 2
                            or any(isinstance(x, bool) or not isinstance(x, num) for x in r)):
                        raise self.err(f"range of {name!r} must be [lo, hi], two {numname}",
                                       path + ("range",))
                    if r[0] > r[1]:
                        raise self.err(f"range of {name!r} is empty: {r[0]} > {r[1]}",
                                       path + ("range",))
                    for j, x in enumerate(r):
                        self._in_type(x, typ, path + ("range", j), name)
                    rng = (r[0], r[1])
                if "values" in t:
                    v = t["values"]
                    if not isinstance(v, list) or not v:
                        raise self.err(f"values of {name!r} must be a non-empty list",
                                       path + ("values",))
                    for j, x in enumerate(v):
                        if isinstance(x, bool) or not isinstance(x, num):
                            raise self.err(f"values of {name!r} must be {numname}, found "
                                           f"{_tname(x)}", path + ("values", j))
                        self._in_type(x, typ, path + ("values", j), name)
                    vals = tuple(dict.fromkeys(v))
                out.append(ParamSpec(name, "scalar", typ, None, None, rng, vals))
        return out

    def _in_type(self, x, typ: str, path: tuple, name: str) -> None:
        if is_float_type(typ):
            return
        lo, hi = int_bounds(typ)
        if not lo <= x <= hi:
            raise self.err(f"{x} is outside the {typ} range [{lo}, {hi}] of {name!r}", path)

    def side(self, role: str, params: tuple[ParamSpec, ...], int_scalars: dict) -> Side:
        t = self.doc[role]
        path = (role,)
        what = f"[{role}]"
        self.keys(t, path, SIDE_KEYS, what)
        ptx_name = self.need(t, "ptx", path, what, str, "a path string")
        kernel = self.need(t, "kernel", path, what, str, "a string")
        dims = {}
        for key in ("grid", "block"):
            v = self.need(t, key, path, what, (list, int, str),
                          "a list of 1 to 3 ints or expressions")
            if not isinstance(v, list):
                v = [v]
                epaths = [path + (key,)]
            else:
                epaths = [path + (key, j) for j in range(len(v))]
            if not 1 <= len(v) <= 3:
                raise self.err(f"{what} {key} must have 1 to 3 entries, found {len(v)}",
                               path + (key,))
            dims[key] = tuple(self.expr(x, pth, scalars=int_scalars, what=key)
                              for x, pth in zip(v, epaths))
        args = None
        names = [p.name for p in params]
        if "args" in t:
            a = self.typed(t["args"], path + ("args",), list, "a list of param names", "args")
            seen = set()
            for j, x in enumerate(a):
                if not isinstance(x, str):
                    raise self.err(f"args entries must be param names, found {_tname(x)}",
                                   path + ("args", j))
                if x not in names:
                    raise self.err(f"args names {x!r}, which is not a param "
                                   f"(params: {', '.join(names)})", path + ("args", j))
                if x in seen:
                    raise self.err(f"args names {x!r} twice", path + ("args", j))
                seen.add(x)
            args = tuple(a)
        arg_names = args if args is not None else tuple(names)
        dyn = 0
        if "dynamic_shared" in t:
            dyn = self.typed(t["dynamic_shared"], path + ("dynamic_shared",), int,
                             "an integer (bytes)", "dynamic_shared")
            if dyn < 0:
                raise self.err("dynamic_shared must be >= 0 bytes", path + ("dynamic_shared",))
        sass = None
        if "sass" in t:
            s = self.typed(t["sass"], path + ("sass",), str, "a path string", "sass")
            sass = self.base / s
            if not sass.is_file():
                raise self.err(f"sass file {s!r} does not exist (looked for {sass})",
                               path + ("sass",))
        ptx = self.base / ptx_name
        if not ptx.is_file():
            raise self.err(f"ptx file {ptx_name!r} does not exist (looked for {ptx})",
                           path + ("ptx",))
        from semantics.ptx import parse_ptx_file   # a located PtxSyntaxError propagates
        module = parse_ptx_file(ptx)
        fn = module.functions.get(kernel)
        if fn is None or fn.kind != "entry":
            entries = ", ".join(module.entries) or "none"
            raise self.err(f"{ptx_name} has no kernel (.entry) named {kernel!r} "
                           f"(kernels: {entries})", path + ("kernel",))
        kparams = fn.params
        if len(kparams) != len(arg_names):
            if args is None:
                raise self.err(f".entry {kernel} has {len(kparams)} parameter(s), the spec "
                               f"declares {len(arg_names)} [[param]]; list this kernel's "
                               f"params in order with `args` if they differ",
                               path + ("kernel",))
            raise self.err(f".entry {kernel} has {len(kparams)} parameter(s), args lists "
                           f"{len(arg_names)}", path + ("args",))
        byname = {p.name: p for p in params}
        for j, (n, kp) in enumerate(zip(arg_names, kparams)):
            sp = byname[n]
            bits = (kp.size_bytes or 0) * 8
            want = 64 if sp.is_buffer else type_bits(sp.type)
            if bits != want:
                what_p = "a buffer (a 64-bit address)" if sp.is_buffer else \
                    f"a {sp.type} scalar ({want} bits)"
                where = path + ("args", j) if args is not None else ("param", names.index(n), "name")
                raise self.err(f"param {n!r} is {what_p} but .entry {kernel} parameter "
                               f"{j} ({kp.name}) is .{kp.type.name} ({bits} bits)", where)
        return Side(role, ptx, kernel, dims["grid"], dims["block"], args, sass, dyn,
                    tuple(arg_names), module)


def _tname(v) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return type(v).__name__


# ------------------------------------------------------------------ inputs

def _draw_one(p: ParamSpec, rng: np.random.Generator):
    if p.values is not None:
        v = p.values[int(rng.integers(len(p.values)))]
        return scalar_value(p, v)
    if p.is_float:
        if p.range is not None:
            lo, hi = p.range
            return scalar_value(p, lo + (hi - lo) * rng.random())
        bits = type_bits(p.type)
        raw = int(rng.integers(0, 1 << bits, dtype=np.uint64))
        return np.array([raw], dtype=f"<u{bits // 8}").view(p.dtype)[0]
    lo, hi = p.range if p.range is not None else int_bounds(p.type)
    return int(lo + int(rng.integers(0, hi - lo + 1, dtype=np.uint64)))


def scalar_value(p: ParamSpec, v):
    """A scalar as the value keq passes: a Python int, or a numpy float of the param's type."""
    if p.is_float:
        return p.dtype.type(v)
    return int(v)


def draw_scalars(spec: PairSpec, rng: np.random.Generator,
                 fixed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Draw every scalar not in `fixed` uniformly within its range/values (its whole type when
    neither is given), rejecting draws until `assume` holds. Integer scalars are Python ints,
    float scalars numpy floats of their type."""
    fixed = dict(fixed or {})
    for a in spec.assume:
        if a.names <= set(fixed) and not a.eval(fixed):
            vals = ", ".join(f"{k}={fixed[k]}" for k in sorted(a.names))
            raise a._error(f"the given scalars ({vals}) violate assume {a.text!r}")
    free = [p for p in spec.scalars if p.name not in fixed]
    for _ in range(DRAW_ATTEMPTS):
        env = dict(fixed)
        for p in free:
            env[p.name] = _draw_one(p, rng)
        if all(a.eval(env) for a in spec.assume):
            return {p.name: env[p.name] for p in spec.scalars}
        if not free:
            break
    first = spec.assume[0] if spec.assume else None
    given = ", ".join(f"{k}={v}" for k, v in fixed.items())
    msg = (f"no scalar values satisfying assume found in {DRAW_ATTEMPTS} draws"
           if free else "the given scalars do not satisfy assume")
    if given:
        msg += f" (given {given})"
    if first is not None:
        bad = spec.failed_assumption(env) or first
        raise bad._error(msg)
    raise KeqError(msg)


def random_buffer(p: ParamSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """n elements of p's type with uniformly random bit patterns (NaNs and infs included)."""
    if n == 0:
        return np.zeros(0, dtype=p.dtype)
    dt = p.dtype
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).copy()


def make_inputs(spec: PairSpec, scalars: Mapping[str, Any],
                rng: np.random.Generator) -> dict[str, Any]:
    """Every param's initial value by name: the scalars as given, every buffer (in, inout, out
    and scratch alike) filled with random bit patterns of its element type."""
    out: dict[str, Any] = {}
    for p in spec.params:
        if p.is_scalar:
            out[p.name] = scalars[p.name]
        else:
            out[p.name] = random_buffer(p, p.length_of(scalars), rng)
    return out


__all__ = ["PairSpec", "Side", "ParamSpec", "Expr", "SpecError", "load_spec", "loads_spec",
           "parse_expr", "draw_scalars", "make_inputs", "random_buffer", "scalar_value",
           "dtype_of", "MODES", "EXPECTS", "ACCESS", "TYPES"]
