"""Portfolio members on a corpus of keq's own obligations: each solver, and each bitwuzla
configuration asked for, alone on every distinct floating-point obligation that `keq verify`
writes for a list of pairs and shapes (random testing off, so the solvers see the questions
testing would have answered), with the time a portfolio schedule would take on the 2-core
machine.

    .venv/bin/python bench/obligations.py                       # collect, then time (~15 min)
    .venv/bin/python bench/obligations.py --config defaults: --config unflat:PP_FLATTEN_AND=false
    .venv/bin/python bench/obligations.py --dir /tmp/obl --no-collect   # an existing corpus

Why: a configuration that wins on the four pairs of `bench/verify.py --only portfolio` can
lose on the obligations around them (docs/solvers.md, "Tried and not adopted"). The corpus
is every `.smt2` under `--dir` with floating point in it, deduplicated by name (the text's
sha256), plus the canonical ones of bench/solvers.py.

Baselines in the same run: z3 alone, the bitwuzla member alone (keq's configuration:
bitwuzla's defaults with its FP_OPTIONS on floating point; `--config defaults:` adds
bitwuzla as it comes), and the schedule "z3 on one core, bitwuzla on the other" (the portfolio's two first members on two
cores: the minimum of the two). Each extra configuration is shown alone and as a slice of
`--slice` seconds before the default one on the second core (`min(z3, u if u <= slice else
slice + d)`). A time at the limit is a timeout, counted as the limit (totals marked `>=`).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from verifier.solvers import Obligation, get_backend  # noqa: E402
from verifier.solvers.backends import BitwuzlaBackend  # noqa: E402

K = ROOT / "kernels"
# (spec, fixed scalars, mode override): fma chains (saxpy, matmuls at small shapes) and
# reordered float sums (the reductions, read bit for bit), each a family of obligations
RUNS = ([("saxpy/fma_bitexact.toml", {"n": 1}, None),
         ("saxpy/fma_bitexact.toml", {"n": 8, "a": 2.5}, None)]
        + [("matmul/tiled_bitexact.toml", {"M": m, "N": n, "K": k}, None)
           for m, n, k in ((1, 1, 1), (1, 1, 2), (1, 1, 3), (1, 1, 4), (2, 2, 2), (1, 2, 5),
                           (2, 15, 1))]
        + [("matmul/tiled_real.toml", {"M": m, "N": n, "K": k}, "bitexact")
           for m, n, k in ((1, 1, 2), (1, 1, 3), (2, 2, 4))]
        + [("reduce/f32_sequential_bitexact.toml", {"n": n}, None) for n in (3, 4, 5, 8, 16)]
        + [("reduce/f32_tree_shfl_real.toml", {"n": n}, "bitexact") for n in (3, 4, 8)]
        + [("reduce/f32_warp_shfl_real.toml", {"n": n}, "bitexact") for n in (3, 5, 8)]
        + [("reduce/f32_sequential_real.toml", {"n": n}, "bitexact") for n in (3, 4, 8)])


def collect(directory: Path, timeout_s: float) -> None:
    from dataclasses import replace

    from verifier.api import verify
    from verifier.spec import load_spec
    for path, fixed, mode in RUNS:
        spec = load_spec(K / path)
        if mode is not None:
            spec = replace(spec, mode=mode)
        v = verify(spec, fixed=fixed, trials=0, solvers=("bitwuzla",),
                   timeout_s=timeout_s, dump_smt=str(directory))
        print(f"   collected {path} {fixed} {mode or ''}: {v.kind}", flush=True)


def corpus(directory: Path) -> dict[str, tuple[str, str]]:
    """sha256 prefix -> (where from, text), floating-point obligations only."""
    import solvers as canonical
    out = {}
    for f in sorted(directory.glob("*.smt2")):
        text = f.read_text()
        if "FloatingPoint" in text or "(fp." in text:
            out[f.stem[:12]] = ("keq verify", text)
    for name, (mk, _) in canonical.CASES.items():
        ob = Obligation(mk(), name)
        if ob.translation.fp_sorts:
            out[ob.sha256[:12]] = (f"bench/solvers {name}", ob.text)
    return out


def configured(label: str, options: dict) -> BitwuzlaBackend:
    """bitwuzla with its own defaults and `options` on every obligation (not the member's
    FP_OPTIONS: `--config defaults:` is bitwuzla as it comes)."""
    cls = type(f"Bitwuzla_{label}", (BitwuzlaBackend,),
               {"name": label, "OPTIONS": options, "FP_OPTIONS": {}})
    return cls()


def parse_config(text: str) -> tuple[str, dict]:
    """`label:NAME=VALUE,NAME=VALUE` (values: true, false or an int)."""
    label, _, rest = text.partition(":")
    options = {}
    for item in filter(None, rest.split(",")):
        name, _, value = item.partition("=")
        options[name.strip().upper()] = {"true": True, "false": False}.get(
            value.strip().lower(), int(value) if value.strip().lstrip("-").isdigit() else value)
    return label, options


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, help="corpus directory (default: a temporary one)")
    ap.add_argument("--no-collect", action="store_true", help="time the corpus in --dir as it is")
    ap.add_argument("--config", action="append", default=[], metavar="LABEL:OPT=V,...",
                    help="a bitwuzla configuration to time too (repeatable), e.g. "
                         "unflat:PP_FLATTEN_AND=false")
    ap.add_argument("--timeout", type=float, default=20.0, help="per solver run (default 20)")
    ap.add_argument("--slice", type=float, default=1.0,
                    help="seconds a configuration runs before the default one (default 1)")
    args = ap.parse_args()
    tmp = None
    if args.dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="keq-obligations-")
        args.dir = Path(tmp.name)
    args.dir.mkdir(parents=True, exist_ok=True)
    print(f"keq portfolio members on keq's obligations — {platform.machine()}, "
          f"Python {platform.python_version()}; limit {args.timeout:g} s per run")
    if not args.no_collect:
        collect(args.dir, args.timeout)
    members = {"z3": get_backend("z3"), "bitwuzla": get_backend("bitwuzla"),
               "cvc5": get_backend("cvc5")}
    extra = dict(parse_config(c) for c in args.config)
    for label, options in extra.items():
        members[label] = configured(label, options)
    obligations = corpus(args.dir)
    print(f"{len(obligations)} distinct floating-point obligations under {args.dir}")
    cols = list(members) + ["z3|bzla"] + [f"z3|{x}>bzla" for x in extra]
    widths = [max(9, len(c) + 1) for c in cols]
    print(f"   {'obligation':<14} {'from':<28}"
          + "".join(f"{c:>{w}}" for c, w in zip(cols, widths)))
    totals = {c: 0.0 for c in cols}
    capped = {c: False for c in cols}

    def add(col: str, seconds: float, decided: bool) -> str:
        totals[col] += seconds
        capped[col] |= not decided
        return f"{seconds:.2f}" if decided else f">={seconds:.0f}"

    for sha, (origin, text) in obligations.items():
        times, cells = {}, []
        for name, backend in members.items():
            r = backend.check(text, args.timeout)
            decided = r.definitive
            times[name] = (min(r.seconds, args.timeout) if decided else args.timeout, decided)
            cells.append("error" if r.answer == "error" else add(name, *times[name]))
        z, d = times["z3"], times["bitwuzla"]
        cells.append(add("z3|bzla", min(z[0], d[0]), z[1] or d[1]))
        for label in extra:
            u = times[label]
            second = (u[0], True) if u[1] and u[0] <= args.slice else \
                (args.slice + d[0], d[1])
            best = min((z, second), key=lambda t: (not t[1], t[0]))
            cells.append(add(f"z3|{label}>bzla", best[0], best[1]))
        print(f"   {sha:<14} {origin[:28]:<28}"
              + "".join(f"{c:>{w}}" for c, w in zip(cells, widths)), flush=True)
    print(f"   {'total':<14} {'':<28}" + "".join(
        f"{('>=' if capped[c] else '') + format(totals[c], '.1f'):>{w}}"
        for c, w in zip(cols, widths)))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
