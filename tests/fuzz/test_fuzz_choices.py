"""`keq fuzz` and what the PTX ISA leaves open: the choices are varied by default (pattern
fill, reverse schedule, random, where the candidate's run read something open), --fill and
--schedule fix them, the reproducer carries them, and a reference whose outputs depend on
them is an error about the spec."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from verifier.cli.main import main
from verifier.fuzz.backends import SideRun, get_backend
from verifier.fuzz.differences import compare_runs
from verifier.fuzz.runner import ReferenceError_, fuzz
from verifier.inputs import CHOICES_KEY, load_choices
from verifier.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
K = REPO / "kernels"
ADV = REPO / "tests" / "data" / "adversarial"
ATOMIC = ADV / "atomic_sum_f32_bitexact.toml"


def _fuzz(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["fuzz", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def _swapped(tmp_path: Path) -> Path:
    """atomic_sum_f32_bitexact with its kernels swapped: the float atomic sum, whose order
    shows, is the reference."""
    text = ATOMIC.read_text().replace('"sum_atomic_in_order_f32"', '"@IN@"') \
        .replace('"sum_atomic_f32"', '"sum_atomic_in_order_f32"') \
        .replace('"@IN@"', '"sum_atomic_f32"')
    shutil.copy(ADV / "atomics.ptx", tmp_path / "atomics.ptx")
    spec = tmp_path / "swapped.toml"
    spec.write_text(text)
    return spec


def _hist_without_zeroing(tmp_path: Path) -> Path:
    """The privatized histogram without `smem[tid] = 0` (and with its barrier): right from
    zeroed shared memory, wrong from any other."""
    hist = K / "histogram"
    for f in ("shared.toml", "histogram_global.ptx", "histogram_shared.ptx"):
        shutil.copy(hist / f, tmp_path / f)
    ptx = tmp_path / "histogram_shared.ptx"
    text = ptx.read_text()
    assert "st.shared.u32 \t[%r2], %r8;" in text
    ptx.write_text(text.replace("st.shared.u32 \t[%r2], %r8;", ""))
    return tmp_path / "shared.toml"


def test_varied_choices_catch_an_order_dependent_float_atomic_sum(capsys, tmp_path):
    repro = tmp_path / "r.npz"
    rc, out, _ = _fuzz(capsys, ATOMIC, "--repro", repro)
    assert rc == 1 and out.startswith("NOT EQUIVALENT (found by fuzzing)")
    line, = [x for x in out.splitlines() if x.startswith("    shown with the candidate under")]
    saved = load_choices(str(repro))
    assert saved is not None and not saved.is_default
    assert f"fill {saved.fill}, schedule {saved.schedule}" in line
    assert "the reproducer carries these choices" in line
    assert "  choices  varied: the candidate read what the PTX ISA leaves open in" in out
    # keq run replays the candidate's run exactly from the reproducer alone
    o = tmp_path / "o.npz"
    assert main(["run", str(ATOMIC), "--side", "candidate", "--inputs", str(repro),
                 "--output", str(o)]) == 0
    capsys.readouterr()
    with np.load(repro) as z:
        want, ref = z["candidate:sum"].view(np.uint32), z["reference:sum"].view(np.uint32)
    assert np.load(o)["sum"].view(np.uint32).tolist() == want.tolist() != ref.tolist()
    # under the defaults alone the emulator's lane order hides it
    rc, out, _ = _fuzz(capsys, ATOMIC, "--fill", "zero", "--schedule", "lane",
                       "--examples", "25", "--repro", tmp_path / "d.npz")
    assert rc == 0, out
    assert "  choices  candidate under fill zero, schedule lane (given)" in out


def test_given_schedule_runs_the_candidate_under_it(capsys, tmp_path):
    repro = tmp_path / "r.npz"
    rc, out, _ = _fuzz(capsys, ATOMIC, "--schedule", "reverse", "--repro", repro, "--json")
    d = json.loads(out)
    assert rc == 1 and d["choices"] == {"how": "given", "fill": "zero", "schedule": "reverse"}
    assert d["difference"]["choices"]["schedule"] == "reverse"
    assert load_choices(str(repro)).schedule == "reverse"


def test_varied_fill_catches_a_forgotten_zeroing_of_shared_memory(capsys, tmp_path):
    spec = _hist_without_zeroing(tmp_path)
    rep = fuzz(load_spec(spec), get_backend("emulator", detect_races=False), seed_=0)
    d = rep.difference
    assert d is not None and d.kind == "mismatch" and rep.varied
    assert d.choices is not None and d.choices.fill != "zero"
    rep = fuzz(load_spec(spec), get_backend("emulator", detect_races=False), seed_=0,
               examples=20, fill="zero")
    assert rep.difference is None and rep.choices is not None and not rep.varied


def test_a_pair_that_reads_nothing_open_runs_once_per_example(capsys):
    rc, out, _ = _fuzz(capsys, K / "vector_add/vec4.toml", "--examples", "20", "--json")
    d = json.loads(out)
    assert rc == 0 and d["choices"] == {"how": "varied", "varied_examples": 0}


@pytest.mark.parametrize("argv", [["--schedule", "reverse"], []])
def test_a_reference_that_depends_on_the_choices_is_an_error_about_the_spec(
        capsys, tmp_path, argv):
    spec = _swapped(tmp_path)
    rc, out, err = _fuzz(capsys, spec, *argv, "--repro", tmp_path / "r.npz")
    assert rc == 3, out
    assert "the reference's outputs depend on what the PTX ISA leaves open" in err
    assert "contending atomics" in err and "fix the reference or the spec" in err
    with pytest.raises(ReferenceError_):
        fuzz(load_spec(spec), get_backend("emulator"), seed_=0, schedule="reverse")


def test_a_fill_the_reference_does_not_read_is_no_error(capsys, tmp_path):
    # the swapped reference reads the atomics' order, never an unwritten value
    rc, out, err = _fuzz(capsys, _swapped(tmp_path), "--fill", "pattern", "--examples", "20")
    assert rc == 0, err


@pytest.mark.parametrize("argv,msg", [
    (["--fill", "ones"], "unknown fill policy 'ones'"),
    (["--schedule", "random:"], "the seed after 'random:' must be a non-negative integer"),
])
def test_bad_policy_is_a_usage_error_exit_3(capsys, argv, msg):
    with pytest.raises(SystemExit) as usage:
        main(["fuzz", str(ATOMIC), *argv])
    assert usage.value.code == 3 and msg in capsys.readouterr().err


def test_choices_are_refused_on_the_gpu_backend_in_one_line(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pycuda", None)
    rc, _, err = _fuzz(capsys, ATOMIC, "--backend", "pycuda", "--fill", "pattern")
    assert rc == 3 and err.count("\n") == 1
    assert "the hardware makes these choices itself" in err


def test_help_lists_the_options_bench_mutants_probes(capsys):
    with pytest.raises(SystemExit):
        main(["fuzz", "--help"])
    text = capsys.readouterr().out
    assert "--fill POLICY" in text and "--schedule POLICY" in text and "random:SEED" in text


def test_under_a_random_fill_nan_payloads_alone_are_no_difference():
    spec = load_spec(ATOMIC)
    values = {"x": np.zeros(1, np.float32), "sum": np.zeros(1, np.float32), "n": 1}
    a = np.array([0x7FC00001], np.uint32).view(np.float32)
    b = np.array([0x7FC12345], np.uint32).view(np.float32)
    ref, cand = SideRun({"sum": a}), SideRun({"sum": b})
    assert compare_runs(spec, values, {"n": 1}, ref, cand, None) is not None
    assert compare_runs(spec, values, {"n": 1}, ref, cand, None,
                        nan_payloads_free=True) is None
    one = SideRun({"sum": np.ones(1, np.float32)})
    assert compare_runs(spec, values, {"n": 1}, ref, one, None,
                        nan_payloads_free=True) is not None


def test_the_reproducer_key_is_skipped_as_an_input(tmp_path, capsys):
    repro = tmp_path / "r.npz"
    assert _fuzz(capsys, ATOMIC, "--schedule", "reverse", "--repro", repro)[0] == 1
    with np.load(repro) as z:
        assert CHOICES_KEY in z.files
    assert main(["run", str(ATOMIC), "--inputs", str(repro)]) == 0
