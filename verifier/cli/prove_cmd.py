"""`keq prove SPEC.toml...` / `keq prove --manifest FILE`: verify pairs and write certificates."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from semantics.errors import KeqError

EXIT_OK, EXIT_NOT_EQUIVALENT, EXIT_INCONCLUSIVE, EXIT_BAD_INPUT = 0, 1, 2, 3


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prove", help="verify kernel pairs and write proof certificates",
        description="Run `keq verify` on each pair and write its certificate (deterministic "
                    "JSON: hashes of the kernels, the spec and keq's semantics, the claim, the "
                    "verdict, every solver obligation) to PROOFS/<pair name>.json, with the "
                    "obligations' SMT-LIB2 text beside it (gzip). With --manifest and no "
                    "SPEC, (re)proves every pair the manifest gates, each under its manifest "
                    "claim: the one command to regenerate all proofs. Every verdict is "
                    "written (a not-equivalent certificate fails the gate, as it should).",
        epilog="examples:\n"
               "  keq prove --manifest pyproject.toml            # every gated pair\n"
               "  keq prove --manifest pyproject.toml kernels/vector_add/vec4.toml\n"
               "  keq prove kernels/vector_add/vec4.toml --set n=1001 --out proofs\n"
               "exit codes: 0 every verdict equivalent, 1 some not equivalent, 2 some "
               "inconclusive, 3 bad input",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", nargs="*", metavar="SPEC.toml")
    p.add_argument("--manifest", metavar="FILE",
                   help="keq.toml or pyproject.toml with [tool.keq]: claims, proofs dir, root")
    p.add_argument("--out", metavar="DIR",
                   help="proofs directory (default: the manifest's, else ./proofs)")
    p.add_argument("--root", metavar="DIR",
                   help="paths in certificates are relative to DIR (default: the manifest's "
                        "directory, else the current directory)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="sets",
                   help="without --manifest: fix a scalar (repeatable; restricts the claim)")
    p.add_argument("--max-shapes", type=int, default=16, metavar="N")
    p.add_argument("--unroll", type=int, default=64, metavar="N")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S")
    p.add_argument("--trials", type=int, default=8, metavar="N")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fuzz", type=int, default=0, metavar="N",
                   help="also fuzz N examples and record the evidence (default: no fuzzing)")
    p.add_argument("--fuzz-backend", default="emulator", choices=("emulator", "pycuda"))
    p.add_argument("--sign-key", metavar="KEY",
                   help="sign each certificate with this ed25519 private key (needs PyNaCl)")
    p.add_argument("--new-key", metavar="KEY",
                   help="write a new ed25519 key pair to KEY and KEY.pub, then exit")
    p.add_argument("--json", action="store_true", help="one JSON object per run")
    p.set_defaults(run=run)


@dataclass(frozen=True)
class _Job:
    path: Path
    sets: dict | list                  # manifest `set` table or --set strings
    options: dict                      # ClaimOptions fields other than `fixed`


def _jobs(args) -> tuple[list[_Job], Path, Path]:
    """The pairs to prove, the proofs directory and the root."""
    from verifier.certs import manifest as mf
    if args.manifest:
        m = mf.load(args.manifest)
        if args.sets:
            raise KeqError("--set with --manifest: the manifest's [[pair]] `set` is the claim")
        known = {e.spec for e in m.entries}
        wanted = [Path(s).resolve() for s in args.specs]
        for w in wanted:
            if w not in known:
                raise KeqError(f"{w}: not in the manifest {m.path.name}; add a [[pair]] for it")
        jobs = []
        for e in m.entries:
            if (wanted and e.spec not in wanted) or e.rel in m.excluded:
                continue
            if not wanted and e.rel not in m.explicit and _expect(e.spec) != "equivalent":
                continue
            jobs.append(_Job(e.spec, e.sets, dict(
                max_shapes=e.max_shapes, unroll=e.unroll, timeout_s=e.timeout_s,
                trials=e.trials, seed=e.seed)))
        return (jobs, Path(args.out).resolve() if args.out else m.proofs,
                Path(args.root).resolve() if args.root else m.root)
    if not args.specs:
        raise KeqError("keq prove needs SPEC.toml... or --manifest FILE")
    opts = dict(max_shapes=args.max_shapes, unroll=args.unroll, timeout_s=args.timeout,
                trials=args.trials, seed=args.seed)
    jobs = [_Job(Path(s).resolve(), list(args.sets), opts) for s in args.specs]
    return jobs, Path(args.out or "proofs").resolve(), Path(args.root or ".").resolve()


def _distinct_names(jobs: list[_Job]) -> list:
    """Load every spec first: two specs with one pair name would overwrite each other's
    certificate, so that is refused before anything is proved."""
    from verifier.spec import load_spec
    specs, seen = [], {}
    for job in jobs:
        spec = load_spec(job.path)
        if spec.name in seen:
            raise KeqError(f"{seen[spec.name]} and {job.path} both name the pair "
                           f"{spec.name!r}; certificates are stored by pair name: rename one")
        seen[spec.name] = job.path
        specs.append(spec)
    return specs


def _expect(path: Path) -> str:
    from verifier.spec import load_spec
    return load_spec(path).expect


def run(args: argparse.Namespace) -> int:
    from verifier.certs import prove
    from verifier.certs.format import ClaimOptions
    if args.new_key:
        from verifier.certs.signing import new_key
        key, pub = new_key(args.new_key)
        print(f"wrote {key} (private, keep it secret) and {pub} (put it in --trusted-keys DIR)")
        return EXIT_OK
    jobs, proofs, root = _jobs(args)
    specs = _distinct_names(jobs)
    if args.sign_key:
        from verifier.certs.signing import require_nacl
        require_nacl()          # fail before proving anything when PyNaCl is missing
    out, worst = [], EXIT_OK
    for job, spec in zip(jobs, specs):
        opts = ClaimOptions(prove.fixed_from_sets(spec, job.sets), **job.options)
        tty = not args.json and sys.stderr.isatty()
        if tty:
            print(f"proving {spec.name} ...", end="", file=sys.stderr, flush=True)
        p = prove.prove(job.path, root=root, proofs=proofs, opts=opts, spec=spec,
                        fuzz_examples=args.fuzz, fuzz_seed=args.seed,
                        fuzz_backend=args.fuzz_backend, sign_key=args.sign_key)
        prove.write(p)
        v = p.cert["verdict"]
        code = {"equivalent": EXIT_OK, "inconclusive": EXIT_INCONCLUSIVE,
                "not-equivalent": EXIT_NOT_EQUIVALENT}[v["kind"]]
        if code == EXIT_NOT_EQUIVALENT or (code == EXIT_INCONCLUSIVE and worst == EXIT_OK):
            worst = code
        shown = _rel(p.path)
        out.append({"spec": _rel(job.path), "pair": spec.name, "certificate": shown,
                    "verdict": v["kind"], "claim": p.cert["claim"]["text"],
                    "obligations": len(p.cert["obligations"]), "evidence": v["evidence"],
                    "reasons": v["reasons"], "fuzz": p.cert["fuzz"],
                    "signed": p.cert["signature"] is not None, "seconds": round(p.seconds, 3)})
        if tty:
            print("\r\033[K", end="", file=sys.stderr)
        if not args.json:
            ev = "; ".join(v["evidence"]) or "-"
            print(f"{v['kind']:<14} {spec.name:<34} -> {shown}  ({ev}; {p.seconds:.2f} s)")
            for r in v["reasons"]:
                print(f"    {r}")
            if p.cert["fuzz"]:
                fz = p.cert["fuzz"]
                print(f"    fuzz: {fz['examples']} example(s) on {fz['backend']}: "
                      f"{fz['difference'] or 'no difference'}")
    if args.json:
        print(json.dumps({"certificates": out, "exit": worst}, indent=2))
    return worst


def _rel(p: Path) -> str:
    try:
        return Path(p).resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(p)
