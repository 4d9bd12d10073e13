"""Peephole rewrite rules over PTX, proved or refuted with keq's one semantics (`keq rule`;
docs/rules.md): `model` (the rule file), `check` (the proof)."""

from verifier.rules.check import RuleResult, RuleVerdict, check_rule
from verifier.rules.model import Rule, RuleError, load_rules

__all__ = ["Rule", "RuleError", "RuleResult", "RuleVerdict", "check_rule", "load_rules"]
