"""What the PTX memory model (PTX ISA 8, "Memory Consistency Model") says about two accesses
to the same bytes by different threads, as the race detectors of both domains use it.

- An access is *strong* when it is an atomic (`atom`, `red`) or a load or store with
  `.volatile` (relaxed at system scope), `.relaxed`, `.acquire` or `.release` (8.3: "strong
  operations"); plain, `.weak` and `.nc` accesses are weak.
- Two strong accesses are *morally strong* relative to each other when each one's scope
  includes the other's thread (`.cta`: the same CTA; `.cluster`: the same cluster, which in
  the launches keq models (no cluster dimensions) is the CTA alone, so `.cluster` is read
  as `.cta`; `.gpu`, `.sys`: every thread of a launch, which runs on one GPU) and they
  overlap completely (the same bytes).
- Two conflicting accesses (the same bytes, at least one a write, different threads) that are
  not ordered by a barrier form a data race unless they are morally strong. Morally strong
  conflicting accesses do not race, but their order is the scheduler's: the old value or the
  new one, which an equivalence claim must hold for (`order_dependent`).
"""

from __future__ import annotations

from typing import NamedTuple

_STRONG_LOADS_STORES = frozenset({"volatile", "relaxed", "acquire", "release"})
_SCOPES = ("cta", "cluster", "gpu", "sys")


class Strength(NamedTuple):
    strong: bool
    scope: str           # "cta" | "cluster" | "gpu" | "sys" ("" for weak accesses)


WEAK = Strength(False, "")


def strength(form) -> Strength:
    """The strength and scope of a memory instruction's access (`form`: its static form)."""
    op = form.opcode
    flags = form.flags
    scope = next((s for s in _SCOPES if s in flags), "")
    if scope == "cluster":
        scope = "cta"           # (a launch without cluster dimensions: one CTA per cluster)
    if op in ("atom", "red"):
        return Strength(True, scope or "gpu")
    if op in ("ld", "st", "ldu") and flags & _STRONG_LOADS_STORES:
        if "volatile" in flags:
            return Strength(True, "sys")
        return Strength(True, scope or "gpu")
    return WEAK


def cta_scoped_fence(form) -> bool:
    """Does a `fence`/`membar` order only the threads of its CTA (`.cta`, or `.cluster`,
    which in a launch without cluster dimensions is the CTA)?"""
    return form.has("cta") or form.has("cluster")


def non_coherent(form) -> bool:
    """Does the access read through the non-coherent path, so the bytes must be read-only
    for the whole launch? `ld.global.nc` (PTX ISA, ld.global.nc) and texture fetches (CUDA
    Programming Guide: the texture cache is not kept coherent with global or surface writes
    within a kernel call, so such a fetch returns undefined data): `tex` and `tld4`."""
    return form.opcode in ("tex", "tld4") or form.has("nc")


def incoherent_after_writes(form) -> bool:
    """Does the access read through a cache that does not see this launch's earlier writes?
    `suld` (CUDA Programming Guide, texture and surface memory: a surface read of an address
    written earlier in the same kernel call, by a global or surface write, returns undefined
    data). A write after the read is fine (read, then write in place), so only writes that
    come before it count: one ordered before (the same thread earlier, or another thread
    before a barrier) makes it undefined, and one not ordered with it is a data race."""
    return form.opcode == "suld"


def morally_strong(a: Strength, b: Strength, same_cta: bool, same_bytes: bool) -> bool:
    """Are two accesses of these strengths morally strong relative to each other?"""
    if not (a.strong and b.strong and same_bytes):
        return False
    return same_cta or (a.scope != "cta" and b.scope != "cta")


__all__ = ["Strength", "WEAK", "strength", "morally_strong", "non_coherent", "cta_scoped_fence",
           "incoherent_after_writes"]
