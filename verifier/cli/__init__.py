"""The `keq` command line. Exit codes (DESIGN.md): 0 equivalent / ok, 1 not equivalent,
2 inconclusive, 3 bad input or usage. Errors never surface as tracebacks."""

from verifier.cli.main import main

__all__ = ["main"]
