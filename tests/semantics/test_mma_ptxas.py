"""ptxas agrees with keq on the mma forms of issue 30: every form keq gives semantics to
(sm_90's f64 m16n8k4/k8/k16, m8n8k4 .f16 in every layout with f16 or f32 accumulators)
assembles for sm_90 from CUDA inline asm (nvcc 13, -arch=sm_90 -cubin), and the mixed d/c
forms keq refuses because the ISA forbids them are rejected by ptxas too. Skipped without
nvcc."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from semantics.ops import lookup
from semantics.ptx import parse_ptx

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


def _operands(counts: list[int]) -> tuple[str, ...]:
    """`{%0,%1}, {%2}, ...` for operand register counts."""
    out, n = [], 0
    for c in counts:
        out.append("{" + ",".join(f"%{n + i}" for i in range(c)) + "}")
        n += c
    return tuple(out)


def _kernel(name: str, line: str, counts: list[int], cons: list[str]) -> str:
    """A kernel running `line` on registers read from `x` (d written to `o`)."""
    d, a, b, c = _operands(counts)
    ctype = {"d": "double", "f": "float", "r": "unsigned"}
    ins = [f'"{k}"(({ctype[k]})x[{j}])' for j, k in enumerate(
        [k for k, n in zip(cons[1:], counts[1:]) for _ in range(n)])]
    outs = [f'"={cons[0]}"(v[{j}])' for j in range(counts[0])]
    return (f"__global__ void {name}(double *o, const double *x) {{\n"
            f"  {ctype[cons[0]]} v[{counts[0]}];\n"
            f'  asm volatile("{line} {d}, {a}, {b}, {c};" : {", ".join(outs)} : '
            f'{", ".join(ins)});\n'
            f"  for (int j = 0; j < {counts[0]}; j++) o[j] = v[j];\n}}\n")


F64 = {"m16n8k4": (2, 1), "m16n8k8": (4, 2), "m16n8k16": (8, 4)}
ACCEPTED = [(f"mma.sync.aligned.{s}.row.col.f64.f64.f64.f64", [4, a, b, 4], list("dddd"))
            for s, (a, b) in F64.items()]
ACCEPTED += [(f"mma.sync.aligned.m8n8k4.{al}.{bl}.{acc}.f16.f16.{acc}",
              [4 if acc == "f16" else 8, 2, 2, 4 if acc == "f16" else 8],
              ["r" if acc == "f16" else "f", "r", "r", "r" if acc == "f16" else "f"])
             for al in ("row", "col") for bl in ("row", "col") for acc in ("f16", "f32")]
# the ISA forbids these (".dtype must be the same as .ctype"; m8n8k4: "When .ctype is .f32,
# .dtype must also be .f32")
FORBIDDEN = [(f"mma.sync.aligned.{s}.row.col.{d}.f16.f16.{c}", [n_d, a, b, n_c],
              [kd, "r", "r", kc])
             for s, a, b in (("m16n8k8", 2, 1), ("m16n8k16", 4, 2))
             for d, c, n_d, n_c, kd, kc in (("f32", "f16", 4, 2, "f", "r"),
                                            ("f16", "f32", 2, 4, "r", "f"))]
FORBIDDEN.append(("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32", [4, 2, 2, 8],
                  ["r", "r", "r", "f"]))


def _nvcc(tmp_path, source: str) -> subprocess.CompletedProcess:
    cu = tmp_path / "forms.cu"
    cu.write_text(source)
    return subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(tmp_path / "forms.cubin"),
                           str(cu)], capture_output=True, text=True, timeout=300)


def _keq_accepts(line: str, counts: list[int]) -> bool:
    regs = _operands(counts)
    ptx = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
           ".reg .b32 %r<40>;\n" + line + " " +
           ", ".join(r.replace("%", "%r") for r in regs) + ";\nret;\n}\n")
    (ins,) = [i for i in parse_ptx(ptx, "f.ptx").functions["k"].instructions
              if i.opcode == "mma"]
    return lookup(ins.form) is not None


def test_every_new_form_assembles_for_sm_90(tmp_path):
    src = "".join(_kernel(f"k{j}", *f) for j, f in enumerate(ACCEPTED))
    r = _nvcc(tmp_path, src)
    assert r.returncode == 0, r.stderr
    assert all(_keq_accepts(line, counts) for line, counts, _ in ACCEPTED)


@pytest.mark.parametrize("form", FORBIDDEN, ids=lambda f: f[0])
def test_ptxas_rejects_the_mixed_accumulators_keq_refuses(tmp_path, form):
    r = _nvcc(tmp_path, _kernel("k", *form))
    assert r.returncode != 0 and ".dtype must be" in r.stderr, r.stderr
    assert not _keq_accepts(form[0], form[1])


def test_the_m8n8k4_form_with_an_f16_c_and_f32_d_is_legal_but_refused(tmp_path):
    """`.f32.f16.f16.f16` assembles, but the ISA keys the C/D layout on .ctype alone and does
    not say which one the .f32 D takes: keq refuses it by name rather than guess."""
    form = ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16", [8, 2, 2, 4], ["f", "r", "r", "r"])
    r = _nvcc(tmp_path, _kernel("k", *form))
    assert r.returncode == 0, r.stderr
    assert not _keq_accepts(form[0], form[1])
