"""Spec expressions (grid, block, length, assume): a small recursive-descent parser and
evaluator, never `eval`. `parse_expr(text)` returns an `Expr`; errors carry a 0-based offset
into the text (`ExprError`) so the loader can put a caret under the bad token."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from semantics.errors import KeqError, SourceLoc
from verifier.spec.errors import SpecError

_TOKEN = re.compile(r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|"
                    r"(?P<op>//|==|!=|<=|>=|[-+*%()<>,/=!]))")
FUNCTIONS = {"ceil_div": 2, "min": -2, "max": -2}   # arity; negative: at least that many
KEYWORDS = ("and", "or", "not")
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
    if k == "bin" or (k == "call" and n.value == "ceil_div"):
        a, b = _eval(n.args[0], env), _eval(n.args[1], env)
        return _arith(n.value, a, b, b == 0)
    if k == "call":
        vals = [_eval(a, env) for a in n.args]
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


def _arith(op: str, a, b, zero_divisor: bool):
    """A binary operator or ceil_div, on ints or on arrays of them alike (Python's floor
    division and modulo); `zero_divisor` says whether `b` is zero (anywhere)."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if zero_divisor:
        raise ZeroDivisionError
    if op == "ceil_div":
        return -(-a // b)
    return a // b if op == "//" else a % b


def _eval_many(n: Node, env: Mapping[str, Any]):
    """`_eval` at many points at once: names are numpy arrays of Python ints (dtype object,
    so the arithmetic is Python's, exact and unbounded) or ints; the result is such an array
    (bool for predicates) or a plain value. A divisor that is zero at any point raises
    ZeroDivisionError (the caller evaluates point by point to say where)."""
    import numpy as np
    k = n.kind
    if k == "int":
        return n.value
    if k == "name":
        return env[n.value]
    vals = [_eval_many(a, env) for a in n.args]
    if k == "neg":
        return -vals[0]
    if k == "bin" or (k == "call" and n.value == "ceil_div"):
        a, b = vals
        return _arith(n.value, a, b, n.value in ("//", "%", "ceil_div") and
                      bool(np.any(np.asarray(b) == 0)))
    if k == "call":
        if not any(isinstance(v, np.ndarray) for v in vals):
            return min(vals) if n.value == "min" else max(vals)
        return _reduce(np.minimum if n.value == "min" else np.maximum, vals)
    if k == "cmp":
        return _reduce(np.logical_and, [np.asarray(_CMP[op](a, b), dtype=bool)
                                        for op, a, b in zip(n.value, vals, vals[1:])])
    if k == "and":
        return _reduce(np.logical_and, [np.asarray(v, dtype=bool) for v in vals])
    if k == "or":
        return _reduce(np.logical_or, [np.asarray(v, dtype=bool) for v in vals])
    if k == "not":
        return np.logical_not(np.asarray(vals[0], dtype=bool))
    raise AssertionError(k)


def _reduce(f, vals):
    out = vals[0]
    for v in vals[1:]:
        out = f(out, v)
    return out


def _z3_floor(a, b):
    """Python's floor division and modulo on 64-bit terms (z3's sdiv truncates)."""
    import z3
    q, r = a / b, z3.SRem(a, b)
    adjust = z3.And(r != 0, (r < 0) != (b < 0))
    return z3.If(adjust, q - 1, q), z3.If(adjust, r + b, r)


def _to_z3(n: Node, env: Mapping[str, Any]):
    """`_eval` over 64-bit two's complement terms (exact for the small values of a launch);
    plain ints stay ints so concrete sub-expressions fold."""
    import z3
    k = n.kind
    if k == "int":
        return n.value
    if k == "name":
        return env[n.value]
    args = [_to_z3(a, env) for a in n.args]
    if all(isinstance(a, (int, bool)) for a in args):
        return _eval(Node(n.kind, n.offset, n.value,
                          tuple(Node("int", a.offset, v) for a, v in zip(n.args, args))), {})
    bv = [z3.BitVecVal(a, 64) if isinstance(a, int) and not isinstance(a, bool) else a
          for a in args]
    if k == "neg":
        return -bv[0]
    if k == "bin" or (k == "call" and n.value == "ceil_div"):
        if n.value in ("//", "%", "ceil_div") and not isinstance(args[1], int):
            raise KeqError("a division by a symbolic value in a launch expression is not "
                           "supported")
        if args[1:] and isinstance(args[1], int) and args[1] == 0 and n.value != "+":
            raise ZeroDivisionError
        a, b = bv
        if n.value == "+":
            return a + b
        if n.value == "-":
            return a - b
        if n.value == "*":
            return a * b
        if n.value == "ceil_div":
            return -_z3_floor(-a, b)[0]
        q, r = _z3_floor(a, b)
        return q if n.value == "//" else r
    if k == "call":
        out = bv[0]
        for b in bv[1:]:
            out = z3.If(b < out, b, out) if n.value == "min" else z3.If(b > out, b, out)
        return out
    if k == "cmp":
        ops = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b,
               "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
               ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
        return z3.And([ops[op](a, b) for op, a, b in zip(n.value, bv, bv[1:])])
    boolean = [z3.BoolVal(a) if isinstance(a, bool) else a for a in args]
    if k == "and":
        return z3.And(boolean)
    if k == "or":
        return z3.Or(boolean)
    if k == "not":
        return z3.Not(boolean[0])
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
            if kind == "name" and tok in KEYWORDS:
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
                if t not in FUNCTIONS:
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
                arity = FUNCTIONS[t]
                if (arity > 0 and len(args) != arity) or (arity < 0 and len(args) < -arity):
                    need = f"{arity}" if arity > 0 else f"at least {-arity}"
                    raise ExprError(f"{t}() takes {need} arguments, {len(args)} given", off)
                return Node("call", off, t, tuple(args))
            if t in FUNCTIONS:
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
        todo = [self.node]
        while todo:
            n = todo.pop()
            if n.kind == "name":
                out.add(n.value)
            todo.extend(n.args)
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

    def eval_many(self, env: Mapping[str, Any]):
        """The value at many points at once (`_eval_many`): `env` maps names to numpy arrays
        of Python ints (dtype object) or ints. Raises ZeroDivisionError, unlocated, when a
        divisor is zero anywhere: `eval` at each point then says where."""
        missing = sorted(self.names - set(env))
        if missing:
            raise self._error(f"no value for {', '.join(missing)} in {self.text!r}")
        return _eval_many(self.node, env)

    def to_z3(self, env: Mapping[str, Any]):
        """The expression over `env` values that are ints or 64-bit z3 terms: an int when
        every name it uses is concrete, else a z3 term (BitVec 64 or Bool)."""
        try:
            return _to_z3(self.node, env)
        except ZeroDivisionError:
            raise self._error(f"division by zero in {self.text!r}") from None
        except KeqError as e:
            raise self._error(f"{e} ({self.text!r})") from None

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
