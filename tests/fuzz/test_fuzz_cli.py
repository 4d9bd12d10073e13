"""`keq fuzz`: exit codes, the printed counterexample and summary, the .npz reproducer that
`keq run` accepts, JSON output, the pycuda backend's one-line "no GPU", and --semantics."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from verifier.cli.main import main

K = Path(__file__).resolve().parents[2] / "kernels"


def test_found_difference_exit_1_with_counterexample_and_reproducer(tmp_path, capsys):
    repro = tmp_path / "r.npz"
    rc = main(["fuzz", str(K / "vector_add/vec4_notail.toml"), "--repro", str(repro)])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.startswith("NOT EQUIVALENT (found by fuzzing)")
    assert "Given: n=1" in out and "c[0]  reference" in out
    assert f"reproducer: {repro}" in out and "seed 0" in out
    assert "examples/s" in out and "coverage candidate vector_add_vec4_notail" in out
    z = np.load(repro)
    assert int(z["n"]) == 1 and z["n"].shape == () and z["a"].dtype == np.float32
    assert "reference:c" in z.files and "candidate:c" in z.files
    # keq run accepts the file and reproduces the candidate's output
    out_npz = tmp_path / "cand.npz"
    assert main(["run", str(K / "vector_add/vec4_notail.toml"), "--side", "candidate",
                 "--inputs", str(repro), "--output", str(out_npz)]) == 0
    got = np.load(out_npz)["c"]
    assert got.view(np.uint32).tolist() == z["candidate:c"].view(np.uint32).tolist()
    assert got.view(np.uint32).tolist() != z["reference:c"].view(np.uint32).tolist()


def test_clean_run_exit_0_says_not_a_proof_and_what_was_covered(capsys):
    rc = main(["fuzz", str(K / "transpose/tiled.toml"), "--examples", "8", "--seed", "3"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("NO DIFFERENCE FOUND")
    assert "this is not a proof: 8 example(s)" in out
    assert "examples 8 of 8" in out and "rows:" in out and "cols:" in out
    assert "coverage reference transpose_naive: basic blocks" in out


def test_json_report(capsys):
    rc = main(["fuzz", str(K / "reduce/i32_sequential_nosync.toml"), "--json",
               "--repro", "/dev/null"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 1 and d["result"] == "difference" and d["proof"] is False
    assert d["difference"]["kind"] == "race" and d["difference"]["scalars"] == {"n": 1}
    assert d["coverage"]["candidate"]["blocks_total"] > 0


def test_real_mode_prints_its_default_tolerance(capsys):
    rc = main(["fuzz", str(K / "saxpy/fma_real.toml"), "--examples", "5"])
    out = capsys.readouterr().out
    assert rc == 0 and "tolerance auto:4," in out
    line, = [x for x in out.splitlines() if x.startswith("  tolerance auto:4 (derived)")]
    assert "4 * n * (u * max(|ref|, |cand|, S_n) + eta)" in line and "2^-24 for f32" in line
    assert "reference 2, candidate 1" in line          # mul + add against one fma
    rc = main(["fuzz", str(K / "saxpy/fma_real.toml"), "--examples", "5",
               "--tolerance", "rel:1e-5"])
    out = capsys.readouterr().out
    assert "tolerance rel:1e-05 (given with --tolerance)" in out


@pytest.mark.parametrize("argv, msg", [
    (["--tolerance", "ulp:1"], "bitexact pair"),
    (["--examples", "0"], "at least 1"),
    (["--time-budget", "-1"], "positive"),
    (["--set", "n=0"], "out of the spec's range"),
])
def test_bad_input_exit_3(argv, msg, capsys):
    rc = main(["fuzz", str(K / "vector_add/vec4.toml"), *argv])
    assert rc == 3 and msg in capsys.readouterr().err


def test_bad_tolerance_for_real_pair_exit_3(capsys):
    assert main(["fuzz", str(K / "saxpy/fma_real.toml"), "--tolerance", "abs:3"]) == 3
    assert "expected ulp:K" in capsys.readouterr().err


def test_missing_spec_exit_3(capsys):
    assert main(["fuzz"]) == 3
    assert "needs SPEC.toml" in capsys.readouterr().err


def test_pycuda_backend_without_pycuda_says_no_gpu_in_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pycuda", None)          # import fails, GPU or not
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)
    from verifier.fuzz.backends import pycuda as pc
    monkeypatch.setattr(pc, "_STATE", {})
    rc = main(["fuzz", str(K / "vector_add/vec4.toml"), "--backend", "pycuda"])
    err = capsys.readouterr().err
    assert rc == 3
    assert err.count("\n") == 1 and "no GPU backend: pycuda is not importable" in err
    rc = main(["fuzz", "--semantics", "--backend", "pycuda"])
    err = capsys.readouterr().err
    assert rc == 3 and err.count("\n") == 1 and "pycuda" in err


def test_semantics_on_the_emulator_runs_the_conformance_suite(tmp_path, capsys):
    table = tmp_path / "t.md"
    rc = main(["fuzz", "--semantics", "--forms", r"^(add\.s32|fma\.rn\.f32|ex2\.approx\.f32)",
               "--examples", "3", "--table", str(table)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "3 pass, 0 fail" in out
    assert "| `fma.rn.f32 %d, %a, %b, %c` | fma.rn.T | pass |" in table.read_text()


def test_semantics_refuses_a_spec_and_a_bad_regex(capsys):
    assert main(["fuzz", "--semantics", str(K / "vector_add/vec4.toml")]) == 3
    assert main(["fuzz", "--semantics", "--forms", "("]) == 3
    assert main(["fuzz", "--semantics", "--forms", "nosuchform"]) == 3
