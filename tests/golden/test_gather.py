"""kernels/gather: an embedding gather by token id (`wte[inp[bt] * C + c]`), its 128-bit form
with a device `assert`, a planted assert bug, and a form with a debug `printf` (issue 32).
Whole claims: the spec's element range on `inp` makes the gather decidable, the assert is
a trap that never fires inside the range, the off-by-one assert is refuted with the input
that fires it (replayed), and printf is compared only if the claim does not say it is
ignored (Inconclusive otherwise, named)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from semantics.errors import KeqError
from verifier.api import EQUIVALENT, NOT_EQUIVALENT, verify
from verifier.counterexample import replay_fault
from verifier.emulate import run_side
from verifier.printed import ASSUMPTION
from verifier.run import Run
from verifier.spec import load_spec

GATHER = Path(__file__).resolve().parents[2] / "kernels" / "gather"


def _copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    for f in GATHER.glob("*.ptx"):
        shutil.copy(f, tmp_path / f.name)
    text = (GATHER / name).read_text()
    assert text.count(old) == 1, old
    p = tmp_path / name
    p.write_text(text.replace(old, new))
    return p


def test_the_assert_form_is_equivalent_over_the_whole_claim():
    v = verify(load_spec(GATHER / "vec4.toml"), timeout_s=60, jobs=1)
    assert v.kind == EQUIVALENT, v.reasons
    assert "0 <= inp[*] <= V - 1" in v.claim


def test_an_assert_that_fires_on_a_valid_token_is_refuted_and_replayed():
    spec = load_spec(GATHER / "vec4_assert_off_by_one.toml")
    v = verify(spec, timeout_s=60, jobs=1)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert any("assertion `ix >= 0 && ix < V - 1` failed" in r for r in v.reasons), v.reasons
    cex = v.counterexample
    inp, V = cex.inputs["inp"], cex.scalars["V"]
    assert inp.min() >= 0 and inp.max() <= V - 1          # an input of the claim ...
    assert (inp == V - 1).any()                           # ... with the last token id
    values = {k: (a.copy() if isinstance(a, np.ndarray) else a) for k, a in cex.inputs.items()}
    run_side(spec.reference, dict(values), cex.scalars)    # the reference runs cleanly
    with pytest.raises(KeqError, match="ix < V - 1"):
        run_side(spec.candidate, values, cex.scalars)


def test_without_the_range_the_assert_fires_where_the_reference_reads_wrapped(tmp_path):
    # `ix * C` wraps in 32 bits: ix = -2^31 reads wte[0..3] in the reference, and the
    # candidate's assert fires. A real difference, found and replayed.
    p = _copy(tmp_path, "vec4.toml", 'range = [0, "V - 1"]\n', "")
    v = verify(load_spec(p), fixed={"B": 1, "T": 1, "C": 4, "V": 2}, timeout_s=30, jobs=1)
    assert v.kind == NOT_EQUIVALENT and "assertion `ix >= 0 && ix < V` failed" in v.reasons[0]


def test_a_candidate_fault_where_the_reference_faults_too_is_about_the_spec(tmp_path):
    spec = load_spec(_copy(tmp_path, "vec4.toml", 'range = [0, "V - 1"]\n', ""))
    scalars = {"B": 1, "T": 1, "C": 4, "V": 2}
    inputs = dict(scalars, out=np.zeros(4, np.float32), inp=np.array([5], np.int32),
                  wte=np.zeros(8, np.float32), wpe=np.zeros(4, np.float32))
    run = Run(spec, timeout_s=10.0, unroll=1)
    with pytest.raises(KeqError, match="the reference kernel faults"):
        replay_fault(run, "candidate", scalars, 0, inputs)     # (its assert fires on ix = 5)


def test_printf_is_left_out_only_when_the_claim_says_so(tmp_path):
    at = {"B": 2, "T": 2, "C": 4, "V": 2}
    v = verify(load_spec(GATHER / "printf.toml"), fixed=at, timeout_s=60, jobs=1)
    assert v.kind == EQUIVALENT, v.reasons
    assert "printf-ignored" in v.claim
    # Compared, the printf never runs under the claim's range: equivalent, and the claim says
    # how printed output is compared (printf_compared.toml has ids that make it run)
    p = _copy(tmp_path, "printf.toml", 'allow = ["printf-ignored"]\n', "")
    v = verify(load_spec(p), fixed=at, timeout_s=60, jobs=1)
    assert v.kind == EQUIVALENT, v.reasons
    assert ASSUMPTION in v.assumptions


def test_printed_reports_of_bad_token_ids_are_compared():
    v = verify(load_spec(GATHER / "printf_compared.toml"), timeout_s=60, jobs=1)
    assert v.kind == EQUIVALENT, v.reasons
    assert ASSUMPTION in v.assumptions and "-2 <= inp[*] <= V + 1" in v.claim
    v = verify(load_spec(GATHER / "printf_unsigned.toml"), timeout_s=60, jobs=1)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    cex = v.counterexample
    t = cex.differences[0].index
    ref, cand = (cex.printed[r][t][0] for r in ("reference", "candidate"))
    ix = int(cex.inputs["inp"][t // cex.scalars["C"]])
    assert ix < 0 and f"token {ix} at" in ref and f"token {ix + 2**32} at" in cand
