"""The pycuda fuzz backend and `keq fuzz --semantics --backend pycuda` on a real NVIDIA GPU.

Every test skips with the reason when pycuda is not importable or there is no CUDA driver or
device; wherever a GPU is present they run (pip install -e '.[gpu]' first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.fuzz.backends import get_backend
from verifier.fuzz.runner import fuzz
from verifier.spec import load_spec

K = Path(__file__).resolve().parents[2] / "kernels"
pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    from verifier.fuzz.backends.pycuda import NoGpu
    try:
        return get_backend("pycuda")
    except NoGpu as e:
        pytest.skip(f"no CUDA device: {e}")


def test_backend_names_the_device(gpu):
    assert gpu.describe().startswith("pycuda on ")


@pytest.mark.parametrize("pair", ["vector_add/vec4", "transpose/tiled", "reduce/i32_warp_shfl"])
def test_equivalent_pairs_run_clean_on_the_gpu(gpu, pair):
    rep = fuzz(load_spec(K / f"{pair}.toml"), gpu, examples=30)
    assert rep.difference is None and rep.examples == 30


@pytest.mark.parametrize("pair, minimal", [
    ("vector_add/vec4_notail", {"n": 1}),
    ("reduce/i32_warp_shfl_badoffset", {"n": 1}),
    ("matmul/tiled_floor_k", {"M": 1, "N": 1, "K": 1}),
])
def test_planted_bugs_are_found_on_the_gpu(gpu, pair, minimal):
    rep = fuzz(load_spec(K / f"{pair}.toml"), gpu)
    assert rep.difference is not None and rep.difference.kind == "mismatch"
    assert rep.difference.scalars == minimal


def test_gpu_agrees_with_the_emulator_on_the_same_example(gpu):
    """One drawn example, both backends, identical outputs (bitexact pair)."""
    import numpy as np
    spec = load_spec(K / "transpose/padded.toml")
    rng = np.random.default_rng(0)
    from verifier.spec import draw_scalars, make_inputs
    scalars = draw_scalars(spec, rng)
    values = make_inputs(spec, scalars, rng)
    emu = get_backend("emulator").prepare(spec)["candidate"].run(values, scalars)
    dev = gpu.prepare(spec)["candidate"].run(values, scalars)
    assert dev.fault is None
    assert emu.final["out"].tobytes() == dev.final["out"].tobytes()


def test_semantics_forms_agree_with_the_emulator(gpu):
    from semantics.conformance import FORMS
    from verifier.fuzz.semantics_check import run_forms
    forms = [c for c in FORMS if c.line.split(" ")[0] in
             ("add.s32", "fma.rn.f32", "cvt.rzi.s32.f32", "setp.lt.f32", "ex2.approx.f32")]
    results, where = run_forms(forms, "pycuda", examples=20, seed_=0)
    assert [r.status for r in results if r.status == "FAIL"] == [], results
