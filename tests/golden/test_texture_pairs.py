"""Textures and surfaces over whole claims (tests/data/texture, nvcc -arch=sm_80 output):
a 3-tap blur through a clamping texture equals clamped plain loads over every image shape,
normalized wrap equals a modular index, surface loads and stores (x in bytes) equal plain
ones; the planted bugs (an off-by-one coordinate, border addressing where the reference
clamps, surface x coordinates in elements) are refuted with replayed counterexamples. With
trials=0 the symbolic machinery alone decides (a refutation is replayed before it is
reported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.api import load_pair, verify
from verifier.verdict import VerdictKind

DATA = Path(__file__).resolve().parents[1] / "data" / "texture"


@pytest.mark.parametrize("name, kind", [
    ("blur", VerdictKind.EQUIVALENT),
    ("shift_wrap", VerdictKind.EQUIVALENT),
    ("scale_surface", VerdictKind.EQUIVALENT),
    ("blur_offbyone", VerdictKind.NOT_EQUIVALENT),
    ("blur_border", VerdictKind.NOT_EQUIVALENT),
    ("scale_surface_elements", VerdictKind.NOT_EQUIVALENT),
])
def test_texture_and_surface_pairs(name, kind):
    spec = load_pair(DATA / f"{name}.toml")
    v = verify(spec, trials=0)
    assert v.kind == kind, v.reasons
    assert kind.value.replace("-", " ") in spec.expect.replace("-", " ")
    if kind is VerdictKind.NOT_EQUIVALENT:
        assert v.counterexample is not None
    for view in spec.views:
        assert view.claim_text() in v.claim
    if name.startswith("blur"):
        assert ("address border" if name == "blur_border" else "address clamp") in v.claim
