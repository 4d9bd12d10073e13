"""Tokens of one SASS instruction, and the located error of the SASS front end.

A listing is read line by line (`semantics.sass.parser`); only the instruction text of a line
is tokenized, with each token's column kept, because SASS files are small next to the PTX that
search loops produce and every error must point at its token.
"""

from __future__ import annotations

import re

from semantics.errors import LocatedError, SourceLoc


class SassSyntaxError(LocatedError):
    """Text that is not an nvdisasm / cuobjdump listing keq can read."""


_TOKEN = re.compile(
    r"`\([^)\s]*\)"                              # `(.L_x_0), `($__internal_0_$...)
    r"|`\S*"                                     # a malformed target: one token, an error
    r"|0[xX][0-9A-Fa-f]+(?![\w$.])"              # hex integer
    r"|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?(?![\w$.])"   # decimal (a float immediate)
    r"|[0-9][\w$.]*"                             # a malformed number (0x, 1.5.reuse): an error
    r"|[A-Za-z_$][\w$]*(?:\.[\w$]*)*"            # opcodes, registers (R2.64, SR_TID.X), words
    r"|\.[\w$]+(?:\.[\w$]+)*"                    # a suffix after `|R1|`: .reuse
    r"|\S"                                       # punctuation and anything else
)


def tokenize_instruction(text: str, start_col: int) -> list[tuple[str, int]]:
    """Tokens of `text` with their 1-based columns (text begins at column `start_col`)."""
    return [(m.group(), m.start() + start_col) for m in _TOKEN.finditer(text)]


def error(message: str, path: str, line_no: int, col: int, line_text: str) -> SassSyntaxError:
    return SassSyntaxError(message, SourceLoc(path, line_no, max(col, 1)), line_text)
