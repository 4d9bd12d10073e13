"""`verifier.counterexample._unspecified_reads`: when a difference seen on the emulator counts
although a kernel read never-written shared memory. Only the candidate's reads of it, with no
other effect in either kernel and in bitexact mode: its contents are unspecified, so the
emulator's zeros are one state the GPU may leave, and that run is a legal execution."""

from __future__ import annotations

from types import SimpleNamespace

from semantics.machine.executor import Effect
from verifier.counterexample import _unspecified_reads

UNINIT = Effect("uninitialized", "read of never-written shared memory by block (0,0,0) "
                "thread (1,0,0)", "k.ptx:9:2")
UNDEF = Effect("undefined", "shfl from a lane that does not take part", "k.ptx:12:2")
BITEXACT = SimpleNamespace(mode="bitexact")


def test_the_candidate_alone_reading_unwritten_shared_memory_counts():
    note = _unspecified_reads(BITEXACT, {"reference": [], "candidate": [UNINIT]})
    assert note is not None and "k.ptx:9:2" in note and "unspecified" in note


def test_anything_else_proves_nothing():
    # the reference reads it too: its own value is unspecified, the spec is at fault
    assert _unspecified_reads(BITEXACT, {"reference": [UNINIT], "candidate": [UNINIT]}) is None
    # another effect in the candidate: a value silicon is not bound to produce
    assert _unspecified_reads(BITEXACT, {"reference": [], "candidate": [UNINIT, UNDEF]}) is None
    assert _unspecified_reads(BITEXACT, {"reference": [], "candidate": [UNDEF]}) is None
    # no effect at all: not this rule's business
    assert _unspecified_reads(BITEXACT, {"reference": [], "candidate": []}) is None
    # real mode: rounding and garbage look alike
    real = SimpleNamespace(mode="real")
    assert _unspecified_reads(real, {"reference": [], "candidate": [UNINIT]}) is None
