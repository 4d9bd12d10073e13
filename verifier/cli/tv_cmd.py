"""`keq tv FILE.ptx [--arch sm_90]`: translation validation of ptxas. Compile the PTX with
ptxas, disassemble the cubin with nvdisasm, and prove every kernel of the file equivalent to
its SASS under a default launch, with every buffer content (and every float scalar) allowed.

The pair behind each proof is an ordinary `PairSpec` (reference = the PTX kernel, candidate =
its SASS, `isa = "sass"`), so `verifier.equiv.verify` proves it with the same stages and
verdicts as `keq verify`. The default claim, printed with each verdict:
- launch: `--grid` (default 2) x `--block` (default 32) threads;
- every 64-bit (.u64/.b64) parameter is a pointer to its own buffer of `--length` (default
  8192) 32-bit words, all of it compared after the launch (`inout`), every content allowed;
- integer scalars are fixed (default 40, below the thread count so bounds checks take both
  directions; `--set p3=1000`), float scalars are symbolic (every value);
- parameters are named p0, p1, ... in .entry order.
`pair_from_side` builds the same kind of pair from a side of a corpus spec (its buffers,
lengths and launch), which the golden tests and bench/tv.py use.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from semantics.errors import KeqError
from verifier.spec.expressions import parse_expr
from verifier.spec.model import PairSpec, ParamSpec, Side

DEFAULT_INT = 40
EXIT = {"equivalent": 0, "not-equivalent": 1, "inconclusive": 2}
_SCALAR_TYPES = {"s8": "s8", "s16": "s16", "s32": "s32", "s64": "s64", "u8": "u8",
                 "u16": "u16", "u32": "u32", "b8": "u8", "b16": "u16", "b32": "u32",
                 "f16": "f16", "f32": "f32", "f64": "f64"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tv", help="prove ptxas' translation of every kernel of a PTX file correct",
        description="Compile FILE.ptx with ptxas (or take --sass), disassemble it with "
                    "nvdisasm, and prove each kernel's SASS equivalent to its PTX under a "
                    "default launch: every buffer content and every float scalar allowed, "
                    "integer scalars fixed (see --set).",
        epilog="exit codes: 0 all equivalent, 1 some kernel not equivalent, 2 some "
               "inconclusive, 3 bad input, or ptxas/nvdisasm missing")
    p.add_argument("ptx", metavar="FILE.ptx")
    p.add_argument("--arch", default="sm_90", help="ptxas target (default sm_90)")
    p.add_argument("--sass", metavar="FILE", help="use this .sass listing or .cubin instead "
                                                  "of running ptxas")
    p.add_argument("--kernel", action="append", dest="kernels", metavar="NAME",
                   help="validate only this kernel (repeatable)")
    p.add_argument("--set", metavar="pN=VALUE", action="append", default=[], dest="sets",
                   help="value of integer scalar parameter N (default 40)")
    p.add_argument("--grid", default="2", help="grid, e.g. 2 or 2,2 (default 2)")
    p.add_argument("--block", default="32", help="block, e.g. 256 or 16,16 (default 32)")
    p.add_argument("--length", type=int, default=8192,
                   help="32-bit words in each pointer parameter's buffer (default 8192)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="solver timeout per query in seconds (default 60)")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.set_defaults(run=run)


# -- compiling ----------------------------------------------------------------------------------

def find_ptxas() -> str | None:
    import os
    for cand in (shutil.which("ptxas"),
                 os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")):
        if cand and Path(cand).is_file():
            return cand
    return None


def compile_ptx(ptx: str | Path, arch: str):
    """ptxas FILE.ptx -> cubin -> nvdisasm -> SassModule (KeqError when a tool is missing)."""
    from semantics.sass import parse_cubin
    tool = find_ptxas()
    if tool is None:
        raise KeqError("ptxas not found (install the CUDA toolkit, or pass --sass with a "
                       "listing or cubin)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{Path(ptx).stem}.{arch}.cubin"
        src = Path(ptx)
        text = src.read_text()
        retarget = re.sub(r"(?m)^(\s*\.target\s+)sm_[0-9a-z]+", lambda m: m.group(1) + arch,
                          text, count=1)
        if retarget != text:
            # ptxas refuses a PTX whose .target is above -arch; nvcc -arch=sm_80 would have
            # written the same PTX with this .target (kernels/build.py does the same), and
            # ptxas still rejects any instruction the architecture lacks.
            src = Path(tmp) / src.name
            src.write_text(retarget)
        r = subprocess.run([tool, f"-arch={arch}", str(src), "-o", str(out)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            first = (r.stderr or r.stdout).strip().splitlines()
            raise KeqError(f"ptxas failed on {ptx}: {first[0] if first else r.returncode}")
        return parse_cubin(out)


def load_sass(path: str | Path):
    from semantics.sass import parse_cubin, parse_sass_file
    return parse_cubin(path) if str(path).endswith(".cubin") else parse_sass_file(path)


# -- pairs --------------------------------------------------------------------------------------

def sass_side(side: Side, module, path: Path, types: tuple[str, ...]) -> Side:
    """The SASS twin of a PTX side: same kernel, launch and arguments."""
    fn = module.entries.get(side.kernel)
    if fn is None:
        raise KeqError(f"{path}: no kernel named '{side.kernel}' in the SASS "
                       f"(kernels: {', '.join(module.entries) or 'none'})")
    return replace(side, role="candidate", ptx=Path(path), sass=Path(path), module=module,
                   isa="sass", param_types=types)


# The claim of a translation is about one target, the SASS's: ptxas swaps the operands of
# commutative float instructions freely, and sm_80/sm_90 return the canonical NaN from every
# f32/f16 operation (the PTX ISA leaves it unspecified). Printed in every tv claim.
TV_TARGET = ("f32-nan-canonical", "f16-nan-canonical")


def pair_from_side(spec: PairSpec, side: Side, module, path: str | Path) -> PairSpec:
    """Translation validation of one side of a corpus spec: its PTX (reference) against the
    SASS `module` (candidate), with the spec's params restricted to that side's arguments."""
    used = set(side.arg_names)
    params = tuple(p for p in spec.params if p.name in used)
    names = {p.name for p in params}
    types = tuple("u64" if spec.param(n).is_buffer else spec.param(n).type
                  for n in side.arg_names)
    cand = sass_side(side, module, Path(path), types)
    assume = tuple(a for a in spec.assume if a.names <= names)
    arch = getattr(module, "arch", "sass")
    return PairSpec(spec.path, f"tv/{side.kernel}/{arch}", "bitexact", "equivalent", assume,
                    f"ptxas translation of {side.kernel}", replace(side, role="reference"),
                    cand, params, target_assumptions=TV_TARGET)


# Small shapes for corpus TV: the first of these each launch-shaping scalar allows, then
# the next ones until the spec's `assume` holds.
PREFERRED = (9, 8, 16, 4, 32, 2, 1, 37, 40, 48, 64)


def small_scalars(spec) -> dict[str, int] | None:
    from verifier.claim import launch_scalars
    shaping = launch_scalars(spec)
    env: dict[str, int] = {}
    for p in spec.scalars:
        if p.name not in shaping:
            continue
        for v in PREFERRED:
            if p.allows(v):
                env[p.name] = v
                break
    for _ in range(len(PREFERRED) ** 2):
        if spec.check_assumptions(env):
            return env
        # try the next preferred value for the first scalar until an assumption holds
        for name in env:
            i = PREFERRED.index(env[name])
            env[name] = PREFERRED[(i + 1) % len(PREFERRED)]
            if spec.check_assumptions(env):
                return env
    return None



def _dims(text: str) -> tuple:
    try:
        vals = tuple(int(v) for v in str(text).split(","))
    except ValueError:
        raise KeqError(f"bad launch dimension '{text}' (ints separated by commas)") from None
    if not 1 <= len(vals) <= 3 or min(vals) < 1:
        raise KeqError(f"bad launch dimension '{text}'")
    return tuple(parse_expr(v) for v in vals)


def pair_from_ptx(ptx_path: Path, ptx_module, kernel: str, sass_module, sass_path: Path, *,
                  grid: str = "2", block: str = "32", length: int = 8192,
                  values: dict[str, int] | None = None) -> tuple[PairSpec, dict[str, int]]:
    """The default TV pair of one PTX kernel (see the module docstring); returns it with the
    integer scalars to fix."""
    fn = ptx_module.entries[kernel]
    params, types, fixed = [], [], {}
    values = values or {}
    for k, p in enumerate(fn.params):
        name = f"p{k}"
        t = p.type.name
        if t in ("u64", "b64"):
            params.append(ParamSpec(name, "buffer", "u32", parse_expr(length), "inout"))
            types.append("u64")
        elif t in _SCALAR_TYPES and (p.size_bytes or 0) * 8 == p.type.bits:
            st = _SCALAR_TYPES[t]
            params.append(ParamSpec(name, "scalar", st))
            types.append(st)
            if st[0] in "su":
                fixed[name] = values.get(name, DEFAULT_INT)
        else:
            raise KeqError(f"{ptx_path}: parameter {k} of {kernel} (.{t}"
                           f"{'' if not p.dims else ' array'}) has no default for keq tv")
    unknown = set(values) - set(fixed)
    if unknown:
        raise KeqError(f"--set names {', '.join(sorted(unknown))}, not an integer scalar "
                       f"parameter of {kernel} (p0..p{len(fn.params) - 1})")
    names = tuple(p.name for p in params)
    ref = Side("reference", Path(ptx_path), kernel, _dims(grid), _dims(block), None, None, 0,
               names, ptx_module)
    cand = sass_side(ref, sass_module, Path(sass_path), tuple(types))
    spec = PairSpec(Path(ptx_path), f"tv/{kernel}/{sass_module.arch}", "bitexact",
                    "equivalent", (), f"ptxas translation of {kernel}", ref, cand,
                    tuple(params), target_assumptions=TV_TARGET)
    return spec, fixed


# -- the command --------------------------------------------------------------------------------

def _parse_sets(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        name, eq, val = item.partition("=")
        try:
            out[name.strip()] = int(val, 0)
        except ValueError:
            raise KeqError(f"--set {item}: expected pN=INTEGER") from None
        if not eq:
            raise KeqError(f"--set {item}: expected pN=INTEGER")
    return out


def run(args: argparse.Namespace) -> int:
    from semantics.ptx import parse_ptx_file
    from verifier.api import verdict_json, verdict_lines, verify, writers
    ptx_path = Path(args.ptx)
    module = parse_ptx_file(ptx_path)
    sass_path = Path(args.sass) if args.sass else Path(f"<ptxas -arch={args.arch}>")
    sass = load_sass(args.sass) if args.sass else compile_ptx(ptx_path, args.arch)
    kernels = args.kernels or list(module.entries)
    missing = [k for k in kernels if k not in module.entries]
    if missing:
        raise KeqError(f"{ptx_path}: no kernel named {', '.join(missing)}")
    sets = _parse_sets(args.sets)
    reports, worst = [], 0
    for kernel in kernels:
        values = {k: v for k, v in sets.items()}
        spec, fixed = pair_from_ptx(ptx_path, module, kernel, sass, sass_path, grid=args.grid,
                                    block=args.block, length=args.length, values=values)
        v = verify(spec, fixed=fixed, timeout_s=args.timeout, shapes="enumerate")
        worst = max(worst, EXIT[v.kind], key=lambda e: (0, 2, 1)[e] if e < 3 else 3)
        written = writers(spec, v.counterexample) if v.counterexample is not None and \
            v.counterexample.differences else {}
        if args.json:
            reports.append({"kernel": kernel, "arch": sass.arch, **verdict_json(v, written)})
        else:
            print(f"== {kernel} ({ptx_path} -> {sass.arch} SASS)")
            print("\n".join(verdict_lines(v, written)))
    if args.json:
        print(json.dumps(reports, indent=2))
    return worst
