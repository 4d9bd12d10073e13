"""Entry point: argument parsing, dispatch, and the error boundary that turns every keq error
into `file:line:col: error: ...` on stderr and exit code 3, and anything else (a bug in keq)
into one line on stderr and exit code 4, so that a crash never reads as a verdict."""

from __future__ import annotations

import argparse
import atexit
import multiprocessing
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Sequence

from semantics import __version__
from semantics.errors import KeqError
from semantics.machine.termination import DEFAULT_MAX_STEPS, step_budget_of
from verifier.cli import (check_cmd, fuzz_cmd, gate_cmd, parse_cmd, prove_cmd, rule_cmd,
                          run_cmd, tv_cmd, verify_cmd)
from semantics.machine.termination import Unscheduled
from verifier.gc_policy import collect_less
from verifier.verdict import InternalError

EXIT_OK = 0
EXIT_NOT_EQUIVALENT = 1
EXIT_INCONCLUSIVE = 2
EXIT_BAD_INPUT = 3
EXIT_INTERNAL = 4         # keq failed (an uncaught exception, or keq contradicted itself)

EXIT_CODES = ("exit codes: 0 ok/equivalent, 1 not equivalent, 2 inconclusive, 3 bad input or "
              "usage, 4 internal error (a bug in keq; set KEQ_DEBUG=1 for the traceback)")

_COMMANDS = (parse_cmd, run_cmd, verify_cmd, fuzz_cmd, prove_cmd, check_cmd, gate_cmd, tv_cmd,
             rule_cmd)


class _ArgParser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors; keq reserves 2 for Inconclusive."""

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgParser(
        prog="keq",
        description="keq proves an optimized GPU kernel equivalent to its reference, or finds "
                    "an input on which they differ.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"keq {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgParser)
    for cmd in _COMMANDS:
        cmd.add_parser(sub)
    return parser


class _ReaderMayLeave:
    """stdout that stops writing once its reader has left (`keq verify buggy.toml | head`),
    so that the command runs on and exits with its own code: a verdict's exit code must not
    become 0 (or a traceback) because the reader stopped reading. Everything else is the
    wrapped stream's."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self._gone = True
        try:
            # (the interpreter flushes stdout once more at exit: into nothing, quietly)
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
        except (OSError, ValueError):
            pass        # not a file descriptor (a test's captured stream)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    collect_less()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    stdout = sys.stdout
    sys.stdout = _ReaderMayLeave(stdout)
    try:
        steps = getattr(args, "max_steps", None)
        if steps is not None and steps < 1:
            raise KeqError(f"--max-steps {steps}: give 1 or more instructions")
        with step_budget_of(steps or DEFAULT_MAX_STEPS):
            return args.run(args)
    except InternalError as e:          # (a KeqError, but not the user's: keq's own)
        return internal_error(e)
    except Unscheduled as e:            # (a wait keq cannot schedule: nothing decided)
        print(f"{e.loc}: inconclusive: {e.message}", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    except KeqError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # a write that went around `sys.stdout` (to its binary buffer): the reader left
        # before the command finished, so its outcome is unknown here; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        return EXIT_OK
    except OSError as e:
        name = f"{e.filename}: " if e.filename else ""
        print(f"{name}error: {e.strerror or e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        return internal_error(e)
    finally:
        sys.stdout = stdout


def internal_error(e: BaseException) -> int:
    """Report a bug in keq: one line on stderr naming the exception and where it was raised
    (the full traceback too with KEQ_DEBUG=1), and EXIT_INTERNAL. Exit 1 would read as "not
    equivalent" in CI, and a traceback as a verdict nobody reads."""
    if os.environ.get("KEQ_DEBUG") == "1":
        traceback.print_exception(e, file=sys.stderr)
    message = " ".join(str(e).split())
    where = ""
    frames = traceback.extract_tb(e.__traceback__)
    if frames:
        f = frames[-1]
        where = f" (at {_short(f.filename)}:{f.lineno} in {f.name})"
    print(f"keq: internal error (a bug in keq; please report it): {type(e).__name__}: "
          f"{message}{where}", file=sys.stderr)
    return EXIT_INTERNAL


def _short(filename: str) -> str:
    """A source path relative to the directory holding keq's packages, when it is there."""
    root = Path(__file__).resolve().parents[2]
    try:
        return Path(filename).resolve().relative_to(root).as_posix()
    except ValueError:
        return filename


def entry() -> None:
    """The `keq` console script: `main`, then `leave`."""
    leave(main())


def leave(code: int) -> None:
    """End the process with exit code `code` once the command is done, without tearing its
    heap down object by object. A verification leaves millions of z3 terms behind; freeing
    them one reference at a time took 0.7 s after tiled_real's verdict was printed (0.36 s
    for the histogram, 0.11 s for a vector add), time the user waits for nothing. The streams are
    flushed and the exit handlers run as at a normal exit (multiprocessing's, logging's,
    temporary directories'); only when another thread or a child process is still running
    does the normal exit, which waits for them, take over."""
    _flush()
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None or threading.active_count() > 1 or \
            multiprocessing.active_children():
        sys.exit(code)
    run_exit_handlers()
    _flush()
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass        # a reader that left (see `_ReaderMayLeave`), a closed stream


if __name__ == "__main__":
    entry()
