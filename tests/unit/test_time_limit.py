"""The whole-run time limit (`verifier.time_limit`, `keq verify --time-limit`): a run past it
ends Inconclusive (exit 2), naming what was running, never a pass and never a hang."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from verifier.cli.main import main
from verifier.time_limit import TimeLimitReached, time_limit

REPO = Path(__file__).resolve().parents[2]
MATMUL = str(REPO / "kernels" / "matmul" / "tiled_bitexact_k16.toml")   # about 20 s


def test_the_limit_interrupts_a_busy_loop_and_is_no_exception():
    start = time.perf_counter()
    with pytest.raises(TimeLimitReached):
        with time_limit(0.2):
            while True:
                pass
    assert time.perf_counter() - start < 5
    assert not issubclass(TimeLimitReached, Exception)      # no `except Exception` hides it


def test_a_limit_swallowed_where_python_ignores_exceptions_is_raised_again():
    class Swallows:
        def __del__(self):
            time.sleep(0.5)          # the alarm fires here, and Python ignores what __del__ raises

    start = time.perf_counter()
    with pytest.raises(TimeLimitReached):
        with time_limit(0.1):
            Swallows()               # (collected at once: the limit passes inside __del__)
            while time.perf_counter() - start < 5:
                pass                 # (without the repeat: no exception, "DID NOT RAISE")


def test_no_limit_and_a_limit_not_reached_change_nothing():
    with time_limit(0):
        pass
    with time_limit(30):
        x = sum(range(1000))
    assert x == 499500
    time.sleep(0.05)          # the timer is off again: nothing fires later


def test_verify_past_its_time_limit_is_inconclusive_naming_what_ran(capsys):
    rc = main(["verify", MATMUL, "--time-limit", "2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 2 and out["verdict"] == "inconclusive"
    (reason,) = out["reasons"]
    assert "time limit of 2 s" in reason and "while" in reason


def test_a_negative_time_limit_is_a_usage_error(capsys):
    assert main(["verify", MATMUL, "--time-limit", "-1"]) == 3
    assert "--time-limit" in capsys.readouterr().err
