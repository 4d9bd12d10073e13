"""What kernels print with printf is part of the claim (issue 32; `verifier.printed`): each
thread's calls, compared call by call. Real nvcc output (tests/data/printf/printf.cu).

Each verdict below fails if the comparison is removed: the planted bugs print other text
or make other calls, and nothing else in them differs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from verifier.api import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.emulate import run_side
from verifier.printed import ASSUMPTION
from verifier.spec import load_spec
from verifier.verdict import PRINTED

DATA = Path(__file__).resolve().parents[1] / "data" / "printf"

SPEC = """name = "printf/{cand}"
mode = "bitexact"
expect = "{expect}"
{allow}
[reference]
ptx = "printf.ptx"
kernel = "{ref}"
grid = ["ceil_div(n, 32)", 1, 1]
block = [32, 1, 1]

[candidate]
ptx = "printf.ptx"
kernel = "{cand}"
grid = ["ceil_div(n, 32)", 1, 1]
block = [32, 1, 1]

[[param]]
name = "a"
buffer = "{elem}"
length = "n"
access = "in"

[[param]]
name = "n"
scalar = "s32"
values = [{n}]
"""


def _spec(tmp_path: Path, cand: str, expect: str, *, ref: str = "big", elem: str = "s32",
          n: int = 40, allow: str = ""):
    shutil.copy(DATA / "printf.ptx", tmp_path / "printf.ptx")
    p = tmp_path / f"{cand}.toml"
    p.write_text(SPEC.format(cand=cand, ref=ref, expect=expect, elem=elem, n=n,
                             allow=f"allow = [\"{allow}\"]" if allow else ""))
    return load_spec(p)


def _verify(spec):
    return verify(spec, timeout_s=60, jobs=1)


def test_the_same_report_written_another_way_is_equivalent(tmp_path):
    v = _verify(_spec(tmp_path, "big_negated", "equivalent"))
    assert v.kind == EQUIVALENT, v.reasons
    assert ASSUMPTION in v.assumptions


def test_a_value_printed_wrong_for_one_input_is_refuted_by_the_solvers(tmp_path):
    spec = _spec(tmp_path, "big_magic", "not-equivalent")
    v = _verify(spec)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    cex = v.counterexample
    assert (cex.inputs["a"] == 77777).any()          # not found by chance: the solvers' model
    t = next(d.index for d in cex.differences if d.param == PRINTED)
    assert cex.printed["reference"][t] == (f"a[{t}] = 77777 (half 38888.500000)\n",)
    assert cex.printed["candidate"][t] == (f"a[{t}] = 0 (half 38888.500000)\n",)
    # replayed: the emulator prints exactly that
    final, _ = run_side(spec.candidate, dict(cex.inputs), cex.scalars)
    assert final[PRINTED][t] == cex.printed["candidate"][t]


def test_an_extra_call_for_one_input_is_refuted(tmp_path):
    v = _verify(_spec(tmp_path, "big_twice", "not-equivalent"))
    assert v.kind == NOT_EQUIVALENT, v.reasons
    cex = v.counterexample
    t = next(d.index for d in cex.differences if d.param == PRINTED)
    assert len(cex.printed["candidate"][t]) == 2 and len(cex.printed["reference"][t]) == 1
    assert cex.inputs["a"][t] == 1000


def test_ignoring_printf_drops_it_from_the_claim(tmp_path):
    v = _verify(_spec(tmp_path, "big_magic", "equivalent", allow="printf-ignored"))
    assert v.kind == EQUIVALENT, v.reasons
    assert ASSUMPTION not in v.assumptions


def test_a_conversion_keq_does_not_compare_is_inconclusive_named(tmp_path):
    # (the string's address stored into the argument buffer is the first thing named: the
    # layout effect; with it out of the way the %s is)
    v = _verify(_spec(tmp_path, "big_named", "inconclusive"))
    assert v.kind == INCONCLUSIVE
    assert "'%s' prints what lives at an address" in v.reasons[0] or \
        "the address of .global variable" in v.reasons[0], v.reasons


def test_bits_that_differ_but_may_print_alike_are_inconclusive(tmp_path):
    # x and x + 2^-20 differ in their bits; "%.2f" of them differs only near a rounding
    # boundary, which keq cannot search for: Inconclusive, never a false refutation.
    v = _verify(_spec(tmp_path, "two_places_nudged", "inconclusive", ref="two_places",
                      elem="f32", n=4))
    assert v.kind in (INCONCLUSIVE, NOT_EQUIVALENT), v.reasons
    if v.kind == NOT_EQUIVALENT:           # (testing may meet a boundary: then it is real)
        cex = v.counterexample
        assert cex.printed["reference"] != cex.printed["candidate"]
    else:
        assert "prints the same text" in v.reasons[0], v.reasons


def test_what_each_thread_prints_on_the_emulator(tmp_path):
    spec = _spec(tmp_path, "big_negated", "equivalent", n=3)
    a = np.array([5, 101, 300], np.int32)
    final, result = run_side(spec.reference, {"a": a, "n": 3}, {"n": 3})
    assert result.printed == {1: ("a[1] = 101 (half 50.500000)\n",),
                              2: ("a[2] = 300 (half 150.000000)\n",)}
    assert final[PRINTED] == result.printed


def test_verify_json_carries_what_each_side_printed(capsys):
    import json

    from verifier.cli.main import main
    gather = Path(__file__).resolve().parents[2] / "kernels" / "gather"
    rc = main(["verify", str(gather / "printf_unsigned.toml"), "--json", "-j", "1"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["verdict"] == "not-equivalent"
    cex = out["counterexample"]
    d = cex["differences"][0]
    assert d["param"] == PRINTED
    ref, cand = (cex["printed"][r][str(d["index"])][0] for r in ("reference", "candidate"))
    assert "token -" in ref and "token 42949672" in cand
