"""A whole-run time limit, so that every `keq verify` ends with a verdict.

The solver timeout bounds each query and the step budget each emulated thread
(`semantics.machine.termination`), but a run is many of both: a claim over thousands of shapes
or a huge symbolic launch can take longer than anyone waits. `time_limit(S)` raises
`TimeLimitReached` in the main thread after S seconds of wall time, which the command turns
into Inconclusive naming what was running. It is a BaseException so that no `except
Exception` on the way swallows it (a limit reached is never an error of the kernel).

Only in the main thread and where SIGALRM exists (the Python API, from a worker thread, runs
without a limit; its callers bound it themselves).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

DEFAULT_TIME_LIMIT_S = 1800.0
REPEAT_S = 1.0


class TimeLimitReached(BaseException):
    """The whole-run time limit passed (seconds in `args[0]`)."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise `TimeLimitReached` in this thread after `seconds` (None or 0: no limit)."""
    if not seconds or threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "SIGALRM"):
        yield
        return

    armed = [True]

    def _reached(signum, frame):
        # (never once the body is left: a repeat landing while the first one unwinds, under
        # load, would otherwise escape the caller's handler)
        if armed[0]:
            raise TimeLimitReached(seconds)

    previous = signal.signal(signal.SIGALRM, _reached)
    # (and again every REPEAT_S after: an exception raised where Python ignores it, in a gc
    # callback or a __del__, is lost, so the limit is raised until one reaches the caller)
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_S)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


__all__ = ["time_limit", "TimeLimitReached", "DEFAULT_TIME_LIMIT_S"]
