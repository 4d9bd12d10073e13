"""`keq prove` / `keq check` / `keq gate` on a small workspace copied from the corpus under
tmp_path: the gate passes a fresh proof and catches each kind of tampering, naming the pair
and the reason; `keq check` catches obligations that no longer match the kernels.

The workspace (two identical-terms pairs from the corpus and one pair with a solver obligation,
tests/data/carry_save, at fixed small shapes) is proved once per session; each test tampers
with its own copy.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verifier.certs import format as fmt
from verifier.certs import manifest as mf
from verifier.certs.gate import FAIL, PASS, run_gate
from verifier.cli.main import main

K = Path(__file__).resolve().parents[2] / "kernels"

FILES = {
    "vector_add": ["lineinfo.toml", "vec4.toml", "vector_add.ptx", "vector_add.lineinfo.ptx",
                   "vector_add_vec4.ptx"],
}
CARRY_SAVE = Path(__file__).resolve().parents[1] / "data" / "carry_save"
MANIFEST = """\
proofs = "proofs"
specs = ["kernels/*/*.toml"]

[[pair]]
spec = "kernels/vector_add/lineinfo.toml"
set = { n = 300 }

[[pair]]
spec = "kernels/vector_add/vec4.toml"
set = { n = 8 }

[[pair]]
spec = "kernels/bits/pair.toml"
set = { n = 8 }
"""
PAIRS = ("bits/carry_save", "vector_add/lineinfo", "vector_add/vec4")


@pytest.fixture(scope="session")
def proved(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("ws")
    for family, names in FILES.items():
        (ws / "kernels" / family).mkdir(parents=True)
        for n in names:
            shutil.copy(K / family / n, ws / "kernels" / family / n)
    shutil.copytree(CARRY_SAVE, ws / "kernels" / "bits")
    (ws / "keq.toml").write_text(MANIFEST)
    assert main(["prove", "--manifest", str(ws / "keq.toml")]) == 0
    return ws


@pytest.fixture
def ws(proved, tmp_path) -> Path:
    dst = tmp_path / "ws"
    shutil.copytree(proved, dst)
    return dst


def gate(ws: Path, **kw):
    rep = run_gate(mf.load(ws / "keq.toml"), **kw)
    return {r.name: r for r in rep.results if r.name in PAIRS}, rep


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


def cert_file(ws: Path, name: str) -> Path:
    return ws / "proofs" / f"{name}.json"


def edit_cert(ws: Path, name: str, change, rehash: bool) -> None:
    """Apply `change` to the certificate's JSON; with `rehash`, recompute its hash as a careful
    forger would."""
    p = cert_file(ws, name)
    cert = json.loads(p.read_text())
    change(cert)
    if rehash:
        cert["certificate_sha256"] = fmt.body_sha256(cert)
    p.write_text(json.dumps(cert, indent=1, sort_keys=True))


# -- a fresh proof passes -----------------------------------------------------------------------

def test_fresh_proofs_pass_and_the_other_specs_are_listed(ws):
    results, rep = gate(ws)
    assert rep.ok and {r.status for r in results.values()} == {PASS}
    assert set(results) == set(PAIRS)
    others = {r.spec: (r.status, r.note) for r in rep.results if r.name not in PAIRS}
    assert others == {}          # the copied specs are all expected equivalent and gated


def test_layout_and_evidence_of_the_written_certificates(proved):
    cs = json.loads(cert_file(proved, "bits/carry_save").read_text())
    va = json.loads(cert_file(proved, "vector_add/vec4").read_text())
    assert va["obligations"] == [] and va["verdict"]["evidence"] == [fmt.IDENTICAL_TERMS]
    assert va["claim"]["fixed"] == {"n": 8} and va["pair"]["spec"]["path"] == \
        "kernels/vector_add/vec4.toml"
    (ob,) = cs["obligations"]
    assert ob["answer"] == "unsat"
    f = cert_file(proved, "bits/carry_save").parent / ob["file"]
    assert f.name == f"{ob['sha256']}.smt2.gz"
    assert "(check-sat)" in gzip.decompress(f.read_bytes()).decode()


def test_comment_and_whitespace_edits_do_not_make_a_certificate_stale(ws):
    ptx = ws / "kernels/bits/carry_save.ptx"
    ptx.write_text("// a new comment\n" + ptx.read_text().replace("\t", "    "))
    spec = ws / "kernels/bits/pair.toml"
    spec.write_text("# reviewed\n" + spec.read_text())
    results, rep = gate(ws)
    assert rep.ok, results["bits/carry_save"].findings


# -- tampering ----------------------------------------------------------------------------------

def test_changed_kernel_is_stale(ws):
    ptx = ws / "kernels/bits/carry_save.ptx"
    text = ptx.read_text()
    assert "add.s32 \t%r11, %r10, %r8;" in text
    ptx.write_text(text.replace("add.s32 \t%r11, %r10, %r8;", "sub.s32 \t%r11, %r10, %r8;"))
    results, rep = gate(ws)
    assert not rep.ok
    r = results["bits/carry_save"]
    assert r.status == FAIL and codes(r) == ["stale"]
    assert "candidate kernel kernels/bits/carry_save.ptx changed" in r.findings[0].message
    assert results["vector_add/vec4"].status == PASS


def test_changed_spec_is_stale(ws):
    spec = ws / "kernels/vector_add/vec4.toml"
    spec.write_text(spec.read_text().replace("range = [1, 2048]", "range = [1, 4096]"))
    results, _ = gate(ws)
    r = results["vector_add/vec4"]
    assert codes(r) == ["stale"] and "spec kernels/vector_add/vec4.toml changed" in \
        r.findings[0].message


def test_changed_semantics_is_stale(ws, monkeypatch):
    import verifier.certs.check as check
    monkeypatch.setattr(check, "semantics_sha256", lambda: "0" * 64)
    results, _ = gate(ws)
    assert all(codes(r) == ["stale"] and "semantics changed" in r.findings[0].message
               for r in results.values())


def test_claim_that_differs_from_the_manifest_is_stale(ws):
    m = ws / "keq.toml"
    m.write_text(m.read_text().replace("set = { n = 8 }", "set = { n = 12 }"))
    results, _ = gate(ws)
    r = results["vector_add/vec4"]
    assert codes(r) == ["stale"]
    assert "certificate fixes {n=8}, manifest {n=12}" in r.findings[0].message


def test_edited_verdict_is_caught_by_the_certificate_hash(ws):
    edit_cert(ws, "vector_add/vec4", lambda c: c["verdict"].update(launch_shapes=2),
              rehash=False)
    results, _ = gate(ws)
    assert codes(results["vector_add/vec4"]) == ["edited"]


def test_edited_hash_is_caught(ws):
    edit_cert(ws, "vector_add/vec4", lambda c: c.update(certificate_sha256="ab" * 32),
              rehash=False)
    results, _ = gate(ws)
    assert codes(results["vector_add/vec4"]) == ["edited"]


def test_edited_kernel_hash_with_a_recomputed_certificate_hash_is_stale(ws):
    edit_cert(ws, "vector_add/vec4",
              lambda c: c["pair"]["candidate"].update(sha256="cd" * 32), rehash=True)
    results, _ = gate(ws)
    assert codes(results["vector_add/vec4"]) == ["stale"]


def test_inconclusive_verdict_fails_as_not_equivalent(ws, monkeypatch):
    # What verify answers is not under test here (its reach changes): stand in an Inconclusive.
    import verifier.api as api

    def inconclusive(spec, **kw):
        return api.Verdict(api.INCONCLUSIVE, "vec4 claim", ("too many launch shapes",))
    monkeypatch.setattr(api, "verify", inconclusive)
    m = ws / "keq.toml"
    assert main(["prove", "--manifest", str(m), str(ws / "kernels/vector_add/vec4.toml")]) == 2
    results, _ = gate(ws)
    r = results["vector_add/vec4"]
    assert codes(r) == ["not-equivalent"]
    assert r.findings[0].message == "certified verdict is inconclusive: too many launch shapes"
    assert results["bits/carry_save"].status == PASS


def test_fuzz_evidence_is_recorded_and_a_recorded_difference_fails(ws, capsys):
    m = str(ws / "keq.toml")
    assert main(["prove", "--manifest", m, "--fuzz", "5", "--json",
                 str(ws / "kernels/vector_add/lineinfo.toml")]) == 0
    (rec,) = json.loads(capsys.readouterr().out)["certificates"]
    assert rec["fuzz"]["examples"] == 5 and rec["fuzz"]["difference"] is None
    assert rec["fuzz"]["backend"].startswith("emulator")
    results, rep = gate(ws)
    assert rep.ok
    edit_cert(ws, "vector_add/lineinfo", lambda c: c["fuzz"].update(difference="c[3]"),
              rehash=True)
    results, _ = gate(ws)
    assert codes(results["vector_add/lineinfo"]) == ["fuzz-difference"]


def test_deleted_certificate_is_missing(ws):
    cert_file(ws, "vector_add/lineinfo").unlink()
    results, _ = gate(ws)
    r = results["vector_add/lineinfo"]
    assert codes(r) == ["missing"] and "keq prove --manifest keq.toml" in r.findings[0].message


def test_certificate_for_another_pair_is_rejected(ws):
    shutil.copy(cert_file(ws, "vector_add/vec4"), cert_file(ws, "vector_add/lineinfo"))
    results, _ = gate(ws)
    r = results["vector_add/lineinfo"]
    assert codes(r) == ["wrong-pair"] and "certificate is for vector_add/vec4" in \
        r.findings[0].message


def test_two_specs_with_one_pair_name_both_fail(ws, capsys):
    src = ws / "kernels/vector_add/vec4.toml"
    shutil.copy(src, src.with_name("copy_of_vec4.toml"))
    results, rep = gate(ws)
    dup = [r for r in rep.results if r.name == "vector_add/vec4"]
    assert len(dup) == 2 and all("spec-error" in codes(r) for r in dup)
    named = {r.spec: r.findings[-1].message.split("is also the name of ")[1].split(":")[0]
             for r in dup}
    assert named == {"kernels/vector_add/vec4.toml": "kernels/vector_add/copy_of_vec4.toml",
                     "kernels/vector_add/copy_of_vec4.toml": "kernels/vector_add/vec4.toml"}
    # and keq prove refuses them before proving anything (one would overwrite the other)
    before = cert_file(ws, "vector_add/vec4").read_bytes()
    assert main(["prove", "--manifest", str(ws / "keq.toml")]) == 3
    assert "both name the pair 'vector_add/vec4'" in capsys.readouterr().err
    assert cert_file(ws, "vector_add/vec4").read_bytes() == before


def test_malformed_certificates(ws):
    cert_file(ws, "vector_add/lineinfo").write_text('{"format": "keq-certificate",')
    edit_cert(ws, "vector_add/vec4", lambda c: c.pop("claim"), rehash=True)
    results, _ = gate(ws)
    assert codes(results["vector_add/lineinfo"]) == ["malformed"]
    r = results["vector_add/vec4"]
    assert codes(r) == ["malformed"] and "'claim' is a required property" in \
        r.findings[0].message


def test_changed_obligation_file_is_caught_by_gate_and_check(ws, capsys):
    cert = json.loads(cert_file(ws, "bits/carry_save").read_text())
    f = cert_file(ws, "bits/carry_save").parent / cert["obligations"][0]["file"]
    text = gzip.decompress(f.read_bytes()).decode()
    text = text.replace("(check-sat)", "(assert false)\n(check-sat)")
    f.write_bytes(gzip.compress(text.encode()))
    results, _ = gate(ws)
    r = results["bits/carry_save"]
    assert codes(r) == ["edited"] and "does not hash to the certified" in r.findings[0].message
    assert main(["check", "--root", str(ws), str(cert_file(ws, "bits/carry_save"))]) == 1
    assert "does not hash to the certified" in capsys.readouterr().out


def _forge_obligation(ws: Path, change_answer: str | None = None) -> None:
    """Replace the stored obligation by another valid text and make every hash consistent: only
    re-deriving the obligations from the kernels can tell."""
    p = cert_file(ws, "bits/carry_save")
    cert = json.loads(p.read_text())
    ob = cert["obligations"][0]
    old = p.parent / ob["file"]
    text = gzip.decompress(old.read_bytes()).decode()
    if change_answer is None:
        text = text.replace("(check-sat)", "(assert true)\n(check-sat)")
        from verifier.certs.hashing import sha256_text
        from verifier.certs.store import compress
        ob["sha256"] = sha256_text(text)
        ob["file"] = f"{old.parent.name}/{ob['sha256']}.smt2.gz"
        old.unlink()
        (p.parent / ob["file"]).write_bytes(compress(text))
    else:
        ob["answer"] = change_answer
    cert["certificate_sha256"] = fmt.body_sha256(cert)
    p.write_text(json.dumps(cert, indent=1, sort_keys=True))


def test_check_catches_obligations_that_no_longer_match_the_kernels(ws, capsys):
    _forge_obligation(ws)
    results, rep = gate(ws)
    assert rep.ok                         # every hash is consistent: the static gate passes
    assert main(["check", "--root", str(ws), str(cert_file(ws, "bits/carry_save"))]) == 1
    out = capsys.readouterr().out
    assert "recheck: the obligations derived from the kernels now differ from the certified " \
           "ones (1 new, 1 certified but not derived" in out
    results, rep = gate(ws, do_recheck=True)
    assert codes(results["bits/carry_save"]) == ["recheck"]


def test_check_catches_a_forged_answer_by_re_solving(ws, capsys):
    _forge_obligation(ws, change_answer="sat")
    assert main(["check", "--root", str(ws), "--json",
                 str(cert_file(ws, "bits/carry_save"))]) == 1
    res = json.loads(capsys.readouterr().out)["results"][0]
    assert [f["code"] for f in res["findings"]] == ["recheck"]
    msg = res["findings"][0]["message"]
    assert "answers unsat, the certificate says" in msg and msg.endswith(": sat")
    (r,) = res["resolved"]
    assert r["answer"] == "unsat" and r["solver"] != r["recorded"]


# -- the independent re-check on fresh proofs ---------------------------------------------------

def test_check_confirms_fresh_certificates_with_another_solver(ws, capsys):
    certs = [str(cert_file(ws, n)) for n in PAIRS]
    assert main(["check", "--root", str(ws), "--json", *certs]) == 0
    out = json.loads(capsys.readouterr().out)
    by = {r["pair"]: r for r in out["results"]}
    (r,) = by["bits/carry_save"]["resolved"]
    assert r["independent"] and r["answer"] == "unsat" and r["solver"] != r["recorded"]
    assert by["vector_add/vec4"]["resolved"] == []
    assert any("identical output terms re-derived" in n for n in by["vector_add/vec4"]["notes"])


def test_check_finds_the_root_above_the_certificate(ws, monkeypatch, capsys):
    monkeypatch.chdir(ws / "proofs")
    assert main(["check", "vector_add/vec4.json"]) == 0
    assert capsys.readouterr().out.startswith("OK    vector_add/vec4")


# -- signatures ---------------------------------------------------------------------------------

def test_signatures(ws, tmp_path, capsys):
    pytest.importorskip("nacl", reason="PyNaCl (the `sign` extra) is not installed")
    keys, other = tmp_path / "trusted", tmp_path / "other"
    keys.mkdir()
    other.mkdir()
    assert main(["prove", "--new-key", str(keys / "ci")]) == 0
    assert main(["prove", "--new-key", str(other / "eve")]) == 0
    assert (keys / "ci").stat().st_mode & 0o777 == 0o600
    (keys / "ci").rename(tmp_path / "ci.key")          # only the public key is trusted
    m = str(ws / "keq.toml")
    # unsigned certificates fail under --trusted-keys
    results, rep = gate(ws, trusted=_trusted(keys))
    assert all(codes(r) == ["signature"] for r in results.values())
    assert "unsigned" in results["vector_add/vec4"].findings[0].message
    # signed by the trusted key: pass
    assert main(["prove", "--manifest", m, "--sign-key", str(tmp_path / "ci.key")]) == 0
    capsys.readouterr()
    results, rep = gate(ws, trusted=_trusted(keys))
    assert rep.ok, [r.findings for r in results.values()]
    # edited after signing, even with the certificate hash recomputed: bad signature
    edit_cert(ws, "vector_add/vec4", lambda c: c["verdict"].update(launch_shapes=2),
              rehash=True)
    # signed by a key that is not trusted
    assert main(["prove", "--manifest", m, "--sign-key", str(other / "eve"),
                 str(ws / "kernels/vector_add/lineinfo.toml")]) == 0
    results, rep = gate(ws, trusted=_trusted(keys))
    assert codes(results["vector_add/vec4"]) == ["signature"]
    assert results["vector_add/vec4"].findings[0].message.startswith("bad signature")
    assert codes(results["vector_add/lineinfo"]) == ["signature"]
    assert "untrusted key" in results["vector_add/lineinfo"].findings[0].message
    assert results["bits/carry_save"].status == PASS
    assert main(["gate", "--manifest", m, "--trusted-keys", str(keys)]) == 1


def _trusted(d: Path):
    from verifier.certs.signing import trusted_keys
    return trusted_keys(d)


# -- reports, exit codes, bad input ---------------------------------------------------------------

def test_gate_cli_reports_junit_sarif_and_json(ws, capsys):
    cert_file(ws, "vector_add/lineinfo").unlink()
    junit, sarif = ws / "gate.xml", ws / "gate.sarif"
    rc = main(["gate", "--manifest", str(ws / "keq.toml"), "--junit", str(junit),
               "--sarif", str(sarif), "--json"])
    assert rc == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] is False and rep["counts"] == {"pass": 2, "fail": 1, "excluded": 0,
                                                    "not-gated": 0}
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["vector_add/lineinfo"]
    assert failed[0].find("failure").get("type") == "missing"
    s = json.loads(sarif.read_text())
    assert s["version"] == "2.1.0"
    (res,) = s["runs"][0]["results"]
    assert res["ruleId"] == "keq/missing" and res["level"] == "error"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "kernels/vector_add/lineinfo.toml"
    rule_ids = [r["id"] for r in s["runs"][0]["tool"]["driver"]["rules"]]
    assert rule_ids[res["ruleIndex"]] == "keq/missing"


def test_gate_text_names_each_failing_pair_and_why(ws, capsys):
    cert_file(ws, "vector_add/lineinfo").unlink()
    assert main(["gate", "--manifest", str(ws / "keq.toml")]) == 1
    out = capsys.readouterr().out
    assert "1 failed" in out and "FAIL      vector_add/lineinfo" in out
    assert "missing: no certificate at proofs/vector_add/lineinfo.json" in out


@pytest.mark.parametrize("text,where,message", [
    ('proofs = "proofs"\nspecz = []\n', ":2:1: error: unknown key 'specz'", None),
    ('[[pair]]\nspec = "nope.toml"\n', ":2:8: error: no such spec: nope.toml", None),
    ('[[exclude]]\nspec = "kernels/vector_add/vec4.toml"\n', ":1:", "needs `spec` and a "
                                                                   "non-empty `reason`"),
    ('specs = ["kernels/none/*.toml"]\n', ":1:10: error: 'kernels/none/*.toml' matches no "
                                          "file", None),
    ('proofs = \n', ":1:", "not TOML"),
])
def test_bad_manifest_is_a_located_error_exit_3(ws, capsys, text, where, message):
    (ws / "keq.toml").write_text(text)
    assert main(["gate", "--manifest", str(ws / "keq.toml")]) == 3
    err = capsys.readouterr().err
    assert f"keq.toml{where}" in err and "Traceback" not in err
    if message:
        assert message in err


def test_check_of_a_malformed_certificate_is_a_located_error_exit_3(ws, capsys):
    p = cert_file(ws, "vector_add/vec4")
    p.write_text(p.read_text().replace('"kind": "equivalent"', '"kind": "proved"'))
    assert main(["check", "--root", str(ws), str(p)]) == 3
    err = capsys.readouterr().err
    assert "vec4.json:" in err and "verdict.kind: 'proved' is not one of" in err
    assert "Traceback" not in err


def test_no_manifest_is_exit_3(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["gate"]) == 3
    assert "no manifest in" in capsys.readouterr().err


# -- pytest plugin ------------------------------------------------------------------------------

def test_pytest_plugin_turns_the_gate_into_tests(ws):
    cert_file(ws, "vector_add/lineinfo").unlink()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--rootdir", str(ws), "--keq-gate", "--keq-manifest",
                        str(ws / "keq.toml"), str(ws / "keq.toml")],
                       cwd=ws, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 2 passed" in r.stdout
    assert "FAILED keq.toml::vector_add/lineinfo" in r.stdout
