"""Varying what the PTX ISA leaves open (`semantics.choices`) across the runs of one example:
whether a run read something open (`consulted`), which other choices to try
(`alternatives`, seeded per example by `example_seed`), and which choices change what the
hardware fixes for both kernels alike (`shares_fixed_values`). The runner's module docstring
says how the fuzz loop uses them."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np

from semantics.choices import Choices
from verifier.fuzz.backends import SideRun
from verifier.testing import alternatives as _alternatives, consulted as _consulted


def consulted(run: SideRun) -> bool:
    """Did the run read what the ISA leaves open, so other choices may change it
    (`verifier.testing.consulted`: effects of kind "uninitialized", "nondeterministic", ...)?"""
    return _consulted(run.effects)


def alternatives(base: Choices, seed: int, effects=()) -> list[Choices]:
    """The other choices a varied run tries, `verifier.testing.alternatives`: every
    never-written byte 0xa5, the reverse order, seeded random values and orders (and what
    else that function adds for the run's `effects`)."""
    return _alternatives(SimpleNamespace(choices=base), seed, effects)


def choices_key(c: Choices) -> tuple:
    """What tells two choices apart, for caching the runs made under them."""
    return (c.fill, c.schedule, getattr(c, "layout", "packed"))


def example_seed(seed_: int, values: dict) -> int:
    """A seed derived from the fuzz seed and the example's contents (the same example gives
    the same random choices, which shrinking needs)."""
    h = hashlib.blake2b(str(seed_).encode(), digest_size=4)
    for k in sorted(values):
        v = values[k]
        h.update(k.encode())
        h.update(np.ascontiguousarray(v).tobytes() if isinstance(v, np.ndarray)
                 else repr(v).encode())
    return int.from_bytes(h.digest(), "little")


def open_reads(run: SideRun) -> str:
    """The first two things open that the run read, for a message."""
    used = sorted({f"{e.what} at {e.loc}" for e in run.effects if _consulted((e,))})
    return "; ".join(used[:2]) + (f"; and {len(used) - 2} more" if len(used) > 2 else "")


def shares_fixed_values(c: Choices) -> bool:
    """Whether `c` changes the values the hardware fixes as a function of an instruction's
    inputs (the NaN an f32 add returns: `Choices.function`), which both kernels of a pair
    share: only a random fill does. Under such choices the reference runs under them too."""
    return c.fill.startswith("random:")
