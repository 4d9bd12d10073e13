"""`keq run SPEC.toml`: one side of a pair on the emulator; inputs, outputs, exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from verifier.cli.main import main

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"
REDUCE = str(KERNELS / "reduce" / "i32_sequential.toml")
HIST = str(KERNELS / "histogram" / "shared.toml")
STENCIL = str(KERNELS / "stencil" / "shared_halo_oob.toml")
ALIGNED = str(KERNELS / "transpose" / "tiled_nobounds_aligned.toml")


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["run", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _json(capsys, *argv) -> dict:
    rc, out, err = _run(capsys, *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def test_text_output(capsys):
    rc, out, err = _run(capsys, REDUCE, "--set", "n=300", "--seed", "4")
    assert rc == 0, err
    assert "reduce/i32_sequential [reference] reduce_interleaved_i32" in out
    assert "grid=(2, 1, 1) block=(256, 1, 1)  n=300" in out
    assert "effects  none" in out
    assert "out (out s32[2])" in out and "sha256" in out
    assert err == ""


def test_json_keys_and_values(capsys, tmp_path):
    r = _json(capsys, REDUCE, "--set", "n=300", "--side", "candidate")
    assert set(r) == {"spec", "name", "side", "kernel", "ptx", "grid", "block", "scalars",
                      "seed", "seconds", "effects", "buffers", "output"}
    assert r["side"] == "candidate" and r["kernel"] == "reduce_sequential_i32"
    assert r["grid"] == [2, 1, 1] and r["block"] == [256, 1, 1]
    assert r["scalars"] == {"n": 300} and r["effects"] == []
    out = r["buffers"]["out"]
    assert set(out) == {"access", "type", "length", "head", "sha256"}
    assert out["length"] == 2 and out["type"] == "s32" and len(out["head"]) == 2
    assert list(r["buffers"]) == ["out"]            # in buffers are not summarized


def test_seed_draws_scalars_and_is_deterministic(capsys):
    a = _json(capsys, REDUCE, "--seed", "7")
    b = _json(capsys, REDUCE, "--seed", "7")
    c = _json(capsys, REDUCE, "--seed", "8")
    assert a["buffers"] == b["buffers"] and a["scalars"] == b["scalars"]
    assert 1 <= a["scalars"]["n"] <= 512
    assert (a["scalars"], a["buffers"]) != (c["scalars"], c["buffers"])


def test_sides_agree_on_an_equivalent_pair(capsys):
    ref = _json(capsys, REDUCE, "--seed", "3", "--set", "n=511")
    cand = _json(capsys, REDUCE, "--seed", "3", "--set", "n=511", "--side", "candidate")
    assert ref["buffers"]["out"]["sha256"] == cand["buffers"]["out"]["sha256"]


def test_inputs_output_round_trip(capsys, tmp_path):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, 300, dtype=np.uint8)
    bins = np.arange(256, dtype=np.uint32)
    np.savez(tmp_path / "in.npz", data=data, bins=bins, n=np.int32(300))
    rc, out, err = _run(capsys, HIST, "--inputs", str(tmp_path / "in.npz"), "--output",
                        str(tmp_path / "out.npz"))
    assert rc == 0, err
    with np.load(tmp_path / "out.npz") as z:
        assert sorted(z.files) == ["bins", "data", "n"]
        assert z["n"].shape == () and int(z["n"]) == 300 and z["n"].dtype == np.int32
        want = bins + np.bincount(data, minlength=256).astype(np.uint32)
        np.testing.assert_array_equal(z["bins"], want)
        np.testing.assert_array_equal(z["data"], data)
        digest = hashlib.sha256(z["bins"].tobytes()).hexdigest()
    assert digest[:16] in out
    # the output is a valid input: run again on it, the bins grow by the same counts
    rc, out, err = _run(capsys, HIST, "--inputs", str(tmp_path / "out.npz"), "--side",
                        "candidate", "--output", str(tmp_path / "out2.npz"))
    assert rc == 0, err
    with np.load(tmp_path / "out2.npz") as z:
        np.testing.assert_array_equal(z["bins"], want + np.bincount(data, minlength=256).astype(np.uint32))


def test_set_overrides_inputs(capsys, tmp_path):
    np.savez(tmp_path / "in.npz", n=np.int32(300))
    r = _json(capsys, REDUCE, "--inputs", str(tmp_path / "in.npz"), "--set", "n=5")
    assert r["scalars"]["n"] == 5 and r["buffers"]["out"]["length"] == 1


def test_partial_inputs_rest_drawn(capsys, tmp_path):
    np.savez(tmp_path / "in.npz", **{"in": np.ones(10, np.int32)})
    r = _json(capsys, REDUCE, "--inputs", str(tmp_path / "in.npz"), "--set", "n=10")
    assert r["buffers"]["out"]["head"] == [10]


def test_float_scalar_set(capsys):
    r = _json(capsys, str(KERNELS / "saxpy" / "fma_real.toml"), "--set", "a=0.5", "--set", "n=3")
    assert r["scalars"] == {"n": 3, "a": 0.5}


def test_effects_are_reported(capsys):
    r = _json(capsys, str(KERNELS / "softmax" / "online.toml"), "--set", "rows=1",
              "--set", "cols=3")
    kinds = {e["kind"] for e in r["effects"]}
    assert "approximation" in kinds
    assert all(":" in e["loc"] for e in r["effects"])


def test_shared_fill_is_what_shared_memory_holds_at_launch(capsys, tmp_path):
    # The privatized histogram without `smem[tid] = 0`: its bins count from the fill (the
    # replay of a counterexample `keq verify` found with another state the GPU may leave)
    hist = Path(HIST).parent
    for f in ("shared.toml", "histogram_global.ptx", "histogram_shared.ptx"):
        shutil.copy(hist / f, tmp_path / f)
    ptx = tmp_path / "histogram_shared.ptx"
    ptx.write_text(ptx.read_text().replace("st.shared.u32 \t[%r2], %r8;", ""))
    argv = (str(tmp_path / "shared.toml"), "--side", "candidate", "--set", "n=1")
    heads = {fill: _json(capsys, *argv, "--shared-fill", fill)["buffers"]["bins"]["sha256"]
             for fill in ("0", "0xa5", "165")}
    assert heads["0xa5"] == heads["165"] != heads["0"]
    with pytest.raises(SystemExit) as usage:          # (argparse: a usage error, exit 3)
        _run(capsys, *argv, "--shared-fill", "256")
    assert usage.value.code == 3
    assert "not a byte (0..255): '256'" in capsys.readouterr().err


@pytest.mark.parametrize("argv,msg", [
    (["--set", "m=3"], "--set m: no param named 'm' (scalars: n)"),
    (["--set", "n=0"], "--set n=0: 0 is out of the spec's range for 'n' (in [1, 512])"),
    (["--set", "n=x"], "--set n=x: not an integer"),
    (["--set", "n"], "expected NAME=VALUE"),
    (["--set", "in=3"], "'in' is a buffer; give buffers with --inputs"),
    (["--set", "n=99999999999"], "outside the s32 range"),
])
def test_bad_set_exits_3(capsys, argv, msg):
    rc, out, err = _run(capsys, REDUCE, *argv)
    assert rc == 3
    assert msg in err and "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize("arrays,msg", [
    ({"nope": np.zeros(3, np.int32)}, "key 'nope' is not a param of reduce/i32_sequential"),
    ({"in": np.zeros(10, np.float32), "n": np.int32(10)},
     "buffer 'in' is s32 (numpy int32), the array has dtype float32"),
    ({"in": np.zeros(9, np.int32), "n": np.int32(10)},
     "buffer 'in' must have 10 element(s) (length 'n' at n=10), the array has shape (9,)"),
    ({"n": np.int32(9999)}, "scalar 'n': 9999 is out of the spec's range"),
    ({"n": np.float32(3)}, "scalar 'n' is s32, the array has dtype float32"),
    ({"n": np.zeros(2, np.int32)}, "scalar 'n' must be a 0-d (or 1-element) array"),
])
def test_bad_inputs_exit_3(capsys, tmp_path, arrays, msg):
    path = tmp_path / "in.npz"
    np.savez(path, **arrays)
    rc, out, err = _run(capsys, REDUCE, "--inputs", str(path))
    assert rc == 3
    assert err.startswith(f"{path}: error: ") and msg in err, err
    assert "Traceback" not in err


def test_not_an_npz_exits_3(capsys, tmp_path):
    path = tmp_path / "in.npz"
    path.write_text("hello")
    rc, out, err = _run(capsys, REDUCE, "--inputs", str(path))
    assert rc == 3 and "not a readable .npz file" in err


def test_missing_npz_exits_3(capsys, tmp_path):
    rc, out, err = _run(capsys, REDUCE, "--inputs", str(tmp_path / "none.npz"))
    assert rc == 3 and "No such file" in err


def test_assume_violation_is_located(capsys):
    rc, out, err = _run(capsys, ALIGNED, "--set", "rows=3")
    assert rc == 3
    first = err.splitlines()[0]
    assert first.endswith("tiled_nobounds_aligned.toml:7:11: error: the given scalars (rows=3) "
                          "violate assume 'rows % 32 == 0'")


def test_bad_spec_is_located(capsys, tmp_path):
    text = (KERNELS / "reduce" / "i32_sequential.toml").read_text().replace(
        'mode = "bitexact"', 'mode = "bitexakt"')
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    rc, out, err = _run(capsys, str(spec))
    assert rc == 3
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith("mode"))
    assert err.startswith(f"{spec}:{line}:8: error: mode 'bitexakt' is not one of")


def test_memory_fault_exits_3_with_location(capsys):
    # stencil_shared_halo_oob reads in[n] when n % 256 == 0: a fault, reported not raised
    rc, out, err = _run(capsys, STENCIL, "--side", "candidate", "--set", "n=256")
    assert rc == 3
    assert "stencil_shared_halo_oob.ptx:" in err and "out of bounds" in err
    assert "kernel stencil_shared_halo_oob, block (0,0,0) thread (" in err
    assert "Traceback" not in err
    rc, out, err = _run(capsys, STENCIL, "--set", "n=256")   # the reference is fine
    assert rc == 0, err


def test_help_says_fault_exits_3(capsys):
    with pytest.raises(SystemExit) as ei:
        main(["run", "--help"])
    assert ei.value.code == 0
    out = capsys.readouterr().out
    assert "fault" in out and "3" in out and "--inputs" in out and "--set" in out


def test_installed_script(tmp_path):
    keq = shutil.which("keq", path=str(Path(sys.executable).parent)) or "keq"
    out = tmp_path / "o.npz"
    p = subprocess.run([keq, "run", REDUCE, "--set", "n=33", "--json", "--output", str(out)],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["scalars"] == {"n": 33} and r["output"] == str(out)
    with np.load(out) as z:
        assert int(z["out"][0]) == int(z["in"].astype(np.int64).sum() % 2**32
                                       - (2**32 if z["in"].astype(np.int64).sum() % 2**32 >= 2**31 else 0))
    p = subprocess.run([keq, "run", REDUCE, "--set", "n=-1"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 3 and "Traceback" not in p.stderr and "out of the spec's range" in p.stderr


def test_buffer_length_hint_when_scalar_was_drawn(capsys, tmp_path):
    np.savez(tmp_path / "in.npz", **{"in": np.zeros(9, np.int32)})
    rc, out, err = _run(capsys, REDUCE, "--inputs", str(tmp_path / "in.npz"))
    assert rc == 3 and "n was drawn from the seed: give it in the .npz or with --set" in err
