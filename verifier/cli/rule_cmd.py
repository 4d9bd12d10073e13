"""`keq rule FILE...`: prove or refute peephole rewrite rules over PTX (`verifier.rules`)."""

from __future__ import annotations

import argparse
import json

from verifier.rules import RuleVerdict, check_rule, load_rules
from verifier.solvers import DEFAULT_SOLVERS, Cache

EXIT = {RuleVerdict.VALID: 0, RuleVerdict.INVALID: 1, RuleVerdict.INCONCLUSIVE: 2}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rule", help="prove a peephole rewrite of PTX instruction sequences, or refute it",
        description="Each [[rule]] of the TOML files: for every bit pattern of its inputs "
                    "(where its precondition holds), the target sequence leaves every output "
                    "register bit for bit as the source does, under keq's semantics (the "
                    "same as `keq verify`'s). VALID when the solvers prove it; INVALID with "
                    "concrete register values, replayed on the emulator; INCONCLUSIVE, named, "
                    "otherwise. A rule's `expect` (valid | invalid) is checked too. The rule "
                    "format: docs/rules.md; a corpus: kernels/rules/.",
        epilog="exit codes: 0 every rule valid or as expected, 1 a rule invalid (or not as "
               "expected), 2 a rule inconclusive, 3 bad input")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="solver timeout per rule in seconds (default 60)")
    p.add_argument("--solver", action="append", dest="solvers", metavar="NAME",
                   help=f"use this solver (repeatable; default: {', '.join(DEFAULT_SOLVERS)})")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(run=run)


def _hex(pairs) -> str:
    return ", ".join(f"%{n} = {v:#x}" for n, v in pairs)


def run(args: argparse.Namespace) -> int:
    rules = [r for f in args.files for r in load_rules(f)]
    cache = Cache()
    results, worst = [], 0
    for rule in rules:
        res = check_rule(rule, solvers=tuple(args.solvers or DEFAULT_SOLVERS),
                         timeout_s=args.timeout, cache=cache)
        results.append(res)
        code = EXIT[res.verdict]
        if rule.expect:
            code = 0 if res.verdict == rule.expect else max(code, 1)
        worst = max(worst, code)
        if not args.json:
            tag = res.verdict.upper() + ("" if not rule.expect else
                                         " (as expected)" if res.verdict == rule.expect else
                                         f" (EXPECTED {rule.expect.upper()})")
            print(f"{tag:28} {rule.name}  ({res.seconds:.2f} s)  {rule.loc}")
            if res.reason:
                print(f"    {res.reason}")
            if res.recheck:
                print(f"    re-checked independently: {res.recheck}")
            if res.verdict == RuleVerdict.INVALID:
                print(f"    given   {_hex(res.inputs)}\n    source  {_hex(res.source_out)}\n"
                      f"    target  {_hex(res.target_out)}")
    if args.json:
        print(json.dumps([{"name": r.rule.name, "location": str(r.rule.loc),
                           "verdict": str(r.verdict), "expect": r.rule.expect or None,
                           "reason": r.reason, "inputs": dict(r.inputs),
                           "source": dict(r.source_out), "target": dict(r.target_out),
                           "solver": r.solver, "recheck": r.recheck or None,
                           "seconds": round(r.seconds, 3)}
                          for r in results], indent=1))
    else:
        counts = {v: sum(r.verdict == v for r in results) for v in RuleVerdict}
        print(f"{len(results)} rule(s): {counts[RuleVerdict.VALID]} valid, "
              f"{counts[RuleVerdict.INVALID]} invalid, {counts[RuleVerdict.INCONCLUSIVE]} "
              f"inconclusive")
    return worst
