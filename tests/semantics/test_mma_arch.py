"""The claim's `arch` (the tensor-core datapath the emulator models, semantics/tensor_core.py):
sm_80 to sm_89 keep 24 bits below the largest exponent, sm_90 25 (reported by MMA-Sim, not
checked on silicon here); the claim names the arch whenever a kernel runs mma; an unknown arch
is a located error about the spec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semantics.tensor_core import dot
from verifier.api import claim_text, load_pair
from verifier.spec import SpecError

MMA = Path(__file__).resolve().parents[1] / "data" / "mma" / "tile_staged_vs_direct.toml"


def f16(x: float) -> int:
    return int(np.array([x], np.float16).view(np.uint16)[0])


def test_four_products_of_2_to_the_minus_25_show_only_with_25_bits():
    a = [f16(2.0 ** -12)] * 4 + [0] * 12
    b = [f16(2.0 ** -13)] * 4 + [0] * 12
    one = 0x3F800000
    assert dot("f16", a, b, one, arch="sm_80") == dot("f16", a, b, one, arch="sm_89") == one
    assert dot("f16", a, b, one, arch="sm_90") == one + 1         # 1 + 2^-23


def test_the_claim_names_the_arch_of_a_tensor_core_pair(tmp_path):
    spec = load_pair(MMA)
    assert claim_text(spec, {}).endswith("; tensor cores as on sm_80 (the default arch)")
    text = MMA.read_text().replace('mode = "bitexact"', 'mode = "bitexact"\narch = "sm_90"')
    text = text.replace('ptx = "', f'ptx = "{MMA.parent}/')
    (tmp_path / "p.toml").write_text(text)
    assert claim_text(load_pair(tmp_path / "p.toml"), {}).endswith("; tensor cores as on sm_90")
    vec4 = Path(__file__).resolve().parents[2] / "kernels" / "vector_add" / "vec4.toml"
    assert "tensor cores" not in claim_text(load_pair(vec4), {})


def test_an_unknown_arch_is_a_located_error(tmp_path):
    text = MMA.read_text().replace('mode = "bitexact"', 'mode = "bitexact"\narch = "sm_75"')
    (tmp_path / "p.toml").write_text(text.replace('ptx = "', f'ptx = "{MMA.parent}/'))
    with pytest.raises(SpecError, match="arch 'sm_75' is not one of: sm_80"):
        load_pair(tmp_path / "p.toml")
