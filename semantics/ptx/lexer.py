"""PTX lexer.

Speed matters (search-based compilers parse thousands of candidates), so tokens are produced by
one `re.findall` per line: plain strings, no token objects. A token's column is recomputed only
when an error needs it (`Tokens.col`). Comments are removed before tokenizing: `/* */` blocks
are blanked in place so line numbers stay true.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)

# One alternative per token class, tried in order; no capture groups, so findall yields strings.
# Words come first: they are most tokens.
_WORD = r"\.?[A-Za-z_$%][\w$]*(?:::[\w$]+)*(?:\.[\w$]*(?:::[\w$]+)*)*"  # opcodes, regs, directives
_TOKEN = re.compile(
    _WORD +
    r'|"(?:[^"\\\n]|\\.)*"'                             # string
    r'|"[^\n]*'                                         # unterminated string: the rest of the line
    r"|0[fF][0-9A-Fa-f]{8}(?![\w$])"                    # 0f3F800000 (f32 bits)
    r"|0[dD][0-9A-Fa-f]{16}(?![\w$])"                   # 0d3FF0000000000000 (f64 bits)
    r"|0[xX][0-9A-Fa-f]+U?(?![\w$])"                    # hex int
    r"|0[bB][01]+U?(?![\w$])"                           # binary int
    r"|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?"              # decimal float
    r"|[0-9]+[eE][+-]?[0-9]+"
    r"|[0-9]+U?(?![\w$])"                               # decimal / octal int
    r"|[0-9][\w$]*"                                     # malformed number (0x, 12ab): one token
    r"|\S"                                              # punctuation (and anything else)
)
# The same tokens, each with the whitespace before it skipped in the same match (possessively:
# no backtracking): fewer failed match attempts. Only used on right-stripped lines, where
# every whitespace run is followed by a token.
_SCAN = re.compile(r"\s*+(" + _TOKEN.pattern + ")")


def _strip_line_comment(line: str) -> str:
    i = line.find("//")
    if i < 0:
        return line
    if '"' not in line[:i]:
        return line[:i]
    in_str = False
    j = 0
    while j < len(line):
        c = line[j]
        if in_str:
            if c == "\\":
                j += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif line.startswith("//", j):
            return line[:j]
        j += 1
    return line


@dataclass(slots=True)
class Tokens:
    """The token stream of one file: parallel lists of text and 0-based line index."""

    path: str
    lines: list[str]
    text: list[str]
    line: list[int]

    def col(self, i: int) -> int:
        """1-based column of token i (recomputed by re-tokenizing its line). The end of file
        (i past the last token) is the column just after the last token."""
        if i >= len(self.text):
            if not self.text:
                return 1
            return self.col(len(self.text) - 1) + len(self.text[-1])
        ln = self.line[i]
        if i == 0 or self.line[i - 1] != ln:      # first token on its line: the common case
            src = self.lines[ln]
            return len(src) - len(src.lstrip()) + 1
        k = 0
        j = i - 1
        while j >= 0 and self.line[j] == ln:
            k += 1
            j -= 1
        src = _strip_line_comment(self.lines[ln])
        for n, m in enumerate(_TOKEN.finditer(src)):
            if n == k:
                return m.start() + 1
        return 1

    def line_no(self, i: int) -> int:
        if i >= len(self.text):
            return self.line[-1] + 1 if self.line else 1
        return self.line[i] + 1

    def line_text(self, i: int) -> str:
        n = self.line_no(i) - 1
        return self.lines[n] if 0 <= n < len(self.lines) else ""


def tokenize(text: str, path: str) -> Tokens:
    if "/*" in text:
        text = _BLOCK_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    lines = text.split("\n")
    out_text: list[str] = []
    out_line: list[int] = []
    findall = _SCAN.findall
    extend_t = out_text.extend
    extend_l = out_line.extend
    for n, line in enumerate(lines):
        if "//" in line:
            line = _strip_line_comment(line)
        toks = findall(line.rstrip())
        if toks:
            extend_t(toks)
            extend_l([n] * len(toks))
    return Tokens(path, lines, out_text, out_line)
