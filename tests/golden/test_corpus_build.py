"""The kernel-pair corpus under kernels/ is well formed and its PTX is up to date.

Always: every kernels/**/*.toml pair spec parses, has the keys of the pair-spec format
(DESIGN.md, "The pair spec"), names PTX files that exist and contain the named `.entry`, and
declares as many params (per side: `args`, else the [[param]] list) as that entry has.
Expressions (grid, block, length, assume) are checked with a tiny evaluator over the scalar
ranges; this is a sanity check of the data, not keq's spec loader.

With nvcc on PATH: `python kernels/build.py --check` reproduces the committed PTX (and, in a
separate test that also needs ptxas and nvdisasm, the cubins and SASS).
"""
from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"
BUILD = KERNELS / "build.py"
SPECS = sorted(KERNELS.glob("**/*.toml"))

MODES = {"bitexact", "real"}
EXPECTS = {"equivalent", "not-equivalent", "inconclusive", "bad-spec"}
ACCESS = {"in", "out", "inout", "scratch"}
TYPES = {"f16", "bf16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}
TOP_KEYS = {"name", "description", "mode", "expect", "assume", "allow", "target_assumptions",
            "reference", "candidate", "param"}
SIDE_KEYS = {"ptx", "sass", "kernel", "grid", "block", "args", "dynamic_shared", "then"}
THEN_KEYS = {"ptx", "kernel", "grid", "block", "args", "dynamic_shared", "programmatic"}

_ENTRY = r"\.entry\s+{name}\s*\((?P<params>[^)]*)\)"
_PARAM_LINE = re.compile(r"^\s*\.param\b", re.MULTILINE)


def _id(path: Path) -> str:
    return path.relative_to(KERNELS).as_posix()


def _load(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def entry_param_count(ptx_text: str, kernel: str) -> int | None:
    """Number of .param lines in `.entry kernel(...)`, or None if there is no such entry."""
    m = re.search(_ENTRY.format(name=re.escape(kernel)), ptx_text)
    if m is None:
        return None
    return len(_PARAM_LINE.findall(m.group("params")))


# ---- a tiny evaluator for spec expressions: ints, scalar names, + - * // %, ceil_div/min/max,
# ---- comparisons, and/or/not (assume only)

_FUNCS = {"ceil_div": lambda a, b: -(-a // b), "min": min, "max": max}
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_CMPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
         ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


def spec_eval(expr, env: dict[str, int], allow_bool: bool = False):
    if isinstance(expr, bool):
        raise ValueError(f"boolean where an expression is expected: {expr!r}")
    if isinstance(expr, int):
        return expr
    if not isinstance(expr, str):
        raise ValueError(f"not an int or expression string: {expr!r}")

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise ValueError(f"unknown name {node.id!r} in {expr!r}")
            return env[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS
                and not node.keywords):
            return _FUNCS[node.func.id](*[ev(a) for a in node.args])
        if allow_bool and isinstance(node, ast.Compare):
            vals = [ev(node.left)] + [ev(c) for c in node.comparators]
            return all(_CMPS[type(op)](a, b) for op, a, b in zip(node.ops, vals, vals[1:]))
        if allow_bool and isinstance(node, ast.BoolOp):
            vs = [ev(v) for v in node.values]
            return all(vs) if isinstance(node.op, ast.And) else any(vs)
        if allow_bool and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not ev(node.operand)
        raise ValueError(f"unsupported syntax {ast.dump(node)} in {expr!r}")

    return ev(ast.parse(expr, mode="eval").body)


def scalar_points(params: list[dict]) -> list[dict[str, int]]:
    """Corner points of the scalar ranges (all combinations of each scalar's min and max)."""
    choices = []
    for p in params:
        if "scalar" not in p:
            continue
        if "values" in p:
            vals = sorted(set(p["values"]))
            choices.append([(p["name"], vals[0]), (p["name"], vals[-1])])
        elif "range" in p and p["scalar"][0] in "su":
            lo, hi = p["range"]
            choices.append([(p["name"], lo), (p["name"], hi)])
    return [dict(c) for c in itertools.product(*choices)]


# ---------------------------------------------------------------- tests: always

def test_corpus_is_not_empty():
    assert len(SPECS) >= 10, f"expected the kernel-pair corpus under {KERNELS}"
    buggy = [s for s in SPECS if _load(s)["expect"] == "not-equivalent"]
    assert len(buggy) >= 6


def test_spec_names_are_unique():
    names = [_load(s)["name"] for s in SPECS]
    dupes = {n for n in names if names.count(n) > 1}
    assert not dupes, f"duplicate pair names: {sorted(dupes)}"


@pytest.mark.parametrize("spec_path", SPECS, ids=_id)
def test_spec_is_well_formed(spec_path: Path):
    spec = _load(spec_path)
    where = _id(spec_path)
    assert set(spec) <= TOP_KEYS, f"{where}: unknown keys {set(spec) - TOP_KEYS}"
    for key in ("name", "description", "mode", "expect", "reference", "candidate", "param"):
        assert key in spec, f"{where}: missing key {key!r}"
    assert spec["name"].startswith(spec_path.parent.name + "/"), f"{where}: name should start with the family"
    assert spec["mode"] in MODES, f"{where}: mode {spec['mode']!r}"
    assert spec["expect"] in EXPECTS, f"{where}: expect {spec['expect']!r}"
    assert isinstance(spec["description"], str) and spec["description"].strip()

    params = spec["param"]
    assert isinstance(params, list) and params, f"{where}: no [[param]] entries"
    names = [p.get("name") for p in params]
    assert all(isinstance(n, str) and n for n in names), f"{where}: every param needs a name"
    assert len(set(names)) == len(names), f"{where}: duplicate param names"
    for p in params:
        kinds = [k for k in ("buffer", "scalar", "texture", "surface") if k in p]
        assert len(kinds) == 1, f"{where}: param {p['name']!r} needs exactly one of buffer/scalar/texture/surface"
        if kinds[0] in ("texture", "surface"):     # a view of a buffer param (kernels/texture)
            assert p[kinds[0]] in names and isinstance(p.get("dims"), list), \
                f"{where}: view {p['name']!r} needs a buffer param and dims"
        elif "buffer" in p:
            assert p["buffer"] in TYPES, f"{where}: param {p['name']!r} type {p['buffer']!r}"
            assert p.get("access") in ACCESS, f"{where}: param {p['name']!r} access {p.get('access')!r}"
            assert "length" in p, f"{where}: buffer {p['name']!r} has no length"
        else:
            assert p["scalar"] in TYPES, f"{where}: param {p['name']!r} type {p['scalar']!r}"
            assert not ("range" in p and "values" in p), f"{where}: {p['name']!r} has both range and values"
            if "range" in p:
                lo, hi = p["range"]
                assert lo <= hi, f"{where}: {p['name']!r} range is empty"
    assert any(p.get("access") in ("out", "inout") for p in params), f"{where}: nothing to compare"

    for side in ("reference", "candidate"):
        s = spec[side]
        assert set(s) <= SIDE_KEYS, f"{where}: [{side}] unknown keys {set(s) - SIDE_KEYS}"
        for key in ("ptx", "kernel", "grid", "block"):
            assert key in s, f"{where}: [{side}] missing {key!r}"
        assert len(s["grid"]) == 3 and len(s["block"]) == 3, f"{where}: [{side}] grid/block need 3 entries"
        if "dynamic_shared" in s:
            ds = s["dynamic_shared"]
            assert type(ds) is int and ds >= 0, f"{where}: [{side}] dynamic_shared must be an int >= 0"
        for j, t in enumerate(s.get("then", [])):       # a side's later launches
            assert set(t) <= THEN_KEYS, f"{where}: [[{side}.then]] {j + 1} unknown keys"
            assert {"kernel", "grid", "block", "args"} <= set(t), \
                f"{where}: [[{side}.then]] {j + 1} needs kernel, grid, block and args"
        for launch in [s] + s.get("then", []):
            if "args" in launch:
                args = launch["args"]
                assert len(set(args)) == len(args), f"{where}: [{side}] args repeat a name"
                unknown = set(args) - set(names)
                assert not unknown, f"{where}: [{side}] args name unknown params {unknown}"
    launches = [spec[s] for s in ("reference", "candidate")] + \
        spec["reference"].get("then", []) + spec["candidate"].get("then", [])
    if any("args" in x for x in launches):
        used = set().union(*(set(x.get("args", names)) for x in launches))
        used |= {p.get("texture", p.get("surface")) for p in params if p["name"] in used} - {None}
        assert used == set(names), f"{where}: params used by neither side: {set(names) - used}"


@pytest.mark.parametrize("spec_path", SPECS, ids=_id)
def test_spec_names_existing_ptx_entries(spec_path: Path):
    spec = _load(spec_path)
    where = _id(spec_path)
    names = [p["name"] for p in spec["param"]]
    for side in ("reference", "candidate"):
        s = spec[side]
        ptx = spec_path.parent / s["ptx"]
        assert ptx.is_file(), f"{where}: [{side}] ptx {s['ptx']!r} does not exist"
        count = entry_param_count(ptx.read_text(), s["kernel"])
        assert count is not None, f"{where}: [{side}] {s['ptx']} has no `.entry {s['kernel']}`"
        declared = len(s.get("args", names))
        assert count == declared, (f"{where}: [{side}] .entry {s['kernel']} has {count} params, "
                                   f"the spec declares {declared}")
        if "sass" in s:
            assert (spec_path.parent / s["sass"]).is_file(), f"{where}: [{side}] sass file missing"


@pytest.mark.parametrize("spec_path", SPECS, ids=_id)
def test_spec_expressions_evaluate(spec_path: Path):
    spec = _load(spec_path)
    where = _id(spec_path)
    params = spec["param"]
    points = scalar_points(params)
    assert points
    for env in points:
        if not all(spec_eval(a, env, allow_bool=True) for a in spec.get("assume", [])):
            continue
        for side in ("reference", "candidate"):
            for key in ("grid", "block"):
                dims = [spec_eval(e, env) for e in spec[side][key]]
                assert all(isinstance(d, int) and d >= 1 for d in dims), f"{where}: [{side}] {key} {dims} at {env}"
        for p in params:
            if "buffer" in p:
                n = spec_eval(p["length"], env)
                assert n >= 0, f"{where}: length of {p['name']!r} is {n} at {env}"
    # assume must be satisfiable somewhere in the ranges (checked by brute force when small)
    if "assume" in spec:
        ranges = []
        for p in params:
            if "scalar" in p and "range" in p:
                lo, hi = p["range"]
                ranges.append([(p["name"], v) for v in range(lo, hi + 1)])
            elif "scalar" in p and "values" in p:
                ranges.append([(p["name"], v) for v in p["values"]])
        assert any(all(spec_eval(a, dict(c), allow_bool=True) for a in spec["assume"])
                   for c in itertools.product(*ranges)), f"{where}: assume is unsatisfiable"


def test_every_ptx_file_is_used_or_a_variant():
    """Each primary NAME.ptx built from a CUDA or Triton source is named by at least one spec."""
    used = set()
    for s in SPECS:
        spec = _load(s)
        for side in ("reference", "candidate"):
            used.add((s.parent / spec[side]["ptx"]).resolve())
    primary = [p for p in KERNELS.glob("*/*.ptx") if p.name.count(".") == 1]
    unused = [p.relative_to(KERNELS).as_posix() for p in primary if p.resolve() not in used]
    assert not unused, f"PTX files no pair spec uses: {unused}"


# ---------------------------------------------------------------- tests: need the toolchain

def _build_module():
    spec = importlib.util.spec_from_file_location("keq_kernels_build", BUILD)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look the module up while the class is created
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(spec.name, None)
    return mod


def _run_build(*args: str, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BUILD), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def test_build_script_help():
    proc = _run_build("--help", timeout=60)
    assert proc.returncode == 0
    assert "--check" in proc.stdout


def _pinned_mismatch(mod, tool: str, path: str) -> str | None:
    """A skip reason when `tool` at `path` is not the version the corpus was built with."""
    ver = mod.tool_version([path, "--version"])
    pinned = mod.PINNED_VERSIONS[tool]
    if not ver.endswith(", " + pinned):
        return f"{tool} is {ver!r} but the committed corpus was built with {pinned} (see kernels/README.md)"
    return None


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH; cannot rebuild the PTX")
def test_committed_ptx_matches_build():
    reason = _pinned_mismatch(_build_module(), "nvcc", shutil.which("nvcc"))
    if reason:
        pytest.skip(reason)
    proc = _run_build("--check", "--no-sass", timeout=300)
    assert proc.returncode == 0, f"kernels/build.py --check --no-sass failed:\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("ptxas") is None,
                    reason="nvcc or ptxas is not on PATH; cannot rebuild cubins and SASS")
def test_committed_cubin_and_sass_match_build():
    mod = _build_module()
    nvdisasm = mod.find_nvdisasm(None)
    if nvdisasm is None:
        pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm); cannot rebuild SASS")
    for tool, path in (("nvcc", shutil.which("nvcc")), ("ptxas", shutil.which("ptxas")), ("nvdisasm", nvdisasm)):
        reason = _pinned_mismatch(mod, tool, path)
        if reason:
            pytest.skip(reason)
    proc = _run_build("--check", timeout=600)
    assert proc.returncode == 0, f"kernels/build.py --check failed:\n{proc.stdout}\n{proc.stderr}"
