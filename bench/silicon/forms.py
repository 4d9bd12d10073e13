"""The floating-point `mma.sync` forms keq models (semantics/ops/mma.py) and, per form, one
generated one-warp-per-CTA PTX kernel for the silicon check.

The kernel knows nothing of fragment layouts: lane L of instance n loads its own A, B and C
registers from arrays indexed [n][L][register] and stores its D registers the same way. The
host packs matrices into those per-lane registers with keq's layout
(semantics/ops/mma_layout.py), so a wrong layout in keq shows up as a GPU mismatch instead of
being hidden by a kernel that shares keq's assumptions.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from semantics.ops.mma_layout import LAYOUTS, Layout

TARGET = "sm_90"
ACC_BITS = {"f16": 16, "f32": 32, "f64": 64}


@dataclass(frozen=True)
class Form:
    """One `mma.sync.aligned.<shape>.row.col.<d>.<a>.<b>.<c>` form."""

    shape: str
    family: str              # the layout family of semantics/ops/mma_layout.py
    d: str
    a: str
    b: str
    c: str

    @property
    def name(self) -> str:
        """The symbolic domain's function name, as verifier.mma_bounds.tensor_range reads it."""
        return f"mma.{self.shape}.row.col.{self.d}.{self.a}.{self.b}.{self.c}"

    @property
    def ptx_version(self) -> str:
        """The lowest PTX ISA version ptxas 13 accepts for the form on sm_90, so that an
        older driver's JIT can still load most kernels (fp8: 8.4; fp8 into f16: 8.7)."""
        if self.family != "f8":
            return "7.8"
        return "8.7" if self.d == "f16" else "8.4"

    @property
    def layout(self) -> Layout:
        return LAYOUTS[(self.shape, self.family)]

    @property
    def k(self) -> int:
        return self.layout.k

    @property
    def word_bits(self) -> int:
        """Every register of the form is this wide (f64: 64, else 32)."""
        return 64 if self.a == "f64" else 32

    def acc_regs(self, fmt: str) -> int:
        """C's or D's register count: f16 accumulators are packed two to a .b32."""
        n = self.layout.c_count
        return n // 2 if fmt == "f16" else n

    @property
    def counts(self) -> dict[str, int]:
        lay = self.layout
        return {"a": lay.a_regs, "b": lay.b_regs, "c": self.acc_regs(self.c),
                "d": self.acc_regs(self.d)}


def _forms() -> list[Form]:
    out: list[Form] = []
    for shape in ("m16n8k8", "m16n8k16"):
        for acc in ("f32", "f16"):
            out.append(Form(shape, "f16", acc, "f16", "f16", acc))
        out.append(Form(shape, "f16", "f32", "bf16", "bf16", "f32"))
    out += [Form("m16n8k4", "tf32", "f32", "tf32", "tf32", "f32"),
            Form("m16n8k8", "tf32", "f32", "tf32", "tf32", "f32"),
            Form("m8n8k4", "f64", "f64", "f64", "f64", "f64")]
    out += [Form(shape, "f64", "f64", "f64", "f64", "f64")      # sm_90, PTX ISA 7.8
            for shape in ("m16n8k4", "m16n8k8", "m16n8k16")]
    for acc in ("f32", "f16"):
        for a in ("e4m3", "e5m2"):
            for b in ("e4m3", "e5m2"):
                out.append(Form("m16n8k32", "f8", acc, a, b, acc))
    return out


FORMS: list[Form] = _forms()
# keq accepts these, the script does not run them yet: m8n8k4 .f16 computes four products per
# warp in quad-pair layouts (semantics/ops/mma_m8n8k4.py) that bench/silicon/lanes.py does not
# pack, and its .alayout/.blayout are not in Form.
SKIPPED: dict[str, str] = {
    f"mma.m8n8k4.{al}.{bl}.{acc}.f16.f16.{acc}": "quad-pair layouts: not packed by the script yet"
    for al in ("row", "col") for bl in ("row", "col") for acc in ("f16", "f32")}


def _reg_type(form: Form, operand: str) -> str:
    """The PTX register type of an operand: f32/f64 accumulators as floats (what the ISA
    names), packed halves, tf32 and fp8 as .b32."""
    if form.a == "f64":
        return "f64"
    fmt = {"c": form.c, "d": form.d}.get(operand)
    return "f32" if fmt == "f32" else "b32"


def kernel_ptx(form: Form) -> str:
    """The PTX module: entry `silicon_mma(pa, pb, pc, pd)`, one mma per warp, thread index
    `ctaid.x * ntid.x + tid.x` selecting 32 x (registers) words of each array."""
    step = form.word_bits // 8
    lines = [f".version {form.ptx_version}", f".target {TARGET}", ".address_size 64", "",
             ".visible .entry silicon_mma(.param .u64 pa, .param .u64 pb, .param .u64 pc, "
             ".param .u64 pd)", "{"]
    for op, n in form.counts.items():
        lines.append(f".reg .{_reg_type(form, op)} %{op}<{n}>;")
    lines += [".reg .b32 %r<4>;", ".reg .b64 %rd<12>;",
              "mov.u32 %r1, %ctaid.x;", "mov.u32 %r2, %ntid.x;", "mov.u32 %r3, %tid.x;",
              "mad.lo.u32 %r0, %r1, %r2, %r3;"]
    for j, (op, n) in enumerate(form.counts.items()):
        lines += [f"ld.param.u64 %rd{j}, [p{op}];",
                  f"cvta.to.global.u64 %rd{j}, %rd{j};",
                  f"mul.wide.u32 %rd{j + 4}, %r0, {n * step};",
                  f"add.s64 %rd{j + 8}, %rd{j}, %rd{j + 4};"]
        if op != "d":
            t = _reg_type(form, op)
            lines += [f"ld.global.{t} %{op}{i}, [%rd{j + 8}+{i * step}];" for i in range(n)]
    regs = {op: "{" + ", ".join(f"%{op}{i}" for i in range(n)) + "}"
            for op, n in form.counts.items()}
    lines.append(f"mma.sync.aligned.{form.shape}.row.col.{form.d}.{form.a}.{form.b}.{form.c} "
                 f"{regs['d']}, {regs['a']}, {regs['b']}, {regs['c']};")
    t = _reg_type(form, "d")
    lines += [f"st.global.{t} [%rd11+{i * step}], %d{i};" for i in range(form.counts["d"])]
    lines += ["ret;", "}", ""]
    return "\n".join(lines)


def assemble(ptx: str, arch: str = TARGET) -> str | None:
    """ptxas's complaint about the kernel, or None when it assembles (catches PTX errors
    without a GPU)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        r = subprocess.run(["ptxas", f"-arch={arch}", str(src), "-o", str(Path(tmp) / "k.cubin")],
                           capture_output=True, text=True)
        return None if r.returncode == 0 else (r.stderr or r.stdout).strip()


__all__ = ["FORMS", "SKIPPED", "Form", "assemble", "kernel_ptx"]
