"""`keq fuzz SPEC.toml`: bounded differential fuzzing of a kernel pair (emulator or GPU), and
`keq fuzz --semantics`: the instruction conformance suite with a backend as one side."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

import numpy as np

from semantics.errors import KeqError
from verifier.cli.cluster_options import add_cluster_options, executor_of, wants_progress
from verifier.cli.run_cmd import add_choice_options
from verifier.report import choices_line
from verifier.inputs import SavedChoices, parse_set, save_npz
from verifier.spec import load_spec

EXIT_OK, EXIT_DIFFERENT, EXIT_BAD = 0, 1, 3


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fuzz", help="search for an input on which a kernel pair differs (bounded, not a proof)",
        description="Run both kernels of a pair spec on hypothesis-drawn inputs (scalars at "
                    "their edges and within range; float buffers of mostly ordinary finite "
                    "values with a minority of NaN payloads, +-0, +-inf, subnormals, extreme "
                    "normals and random bit patterns, finite only for real-mode pairs; "
                    "integer buffers with their extremes) and compare the out/inout buffers "
                    "under the spec's mode (real mode: within a tolerance derived from the "
                    "operation count unless --tolerance is given). A "
                    "difference (an output, a candidate fault, a candidate data race) is shrunk "
                    "to a minimal example and written as an .npz that `keq run --inputs` "
                    "accepts, with the choices that show it. What the PTX ISA leaves open "
                    "(never-written registers and memory, the order of contending atomics) "
                    "is varied: the reference runs under the defaults (zero fill, lane "
                    "order), the candidate under them and, where its run read something "
                    "open, under pattern fill, reverse schedule and random:SEED too (SEED "
                    "from the example). --fill/--schedule fix the candidate's choices "
                    "instead (the other option at its default). A reference whose run read "
                    "something open also runs under those other choices, and outputs that "
                    "change are an error about the spec (exit 3). Under a random fill, "
                    "which also changes what the hardware fixes for both kernels (the NaN an "
                    "operation returns), the reference runs under the same choices and "
                    "elements NaN in both are not compared. With --semantics, run the "
                    "instruction conformance suite instead (emulator: concrete vs symbolic; "
                    "pycuda: the GPU vs the emulator).",
        epilog="exit codes: 0 no difference found (not a proof: the summary says what was "
               "covered); 1 a difference was found; 3 bad input or usage, a fault or race in "
               "the reference, a reference whose outputs depend on the choices, or no GPU "
               "for --backend pycuda")
    p.add_argument("spec", metavar="SPEC.toml", nargs="?",
                   help="the pair spec (not with --semantics)")
    p.add_argument("--backend", choices=("emulator", "pycuda"), default="emulator",
                   help="where kernels run (default: emulator; pycuda needs an NVIDIA GPU)")
    p.add_argument("--examples", type=int, default=None, metavar="N",
                   help="examples to run (default 100; with --semantics, per form: 25)")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    p.add_argument("--time-budget", type=float, default=None, metavar="S",
                   help="stop drawing new examples after S seconds (shrinking may add a "
                        "little)")
    p.add_argument("--tolerance", metavar="T", default=None,
                   help="real-mode pairs: ulp:K, rel:E, or auto:K (the default, auto:4: "
                        "|ref - cand| <= K * n * (u * max(|ref|, |cand|, S_n) + eta), n the "
                        "float operations per thread, S_n the sum of the n largest input "
                        "magnitudes, u the output type's unit roundoff); refused for bitexact "
                        "pairs")
    p.add_argument("--finite", action="store_true",
                   help="draw only finite floats (no NaN, no infinities)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="sets",
                   help="fix a scalar param (repeatable)")
    add_choice_options(
        p, "the candidate",
        extra=". Fixes the candidate's choices (default: varied, see above); emulator "
              "backend only")
    p.add_argument("--no-races", action="store_true",
                   help="emulator: skip data-race detection (faster; misses missing barriers)")
    p.add_argument("--repro", metavar="OUT.npz", default=None,
                   help="where to write the reproducer (default: ./keq-fuzz-NAME-seedS.npz)")
    p.add_argument("--semantics", action="store_true",
                   help="run the instruction-form conformance suite with the backend as one "
                        "side instead of fuzzing a pair")
    p.add_argument("--forms", metavar="REGEX", default=None,
                   help="--semantics: only forms whose PTX line matches REGEX")
    p.add_argument("--table", metavar="OUT.md", default=None,
                   help="--semantics: write the per-form result table (markdown)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--streams", type=int, default=1, metavar="K",
                   help="split the examples into K streams (stream k: seed SEED + k), run as "
                        "independent tasks on local processes or --cluster (a GPU each for "
                        "--backend pycuda); the first stream with a difference reports it")
    add_cluster_options(p, jobs_default=0,
                        jobs_help="local processes for the streams (default: one per stream, "
                                  "at most one per core)")
    p.set_defaults(run=run)


# ------------------------------------------------------------------ rendering

def _bits_hex(a: np.ndarray, i: int) -> str:
    u = np.ascontiguousarray(a).view(np.dtype(f"<u{a.dtype.itemsize}"))
    return f"0x{int(u[i]):0{2 * a.dtype.itemsize}x}"


def _val(v) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _jsonable(v):
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(v, np.integer):
        return int(v)
    return v


def _buffer_line(name: str, p, a: np.ndarray, limit: int = 8) -> str:
    vals = ", ".join(_val(_jsonable(x)) for x in a[:limit].tolist())
    more = f", ... ({a.size} elements)" if a.size > limit else ""
    nz = int(np.count_nonzero(np.ascontiguousarray(a).view(np.uint8).reshape(a.size, -1).any(1))) \
        if a.size else 0
    return f"    {name} ({p.access} {p.type}[{a.size}], {nz} nonzero) = [{vals}{more}]"


def _coverage_lines(rep) -> list[str]:
    out = []
    for role, c in rep.coverage.items():
        if not c.measured:
            out.append(f"  coverage {role} {c.kernel}: not measured on this backend")
            continue
        bf = c.blocks_seen / c.blocks_total if c.blocks_total else 1.0
        rf = c.branches_seen / c.branches_total if c.branches_total else 1.0
        out.append(f"  coverage {role} {c.kernel}: basic blocks {c.blocks_seen}/{c.blocks_total}"
                   f" ({bf:.0%}), branch directions {c.branches_seen}/{c.branches_total}"
                   f" ({rf:.0%})")
    return out


def _scalars_covered(rep) -> str:
    parts = []
    for k, vs in rep.scalar_values.items():
        vs = sorted(vs, key=lambda v: float(v))
        if not vs:
            continue
        shown = ", ".join(_val(_jsonable(v)) for v in vs[:6]) + (", ..." if len(vs) > 6 else "")
        parts.append(f"{k}: {len(vs)} value(s) in [{_val(_jsonable(vs[0]))}, "
                     f"{_val(_jsonable(vs[-1]))}] ({shown})")
    return "; ".join(parts) or "no scalars"


def _float_out_types(spec) -> list[str]:
    return [p.type for p in spec.buffers if p.access in ("out", "inout") and p.is_float]


def _g(x: float) -> str:
    return f"{x:.4g}"


def _tolerance_line(rep) -> str | None:
    """The real-mode tolerance in one line (None for bitexact pairs)."""
    tol = rep.tolerance
    if tol is None:
        return None
    if not tol.derived:
        return f"  tolerance {tol} (given with --tolerance): " + (
            f"at most {int(tol.value)} ulp(s) apart" if tol.kind == "ulp" else
            f"|ref - cand| <= {tol.value:g} * max(|ref|, |cand|)")
    from verifier.fuzz.compare import auto_formula
    line = f"  tolerance {tol} (derived): {auto_formula(tol.value, _float_out_types(rep.spec))}"
    ops = rep.ops
    if ops is None:
        return line
    how = sorted(set(ops.how.values()))
    counted = ("counted per thread by the emulator" if how == ["emulator"] else
               "counted per thread by an emulator run per scalar values" if how == [
                   "emulator replay"] else
               "counted statically" if how == ["static"] else
               ", ".join(f"{r} counted by {h}" for r, h in ops.how.items()))
    d = rep.difference
    if d is not None and d.ops is not None:
        return (line + f"; on the example shown n = {d.ops.ops} float op(s) ({counted}), "
                f"S_n = {_g(d.ops.scale or 0.0)} (largest input magnitude "
                f"{_g(d.ops.magnitude)})")
    n = max(ops.ops_max.values(), default=0)
    per = ", ".join(f"{r} {v}" for r, v in ops.ops_max.items())
    return (line + f"; n up to {n} float op(s) ({per}; {counted}), S_n up to "
            f"{_g(ops.scale_max)} (largest input magnitude {_g(ops.magnitude_max)})")


def _is_default(c) -> bool:
    return c is None or SavedChoices.of(c).is_default


def _choices_mode_json(rep) -> dict:
    if rep.choices is not None:
        return {"how": "given", "fill": rep.choices.fill, "schedule": rep.choices.schedule}
    if rep.varied:
        return {"how": "varied", "varied_examples": rep.varied_examples}
    return {"how": "backend"}


def _choices_summary(rep) -> str:
    if rep.choices is not None:
        from verifier.fuzz.choice_variation import shares_fixed_values
        return (f"  choices  candidate under {choices_line(rep.choices)} (given), reference "
                f"under " + ("the same (a random fill)" if shares_fixed_values(rep.choices)
                             else "the defaults"))
    if rep.varied:
        return (f"  choices  varied: the candidate read what the PTX ISA leaves open in "
                f"{rep.varied_examples} example(s) and ran again there under other choices "
                f"(pattern fill, reverse schedule, random fill and schedule)"
                if rep.varied_examples else
                "  choices  varied: no run of the candidate read what the PTX ISA leaves "
                "open, so the defaults were the only choices to try (zero fill, lane order)")
    return "  choices  made by the backend (the GPU)"


def _report_json(rep, spec_path: str) -> dict:
    d = rep.difference
    out = {
        "spec": spec_path, "name": rep.spec.name, "backend": rep.backend, "mode": rep.mode,
        "tolerance": str(rep.tolerance) if rep.tolerance else None,
        "tolerance_line": (_tolerance_line(rep) or "").strip() or None, "seed": rep.seed,
        "examples": rep.examples, "examples_requested": rep.examples_requested,
        "seconds": round(rep.seconds, 4),
        "examples_per_second": round(rep.examples_per_second, 2),
        "stopped_by": rep.stopped_by, "shrink_runs": rep.shrink_runs,
        "coverage": {r: {"kernel": c.kernel, "measured": c.measured,
                         "blocks_seen": c.blocks_seen, "blocks_total": c.blocks_total,
                         "branches_seen": c.branches_seen, "branches_total": c.branches_total}
                     for r, c in rep.coverage.items()},
        "result": "difference" if d else "no-difference-found",
        "proof": False,
        "choices": _choices_mode_json(rep),
    }
    if d is not None:
        out["difference"] = {
            "kind": d.kind, "summary": d.summary,
            "scalars": {k: _jsonable(v) for k, v in d.scalars.items()},
            "mismatches": [{"param": m.param, "count": m.count, "length": m.length,
                            "first": [{"index": i, "reference": _jsonable(a),
                                       "candidate": _jsonable(b)} for i, a, b in m.first]}
                           for m in d.mismatches],
            "races": d.races, "approximations": d.approximations,
            "ops": d.ops.ops if d.ops is not None else None,
            "magnitude": d.ops.magnitude if d.ops is not None else None,
            "scale": d.ops.scale if d.ops is not None else None,
            "candidate_fault": d.candidate.fault.render() if d.candidate.fault else None,
            "choices": None if d.choices is None else {
                "fill": d.choices.fill, "schedule": d.choices.schedule,
                "layout": d.choices.layout,
                "values": {k: int(v) for k, v in sorted(d.choices.values.items())}},
            "repro": rep.repro,
        }
    return out


def _print_text(rep, spec_path: str) -> None:
    d = rep.difference
    spec = rep.spec
    tol = f", tolerance {rep.tolerance}" if rep.tolerance else ""
    head = f"{spec.name}: mode {spec.mode}{tol}, backend {rep.backend}, seed {rep.seed}"
    if d is None:
        print(f"NO DIFFERENCE FOUND  {head}")
        print(f"  this is not a proof: {rep.examples} example(s) ran without a difference "
              f"(stopped by {rep.stopped_by}); run `keq verify` for a proof")
    else:
        print(f"NOT EQUIVALENT (found by fuzzing)  {head}")
        print(f"  found at example {rep.examples}, shrunk in {rep.shrink_runs} run(s) to:")
        print(f"  Given: {', '.join(f'{k}={_val(_jsonable(v))}' for k, v in d.scalars.items())}")
        for p in spec.buffers:
            print(_buffer_line(p.name, p, np.asarray(d.values[p.name])))
        print(f"  Difference ({d.kind}): {d.summary}")
        if d.choices is not None and (not _is_default(d.choices) or rep.choices is not None):
            from verifier.fuzz.choice_variation import shares_fixed_values
            ref = ("the same choices: a random fill changes what the hardware fixes for both "
                   "kernels, such as the NaN an operation returns; elements NaN in both are "
                   "not compared" if shares_fixed_values(d.choices) else "the defaults")
            print(f"    shown with the candidate under {choices_line(d.choices)} (the "
                  f"reference under {ref}; the reproducer carries these choices)")
        for m in d.mismatches:
            p = spec.param(m.param)
            r, c = d.reference.final[m.param], d.candidate.final[m.param]
            print(f"    {m.param}: {m.count} of {m.length} element(s) differ; first:")
            for i, a, b in m.first:
                print(f"      {m.param}[{i}]  reference {_val(_jsonable(a))} ({_bits_hex(r, i)})"
                      f"  candidate {_val(_jsonable(b))} ({_bits_hex(c, i)})")
            del p
        for r in d.races:
            print(f"    race: {r}")
        if d.approximations:
            print("  approximations are involved (the emulator's host approximations are not "
                  "the GPU's; this difference may not reproduce on silicon):")
            for a in d.approximations:
                print(f"    {a}")
        if rep.repro:
            print(f"  reproducer: {rep.repro}")
            print(f"    keq run {spec_path} --side reference --inputs {rep.repro}")
            print(f"    keq run {spec_path} --side candidate --inputs {rep.repro}")
    rate = f"{rep.examples_per_second:.1f} examples/s" if rep.seconds > 0 else "-"
    print(f"  examples {rep.examples} of {rep.examples_requested} in {rep.seconds:.2f} s "
          f"({rate})")
    print(f"  scalars  {_scalars_covered(rep)}")
    print(_choices_summary(rep))
    tl = _tolerance_line(rep)
    if tl is not None:
        print(tl)
    for line in _coverage_lines(rep):
        print(line)


def _progress_printer():
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int, seconds: float) -> None:
        rate = done / seconds if seconds > 0 else 0.0
        print(f"\r  fuzzing: {done}/{total} examples, {rate:.0f}/s", end="", file=sys.stderr,
              flush=True)
    return show


def _in_streams(args, spec, backend_kw: dict, examples: int, options: dict):
    """The fuzz report of `--streams` streams run by the executor the options ask for, and
    what the report says of the campaign (where it ran, what was run again)."""
    from verifier.fuzz.streams import fuzz_streams
    from verifier.parallel import default_jobs
    if args.jobs == 0:
        args.jobs = min(args.streams, default_jobs())
    executor = executor_of(args)
    try:
        rep = fuzz_streams(spec, args.backend, backend_kw, executor, streams=args.streams,
                           examples=examples, seed_=args.seed,
                           progress=wants_progress(args), **options)
    finally:
        executor.close()
    return rep, {"streams": args.streams, "ran_on": executor.name,
                 "retried": [r.to_json() for r in executor.retries]}


def _default_repro(spec, seed: int) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec.name).strip("-") or "pair"
    return f"keq-fuzz-{stem}-seed{seed}.npz"


# ------------------------------------------------------------------ run

def run(args: argparse.Namespace) -> int:
    if args.semantics:
        if args.spec:
            raise KeqError("--semantics checks instruction forms, not a pair: give no "
                           "SPEC.toml with it")
        from verifier.fuzz.semantics_check import run_semantics
        return run_semantics(args)
    if not args.spec:
        raise KeqError("keq fuzz needs SPEC.toml (or --semantics)")
    from verifier.fuzz.backends import get_backend
    from verifier.fuzz.runner import DEFAULT_EXAMPLES, fuzz
    spec = load_spec(args.spec)
    fixed = dict(parse_set(spec, item) for item in args.sets)
    if args.backend != "emulator" and (args.fill is not None or args.schedule is not None):
        raise KeqError(f"--fill/--schedule: on --backend {args.backend} the hardware makes "
                       f"these choices itself; they apply to the emulator backend")
    kw = {"detect_races": not args.no_races} if args.backend == "emulator" else {}
    backend = get_backend(args.backend, **kw)
    examples = DEFAULT_EXAMPLES if args.examples is None else args.examples
    options = dict(time_budget=args.time_budget, tolerance=args.tolerance, finite=args.finite,
                   fixed=fixed, fill=args.fill, schedule=args.schedule)
    campaign = None
    if args.streams < 1:
        raise KeqError(f"--streams {args.streams}: give 1 or more")
    if args.streams == 1 and args.cluster is None:
        progress = None if args.json else _progress_printer()
        rep = fuzz(spec, backend, examples=examples, seed_=args.seed, progress=progress,
                   **options)
        if progress is not None:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr, flush=True)
    else:
        rep, campaign = _in_streams(args, spec, kw, examples, options)
    d = rep.difference
    if d is not None:
        rep.repro = args.repro or _default_repro(spec, args.seed)
        outputs = {role: {p.name: run.final[p.name] for p in spec.buffers
                          if p.access in ("out", "inout")}
                   for role, run in (("reference", d.reference), ("candidate", d.candidate))
                   if run.final is not None}
        save_npz(rep.repro, spec, d.values, outputs,
                 choices=SavedChoices.of(d.choices) if d.choices is not None else None)
        if not str(rep.repro).endswith(".npz"):
            rep.repro = str(rep.repro) + ".npz"
    if args.json:
        out = _report_json(rep, args.spec)
        if campaign is not None:
            out["campaign"] = campaign
        print(json.dumps(out, indent=2))
    else:
        _print_text(rep, args.spec)
        if campaign is not None:
            print(f"  streams  {campaign['streams']} on {campaign['ran_on']}")
            for r in campaign["retried"]:
                print(f"  retried  {r['task']}: attempt {r['attempt']} lost ({r['cause']})")
    sys.stdout.flush()
    return EXIT_DIFFERENT if d is not None else EXIT_OK


__all__ = ["add_parser", "run"]
