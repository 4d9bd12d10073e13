"""The layering rules of DESIGN.md, enforced on the source text (imports are parsed, not run).

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
