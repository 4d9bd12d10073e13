"""`keq verify` against an earlier revision of keq, interleaved on the same machine.

    python bench/against.py REV SPEC.toml [SPEC.toml ...] [--reps N] [-- VERIFY ARGS]

Checks out REV (any git revision) into a temporary worktree and runs `keq verify --json` on
each spec, alternating the two trees (REV first on odd repetitions, this tree first on even
ones), each run in a fresh process. Prints, per spec and stage, the median seconds of each
tree and their ratio (and the whole process, start to exit: what a user waits), and fails
when the two trees reach different verdicts.

Why interleaved: on a shared VM the speed of the machine drifts by 1.5x and more within
minutes (keq's vector add took 2.7 s in one session and 6.4 s in another, while a bare Python
loop was as fast in both). Figures taken minutes apart, or in another session, do not show a
change of 10 to 20 %; a run of the old tree next to each run of the new one does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _verify(tree: Path, spec: str, extra: list[str]) -> dict:
    """One `keq verify --json` with `tree`'s sources first on the path, in a fresh process
    started as the tree's console script starts (`entry` where the tree has one); the
    process's wall time, start to exit, is added as `wall`."""
    code = ("import importlib, sys\nm = importlib.import_module('verifier.cli.main')\n"
            "getattr(m, 'entry', lambda: sys.exit(m.main()))()")
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, "verify", str(Path(spec).resolve()),
                           "--json", *extra], cwd=tree, env=env, capture_output=True,
                          text=True)
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"{tree}: keq verify {spec} exited {proc.returncode}:\n"
                         f"{proc.stderr.strip()[-2000:]}")
    return dict(json.loads(proc.stdout), wall=time.perf_counter() - start)


def _seconds(result: dict) -> dict[str, float]:
    """Stage name -> seconds (a stage that ran more than once, summed), and the total."""
    out: dict[str, float] = {}
    for s in result["stages"]:
        out[s["name"]] = out.get(s["name"], 0.0) + s["seconds"]
    out["total"] = result["seconds"]
    out["wall (process)"] = result["wall"]
    return out


def main() -> int:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev", help="the git revision to compare against (e.g. HEAD~3, a tag)")
    ap.add_argument("specs", nargs="+", metavar="SPEC.toml")
    ap.add_argument("--reps", type=int, default=2, help="runs of each tree per spec (default 2)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keq-against-") as tmp:
        old = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(old),
                        args.rev], check=True)
        try:
            return _compare(old, args.rev, args.specs, args.reps, extra)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(old)], check=False)


def _compare(old: Path, rev: str, specs: list[str], reps: int, extra: list[str]) -> int:
    print(f"== keq verify: this tree against {rev}, interleaved, {reps} run(s) each "
          f"(median seconds)")
    for tree in (old, ROOT):
        # Both trees start from bytecode, as an installed keq does after its first run (an
        # environment with PYTHONDONTWRITEBYTECODE set would else compile every module at
        # every start of whichever tree had none: 0.2 s of the process's wall time)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "semantics", "verifier"],
                       cwd=tree, check=True, stdout=subprocess.DEVNULL)
    failed = False
    for spec in specs:
        runs: dict[str, list[dict]] = {"old": [], "new": []}
        for rep in range(reps):
            for which in (("old", "new") if rep % 2 == 0 else ("new", "old")):
                runs[which].append(_verify(old if which == "old" else ROOT, spec, extra))
        verdicts = {r["verdict"] for rs in runs.values() for r in rs}
        print(f"   {spec}  verdict {'/'.join(sorted(verdicts))}")
        if len(verdicts) > 1:
            print("   DIFFERENT VERDICTS")
            failed = True
        times = {k: [_seconds(r) for r in rs] for k, rs in runs.items()}
        stages = list(dict.fromkeys(n for t in times["new"] for n in t))
        for name in stages:
            o = statistics.median(t.get(name, 0.0) for t in times["old"])
            n = statistics.median(t.get(name, 0.0) for t in times["new"])
            print(f"       {name:<20} {rev[:12]:>12} {o:8.2f}   this tree {n:8.2f}   "
                  f"{o / max(n, 1e-9):5.2f}x")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
