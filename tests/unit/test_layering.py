"""The layering rules of DESIGN.md and docs/architecture.md, enforced on the source text (imports
are parsed, not run).

- `semantics` never imports `verifier` (the machine model is usable on its own).
- Instruction semantics (`semantics/ops`) never import a solver (z3, pysmt, bitwuzla, cvc5):
  they are written over the Domain primitives only. numpy appears in exactly one ops module,
  `warp.py`, for cross-lane geometry (lane ids, warp bases), which is concrete in every domain.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLVERS = {"z3", "pysmt", "bitwuzla", "cvc5"}
NUMPY_ALLOWED_IN_OPS = {"warp.py"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


SEMANTICS_FILES = sorted((ROOT / "semantics").rglob("*.py"))
OPS_FILES = sorted((ROOT / "semantics" / "ops").glob("*.py"))


def test_there_is_something_to_check():
    assert len(SEMANTICS_FILES) > 10 and len(OPS_FILES) > 5


@pytest.mark.parametrize("path", SEMANTICS_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_semantics_never_imports_verifier(path):
    assert "verifier" not in _imports(path)


@pytest.mark.parametrize("path", OPS_FILES, ids=lambda p: p.name)
def test_ops_use_only_domain_primitives(path):
    imported = _imports(path)
    assert not imported & SOLVERS, f"{path.name} imports a solver: {imported & SOLVERS}"
    if path.name not in NUMPY_ALLOWED_IN_OPS:
        assert "numpy" not in imported, f"{path.name} imports numpy"


# -- the verifier: one-way imports (docs/architecture.md) ------------------------------------

VERIFIER_FILES = sorted((ROOT / "verifier").rglob("*.py"))
# Packages whose modules sit above the core and that the core never imports.
ABOVE_CORE = ("verifier.cli", "verifier.certs", "verifier.fuzz", "verifier.api",
              "verifier.checker", "verifier.pytest_plugin")
# Packages at the bottom: they import nothing else of the verifier.
BOTTOM = ("verifier.spec", "verifier.solvers")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in VERIFIER_FILES}


def _imported(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) for every import of the file, at any depth (function-level and
    TYPE_CHECKING imports included: they are part of the design as much as the others)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names]))
    return out


def _edges(name: str) -> set[str]:
    """The verifier modules `name` imports (`from pkg import mod` is an edge to pkg.mod)."""
    out = set()
    for module, names in _imported(MODULES[name]):
        if not module.startswith("verifier"):
            continue
        subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
        out.update(subs or ([module] if module in MODULES else []))
    out.discard(name)
    return out


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def test_the_verifier_has_no_import_cycle():
    graph = {m: _edges(m) for m in MODULES}
    state: dict[str, int] = {}          # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle = path[path.index(n):] + [n] if n in path else [m, n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n, path + [n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_verifier_imports_run_one_way(name):
    edges = _edges(name)
    if _within(name, BOTTOM):
        outside = {e for e in edges if not _within(e, BOTTOM)}
        assert not outside, f"{name} (bottom layer) imports {sorted(outside)}"
    elif not _within(name, ABOVE_CORE):
        above = {e for e in edges if _within(e, ABOVE_CORE)}
        assert not above, f"{name} (core) imports {sorted(above)}"
    if not _within(name, ("verifier.cli",)):
        assert not {e for e in edges if _within(e, ("verifier.cli",))}, name
    if _within(name, ("verifier.cli", "verifier.certs", "verifier.fuzz",
                      "verifier.pytest_plugin")):
        # (the commands reach a verification through the public API alone)
        assert "verifier.equiv" not in edges, f"{name} imports verifier.equiv: use verifier.api"


@pytest.mark.parametrize("path", VERIFIER_FILES + SEMANTICS_FILES,
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_crosses_a_module(path):
    crossing = [f"{module}.{n}" for module, names in _imported(path)
                if module.startswith(("verifier", "semantics"))
                for n in names if n.startswith("_") and not n.startswith("__")]
    assert not crossing, f"{path.name} imports private names: {crossing}"


# The pipeline's layers (docs/architecture.md): the claim driver chooses coverage strategies,
# a strategy runs the stages, and the stages never reach back up.
PIPELINE_LAYERS = ("verifier.equiv", "verifier.coverage", "verifier.stages")


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _within(m, PIPELINE_LAYERS)))
def test_the_pipeline_runs_one_way(name):
    level = next(i for i, layer in enumerate(PIPELINE_LAYERS) if _within(name, (layer,)))
    above = {e for e in _edges(name) if _within(e, PIPELINE_LAYERS[:level])}
    assert not above, f"{name} imports {sorted(above)}, a layer above it"
