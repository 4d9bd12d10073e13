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


# ------------------------------------------------------------------ the derived tolerance

from hypothesis import HealthCheck, given, settings            # noqa: E402
from hypothesis import strategies as st                         # noqa: E402

from verifier.fuzz.compare import OpsContext, auto_bound        # noqa: E402
from verifier.fuzz.strategies import arrays                     # noqa: E402

AUTO = Tolerance("auto", 4)
DRAWS = settings(max_examples=60, deadline=None, database=None, derandomize=True,
                 suppress_health_check=list(HealthCheck))
LONG = st.integers(2, 4096).flatmap(lambda n: arrays("f32", n, real=True))


def _tree(x: np.ndarray) -> np.float32:
    """A pairwise f32 sum of depth ceil(log2 n)."""
    x = x.astype(np.float32)
    while x.size > 1:
        if x.size % 2:
            x = np.append(x, np.float32(0))
        x = (x[0::2] + x[1::2]).astype(np.float32)
    return x[0]


def _serial(x: np.ndarray) -> np.float32:
    """A chain of n f32 adds, in order."""
    return np.cumsum(x.astype(np.float32), dtype=np.float32)[-1]


def _ctx(x: np.ndarray, n: int) -> OpsContext:
    mags = np.sort(np.abs(x.astype(np.float64)))
    return OpsContext(n, float(mags[-1]), float(mags[-n:].sum()))


def _depth(n: int) -> int:
    return max(1, int(np.ceil(np.log2(n))))


def test_auto_tolerance_is_k_n_u_times_the_scale():
    ctx = OpsContext(10, 2.0, 15.0)
    b = auto_bound(F32, np.array([100.0, 1.0]), np.array([100.0, 1.0]), 4, ctx)
    assert b.tolist() == pytest.approx([4 * 10 * (2**-24 * 100 + 2**-149),
                                        4 * 10 * (2**-24 * 15 + 2**-149)])
    assert str(AUTO) == "auto:4" and parse_tolerance("auto:8") == Tolerance("auto", 8.0)


@DRAWS
@given(LONG)
def test_auto_accepts_the_rounding_of_a_reordered_long_sum(x):
    """A chain of n adds, a tree of depth log2 n and the correctly rounded sum all round
    differently; n is the longest path (the chain's n)."""
    exact = np.float32(np.sum(x.astype(np.float64)))
    ref = f32(_tree(x))
    for cand in (_serial(x), exact, _tree(x[::-1])):
        assert differing(F32, ref, f32(cand), "real", AUTO, _ctx(x, x.size)).tolist() == []
    # two trees of the same depth, pairing differently: n is the depth only
    assert differing(F32, ref, f32(_tree(x[::-1])), "real", AUTO,
                     _ctx(x, _depth(x.size) + 1)).tolist() == []


@DRAWS
@given(LONG)
def test_auto_rejects_the_missing_last_element_of_a_tree_sum(x):
    """The same tree over n - 1 elements: the derived bound (n = the tree's depth) is far
    below an ordinary element."""
    last = abs(float(x[-1]))
    ref, cand = f32(_tree(x)), f32(_tree(x[:-1]))
    got = differing(F32, ref, cand, "real", AUTO, _ctx(x, _depth(x.size) + 1)).tolist()
    if last >= 0.25:
        assert got == [0], (x.size, last)


def test_auto_rejects_most_missing_elements():
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(200):
        n = int(rng.integers(2, 513))
        x = (rng.choice([-1, 1], n) * 2.0 ** rng.uniform(-8, 8, n)).astype(np.float32)
        got = differing(F32, f32(_tree(x)), f32(_tree(x[:-1])), "real", AUTO,
                        _ctx(x, _depth(n) + 1))
        found += got.size
    assert found >= 180, found           # ~95%: all but |x[-1]| below ~0.01


def test_auto_without_context_is_a_few_ulps():
    one = f32(1.0)
    up = (one.view(np.uint32) + 2).view(np.float32)
    far = (one.view(np.uint32) + 1000).view(np.float32)
    assert differing(F32, one, up, "real", AUTO).tolist() == []
    assert differing(F32, one, far, "real", AUTO).tolist() == [0]
