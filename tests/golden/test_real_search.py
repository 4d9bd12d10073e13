"""Mode real's refutation search (verifier/outputs.py, `_true_difference`): a model at which
the true real functions differ but the emulator's floats agree (a difference below rounding)
does not end the search; the next models and the random small-integer inputs still may show
the difference. (A CI run once ended flash_last_tile Inconclusive on such a first model.)"""

from __future__ import annotations

from pathlib import Path

from verifier import outputs
from verifier.api import NOT_EQUIVALENT, verify
from verifier.run import Run
from verifier.spec import load_spec

SPEC = Path(__file__).resolve().parents[2] / "kernels" / "attention" / "flash_last_tile.toml"


def test_a_model_below_rounding_does_not_end_the_search(monkeypatch):
    real = outputs.model_counterexample
    calls = []

    def first_below_rounding(*args, **kw):
        calls.append(1)
        if len(calls) == 1:           # as if the floats agreed at the first model
            return Run.inconclusive("the difference is below rounding (simulated)")
        return real(*args, **kw)
    monkeypatch.setattr(outputs, "model_counterexample", first_below_rounding)
    v = verify(load_spec(SPEC), fixed={"n": 5}, timeout_s=120, jobs=1)
    assert len(calls) >= 2
    assert v.kind == NOT_EQUIVALENT, v.reasons
