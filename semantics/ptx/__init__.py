"""PTX front end: lexer, parser (text -> `semantics.ir.Module`), printer, opcode registry."""

from semantics.ptx.parser import parse_ptx, parse_ptx_file
from semantics.ptx.printer import print_module

__all__ = ["parse_ptx", "parse_ptx_file", "print_module"]
