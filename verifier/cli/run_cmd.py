"""`keq run SPEC.toml`: run one side of a kernel pair on the concrete emulator."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time

import numpy as np

from semantics.choices import Choices
from verifier.emulate import choices_of, run_side
from verifier.report import choices_line
from verifier.inputs import (  # noqa: F401  (InputError: re-exported)
    InputError, SavedChoices, load_choices, load_npz, npz_buffers, npz_scalars, parse_set,
    save_npz)
from verifier.spec import ParamSpec, draw_scalars, load_spec, make_inputs
from verifier.cli.step_budget import add_step_budget

HEAD = 8   # values shown per buffer


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run", help="run one kernel of a pair spec on the emulator",
        description="Run one side of a pair spec on keq's concrete emulator and summarize the "
                    "out/inout buffers. Buffers and scalars come from --inputs (by param name), "
                    "--set overrides scalars, and anything missing is drawn from --seed: "
                    "scalars uniformly within the spec's range/values satisfying `assume`, "
                    "buffers as random bit patterns of their element type (out buffers too).",
        epilog="what the PTX ISA leaves open (never-written registers and memory, the order "
               "of contending atomics, ...) is resolved by --fill and --schedule; an .npz "
               "written by `keq verify --save-counterexample` or `keq fuzz` carries the "
               "choices of the run that showed the difference, and --inputs replays them "
               "unless --fill or --schedule is given (then the given options win and the "
               "saved choices, the solver's chosen values included, are not applied; the "
               "option not given takes its default); --shared-fill always wins for shared "
               "memory. The output names the choices when they are not the defaults. "
               "exit codes: 0 the kernel ran; 3 bad spec, bad input or usage, or a runtime "
               "error in the kernel (a memory fault such as an out-of-bounds access, barrier "
               "divergence, an unsupported instruction): printed as file:line:col: error: ...")
    p.add_argument("spec", metavar="SPEC.toml")
    p.add_argument("--side", choices=("reference", "candidate"), default="reference",
                   help="which kernel to run (default: reference)")
    p.add_argument("--inputs", metavar="IN.npz",
                   help="initial buffers and scalars by param name (as written by --output); "
                        "one from `keq verify --save-counterexample` or `keq fuzz` also "
                        "replays the choices saved in it (see below)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="sets",
                   help="set a scalar param (repeatable); overrides --inputs")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for everything not given (default 0)")
    p.add_argument("--output", metavar="OUT.npz",
                   help="write every param's final contents by name (scalars as 0-d arrays)")
    add_choice_options(p, "the kernel")
    p.add_argument("--shared-fill", type=_byte, default=None, metavar="BYTE",
                   help="the byte every CTA's shared memory holds at launch (unspecified in "
                        "PTX; default: what --fill gives, zeros by default); overrides --fill "
                        "and the .npz's choices for shared memory")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


FILL_HELP = ("what {who} reads where nothing was written: registers read before any write, "
             "never-written shared and local memory, and the values the ISA leaves open (the "
             "NaN an operation returns, special registers such as %%clock): zero (zeros; a "
             "special register its natural value, a NaN the emulator's; the default), "
             "pattern (every unwritten byte 0xa5), random:SEED (seeded random values for "
             "all of them)")
SCHEDULE_HELP = ("the order the hardware chooses for {who}'s contending atomics (several "
                 "lanes updating one address in one instruction): lane (lane order; the "
                 "default), reverse (reverse lane order), random:SEED (a seeded random order)")


def _policy(allowed: tuple[str, ...], what: str):
    def parse(text: str) -> str:
        text = text.strip()
        if text.startswith("random:"):
            seed = text.split(":", 1)[1]
            if not seed.isdigit():
                raise argparse.ArgumentTypeError(
                    f"{what} {text!r}: the seed after 'random:' must be a non-negative integer "
                    f"(e.g. random:1)")
            return f"random:{int(seed)}"
        if text not in allowed:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {text!r} (one of: {', '.join(allowed)}, random:SEED)")
        return text
    parse.__name__ = what.replace(" ", "_")
    return parse


fill_policy = _policy(("zero", "pattern"), "fill policy")
schedule_policy = _policy(("lane", "reverse"), "schedule")


def add_choice_options(p: argparse.ArgumentParser, who: str, extra: str = "") -> None:
    """--fill and --schedule (shared by `keq run` and `keq fuzz`)."""
    add_step_budget(p)
    p.add_argument("--fill", type=fill_policy, default=None, metavar="POLICY",
                   help=FILL_HELP.format(who=who) + extra)
    p.add_argument("--schedule", type=schedule_policy, default=None, metavar="POLICY",
                   help=SCHEDULE_HELP.format(who=who) + extra)


def choices_json(c: Choices, shared_fill: int | None = None) -> dict:
    return {"fill": c.fill, "schedule": c.schedule, "layout": c.layout,
            "values": {k: int(v) for k, v in sorted(c.values.items())},
            "shared_fill": shared_fill}


def resolve_run_choices(spec, args) -> tuple[Choices, int | None, str, str, str]:
    """(choices, shared fill byte or None, where they came from, where the shared byte came
    from, a note) for `keq run`:
    --fill/--schedule when either is given, else the .npz's saved choices, else the
    defaults; --shared-fill on top."""
    base = choices_of(spec)
    saved = load_choices(args.inputs) if args.inputs else None
    note = ""
    if args.fill is not None or args.schedule is not None:
        choices = Choices(args.fill or "zero", args.schedule or "lane", {}, base.target)
        shared_fill, source = None, "given"
        if saved is not None and not saved.is_default:
            note = (f"not applied: the choices saved in {args.inputs} "
                    f"({choices_line(saved.choices(base), saved.shared_fill)}), since "
                    f"--fill/--schedule was given")
    elif saved is not None:
        choices, shared_fill = saved.choices(base), saved.shared_fill
        source = f"saved in {args.inputs}"
    else:
        choices, shared_fill, source = base, None, "default"
    shared_from = source
    if args.shared_fill is not None:
        shared_fill, shared_from = args.shared_fill, "--shared-fill"
    return choices, shared_fill, source, shared_from, note


def _byte(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte: {text!r}") from None
    if not 0 <= v <= 255:
        raise argparse.ArgumentTypeError(f"not a byte (0..255): {text!r}")
    return v


# ------------------------------------------------------------------ output

def _jsonable(v):
    if isinstance(v, (np.floating, float)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def _summary(p: ParamSpec, a: np.ndarray) -> dict:
    return {"access": p.access, "type": p.type, "length": int(a.size),
            "head": [_jsonable(x) for x in a[:HEAD].tolist()],
            "sha256": hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}


def _fmt(v) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _print_printed(printed: dict, limit: int = 8) -> None:
    """The first `limit` threads' printf output, a line per call."""
    if not printed:
        return
    calls = sum(len(v) for v in printed.values())
    print(f"  printf   {calls} call(s) by {len(printed)} thread(s):")
    for t, lines in list(printed.items())[:limit]:
        for text in lines:
            print(f"    thread {t}: {text!r}")
    if len(printed) > limit:
        print(f"    ... and {len(printed) - limit} more thread(s) (--json has them all)")


def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    side = spec.side(args.side)
    rng = np.random.default_rng(args.seed)
    data = load_npz(spec, args.inputs) if args.inputs else {}
    given = npz_scalars(spec, data, args.inputs) if args.inputs else {}
    for item in args.sets:
        name, value = parse_set(spec, item)
        given[name] = value
    scalars = draw_scalars(spec, rng, fixed=given)
    values = make_inputs(spec, scalars, rng)
    if args.inputs:
        values.update(npz_buffers(spec, data, scalars, args.inputs, given))
    grid, block = side.launch(scalars)
    choices, shared_fill, source, shared_from, note = resolve_run_choices(spec, args)
    default = SavedChoices.of(choices).is_default and shared_fill is None
    t0 = time.perf_counter()
    final, result = run_side(side, values, scalars, shared_fill=shared_fill, choices=choices,
                             tag=side.role)
    seconds = time.perf_counter() - t0
    shown = [p for p in spec.buffers if p.access in ("out", "inout")]
    if args.output:
        save_npz(args.output, spec, final)
    report = {
        "spec": str(spec.path), "name": spec.name, "side": side.role, "kernel": side.kernel,
        "ptx": str(side.ptx), "grid": list(grid), "block": list(block),
        "scalars": {k: _jsonable(v) for k, v in scalars.items()},
        "seed": args.seed, "seconds": round(seconds, 6),
        "effects": [{"kind": e.kind, "what": e.what, "loc": str(e.loc)} for e in result.effects],
        "buffers": {p.name: _summary(p, final[p.name]) for p in shown},
        "output": args.output,
    }
    if side.then:
        # the side's later launches (a side of one launch keeps the keys it always had)
        report["then"] = [{"kernel": s.kernel, "ptx": str(s.ptx), "programmatic": s.programmatic,
                           "grid": list(s.launch(scalars)[0]),
                           "block": list(s.launch(scalars)[1])} for s in side.then]
    if result.printed:
        # what each thread printed, by global linear id (`verifier.printed`)
        report["printed"] = {str(t): list(lines) for t, lines in result.printed.items()}
    if not default or note:
        # (only when not the defaults: the keys of a default run's report stay as they were)
        report["choices"] = dict(choices_json(choices, shared_fill), source=source,
                                 shared_fill_from=shared_from if shared_fill is not None
                                 else None, note=note or None)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    sc = ", ".join(f"{k}={_fmt(_jsonable(v))}" for k, v in scalars.items())
    print(f"{spec.name} [{side.role}] {side.kernel} ({side.ptx})")
    print(f"  launch   grid={tuple(grid)} block={tuple(block)}  {sc}")
    for later in side.then:
        g, b = later.launch(scalars)
        pdl = " (programmatic)" if later.programmatic else ""
        print(f"  then     {later.kernel}{pdl} grid={tuple(g)} block={tuple(b)}")
    if not default:
        shared = "" if shared_fill is None else \
            f"; every shared byte {shared_fill:#04x} at launch ({shared_from})"
        print(f"  choices  {choices_line(choices)} ({source}){shared}"
              + (f"; {note}" if note else ""))
    elif note:
        print(f"  choices  the defaults; {note}")
    print(f"  ran in   {seconds:.3f} s")
    if result.effects:
        print(f"  effects  {len(result.effects)}:")
        for e in result.effects:
            print(f"    {e.kind}: {e.what} at {e.loc}")
    else:
        print("  effects  none")
    for p in shown:
        s = report["buffers"][p.name]
        head = ", ".join(_fmt(x) for x in s["head"]) + (", ..." if s["length"] > HEAD else "")
        print(f"  {p.name} ({p.access} {p.type}[{s['length']}]) [{head}]  sha256 "
              f"{s['sha256'][:16]}")
    _print_printed(result.printed)
    if args.output:
        print(f"  wrote    {args.output}")
    sys.stdout.flush()
    return 0
