"""keq gates itself: the certificates committed in proofs/ must pass `keq gate` against the
manifest in pyproject.toml. A kernel, spec or semantics change without new proofs fails here
(and in .ci/run's gate step). To fix: `keq prove --manifest pyproject.toml` and commit proofs/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.certs import format as fmt
from verifier.certs import manifest as mf
from verifier.certs.gate import EXCLUDED, FAIL, NOT_GATED, PASS, run_gate
from verifier.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "re-prove: keq prove --manifest pyproject.toml (then commit proofs/)"


@pytest.fixture(scope="module")
def report():
    return run_gate(mf.load(ROOT / "pyproject.toml"))


def test_committed_proofs_pass_the_gate(report):
    failed = {r.spec: [f"{f.code}: {f.message}" for f in r.findings]
              for r in report.results if r.status == FAIL}
    assert not failed, f"{REGENERATE}\n{json.dumps(failed, indent=1)}"
    assert report.count(PASS) >= 15


def test_every_expected_equivalent_pair_is_gated_or_excluded_with_a_reason(report):
    import tomllib
    for spec in sorted((ROOT / "kernels").glob("*/*.toml")):
        rel = spec.relative_to(ROOT).as_posix()
        expect = tomllib.loads(spec.read_text())["expect"]
        (r,) = [r for r in report.results if r.spec == rel]
        if expect == "equivalent":
            assert r.status in (PASS, FAIL) or (r.status == EXCLUDED and r.note), rel
        else:
            assert r.status == NOT_GATED and expect in r.note, rel


def test_no_orphan_certificates(report):
    """Every certificate in proofs/ belongs to a gated pair (a renamed pair leaves none)."""
    gated = {r.certificate for r in report.results if r.status in (PASS, FAIL)}
    found = {p.relative_to(ROOT).as_posix() for p in (ROOT / "proofs").rglob("*.json")}
    assert found <= gated, sorted(found - gated)
    for p in (ROOT / "proofs").rglob("*.json"):
        cert = fmt.load(p)
        assert cert["certificate_sha256"] == fmt.body_sha256(cert), p


@pytest.mark.parametrize("pair", ["vector_add/vec4", "reduce/i32_warp_shfl", "stencil/shared"])
def test_committed_certificates_survive_the_independent_recheck(pair, capsys):
    """Round trip on the real corpus: re-derive the obligations from kernels/ and re-solve the
    stored ones with another solver (small pairs only; bench/gate.py times all of them)."""
    rc = main(["check", "--root", str(ROOT), "--json", str(ROOT / "proofs" / f"{pair}.json")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0, (REGENERATE, out)
    (res,) = out["results"]
    assert all(r["independent"] for r in res["resolved"])
