"""verifier.fuzz.strategies: scalars at their edges and within range, buffers with specials,
the finite and real options, and argument validation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from verifier.fuzz.strategies import (arrays, elements, from_param, from_spec, launch_multiples,
                                      launch_values, special_bits)
from verifier.spec import load_spec

K = Path(__file__).resolve().parents[2] / "kernels"
FAST = settings(max_examples=150, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


def _collect(strategy, n=150):
    seen = []

    @FAST
    @given(strategy)
    def run(x):
        seen.append(x)
    run()
    return seen


def test_launch_multiples_come_from_blocks_and_grid_divisors():
    spec = load_spec(K / "vector_add/vec4.toml")
    assert launch_multiples(spec) == [256, 1024]      # block 256; ceil_div(n, 1024)


def test_scalars_hit_range_ends_and_block_multiples_plus_minus_one():
    spec = load_spec(K / "vector_add/vec4.toml")      # n in [1, 2048], assume n % 4 == 0? no
    ns = {d["n"] for d in _collect(launch_values(spec), 400)}
    assert ns <= set(range(1, 2049))
    for edge in (1, 2048, 255, 256, 257, 1023, 1024, 1025):
        assert edge in ns, edge


def test_assume_is_always_satisfied_even_when_it_rejects_most_values():
    spec = load_spec(K / "transpose/tiled_nobounds_aligned.toml")   # rows, cols % 32 == 0
    got = _collect(launch_values(spec), 60)
    assert got and all(d["rows"] % 32 == 0 and d["cols"] % 32 == 0 for d in got)
    assert {d["rows"] for d in got} == {32, 64}


def test_fixed_scalars_are_kept():
    spec = load_spec(K / "vector_add/vec4.toml")
    assert {d["n"] for d in _collect(launch_values(spec, fixed={"n": 300}), 20)} == {300}


def test_f32_buffers_mix_in_every_kind_of_special():
    got = np.concatenate(_collect(arrays("f32", 64), 150))
    bits = got.view(np.uint32)
    assert np.isnan(got).any() and np.isposinf(got).any() and np.isneginf(got).any()
    assert (bits == 0x80000000).any() and (bits == 0).any()                 # -0 and +0
    assert ((bits & 0x7F800000) == 0).any() and (np.abs(got[np.isfinite(got)]) > 0).any()
    assert (bits == 0x7F7FFFFF).any() or (bits == 0xFF7FFFFF).any()         # largest normal
    assert len({int(b) for b in bits[np.isnan(got)]}) > 1                   # several payloads


def test_integer_buffers_contain_extremes():
    got = np.concatenate(_collect(arrays("s32", 32), 150))
    for v in (0, 1, -1, 2**31 - 1, -2**31):
        assert (got == v).any(), v
    assert got.dtype == np.int32


def test_finite_option_excludes_nan_and_inf():
    for t in ("f16", "f32", "f64"):
        got = np.concatenate(_collect(arrays(t, 40, finite=True), 100))
        assert np.isfinite(got.astype(np.float64)).all(), t


def _as_f64(a: np.ndarray, t: str) -> np.ndarray:
    with np.errstate(invalid="ignore"):             # signalling NaNs
        if t == "bf16":
            return (a.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        return a.astype(np.float64)


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64"])
def test_float_buffers_are_mostly_ordinary_finite_values(t):
    bufs = {b.tobytes(): b for b in _collect(arrays(t, 64), 150)}     # distinct draws
    got = _as_f64(np.concatenate(list(bufs.values())), t)
    fin = np.isfinite(got)
    lo, hi = (2.0**-4, 2.0**4) if t == "f16" else (2.0**-8, 2.0**8)
    moderate = fin & (np.abs(got) >= lo) & (np.abs(got) <= hi)
    assert 0.8 <= fin.mean() < 0.97, fin.mean()               # about 90% finite
    assert moderate.mean() > 0.65, moderate.mean()            # mostly moderate magnitudes
    assert (~fin).any()                                       # specials are still met
    assert len(set(got[moderate].tolist())) > 1000            # random mantissas
    f = got[fin]
    assert (f == np.round(f)).mean() > 0.1                    # small integers, exact values


def test_some_buffers_are_specials_only():
    """About one buffer in ten (hypothesis repeats and mutates draws, hence the margin)."""
    bufs = {b.tobytes(): _as_f64(b, "f32") for b in _collect(arrays("f32", 64), 150)}
    specials_only = [b for b in bufs.values() if (~np.isfinite(b)).sum() > 16]
    assert 0.02 <= len(specials_only) / len(bufs) <= 0.35, (len(specials_only), len(bufs))


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64"])
def test_real_option_draws_only_ordinary_finite_values(t):
    got = _as_f64(np.concatenate(_collect(arrays(t, 40, real=True), 150)), t)
    hi = 2.0**4 if t == "f16" else 2.0**8
    assert np.isfinite(got).all() and (np.abs(got) <= hi).all()
    sub = (got != 0) & (np.abs(got) < (2.0**-14 if t == "f16" else 2.0**-100))
    assert not sub.any()                                      # no subnormals, no tiny values
    assert len(set(got.tolist())) > 1000                      # not just dyadic rationals


def test_real_mode_specs_draw_finite_buffers_and_float_scalars():
    spec = load_spec(K / "saxpy/fma_real.toml")              # a: f32 scalar without a range
    for d in _collect(from_spec(spec), 150):
        assert np.isfinite(d["a"]) and abs(float(d["a"])) <= 256
        assert np.isfinite(d["x"]).all() and np.isfinite(d["y"]).all()
    assert all(np.isfinite(v["a"]) for v in _collect(launch_values(spec), 100))


def test_float_scalars_shrink_to_zero():
    from hypothesis import find
    assert find(elements("f32"), lambda b: True) == 0
    v = find(elements("f32", real=True), lambda b: np.uint32(b).view(np.float32) > 3)
    assert np.uint32(v).view(np.float32) == 4.0               # the simplest such exact value


def test_bf16_is_uint16_bit_patterns_and_elements_are_ints():
    got = _collect(arrays("bf16", 8), 20)
    assert all(a.dtype == np.uint16 and a.shape == (8,) for a in got)
    assert all(isinstance(v, int) for v in _collect(elements("f64"), 20))
    assert 0x7FF0000000000000 in special_bits("f64")


def test_from_spec_gives_every_param_with_the_right_length():
    spec = load_spec(K / "transpose/tiled.toml")
    for d in _collect(from_spec(spec), 40):
        assert set(d) == {"in", "out", "rows", "cols"}
        assert d["in"].size == d["rows"] * d["cols"] == d["out"].size
        assert d["in"].dtype == np.float32


def test_from_param_for_buffers_and_scalars():
    spec = load_spec(K / "vector_add/vec4.toml")
    a = _collect(from_param(spec.param("a"), scalars={"n": 5}), 10)
    assert all(x.shape == (5,) for x in a)
    ns = _collect(from_param(spec.param("n")), 50)
    assert all(1 <= n <= 2048 for n in ns)


@pytest.mark.parametrize("make, message", [
    (lambda s: arrays("f33", 4), "f33"),
    (lambda s: arrays("f32", -1), "length=-1"),
    (lambda s: arrays("f32", 4, finite="yes"), "finite='yes'"),
    (lambda s: from_param(s.param("a")), "needs length= or scalars="),
    (lambda s: from_param(s.param("a"), scalars={}), "lacks n"),
    (lambda s: from_param("a"), "ParamSpec"),
    (lambda s: launch_values(s, fixed={"n": 99999}), "outside the spec's domain"),
    (lambda s: launch_values(s, fixed={"zz": 1}), "not a param"),
    (lambda s: from_spec("spec.toml"), "PairSpec"),
])
def test_bad_arguments_are_refused_when_the_strategy_is_built(make, message):
    spec = load_spec(K / "vector_add/vec4.toml")
    with pytest.raises(InvalidArgument, match=message.replace("(", r"\(").replace("=", "=")):
        make(spec)


def test_users_can_compose_the_strategies():
    spec = load_spec(K / "vector_add/vec4.toml")
    pairs = _collect(st.tuples(from_spec(spec, finite=True), st.integers(0, 3)), 20)
    assert all(np.isfinite(v["a"]).all() for v, _ in pairs)
