"""`keq run --fill/--schedule`, the choices an .npz carries (`__keq_choices__`) and their
replay, and the choices `keq verify` prints, reports as JSON and saves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from semantics.choices import Choices
from verifier.cli.main import main
from verifier.inputs import (CHOICES_KEY, InputError, SavedChoices, load_choices, load_npz,
                             save_npz)
from verifier.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
ADV = REPO / "tests" / "data" / "adversarial"
UNINIT = str(ADV / "uninit_register.toml")                 # reads %r5 before any write
BRANCH = str(ADV / "shared_unwritten_behind_branch.toml")   # unwritten shared, magic input
ATOMIC = str(ADV / "atomic_sum_f32_bitexact.toml")          # float atomics: order shows


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["run", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _json(capsys, *argv) -> dict:
    rc, out, err = _run(capsys, *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def _head(report: dict, name: str) -> str:
    return report["buffers"][name]["sha256"]


# ------------------------------------------------------------------ keq run --fill / --schedule

def test_fill_decides_what_an_unwritten_register_holds(capsys):
    argv = (UNINIT, "--side", "candidate", "--set", "n=8", "--seed", "3")
    rc, out, _ = _run(capsys, *argv)
    assert rc == 0 and "choices" not in out           # the defaults: no line
    zero = _json(capsys, *argv)
    assert "choices" not in zero                      # (a default run's keys are unchanged)
    pattern = _json(capsys, *argv, "--fill", "pattern")
    rnd = _json(capsys, *argv, "--fill", "random:7")
    assert len({_head(r, "out") for r in (zero, pattern, rnd)}) == 3
    assert _json(capsys, *argv, "--fill", "random:7")["buffers"] == rnd["buffers"]
    assert pattern["choices"]["fill"] == "pattern" and pattern["choices"]["source"] == "given"
    rc, out, _ = _run(capsys, *argv, "--fill", "pattern")
    assert "  choices  fill pattern, schedule lane (given)" in out


def test_schedule_decides_the_order_of_contending_atomics(capsys, tmp_path):
    spec = load_spec(ATOMIC)
    x = np.random.default_rng(5).standard_normal(64).astype(np.float32)
    inputs = tmp_path / "in.npz"
    save_npz(inputs, spec, {"x": x, "sum": np.zeros(1, np.float32), "n": 64})
    argv = (ATOMIC, "--side", "candidate", "--inputs", str(inputs))
    sums = {s: _json(capsys, *argv, "--schedule", s)["buffers"]["sum"]["head"][0]
            for s in ("lane", "reverse", "random:1")}
    assert len(set(sums.values())) == 3, sums
    assert _json(capsys, *argv)["buffers"]["sum"]["head"][0] == sums["lane"]
    rc, out, _ = _run(capsys, *argv, "--schedule", "reverse")
    assert "  choices  fill zero, schedule reverse (given)" in out
    # the reference sums in one thread: no choice changes it
    ref = {s: _json(capsys, ATOMIC, "--inputs", str(inputs), "--schedule", s)
           ["buffers"]["sum"]["sha256"] for s in ("lane", "reverse")}
    assert len(set(ref.values())) == 1


@pytest.mark.parametrize("argv,msg", [
    (["--fill", "ones"], "unknown fill policy 'ones' (one of: zero, pattern, random:SEED)"),
    (["--fill", "random:"], "the seed after 'random:' must be a non-negative integer"),
    (["--fill", "random:-2"], "the seed after 'random:' must be a non-negative integer"),
    (["--fill", "reverse"], "unknown fill policy 'reverse'"),
    (["--schedule", "pattern"], "unknown schedule 'pattern' (one of: lane, reverse, "
                                "random:SEED)"),
    (["--schedule", "random:x"], "the seed after 'random:' must be a non-negative integer"),
])
def test_bad_policy_is_a_usage_error_exit_3(capsys, argv, msg):
    with pytest.raises(SystemExit) as usage:
        _run(capsys, UNINIT, *argv)
    assert usage.value.code == 3
    err = capsys.readouterr().err
    assert msg in err and f"argument {argv[0]}" in err


def test_help_says_what_each_option_resolves_and_which_wins(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--fill POLICY what the kernel reads where nothing was written" in text
    assert "never-written shared and local memory" in text and "0xa5" in text
    assert "--schedule POLICY the order the hardware chooses for the kernel's contending " \
           "atomics" in text
    assert "--inputs replays them unless --fill or --schedule is given (then the given " \
           "options win" in text
    assert "--shared-fill always wins for shared memory" in text


# ------------------------------------------------------------------ the .npz's choices

def test_choices_round_trip_through_the_npz(tmp_path):
    spec = load_spec(UNINIT)
    values = {"x": np.arange(4, dtype=np.uint32), "out": np.zeros(4, np.uint32), "n": 4}
    c = Choices("random:9", "reverse", {"candidate/copy_plus_unwritten/%r5!t3": 2**40 + 7,
                                        "candidate/atom@k.ptx:12:3!t7#0": 1})
    f = tmp_path / "c.npz"
    save_npz(f, spec, values, {"candidate": {"out": values["out"]}},
             choices=SavedChoices.of(c, 0xA5))
    with np.load(f) as z:
        assert z[CHOICES_KEY].dtype.kind == "U" and z[CHOICES_KEY].shape == ()
    saved = load_choices(str(f))
    assert (saved.fill, saved.schedule, dict(saved.values), saved.shared_fill) == \
        ("random:9", "reverse", dict(c.values), 0xA5)
    back = saved.choices(Choices())
    assert (back.fill, back.schedule, dict(back.values)) == (c.fill, c.schedule, c.values)
    assert set(load_npz(spec, str(f))) == {"x", "out", "n"}     # not an input
    plain = tmp_path / "p.npz"
    save_npz(plain, spec, values)
    assert load_choices(str(plain)) is None


@pytest.mark.parametrize("text,msg", [
    ("{", "not JSON"),
    ('{"fill": "ones"}', "unknown fill policy 'ones'"),
    ('{"schedule": "random:x"}', "the seed after 'random:' must be a number"),
    ('{"values": {"a!t0": "x"}}', "values must map constant names to integers"),
    ('{"shared_fill": 300}', "shared_fill 300 is not a byte"),
    ('{"version": 99}', "version 99 is not one this keq reads"),
    ('{"colour": "red"}', "unknown field(s) 'colour'"),
])
def test_bad_saved_choices_are_bad_input_exit_3(capsys, tmp_path, text, msg):
    spec = load_spec(UNINIT)
    f = tmp_path / "bad.npz"
    arrays = {"x": np.arange(4, dtype=np.uint32), "out": np.zeros(4, np.uint32),
              "n": np.asarray(4, np.int32), CHOICES_KEY: np.array(text)}
    np.savez(f, **arrays)
    with pytest.raises(InputError):
        load_choices(str(f))
    rc, _, err = _run(capsys, UNINIT, "--inputs", str(f))
    assert rc == 3 and msg in err and str(f) in err
    del spec


def _verify_save(capsys, spec: str, f: Path) -> tuple[str, dict]:
    # One solver: the portfolio's first answer, and so its model, depends on the machine's
    # load, and the two runs must name the same counterexample.
    rc = main(["verify", spec, "-j", "1", "--solver", "z3", "--save-counterexample", str(f)])
    out = capsys.readouterr().out
    assert rc == 1, out
    rc = main(["verify", spec, "-j", "1", "--solver", "z3", "--json"])
    cex = json.loads(capsys.readouterr().out)["counterexample"]
    assert rc == 1
    return out, cex


def test_a_verify_counterexample_replays_exactly_with_its_fill(capsys, tmp_path):
    f = tmp_path / "u.npz"
    out, cex = _verify_save(capsys, UNINIT, f)
    # the counterexample needed another fill than zeros: the report names it
    assert cex["choices"]["fill"] != "zero" and set(cex["choices"]) >= {"fill", "schedule",
                                                                         "values"}
    assert f"  choices  fill {cex['choices']['fill']}, schedule " in out
    assert "it carries the choices above, which the replay applies" in out
    with np.load(f) as z:
        want = z["candidate:out"].copy()
        ref = z["reference:out"].copy()
        saved = json.loads(str(z[CHOICES_KEY]))
    assert saved["fill"] == cex["choices"]["fill"]
    argv = (UNINIT, "--side", "candidate", "--inputs", str(f))
    rc, text, _ = _run(capsys, *argv)
    assert rc == 0 and f"  choices  fill {saved['fill']}, schedule lane (saved in {f})" in text
    got = _json(capsys, *argv, "--output", str(tmp_path / "o.npz"))
    assert got["choices"]["source"] == f"saved in {f}"
    assert np.load(tmp_path / "o.npz")["out"].tolist() == want.tolist() != ref.tolist()
    # an explicit --fill wins over the saved choices, and says so
    rc, text, _ = _run(capsys, *argv, "--fill", "zero", "--output", str(tmp_path / "z.npz"))
    assert rc == 0 and "not applied: the choices saved in" in text
    assert np.load(tmp_path / "z.npz")["out"].tolist() == ref.tolist()


def test_a_verify_counterexample_replays_exactly_with_its_chosen_values(capsys, tmp_path):
    # the solver chose the unwritten shared bytes: the values, by constant name, travel
    f = tmp_path / "s.npz"
    out, cex = _verify_save(capsys, BRANCH, f)
    values = cex["choices"]["values"]
    assert values and all(k.startswith("candidate/shared/") for k in values)
    assert "  choices  fill zero, schedule lane, values candidate/shared/" in out
    saved = load_choices(str(f))
    assert dict(saved.values) == values
    with np.load(f) as z:
        want, ref = z["candidate:out"].copy(), z["reference:out"].copy()
    o = tmp_path / "o.npz"
    rc, text, _ = _run(capsys, BRANCH, "--side", "candidate", "--inputs", str(f), "--output",
                       str(o))
    assert rc == 0 and "values candidate/shared/" in text
    assert np.load(o)["out"].tolist() == want.tolist() != ref.tolist()
    # --shared-fill still overrides what shared memory holds
    rc, text, _ = _run(capsys, BRANCH, "--side", "candidate", "--inputs", str(f),
                       "--shared-fill", "0", "--output", str(o))
    assert rc == 0 and "every shared byte 0x00 at launch (--shared-fill)" in text
    assert np.load(o)["out"].tolist() == ref.tolist()
