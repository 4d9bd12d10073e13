"""verifier.fuzz.compare: bit patterns for bitexact, ulp/rel tolerances for real mode."""

from __future__ import annotations

import numpy as np
import pytest

from semantics.errors import KeqError
from verifier.fuzz.compare import Tolerance, differing, parse_tolerance
from verifier.spec import ParamSpec

F32 = ParamSpec("x", "buffer", "f32", None, "out")
S32 = ParamSpec("i", "buffer", "s32", None, "out")


def f32(*v):
    return np.array(v, dtype=np.float32)


def test_bitexact_compares_bit_patterns():
    nan2 = np.array([0x7FC00001], dtype=np.uint32).view(np.float32)[0]
    r = f32(0.0, np.nan, 1.0, 2.0)
    c = f32(-0.0, nan2, 1.0, 2.0000002)
    assert differing(F32, r, c, "bitexact", None).tolist() == [0, 1, 3]


def test_real_mode_nan_equals_nan_and_zero_signs_equal():
    r, c = f32(0.0, np.nan, np.inf, 1.0), f32(-0.0, -np.nan, np.inf, 1.0)
    assert differing(F32, r, c, "real", Tolerance("rel", 0.0)).tolist() == []
    assert differing(F32, f32(np.inf), f32(-np.inf), "real", Tolerance("rel", 1.0)).tolist() == [0]
    assert differing(F32, f32(np.inf), f32(3e38), "real", Tolerance("rel", 1.0)).tolist() == [0]


def test_ulp_tolerance_counts_through_zero():
    one = f32(1.0)
    up2 = (one.view(np.uint32) + 2).view(np.float32)
    assert differing(F32, one, up2, "real", Tolerance("ulp", 2)).tolist() == []
    assert differing(F32, one, up2, "real", Tolerance("ulp", 1)).tolist() == [0]
    tiny = np.array([1], dtype=np.uint32).view(np.float32)
    assert differing(F32, tiny, -tiny, "real", Tolerance("ulp", 2)).tolist() == []
    assert differing(F32, tiny, -tiny, "real", Tolerance("ulp", 1)).tolist() == [0]


def test_rel_tolerance():
    assert differing(F32, f32(100.0), f32(100.001), "real", Tolerance("rel", 1e-5)).tolist() == []
    assert differing(F32, f32(100.0), f32(100.01), "real", Tolerance("rel", 1e-5)).tolist() == [0]


def test_integers_are_exact_in_real_mode():
    r, c = np.array([1, 2], np.int32), np.array([1, 3], np.int32)
    assert differing(S32, r, c, "real", Tolerance("rel", 1.0)).tolist() == [1]


@pytest.mark.parametrize("text, ok", [("ulp:2", "ulp:2"), ("rel:1e-5", "rel:1e-05"),
                                      ("rel: 0.5", "rel:0.5")])
def test_parse_tolerance(text, ok):
    assert str(parse_tolerance(text)) == ok


@pytest.mark.parametrize("text, msg", [("abs:1", "expected ulp:K"), ("ulp:1.5", "integer"),
                                       ("rel:-1", ">= 0"), ("rel:nan", ">= 0"), ("", "expected")])
def test_parse_tolerance_errors(text, msg):
    with pytest.raises(KeqError, match=msg):
        parse_tolerance(text)
