"""Mapping TOML key paths to line:col, and raising located errors at those paths.

`TomlPositions` is a small scanner over text tomllib has already accepted; `SpecFile` is the file
being loaded, turning a key path and a message into a `SpecError` with a caret."""

from __future__ import annotations

from pathlib import Path

from semantics.errors import LocatedError, SourceLoc
from verifier.spec.errors import SpecError

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


class SpecFile:
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


def key_text(path: tuple) -> str:
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else k)
    return out
