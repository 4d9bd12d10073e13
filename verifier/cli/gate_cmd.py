"""`keq gate`: fail unless every gated pair has a valid, fresh, Equivalent certificate."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from verifier.cli.cluster_options import add_cluster_options, executor_of, wants_progress

EXIT_OK, EXIT_FAIL = 0, 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gate", help="fail unless every gated pair has a valid, fresh, Equivalent certificate",
        description="Read the manifest ([tool.keq] in pyproject.toml, or keq.toml): the pair "
                    "specs to gate, their claims, and the proofs directory. Each gated pair "
                    "fails, named with its reasons, when its certificate is missing, "
                    "malformed, edited by hand (hashes no longer match), for another pair, "
                    "stale (a kernel, the spec, keq's semantics or the claim changed), not "
                    "Equivalent, not signed by a trusted key (--trusted-keys), or, with "
                    "--recheck, not confirmed by re-deriving and re-solving its obligations. "
                    "Specs whose expect is not 'equivalent' and excluded specs are listed, "
                    "never silently skipped.",
        epilog="exit codes: 0 every gated pair passes, 1 some fail, 3 bad manifest or usage")
    p.add_argument("--manifest", metavar="FILE",
                   help="default: ./keq.toml, else ./pyproject.toml with [tool.keq]")
    p.add_argument("--recheck", action="store_true",
                   help="also re-derive and re-solve every obligation (keq check per pair)")
    p.add_argument("--recheck-timeout", type=float, metavar="S",
                   help="per-solver timeout when re-checking (default: each certificate's)")
    p.add_argument("--trusted-keys", metavar="DIR",
                   help="require each certificate signed by a key in DIR/*.pub")
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    p.add_argument("--sarif", metavar="FILE", help="write a SARIF 2.1.0 report")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_cluster_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verifier.certs import manifest as mf
    from verifier.certs import reports
    from verifier.certs.gate import run_gate
    m = mf.load(args.manifest or mf.find_manifest())
    trusted = None
    if args.trusted_keys:
        from verifier.certs.signing import trusted_keys
        trusted = trusted_keys(args.trusted_keys)
    executor = executor_of(args)
    try:
        rep = run_gate(m, do_recheck=args.recheck, trusted=trusted,
                       progress=wants_progress(args), recheck_timeout_s=args.recheck_timeout,
                       executor=executor)
    finally:
        executor.close()
    if args.junit:
        Path(args.junit).write_text(reports.junit(rep))
    if args.sarif:
        Path(args.sarif).write_text(reports.sarif_text(rep))
    if args.json:
        print(json.dumps(reports.to_json(rep), indent=2))
    else:
        print(reports.text(rep))
    return EXIT_OK if rep.ok else EXIT_FAIL
