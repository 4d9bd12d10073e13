"""`keq check CERT.json...`: independently re-check certificates."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

EXIT_OK, EXIT_DISAGREE = 0, 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check", help="re-derive and re-solve a certificate's obligations (independent check)",
        description="For each certificate: check its own hash (and signature, with "
                    "--trusted-keys), that the kernels, spec and keq's semantics still hash as "
                    "certified, that each stored obligation file matches its hash; then re-run "
                    "verify on the certified claim, require the same verdict and the same set "
                    "of obligation hashes, and re-solve every stored obligation with a solver "
                    "other than the one that answered (bitwuzla or cvc5 for z3, z3 for them). "
                    "The verdict may be any kind: check confirms the certificate, the gate "
                    "decides whether Equivalent is required. "
                    "Certificates without stored obligations (identical output terms, mode "
                    "real) are re-derived by re-running verify; the output says so.",
        epilog="exit codes: 0 everything agrees, 1 a check disagrees, 3 unreadable "
               "certificate or bad input")
    p.add_argument("certs", nargs="+", metavar="CERT.json")
    p.add_argument("--root", metavar="DIR",
                   help="resolve the certificate's paths under DIR (default: the current "
                        "directory, else the nearest directory above the certificate)")
    p.add_argument("--trusted-keys", metavar="DIR",
                   help="also require a valid signature by a key in DIR/*.pub")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="per-solver timeout (default: the certificate's)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(run=run)


def check_one(cert_file: Path, root: Path | None, trusted, timeout) -> dict:
    from verifier.certs import format as fmt
    from verifier.certs.check import NOT_EQUIVALENT, find_spec, recheck, static_findings
    from verifier.spec import load_spec
    cert = fmt.load(cert_file)
    root_dir, spec_path = find_spec(cert, cert_file, root)
    spec = load_spec(spec_path)
    # The verdict itself is not checked here (a not-equivalent certificate can be right);
    # whether it is the one a gate wants is `keq gate`'s business.
    findings = [f for f in static_findings(cert, cert_file, spec=spec, spec_path=spec_path,
                                           rel=None, expected_fixed=None, trusted=trusted)
                if f.code != NOT_EQUIVALENT]
    notes: list[str] = []
    resolved = []
    stale = any(f.code in ("stale", "wrong-pair") for f in findings)
    if stale:
        notes.append("not re-derived: the certificate is stale (re-prove it)")
    else:
        r = recheck(cert, cert_file, spec, timeout_s=timeout)
        findings = findings + [f for f in r.findings if f not in findings]
        notes.extend(r.notes)
        resolved = r.resolved
    return {"certificate": str(cert_file), "pair": cert["pair"]["name"],
            "verdict": cert["verdict"]["kind"], "ok": not findings,
            "findings": [{"code": f.code, "message": f.message} for f in findings],
            "resolved": [{"sha256": x.sha256, "recorded": x.recorded, "solver": x.solver,
                          "answer": x.answer, "independent": x.independent,
                          "detail": x.detail}
                         for x in resolved],
            "notes": notes}


def run(args: argparse.Namespace) -> int:
    trusted = None
    if args.trusted_keys:
        from verifier.certs.signing import trusted_keys
        trusted = trusted_keys(args.trusted_keys)
    root = Path(args.root).resolve() if args.root else None
    results = [check_one(Path(c), root, trusted, args.timeout) for c in args.certs]
    if args.json:
        print(json.dumps({"ok": all(r["ok"] for r in results), "results": results}, indent=2))
    else:
        for r in results:
            n = len(r["resolved"])
            ind = sum(x["independent"] for x in r["resolved"])
            head = "OK   " if r["ok"] else "FAIL "
            print(f"{head} {r['pair']}  {r['certificate']}  (verdict {r['verdict']}; "
                  f"{ind}/{n} obligation(s) re-solved by another solver)")
            for x in r["resolved"]:
                tried = f"  (before: {x['detail']})" if x["detail"] else ""
                print(f"      {x['sha256'][:12]}...  certified {x['recorded']}, "
                      f"{x['solver'] or 'no solver'}: {x['answer']}{tried}")
            for f in r["findings"]:
                print(f"      {f['code']}: {f['message']}")
            for note in r["notes"]:
                print(f"      note: {note}")
    return EXIT_OK if all(r["ok"] for r in results) else EXIT_DISAGREE
