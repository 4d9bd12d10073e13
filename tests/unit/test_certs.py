"""The certificate layer's parts, without running verify: what is hashed (and what is not),
the JSON Schema, the on-disk store, the manifest's classification, signatures, re-solving a
stored obligation, and the JUnit / SARIF reports."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from verifier.certs import format as fmt
from verifier.certs import manifest as mf
from verifier.certs import reports, store
from verifier.certs.check import CODES, Finding, resolve_stored
from verifier.certs.errors import CertError
from verifier.certs.gate import EXCLUDED, FAIL, NOT_GATED, PASS, GateReport, PairResult
from verifier.certs.hashing import (NOT_IN_PROOFS, canonical_json, ptx_sha256,
                                    semantics_sha256, spec_sha256, tree_sha256)

K = Path(__file__).resolve().parents[2] / "kernels"

UNSAT_BV = """(set-logic QF_BV)
(declare-fun x () (_ BitVec 8))
(assert (not (= (bvadd x x) (bvmul x #x02))))
(check-sat)
"""


# -- hashing ------------------------------------------------------------------------------------

def test_canonical_json_ignores_key_order_and_layout():
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == \
        b'{"a":[1,{"c":3,"d":2}],"b":1}'


def test_ptx_hash_ignores_comments_and_layout_but_not_instructions(tmp_path):
    src = (K / "vector_add/vector_add.ptx").read_text()
    base = tmp_path / "a.ptx"
    base.write_text(src)
    h = ptx_sha256(base)
    relaid = tmp_path / "b.ptx"
    relaid.write_text("// generated\n" + src.replace("\t", "  ").replace(";\n", "; // x\n"))
    assert ptx_sha256(relaid) == h
    assert "add.f32" in src
    changed = tmp_path / "c.ptx"
    changed.write_text(src.replace("add.f32", "sub.f32", 1))
    assert ptx_sha256(changed) != h


def test_spec_hash_ignores_comments_but_not_values(tmp_path):
    src = (K / "vector_add/vec4.toml").read_text()
    a, b, c = tmp_path / "a.toml", tmp_path / "b.toml", tmp_path / "c.toml"
    a.write_text(src)
    b.write_text("# comment\n\n" + src.replace("\n[", "\n\n  # next table\n["))
    c.write_text(src.replace("[1, 2048]", "[1, 2047]"))
    assert spec_sha256(a) == spec_sha256(b) != spec_sha256(c)


def test_semantics_hash_covers_every_source_sass_included(tmp_path):
    import semantics
    root = tmp_path / "pkg"
    shutil.copytree(Path(semantics.__file__).parent, root,
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert tree_sha256(root, NOT_IN_PROOFS) == semantics_sha256()
    (root / "sass" / "extra.py").write_text("x = 1\n")
    assert tree_sha256(root, NOT_IN_PROOFS) != semantics_sha256()
    (root / "sass" / "extra.py").unlink()
    ops = next(root.glob("ops/*.py"))
    ops.write_text(ops.read_text() + "\n# changed\n")
    assert tree_sha256(root, NOT_IN_PROOFS) != semantics_sha256()


def test_a_sass_side_is_hashed_by_its_listing(tmp_path):
    from verifier.certs.hashing import side_sha256
    from verifier.spec import load_spec
    kdir = Path(__file__).resolve().parents[2] / "kernels" / "vector_add"
    for f in ("vector_add.ptx", "vector_add.sm_90.sass"):
        shutil.copy(kdir / f, tmp_path / f)
    spec = tmp_path / "tv.toml"
    spec.write_text("""
name = "tv/vector_add"
mode = "bitexact"
expect = "equivalent"
[reference]
ptx = "vector_add.ptx"
kernel = "vector_add"
grid = ["ceil_div(n, 256)", 1, 1]
block = [256, 1, 1]
[candidate]
sass = "vector_add.sm_90.sass"
kernel = "vector_add"
grid = ["ceil_div(n, 256)", 1, 1]
block = [256, 1, 1]
[[param]]
name = "a"
buffer = "f32"
length = "n"
access = "in"
[[param]]
name = "b"
buffer = "f32"
length = "n"
access = "in"
[[param]]
name = "c"
buffer = "f32"
length = "n"
access = "out"
[[param]]
name = "n"
scalar = "s32"
range = [1, 64]
""")
    before = side_sha256(load_spec(spec).candidate)
    listing = tmp_path / "vector_add.sm_90.sass"
    listing.write_text(listing.read_text() + "\n\n")             # layout only: same hash
    assert side_sha256(load_spec(spec).candidate) == before
    text = listing.read_text()
    assert "ISETP.GE.AND" in text
    listing.write_text(text.replace("ISETP.GE.AND", "ISETP.GT.AND", 1))   # an instruction
    assert side_sha256(load_spec(spec).candidate) != before


# -- format and schema --------------------------------------------------------------------------

def test_the_shipped_schema_is_valid_draft_2020_12():
    s = fmt.schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["properties"]["schema_version"] == {"const": fmt.SCHEMA_VERSION}


def _minimal_cert() -> dict:
    side = {"ptx": "k.ptx", "kernel": "k", "sha256": "0" * 64, "grid": ["1"], "block": ["32"]}
    cert = {
        "format": fmt.FORMAT, "schema_version": 1,
        "keq": {"version": "0.1.0", "semantics_sha256": "1" * 64},
        "pair": {"name": "f/p", "spec": {"path": "f/p.toml", "sha256": "2" * 64},
                 "reference": side, "candidate": side},
        "claim": {"text": "t", "mode": "bitexact", "fixed": {"n": 4}, "scalars": [],
                  "assume": []},
        "options": {"max_shapes": 16, "unroll": 64, "timeout_s": 60.0, "trials": 8, "seed": 0},
        "verdict": {"kind": "equivalent", "reasons": [], "assumptions": [], "launch_shapes": 1,
                    "coverage": "",
                    "stages": [], "evidence": [fmt.IDENTICAL_TERMS]},
        "obligations": [], "fuzz": None,
    }
    cert["certificate_sha256"] = fmt.body_sha256(cert)
    cert["signature"] = None
    return cert


def test_minimal_certificate_validates_and_each_break_is_named(tmp_path):
    assert fmt.schema_errors(_minimal_cert()) == []
    bad = _minimal_cert()
    bad["obligations"] = [{"name": "o", "sha256": "xyz", "answer": "unsat", "solver": "z3",
                           "version": "4", "cached": False, "answers": {},
                           "file": "../../etc/passwd"}]
    errs = fmt.schema_errors(bad)
    assert {tuple(p) for p, _ in errs} == {("obligations", 0, "sha256"),
                                          ("obligations", 0, "file")}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(bad, indent=1))
    with pytest.raises(CertError, match=r"c\.json:\d+:\d+: error: not a keq certificate"):
        fmt.load(p)


def test_body_hash_excludes_the_hash_and_the_signature():
    c = _minimal_cert()
    h = fmt.body_sha256(c)
    c["signature"] = {"algorithm": "ed25519", "public_key": "a" * 64, "value": "b" * 128}
    c["certificate_sha256"] = "f" * 64
    assert fmt.body_sha256(c) == h
    c["verdict"]["launch_shapes"] = 2
    assert fmt.body_sha256(c) != h


def test_not_json_is_located(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{\n  "format": "keq-certificate",\n  oops\n}')
    with pytest.raises(CertError) as e:
        fmt.load(p)
    assert e.value.render().startswith(f"{p}:3:3: error: not JSON")


# -- store --------------------------------------------------------------------------------------

def test_compressed_obligations_are_byte_identical_across_runs():
    assert store.compress(UNSAT_BV) == store.compress(UNSAT_BV)


@pytest.mark.parametrize("name", ["../x", "/abs", "a/../b", "a//b", "", "a\\b"])
def test_pair_names_that_would_escape_the_proofs_directory_are_refused(name):
    with pytest.raises(CertError):
        store.cert_path(Path("proofs"), name)


def test_write_replaces_old_obligation_files(tmp_path):
    cert = tmp_path / "p" / "x.json"
    from verifier.certs.hashing import sha256_text
    h1 = sha256_text(UNSAT_BV)
    store.write(cert, {"a": 1}, {h1: UNSAT_BV})
    assert store.read_obligation(cert, store.obligation_relpath(cert, h1)) == UNSAT_BV
    store.write(cert, {"a": 2}, {})
    assert not store.obligations_dir(cert).exists()


# -- manifest -----------------------------------------------------------------------------------

def _copy(dst: Path, *specs: str) -> None:
    """Pair specs and the PTX they name, from the corpus into dst/kernels."""
    import tomllib
    for rel in specs:
        src = K / rel
        out = dst / "kernels" / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, out)
        doc = tomllib.loads(src.read_text())
        for side in ("reference", "candidate"):
            shutil.copy(src.parent / doc[side]["ptx"], out.parent / doc[side]["ptx"])


def test_manifest_classifies_listed_matched_and_excluded_specs(tmp_path):
    _copy(tmp_path, "vector_add/vec4.toml", "vector_add/vec4_notail.toml",
          "vector_add/lineinfo.toml", "softmax/cross_entropy_logf.toml")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.keq]\nspecs = ["kernels/*/*.toml"]\n'
        '[[tool.keq.pair]]\nspec = "kernels/vector_add/vec4.toml"\nset = { n = 8 }\n'
        'max_shapes = 4\n'
        '[[tool.keq.exclude]]\nspec = "kernels/vector_add/lineinfo.toml"\nreason = "slow"\n')
    assert mf.find_manifest(tmp_path) == tmp_path / "pyproject.toml"
    m = mf.load(tmp_path / "pyproject.toml")
    assert m.proofs == tmp_path / "proofs"
    by = {e.rel: e for e in m.entries}
    assert by["kernels/vector_add/vec4.toml"].sets == {"n": 8}
    assert by["kernels/vector_add/vec4.toml"].max_shapes == 4
    assert m.explicit == {"kernels/vector_add/vec4.toml"}
    assert m.excluded == {"kernels/vector_add/lineinfo.toml": "slow"}
    from verifier.certs.gate import run_gate
    rep = run_gate(m)
    status = {r.spec: r.status for r in rep.results}
    assert status == {"kernels/vector_add/vec4.toml": FAIL,          # no certificate yet
                      "kernels/vector_add/lineinfo.toml": EXCLUDED,
                      "kernels/vector_add/vec4_notail.toml": NOT_GATED,
                      "kernels/softmax/cross_entropy_logf.toml": NOT_GATED}
    # keq.toml wins over pyproject.toml
    (tmp_path / "keq.toml").write_text("")
    assert mf.find_manifest(tmp_path) == tmp_path / "keq.toml"


def test_a_bad_set_value_fails_that_pair_naming_the_manifest(tmp_path):
    _copy(tmp_path, "vector_add/vec4.toml")
    (tmp_path / "keq.toml").write_text(
        '[[pair]]\nspec = "kernels/vector_add/vec4.toml"\nset = { n = 99999 }\n')
    from verifier.certs.gate import run_gate
    (r,) = run_gate(mf.load(tmp_path / "keq.toml")).results
    assert r.status == FAIL and r.findings[0].code == "spec-error"
    assert "keq.toml:1:1: the manifest's `set`" in r.findings[0].message
    assert "99999" in r.findings[0].message


def test_a_float_scalar_in_the_claim_round_trips_through_json_and_check(tmp_path, capsys):
    from verifier.cli.main import main
    _copy(tmp_path, "saxpy/fma_real.toml")
    spec = str(tmp_path / "kernels/saxpy/fma_real.toml")
    assert main(["prove", spec, "--set", "n=8", "--set", "a=0.1", "--out",
                 str(tmp_path / "proofs"), "--root", str(tmp_path)]) == 0
    cert = json.loads((tmp_path / "proofs/saxpy/fma_real.json").read_text())
    assert cert["claim"]["fixed"] == {"a": float(np.float32(0.1)), "n": 8}
    capsys.readouterr()
    assert main(["check", "--root", str(tmp_path),
                 str(tmp_path / "proofs/saxpy/fma_real.json")]) == 0, capsys.readouterr()


# -- re-solving ---------------------------------------------------------------------------------

def test_resolve_uses_a_solver_other_than_the_recorded_one():
    r = resolve_stored(UNSAT_BV, "z3", 10.0)
    assert r.answer == "unsat" and r.independent and r.solver in ("bitwuzla", "cvc5")
    r = resolve_stored(UNSAT_BV, "bitwuzla", 10.0)
    assert r.answer == "unsat" and r.independent and r.solver != "bitwuzla"


def test_resolve_counts_the_sparse_search_as_bitwuzla():
    # the sparse search is bitwuzla on a corner of the inputs: re-solving what it answered
    # with bitwuzla would not be independent
    r = resolve_stored(UNSAT_BV, "sparse", 10.0)
    assert r.answer == "unsat" and r.independent and r.solver in ("cvc5", "z3")


def test_resolve_falls_back_to_the_recorded_solver_and_says_it_is_not_independent(
        monkeypatch):
    import verifier.certs.check as check
    monkeypatch.setattr(check, "RESOLVE_ORDER", ("z3",))
    r = resolve_stored(UNSAT_BV, "z3", 10.0)
    assert r.answer == "unsat" and r.solver == "z3" and not r.independent


def test_resolve_reports_when_no_solver_answers():
    r = resolve_stored("(this is not smt-lib", "z3", 5.0)
    assert r.answer == "none" and r.solver == "" and "error" in r.detail


# -- signatures ---------------------------------------------------------------------------------

def test_sign_and_verify(tmp_path):
    pytest.importorskip("nacl", reason="PyNaCl (the `sign` extra) is not installed")
    from verifier.certs import signing
    key, pub = signing.new_key(tmp_path / "k")
    with pytest.raises(CertError, match="never overwrites"):
        signing.new_key(tmp_path / "k")
    trusted = signing.trusted_keys(tmp_path)
    c = signing.sign(_minimal_cert(), key)
    assert fmt.schema_errors(c) == []
    assert signing.check(c, trusted) == ""
    assert signing.check(_minimal_cert(), trusted).startswith("unsigned")
    c["claim"]["fixed"] = {"n": 5}
    assert signing.check(c, trusted).startswith("bad signature")
    pub.write_text("not hex\n")
    with pytest.raises(CertError, match="64 hex digits"):
        signing.trusted_keys(tmp_path)


# -- reports ------------------------------------------------------------------------------------

def _report() -> GateReport:
    return GateReport(Path("/repo/pyproject.toml"), (
        PairResult("k/a.toml", "a", PASS),
        PairResult("k/b.toml", "b", FAIL, (Finding("stale", "the spec k/b.toml changed"),
                                           Finding("edited", "hash <mismatch> & more"))),
        PairResult("k/c.toml", "", EXCLUDED, note="not modelled"),
        PairResult("k/d.toml", "d", NOT_GATED, note="expect = 'inconclusive'"),
    ), False, 0.5)


def test_junit_has_one_case_per_pair_with_failures_and_skips():
    root = ET.fromstring(reports.junit(_report()))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "2")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    f = cases["b"].find("failure")
    assert f.get("type") == "stale" and "hash <mismatch> & more" in f.text
    assert cases["k/c.toml"].find("skipped").get("message") == "excluded: not modelled"
    assert cases["a"].find("failure") is None and cases["a"].find("skipped") is None


def test_sarif_results_point_at_the_spec_with_a_declared_rule():
    s = reports.sarif(_report())
    assert s["version"] == "2.1.0" and len(s["runs"]) == 1
    run = s["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [f"keq/{c}" for c in CODES]
    assert [(r["ruleId"], rules[r["ruleIndex"]]["id"]) for r in run["results"]] == \
        [("keq/stale", "keq/stale"), ("keq/edited", "keq/edited")]
    loc = run["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "k/b.toml" and loc["region"]["startLine"] == 1


def test_text_report_counts_and_names_failures():
    t = reports.text(_report())
    assert t.splitlines()[0].startswith("keq gate pyproject.toml: 1 passed, 1 failed, "
                                        "1 excluded, 1 not gated")
    assert "      stale: the spec k/b.toml changed" in t
    assert t.splitlines()[-1].startswith("gate FAILED")
