"""Textures and surfaces over whole claims (the corpus family kernels/texture):
a 3-tap blur through a clamping texture equals clamped plain loads over every image shape,
normalized wrap equals a modular index, surface loads and stores (x in bytes) equal plain
ones, a 3-D texture read at texel centres equals plain loads of the volume, tex2Dgather
(tld4) equals four point fetches, and a bilinear upsample (linear filtering) equals itself
computed two pixels per thread (by congruence: the filter is uninterpreted, an assumption the
verdict names); the planted bugs (an off-by-one coordinate, border addressing where the
reference clamps, surface x coordinates in elements, y and z swapped in tex3D, the gather's
components in the wrong order) are refuted with replayed counterexamples. The upsample whose
pixel centre lacks its +0.5 is Inconclusive, not refuted: the outputs are the filter at
other coordinates, and only keq's model of the filter (unchecked on silicon) says they
differ. With trials=0 the symbolic machinery alone decides (a refutation is replayed before
it is reported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.api import load_pair, verify
from verifier.verdict import VerdictKind

DATA = Path(__file__).resolve().parents[2] / "kernels" / "texture"


@pytest.mark.parametrize("name, kind", [
    ("blur", VerdictKind.EQUIVALENT),
    ("shift_wrap", VerdictKind.EQUIVALENT),
    ("scale_surface", VerdictKind.EQUIVALENT),
    ("blur_offbyone", VerdictKind.NOT_EQUIVALENT),
    ("blur_border", VerdictKind.NOT_EQUIVALENT),
    ("scale_surface_elements", VerdictKind.NOT_EQUIVALENT),
    ("copy3d", VerdictKind.EQUIVALENT),
    ("copy3d_swapped", VerdictKind.NOT_EQUIVALENT),
    ("gather", VerdictKind.EQUIVALENT),
    ("gather_order", VerdictKind.NOT_EQUIVALENT),
    ("upsample_pairs", VerdictKind.EQUIVALENT),
    ("upsample_corner", VerdictKind.INCONCLUSIVE),
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


def test_linear_filtering_rests_on_a_named_assumption():
    v = verify(load_pair(DATA / "upsample_pairs.toml"), trials=0)
    assert v.kind is VerdictKind.EQUIVALENT
    assert v.assumptions and all("linear filtering of texture 'tex'" in a and
                                 "same function in both kernels" in a for a in v.assumptions)


def test_a_difference_only_the_filter_model_shows_is_not_a_refutation():
    """Random testing runs too: the emulator's filtered values differ (keq's model), but an
    emulator run through an approximation is no evidence, and the solver's difference holds
    only for some filter functions."""
    v = verify(load_pair(DATA / "upsample_corner.toml"))
    assert v.kind is VerdictKind.INCONCLUSIVE and v.counterexample is None
    assert any("approximate functions" in r for r in v.reasons), v.reasons
