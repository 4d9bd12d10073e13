"""`keq verify` as a user runs it: exit codes, the report, --json, counterexample files that
`keq run` replays, solver dumps, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from verifier.cli.main import main

K = Path(__file__).resolve().parents[2] / "kernels"
# (a block-buffered stdout, as a user's pipe or file gets: this machine's environment may
# ask for unbuffered streams, which would hide a missing flush)
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def test_equivalent_pair_exits_0_and_shows_claim_stages_and_verdict(capsys):
    rc = main(["verify", str(K / "vector_add/vec4.toml"), "--set", "n=7"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("claim    vector_add/vec4: vector_add_vec4 == vector_add (bitexact) "
                          "for n=7, every input")
    assert "symbolic execution" in out and "races" in out and "verdict  EQUIVALENT" in out


def test_the_command_line_runs_the_cycle_collector_less_often():
    # (`verifier.gc_policy`; in a fresh process, as `keq` starts)
    import subprocess
    import sys
    from verifier.gc_policy import OLDER, YOUNG
    code = ("import contextlib, gc, io\n"
            "from verifier.cli.main import main\n"
            "before = gc.get_threshold()\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['--version'])\n"
            "print(before, gc.get_threshold())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=K.parent, check=True).stdout
    assert out.strip() == f"(700, 10, 10) ({YOUNG}, {OLDER}, {OLDER})"


@pytest.mark.parametrize("spec,code", [("vector_add/vec4_notail.toml", 1),
                                       ("reduce/i32_sequential.toml", 0)])
def test_the_verdicts_exit_code_survives_a_reader_that_leaves(spec, code):
    # `keq verify buggy.toml | head` in a gate: a reader gone before the report is written
    # must not turn "not equivalent" into exit 0 (nor into a traceback)
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-m", "verifier.cli.main", "verify", str(K / spec),
                          "--set", "n=5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=K.parent)
    p.stdout.close()                       # the reader leaves before anything is written
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == code, err
    assert "Traceback" not in err and "BrokenPipe" not in err


def _leaving(body: str) -> subprocess.CompletedProcess:
    """`body` in a fresh interpreter, ending with `leave(1)` as the console script does."""
    code = "import atexit, sys, threading, time\nfrom verifier.cli.main import leave\n" + body + \
        "\nsys.stdout.write('unflushed'); leave(1)\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=K.parent, env=BUFFERED, timeout=60, check=False)


def test_leaving_flushes_runs_the_exit_handlers_and_keeps_the_code():
    p = _leaving("atexit.register(lambda: print('handler ran'))")
    assert p.returncode == 1 and "unflushed" in p.stdout and "handler ran" in p.stdout


def test_leaving_waits_for_a_running_thread_as_a_normal_exit_does():
    p = _leaving("threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))"
                 ").start()")
    assert p.returncode == 1 and "thread done" in p.stdout


def test_the_console_script_prints_the_whole_report_and_exits_with_the_verdict(tmp_path):
    out = tmp_path / "report.txt"
    with out.open("w") as f:                # a file, not a pipe: the stream is block-buffered
        script = "from verifier.cli.main import entry; entry()"
        code = subprocess.run([sys.executable, "-c", script, "verify",
                               str(K / "vector_add/vec4_notail.toml"), "--set", "n=5"],
                              stdout=f, stderr=subprocess.PIPE, text=True, cwd=K.parent,
                              env=BUFFERED, timeout=120, check=False).returncode
    text = out.read_text()
    assert code == 1 and text.startswith("claim ") and "verdict  NOT EQUIVALENT" in text


def test_buggy_pair_exits_1_with_a_replayable_counterexample(tmp_path, capsys):
    cex = tmp_path / "cex.npz"
    spec = str(K / "reduce/i32_warp_shfl_badoffset.toml")
    rc = main(["verify", spec, "--set", "n=3", "--save-counterexample", str(cex)])
    out = capsys.readouterr().out
    assert rc == 1 and "NOT EQUIVALENT" in out and "out[0]: reference 0x" in out
    with np.load(cex) as z:
        want_ref, want_cand = z["reference:out"], z["candidate:out"]
    assert not np.array_equal(want_ref, want_cand)
    for side, want in (("reference", want_ref), ("candidate", want_cand)):
        out_npz = tmp_path / f"{side}.npz"
        assert main(["run", spec, "--side", side, "--inputs", str(cex), "--output",
                     str(out_npz)]) == 0
        with np.load(out_npz) as z:
            assert np.array_equal(z["out"], want)


def test_whole_claim_covered_by_one_symbolic_launch(capsys):
    rc = main(["verify", str(K / "scan/blelloch.toml")])
    out = capsys.readouterr().out
    assert rc == 0 and "for 1 <= n <= 512, every input" in out
    assert "covered: 512 launch shape(s) in one symbolic maximal launch (n symbolic)" in out


def test_undecidable_claim_is_inconclusive_exit_2_with_the_reason(capsys):
    big = Path(__file__).resolve().parents[1] / "data/matmul_big/real64.toml"
    rc = main(["verify", str(big), "--json", "--shapes", "symbolic"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 2 and report["verdict"] == "inconclusive"
    assert "131072 shapes x 4096 elements" in report["reasons"][0]
    assert "indexed buffers" in report["reasons"][0]


def test_json_report(capsys):
    rc = main(["verify", str(K / "saxpy/fma_real.toml"), "--set", "n=8", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["verdict"] == "equivalent"
    assert set(report) >= {"claim", "verdict", "reasons", "assumptions", "stages",
                           "counterexample", "seconds", "launch_shapes"}
    assert any("modulo rounding" in a for a in report["assumptions"])


def test_dump_smt_writes_every_obligation(tmp_path, capsys):
    rc = main(["verify", str(K / "saxpy/fma_bitexact.toml"), "--set", "n=2", "--dump-smt",
               str(tmp_path), "--trials", "0"])
    out = capsys.readouterr().out
    assert rc == 1 and "to the solvers" in out and "random testing" not in out
    dumped = list(tmp_path.glob("*.smt2"))
    assert dumped and all("(check-sat)" in f.read_text() for f in dumped)


@pytest.mark.parametrize("argv,needle", [
    (["verify", "nope.toml"], "nope.toml"),
    (["verify", str(K / "vector_add/vec4.toml"), "--set", "m=3"], "no param named 'm'"),
    (["verify", str(K / "vector_add/vec4.toml"), "--set", "n=0"], "n"),
    (["verify", str(K / "vector_add/vec4.toml"), "--mode", "fuzzy"], "invalid choice"),
    (["verify", str(K / "vector_add/vec4.toml"), "--jobs", "-2"], "--jobs -2"),
])
def test_bad_input_exits_3_without_traceback(argv, needle, capsys):
    with pytest.raises(SystemExit) if "--mode" in argv else _nullcontext():
        rc = main(argv)
        assert rc == 3
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_difference_found_by_testing_shows_the_inputs_at_its_index(capsys):
    rc = main(["verify", str(K / "vector_add/vec4_notail.toml")])
    out = capsys.readouterr().out
    assert rc == 1 and "found by random testing before the symbolic run" in out
    assert "inputs at index 0, where the first difference is" in out
    assert "input a[0] = 0x" in out and "input b[0] = 0x" in out and "c[0]: reference" in out


def test_progress_reports_each_stage_of_a_long_symbolic_launch_as_it_finishes(capsys):
    from verifier.cli.verify_cmd import _Progress
    from verifier.equiv import verify
    from verifier.spec import load_spec

    class Recording(_Progress):
        def __init__(self):
            super().__init__()
            self.heard = []

        def stage(self, s):
            self.heard.append(s.name)
            super().stage(s)

    progress = Recording()
    v = verify(load_spec(K / "vector_add" / "vec4.toml"), progress=progress)
    assert v.kind == "equivalent"
    # every stage, in order, while the run went on (not only in the verdict afterwards)
    assert progress.heard == [s.name for s in v.stages] and progress.heard
    err = capsys.readouterr().err
    assert "checking every launch shape at once (n symbolic)" in err
    assert f": {v.stages[-1].name} ok (" in err


def test_each_differing_value_names_the_thread_and_ptx_line_that_wrote_it(capsys):
    # vec4_notail's candidate never writes the tail element: its value is the initial one
    rc = main(["verify", str(K / "vector_add/vec4_notail.toml")])
    out = capsys.readouterr().out
    assert rc == 1
    assert "    reference value written by block (0,0,0) thread (0,0,0) at " in out
    assert "vector_add.ptx:" in out.split("reference value written by", 1)[1].splitlines()[0]
    assert "    candidate value written by no thread (the initial contents)" in out
    rc = main(["verify", str(K / "vector_add/vec4_notail.toml"), "--json"])
    cex = json.loads(capsys.readouterr().out)["counterexample"]
    first = cex["differences"][0]["written_by"]
    assert first["reference"].startswith("block (0,0,0) thread (0,0,0) at ")
    assert first["candidate"] == ""
