"""How much of a body of PTX keq models: over every .ptx file under the given directories
(default: kernels/ and tests/data/), the share of files that parse and of kernels that keq
prepares with semantics for every instruction they reach, and the families of instructions
that block the rest, ranked by the kernels each blocks.

    .venv/bin/python bench/reach.py                        # keq's own corpus
    .venv/bin/python bench/reach.py ~/ptx-dump --json reach.json
    .venv/bin/python bench/reach.py --samples    # also bench/reach_samples.cu, one kernel per
                                                 # feature family real code uses (needs nvcc)

A kernel is *modelled* when `semantics.machine.prepare` accepts it (every instruction of the
kernel and of the functions it calls has semantics). A blocker's family is the refused
instruction's first four name parts (`tex.2d.v4.f32`, `cvt.rn.satfinite.e4m3x2`, ...); a kernel
refused for another reason (a call keq does not follow, ...) is counted under its message.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from semantics.errors import KeqError, UnsupportedError  # noqa: E402
from semantics.machine import prepare  # noqa: E402
from semantics.ptx import parse_ptx_file  # noqa: E402

_REFUSED = re.compile(r"'([^']+)' has no semantics")


def family(message: str) -> str:
    m = _REFUSED.search(message)
    if not m:
        return re.sub(r"^.*?error: ", "", message).split("(")[0].strip()[:60]
    parts = m.group(1).split(".")
    return ".".join(parts[:4])


def survey(dirs: list[Path]) -> dict:
    files = sorted({p for d in dirs for p in d.rglob("*.ptx")})
    parsed, kernels, modelled = 0, 0, 0
    blocked: dict[str, list[str]] = defaultdict(list)
    parse_errors: Counter = Counter()
    for f in files:
        try:
            m = parse_ptx_file(f)
        except KeqError as e:
            parse_errors[str(e).split("error: ", 1)[-1][:80]] += 1
            continue
        parsed += 1
        for name in m.entries:
            kernels += 1
            try:
                prepare(m, name)
                modelled += 1
            except (UnsupportedError, KeqError) as e:
                blocked[family(str(e))].append(f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}:{name}")
    ranked = sorted(blocked.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return {"files": len(files), "parsed": parsed, "kernels": kernels, "modelled": modelled,
            "blockers": [{"family": k, "kernels": len(v), "example": v[0]} for k, v in ranked],
            "parse_errors": dict(parse_errors.most_common())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path,
                    default=[ROOT / "kernels", ROOT / "tests" / "data"])
    ap.add_argument("--json", metavar="FILE", help="also write the survey as JSON")
    ap.add_argument("--samples", action="store_true",
                    help="also compile and survey bench/reach_samples.cu (nvcc)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = list(args.dirs)
        if args.samples:
            subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-O3", "-rdc=true",
                            str(ROOT / "bench" / "reach_samples.cu"), "-o",
                            str(Path(tmp) / "reach_samples.ptx")], check=True)
            dirs.append(Path(tmp))
        s = survey(dirs)
    pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
    print(f"files    {s['files']}, parsed {s['parsed']} ({pct(s['parsed'], s['files'])})")
    print(f"kernels  {s['kernels']}, modelled {s['modelled']} "
          f"({pct(s['modelled'], s['kernels'])})")
    for e, n in s["parse_errors"].items():
        print(f"  parse error x{n}: {e}")
    if s["blockers"]:
        print("blockers, by kernels blocked:")
    for b in s["blockers"]:
        print(f"  {b['kernels']:5}  {b['family']:28} e.g. {b['example']}")
    if args.json:
        Path(args.json).write_text(json.dumps(s, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
