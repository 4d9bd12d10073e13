"""The last-block handoff (tests/data/handoff): each block writes its partial sum, fences and
takes a ticket with atomicInc; the last ticket's block fences and reads every partial. The
symbolic race log orders those writes before those reads through the atomics' order keys
(semantics/machine/symbolic_handoffs.py), so the pair is proved EQUIVALENT to atomic block
sums; without the first fence it is refuted with the race, replayed on the emulator (whose
detector, semantics/machine/happens_before.py, follows the contending atomics round by
round)."""

from __future__ import annotations

from pathlib import Path

import pytest

from semantics.machine.memory_model import strength
from semantics.sass.ops.ptxcall import ptx_form
from verifier.api import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.spec import load_spec

DATA = Path(__file__).resolve().parents[1] / "data" / "handoff"


@pytest.mark.parametrize("n", [200, 384])
def test_the_last_block_handoff_is_proved(n):
    v = verify(load_spec(DATA / "last_block.toml"), fixed={"n": n}, timeout_s=60, jobs=1)
    assert v.kind == EQUIVALENT, v.reasons


def test_without_the_release_fence_it_races():
    v = verify(load_spec(DATA / "last_block_nofence.toml"), fixed={"n": 300}, timeout_s=60,
               jobs=1)
    assert v.kind == NOT_EQUIVALENT
    assert "data race" in v.reasons[0]


def test_without_handoffs_the_symbolic_log_cannot_order_them(monkeypatch):
    from semantics.machine.symbolic_handoffs import Handoffs
    monkeypatch.setattr(Handoffs, "ordered", lambda self, w, r: None)
    v = verify(load_spec(DATA / "last_block.toml"), fixed={"n": 200}, timeout_s=60, jobs=1)
    assert v.kind == INCONCLUSIVE
    assert any("did not reproduce" in r for r in v.reasons), v.reasons


def test_cluster_scope_is_the_cta_without_clusters():
    assert strength(ptx_form("atom.relaxed.cluster.global.add.u32")).scope == "cta"
    assert strength(ptx_form("atom.global.add.u32")).scope == "gpu"
