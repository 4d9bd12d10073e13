"""`keq rule` (verifier/rules): the rule corpus kernels/rules/peephole.rules reaches every
expected verdict with keq's one semantics, refutations carry register values on which the
emulator's outputs differ, valid bit-vector rules are re-checked through pysmt and cvc5,
and bad rule files are located errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from semantics.errors import KeqError
from verifier.cli.main import main
from verifier.rules import RuleError, RuleVerdict, check_rule, load_rules

CORPUS = Path(__file__).resolve().parents[2] / "kernels" / "rules" / "peephole.rules"


@pytest.fixture(scope="module")
def results():
    return [check_rule(r, timeout_s=60) for r in load_rules(CORPUS)]


def test_the_corpus_reaches_every_expected_verdict(results):
    assert len(results) >= 40
    wrong = [(r.rule.name, r.verdict, r.reason) for r in results if r.verdict != r.rule.expect]
    assert not wrong
    assert sum(r.verdict == RuleVerdict.INVALID for r in results) >= 10


def test_refutations_name_register_values_the_emulator_separates(results):
    for r in results:
        if r.verdict == RuleVerdict.INVALID:
            assert r.inputs and r.source_out and r.source_out != r.target_out, r.rule.name


def test_valid_bit_vector_rules_are_rechecked_through_pysmt(results):
    valid = [r for r in results if r.verdict == RuleVerdict.VALID]
    rechecked = [r for r in valid if r.recheck == "pysmt/cvc5: unsat"]
    assert len(rechecked) >= 30
    floats = [r for r in valid if "f32" in dict(r.rule.inputs).values()]
    assert floats and all("QF_BVFP" in r.recheck for r in floats)


def _rules(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "r.toml"
    p.write_text(text)
    return p


RULE = '''
[[rule]]
name = "r"
inputs = { a = "u32", b = "u32" }
outputs = { d = "u32" }
source = "div.u32 %d, %a, %b;"
target = "mov.u32 %d, %a;"
'''


def test_undefined_behaviour_on_a_side_is_inconclusive_named(tmp_path):
    (rule,) = load_rules(_rules(tmp_path, RULE))
    r = check_rule(rule)
    assert r.verdict == RuleVerdict.INCONCLUSIVE and "division by zero" in r.reason


@pytest.mark.parametrize("edit, message", [
    (("inputs = {", 'colour = 1\ninputs = {'), "unknown key(s) colour"),
    (('"u32", b', '"u33", b'), "has no PTX type 'u33'"),
    (('outputs = { d = "u32" }\n', ""), "needs `inputs` and `outputs`"),
    (('name = "r"', "name = 3"), "`name` must be a str"),
])
def test_bad_rule_files_are_located_errors(tmp_path, edit, message):
    with pytest.raises(RuleError, match=re.escape(message)) as e:
        load_rules(_rules(tmp_path, RULE.replace(*edit)))
    assert str(e.value).startswith(f"{tmp_path / 'r.toml'}:2:1: error:")


def test_a_sequence_that_does_not_parse_names_its_rule(tmp_path):
    (rule,) = load_rules(_rules(tmp_path, RULE.replace("mov.u32 %d, %a;", "mov.u32 %d %a;")))
    with pytest.raises(KeqError, match="rule 'r'"):
        check_rule(rule)


def test_the_command_exits_by_the_verdicts_and_prints_json(tmp_path, capsys):
    invalid = RULE.replace("div.u32 %d, %a, %b;", "add.u32 %d, %a, %b;")
    assert main(["rule", str(_rules(tmp_path, invalid))]) == 1
    out = capsys.readouterr().out
    assert "INVALID" in out and "given   %a = " in out
    assert main(["rule", "--json", str(_rules(tmp_path, invalid + 'expect = "invalid"\n'))]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["verdict"] == "invalid" and row["expect"] == "invalid" and row["inputs"]
    assert main(["rule", str(tmp_path / "missing.toml")]) == 3
