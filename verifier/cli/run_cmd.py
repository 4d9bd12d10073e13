"""`keq run SPEC.toml`: run one side of a kernel pair on the concrete emulator."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from semantics.errors import KeqError
from verifier.spec import (PairSpec, ParamSpec, draw_scalars, int_bounds, load_spec,
                           make_inputs, scalar_value)

HEAD = 8   # values shown per buffer


class InputError(KeqError):
    """Bad content in a user-given input (an .npz file or a --set)."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where

    def render(self) -> str:
        return f"{self.where}: error: {self}" if self.where else f"error: {self}"


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
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


# ------------------------------------------------------------------ inputs

def _parse_set(spec: PairSpec, item: str) -> tuple[str, Any]:
    if "=" not in item:
        raise InputError(f"--set {item!r}: expected NAME=VALUE")
    name, text = (s.strip() for s in item.split("=", 1))
    try:
        p = spec.param(name)
    except KeyError:
        names = ", ".join(q.name for q in spec.scalars) or "none"
        raise InputError(f"--set {name}: no param named {name!r} (scalars: {names})") from None
    if p.is_buffer:
        raise InputError(f"--set {name}: {name!r} is a buffer; give buffers with --inputs")
    try:
        if p.is_float:
            value: Any = float(text)
        else:
            value = int(text, 0)
    except ValueError:
        kind = "a number" if p.is_float else "an integer"
        raise InputError(f"--set {name}={text}: not {kind}") from None
    _check_scalar(p, value, f"--set {name}={text}")
    return name, scalar_value(p, value)


def _check_scalar(p: ParamSpec, value, what: str, where: str | None = None) -> None:
    if not p.allows(value):
        if not p.is_float:
            lo, hi = int_bounds(p.type)
            if not lo <= int(value) <= hi:
                raise InputError(f"{what}: {value} is outside the {p.type} range [{lo}, {hi}]",
                                 where)
        raise InputError(f"{what}: {value} is out of the spec's range for {p.name!r} "
                         f"({p.describe_domain()})", where)


def _load_npz(spec: PairSpec, path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except OSError:
        raise
    except (ValueError, EOFError) as e:
        raise InputError(f"not a readable .npz file ({e})", path) from None
    names = [p.name for p in spec.params]
    for k in data:
        if k not in names:
            raise InputError(f"key {k!r} is not a param of {spec.name} "
                             f"(params: {', '.join(names)})", path)
    return data


def _npz_scalars(spec: PairSpec, data: dict, path: str) -> dict[str, Any]:
    out = {}
    for p in spec.scalars:
        if p.name not in data:
            continue
        a = data[p.name]
        if a.size != 1:
            raise InputError(f"scalar {p.name!r} must be a 0-d (or 1-element) array, found "
                             f"shape {a.shape}", path)
        ok = a.dtype.kind in "iuf" if p.is_float else a.dtype.kind in "iu"
        if not ok:
            raise InputError(f"scalar {p.name!r} is {p.type}, the array has dtype {a.dtype}",
                             path)
        v = a.reshape(()).item()
        _check_scalar(p, v, f"scalar {p.name!r}", path)
        out[p.name] = scalar_value(p, v)
    return out


def _npz_buffers(spec: PairSpec, data: dict, scalars: dict, path: str,
                 given: dict) -> dict[str, np.ndarray]:
    out = {}
    for p in spec.buffers:
        if p.name not in data:
            continue
        a = data[p.name]
        if a.dtype != p.dtype:
            raise InputError(f"buffer {p.name!r} is {p.type} (numpy {p.dtype}), the array has "
                             f"dtype {a.dtype}", path)
        n = p.length_of(scalars)
        if a.ndim != 1 or a.size != n:
            env = ", ".join(f"{k}={scalars[k]}" for k in sorted(p.length.names))
            raise InputError(f"buffer {p.name!r} must have {n} element(s) (length "
                             f"{p.length.text!r}{' at ' + env if env else ''}), the array has "
                             f"shape {a.shape}" + _drawn_hint(p.length.names, given), path)
        out[p.name] = np.ascontiguousarray(a).copy()
    return out


def _drawn_hint(names, given: dict) -> str:
    drawn = sorted(set(names) - set(given))
    if not drawn:
        return ""
    return (f"; {', '.join(drawn)} {'was' if len(drawn) == 1 else 'were'} drawn from the seed: "
            f"give {'it' if len(drawn) == 1 else 'them'} in the .npz or with --set")


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
    data = _load_npz(spec, args.inputs) if args.inputs else {}
    given = _npz_scalars(spec, data, args.inputs) if args.inputs else {}
    for item in args.sets:
        name, value = _parse_set(spec, item)
        given[name] = value
    scalars = draw_scalars(spec, rng, fixed=given)
    values = make_inputs(spec, scalars, rng)
    if args.inputs:
        values.update(_npz_buffers(spec, data, scalars, args.inputs, given))
    grid, block = side.launch(scalars)
    kernel_args = side.kernel_args(values)
    t0 = time.perf_counter()
    from semantics.machine import run_kernel
    result = run_kernel(side.module, side.kernel, grid, block, kernel_args,
                        dynamic_shared=side.dynamic_shared)
    seconds = time.perf_counter() - t0
    kparams = side.module.functions[side.kernel].params
    final: dict[str, Any] = dict(values)
    for name, kp in zip(side.arg_names, kparams):
        if kp.name in result.buffers:
            final[name] = result.buffers[kp.name]
    shown = [p for p in spec.buffers if p.access in ("out", "inout")]
    if args.output:
        arrays = {}
        for p in spec.params:
            v = final[p.name]
            arrays[p.name] = np.asarray(v, dtype=p.dtype) if p.is_scalar else v
        np.savez(args.output, **arrays)
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
