"""Packed halves (issue 30): arithmetic on __nv_bfloat162 / __half2 registers against the same
arithmetic per element gives identical terms, so the pair needs no solver: a half read back
from a packed store is that half's own term (`SymbolicPort._read` reads a word's bytes as one
Extract), not its bytes apart. Real nvcc output: tests/data/packed/packed.cu."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verifier.api import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.spec import load_spec

DATA = Path(__file__).resolve().parents[1] / "data" / "packed"

SPEC = """name = "packed/{cand}"
mode = "bitexact"
expect = "{expect}"

[reference]
ptx = "packed.ptx"
kernel = "{ref}"
grid = ["ceil_div(n, 128)", 1, 1]
block = [128, 1, 1]

[candidate]
ptx = "packed.ptx"
kernel = "{cand}"
grid = ["ceil_div(n, 256)", 1, 1]
block = [128, 1, 1]

[[param]]
name = "x"
buffer = "{t}"
length = "n"
access = "in"

[[param]]
name = "r"
buffer = "{t}"
length = "n"
access = "in"

[[param]]
name = "out"
buffer = "{t}"
length = "n"
access = "out"
{scale}
[[param]]
name = "n"
scalar = "s32"
values = [{n}]
"""
SCALE = '\n[[param]]\nname = "s"\nscalar = "f16"\n'


def _spec(tmp_path: Path, ref: str, cand: str, t: str, n: int, expect: str, scale=False):
    shutil.copy(DATA / "packed.ptx", tmp_path / "packed.ptx")
    p = tmp_path / f"{cand}.toml"
    p.write_text(SPEC.format(ref=ref, cand=cand, t=t, n=n, expect=expect,
                             scale=SCALE if scale else ""))
    return load_spec(p)


def _outputs_stage(v):
    return next(s for s in v.stages if s.name.startswith("outputs"))


@pytest.mark.parametrize("ref,cand,t,scale", [
    ("resid_bf16", "resid_bf16x2", "bf16", False),
    ("scale_resid_f16", "scale_resid_f16x2", "f16", True),
])
def test_packed_arithmetic_gives_the_per_element_terms(tmp_path, ref, cand, t, scale):
    # 1,024 elements: identical terms, no solver (the issue measured 376 s for the bf16 pair)
    v = verify(_spec(tmp_path, ref, cand, t, 1024, "equivalent", scale), timeout_s=60, jobs=1)
    assert v.kind == EQUIVALENT, v.reasons
    assert "identical terms" in _outputs_stage(v).detail, _outputs_stage(v)
    assert not v.obligations


def test_swapped_halves_are_refuted(tmp_path):
    v = verify(_spec(tmp_path, "resid_bf16", "resid_bf16x2_swapped", "bf16", 64,
                     "not-equivalent"), timeout_s=60, jobs=1)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert v.counterexample is not None
