"""`keq run SPEC.toml`: run one side of a kernel pair on the concrete emulator."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time

import numpy as np

from verifier.emulate import run_side
from verifier.inputs import (  # noqa: F401  (InputError: re-exported)
    InputError, load_npz, npz_buffers, npz_scalars, parse_set, save_npz)
from verifier.spec import ParamSpec, draw_scalars, load_spec, make_inputs

HEAD = 8   # values shown per buffer


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run", help="run one kernel of a pair spec on the emulator",
        description="Run one side of a pair spec on keq's concrete emulator and summarize the "
                    "out/inout buffers. Buffers and scalars come from --inputs (by param name), "
                    "--set overrides scalars, and anything missing is drawn from --seed: "
                    "scalars uniformly within the spec's range/values satisfying `assume`, "
                    "buffers as random bit patterns of their element type (out buffers too).",
        epilog="exit codes: 0 the kernel ran; 3 bad spec, bad input or usage, or a runtime "
               "error in the kernel (a memory fault such as an out-of-bounds access, barrier "
               "divergence, an unsupported instruction): printed as file:line:col: error: ...")
    p.add_argument("spec", metavar="SPEC.toml")
    p.add_argument("--side", choices=("reference", "candidate"), default="reference",
                   help="which kernel to run (default: reference)")
    p.add_argument("--inputs", metavar="IN.npz",
                   help="initial buffers and scalars by param name (as written by --output)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="sets",
                   help="set a scalar param (repeatable); overrides --inputs")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for everything not given (default 0)")
    p.add_argument("--output", metavar="OUT.npz",
                   help="write every param's final contents by name (scalars as 0-d arrays)")
    p.add_argument("--shared-fill", type=_byte, default=0, metavar="BYTE",
                   help="the byte every CTA's shared memory holds at launch (unspecified in "
                        "PTX; default 0): replays a counterexample `keq verify` found with "
                        "another state the GPU may leave there")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


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
    t0 = time.perf_counter()
    final, result = run_side(side, values, scalars, shared_fill=args.shared_fill)
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
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    sc = ", ".join(f"{k}={_fmt(_jsonable(v))}" for k, v in scalars.items())
    print(f"{spec.name} [{side.role}] {side.kernel} ({side.ptx})")
    print(f"  launch   grid={tuple(grid)} block={tuple(block)}  {sc}")
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
    if args.output:
        print(f"  wrote    {args.output}")
    sys.stdout.flush()
    return 0
