"""Test support for the mma forms of semantics/ops/mma*.py: a numpy model of each form's
fragment layouts written from the PTX ISA's formulas (9.7.14.5, "Matrix Fragments for
mma.<shape>"; independent of semantics/ops/mma_layout.py), one-warp-per-problem kernels that
load the fragments, run one mma and store D, and the packing of matrices into fragments.

g = %laneid >> 2, t = %laneid % 4; element i of a fragment, register 0's low element first.
C and D of every form: c_i at row g + 8 (i >= 2), column 2t + (i & 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semantics.machine import prepare, run_kernel
from semantics.ptx import parse_ptx

LANE = np.arange(32)
G, T = LANE >> 2, LANE % 4


def _a(shape: str, fam: str, i: int):
    """(row, col) of a_i per lane, as the ISA writes it (fp8 "f8": the 8-bit figure, as i8)."""
    fam = "i8" if fam == "f8" else fam
    if fam == "b1":             # .b1 (m16n8k256: the ISA's "+ i" for i < 64 read as
        row = G if (i < 32 or 64 <= i < 96) else G + 8      # "+ (i & 0x1F)", mma_b1.py)
        if shape == "m8n8k128":
            row = G
        return row, T * 32 + (i & 0x1F) + (128 if i >= 64 else 0)
    if fam == "f16" and shape == "m16n8k8":
        return (G if i < 2 else G + 8), T * 2 + (i & 1)
    if fam == "f16":                                  # m16n8k16
        row = G if (0 <= i < 2 or 4 <= i < 6) else G + 8
        return row, T * 2 + (i & 1) + (8 if i >= 4 else 0)
    if fam == "tf32" and shape == "m16n8k4":
        return (G if i == 0 else G + 8), T
    if fam == "tf32":                                 # m16n8k8
        return (G if i in (0, 2) else G + 8), (T if i < 2 else T + 4)
    if fam == "f64" and shape == "m8n8k4":
        return G, T
    if fam == "f64" and shape == "m16n8k4":           # sm_90: "groupID for a0, + 8 for a1"
        return (G if i == 0 else G + 8), T
    if fam == "f64" and shape == "m16n8k8":
        return (G if i in (0, 2) else G + 8), (T if i < 2 else T + 4)
    if fam == "f64":                                  # m16n8k16
        return (G if i % 2 == 0 else G + 8), (i * 2 + T if i % 2 == 0 else i * 2 - 2 + T)
    if shape == "m8n8k16":                            # .s8/.u8
        return G, T * 4 + i
    if fam == "i8" and shape == "m16n8k16":
        return (G if i < 4 else G + 8), T * 4 + (i & 3)
    if fam == "i8":                                   # m16n8k32
        row = G if (0 <= i < 4 or 8 <= i < 12) else G + 8
        return row, T * 4 + (i & 3) + (16 if i >= 8 else 0)
    if shape == "m8n8k32":                            # .s4/.u4
        return G, T * 8 + i
    if shape == "m16n8k32":
        return (G if i < 8 else G + 8), T * 8 + (i & 7)
    row = G if (0 <= i < 8 or 16 <= i < 24) else G + 8     # m16n8k64
    return row, T * 8 + (i & 7) + (32 if i >= 16 else 0)


def _b(shape: str, fam: str, i: int):
    """(row, col) of b_i per lane."""
    fam = "i8" if fam == "f8" else fam
    if fam == "b1":
        return T * 32 + (i & 0x1F) + (128 if i >= 32 else 0), G
    if fam == "f16":
        row = T * 2 + i if shape == "m16n8k8" else T * 2 + (i & 1) + (8 if i >= 2 else 0)
    elif fam == "tf32":
        row = T if i == 0 else T + 4
    elif fam == "f64":
        row = T + 4 * i                               # (m8n8k4 and m16n8k4: b0 only)
    elif fam == "i8":
        row = T * 4 + i if shape != "m16n8k32" else T * 4 + (i & 3) + (16 if i >= 4 else 0)
    else:
        row = T * 8 + i if shape != "m16n8k64" else T * 8 + (i & 7) + (32 if i >= 8 else 0)
    return row, G


def c_place(i: int):
    return (G if i < 2 else G + 8), T * 2 + (i & 1)


ELEM_BITS = {"f16": 16, "tf32": 32, "f64": 64, "i8": 8, "i4": 4, "f8": 8, "b1": 1}


@dataclass(frozen=True)
class Form:
    """One mma form: its shape, layout family and types d, a, b, c."""

    shape: str
    fam: str
    types: tuple[str, str, str, str]
    satfinite: bool = False
    bitop: str = ""                 # .b1: "xor" or "and" (then `.<bitop>.popc` follows)

    @property
    def mnk(self) -> tuple[int, int, int]:
        m, rest = self.shape[1:].split("n")
        n, k = rest.split("k")
        return int(m), int(n), int(k)

    @property
    def n_c(self) -> int:
        return self.mnk[0] * self.mnk[1] // 32

    def n_regs(self, which: str) -> int:
        """Registers per lane of operand a, b, c or d."""
        m, n, k = self.mnk
        if which in "ab":
            elems = (m if which == "a" else n) * k // 32
            return elems * ELEM_BITS[self.fam] // (64 if self.fam == "f64" else 32)
        t = self.types[0 if which == "d" else 3]
        return self.n_c // 2 if t == "f16" else self.n_c

    @property
    def line_name(self) -> str:
        sat = ".satfinite" if self.satfinite else ""
        pop = f".{self.bitop}.popc" if self.bitop else ""
        return f"mma.sync.aligned.{self.shape}.row.col{sat}." + ".".join(self.types) + pop

    def __str__(self) -> str:
        return self.line_name


def reg_class(form: Form, which: str) -> tuple[str, int]:
    """(register prefix, bytes) of operand `which`'s registers in the kernel."""
    t = form.types["dabc".index(which)]
    if t == "f64":
        return "%fd", 8
    if t == "f32":
        return "%f", 4
    return "%r", 4


HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
.reg .pred %p<4>;
.reg .b32 %r<160>;
.reg .f32 %f<160>;
.reg .f64 %fd<160>;
.reg .b64 %rd<16>;
ld.param.u64 %rd1, [in];
ld.param.u64 %rd2, [out];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %ntid.x;
mad.lo.u32 %r4, %r2, %r3, %r1;
"""
FIRST = {"a": 10, "b": 50, "c": 70, "d": 90}


def in_bytes(form: Form) -> int:
    return sum(form.n_regs(w) * reg_class(form, w)[1] for w in "abc")


def out_bytes(form: Form) -> int:
    return form.n_regs("d") * reg_class(form, "d")[1]


def operand(form: Form, which: str) -> str:
    p, _ = reg_class(form, which)
    return "{" + ",".join(f"{p}{FIRST[which] + i}" for i in range(form.n_regs(which))) + "}"


def kernel(form: Form, guard: str = "", line: str | None = None):
    """Each thread loads its A, B and C registers (one after another in `in`), runs the mma
    and stores its D registers to `out`."""
    body = f"mul.wide.u32 %rd3, %r4, {in_bytes(form)};\nadd.s64 %rd4, %rd1, %rd3;\n"
    off = 0
    for w in "abc":
        p, size = reg_class(form, w)
        kind = {"%fd": "f64", "%f": "f32", "%r": "u32"}[p]
        for i in range(form.n_regs(w)):
            body += f"ld.global.{kind} {p}{FIRST[w] + i}, [%rd4+{off}];\n"
            off += size
    body += guard + (line or f"{form.line_name} {operand(form, 'd')}, {operand(form, 'a')}, "
                     f"{operand(form, 'b')}, {operand(form, 'c')};\n")
    p, size = reg_class(form, "d")
    kind = {"%fd": "f64", "%f": "f32", "%r": "u32"}[p]
    body += f"mul.wide.u32 %rd5, %r4, {out_bytes(form)};\nadd.s64 %rd6, %rd2, %rd5;\n"
    for i in range(form.n_regs("d")):
        body += f"st.global.{kind} [%rd6+{size * i}], {p}{FIRST['d'] + i};\n"
    return prepare(parse_ptx(HEAD + body + "ret;\n}\n", "mma.ptx"), "k")


def _pack(elems: list[np.ndarray], bits: int, per_reg: int) -> list[np.ndarray]:
    """Elements (per lane, unsigned bit patterns) packed low first into registers."""
    mask = (1 << bits) - 1
    regs = []
    for r in range(len(elems) // per_reg):
        word = np.zeros(32, np.uint64)
        for j in range(per_reg):
            word |= (elems[r * per_reg + j].astype(np.uint64) & np.uint64(mask)) << \
                np.uint64(bits * j)
        regs.append(word)
    return regs


def fragments(form: Form, a_bits: np.ndarray, b_bits: np.ndarray,
              c_bits: np.ndarray) -> np.ndarray:
    """The 32 lanes' input bytes: A, B and C registers, from matrices of bit patterns (A:
    M x K, B: K x N in their element format, C: M x N in C's)."""
    eb = ELEM_BITS[form.fam]
    reg_bits = 64 if form.fam == "f64" else 32
    m, n, k = form.mnk
    regs = {}
    regs["a"] = _pack([a_bits[_a(form.shape, form.fam, i)] for i in range(m * k // 32)],
                      eb, reg_bits // eb)
    regs["b"] = _pack([b_bits[_b(form.shape, form.fam, i)] for i in range(k * n // 32)],
                      eb, reg_bits // eb)
    cbits = 16 if form.types[3] == "f16" else (64 if form.types[3] == "f64" else 32)
    regs["c"] = _pack([c_bits[c_place(i)] for i in range(form.n_c)], cbits, 64 // cbits
                      if cbits == 64 else 32 // cbits)
    cols = []
    for w in "abc":
        size = reg_class(form, w)[1]
        for r in regs[w]:
            word = r.astype(np.uint64)
            cols.append(word.view(np.uint32).reshape(32, 2) if size == 8
                        else word.astype(np.uint32).reshape(32, 1))
    return np.concatenate(cols, axis=1).astype(np.uint32)


def d_matrix(form: Form, out: np.ndarray) -> np.ndarray:
    """The M x N matrix of D bit patterns (uint64) from the 32 lanes' output bytes."""
    m, n, _ = form.mnk
    dt = form.types[0]
    words = out.view(np.uint64) if dt == "f64" else out.astype(np.uint64)
    words = words.reshape(32, -1)
    elems = []
    for r in range(words.shape[1]):
        if dt == "f16":
            elems += [words[:, r] & np.uint64(0xFFFF), words[:, r] >> np.uint64(16)]
        else:
            elems.append(words[:, r])
    mat = np.zeros((m, n), np.uint64)
    for i in range(form.n_c):
        mat[c_place(i)] = elems[i]
    return mat


def run_warps(form: Form, inputs: list[np.ndarray], ctas: int = 1):
    """Run one problem per warp (`inputs`: each warp's `fragments`); returns each warp's
    output bytes (32 lanes x out_bytes/4 words) and the run's effects."""
    lanes = 32 * len(inputs)
    inp = np.concatenate(inputs).ravel()
    out = np.zeros(lanes * out_bytes(form) // 4, np.uint32)
    res = run_kernel(kernel(form), None, ctas, lanes // ctas, [inp, out])
    got = res.buffers["out"].reshape(lanes, -1)
    return [got[32 * w:32 * w + 32] for w in range(len(inputs))], res.effects


# -- the symbolic domain against the emulator -------------------------------------------------
def symbolic_out(form: Form):
    """One warp's `kernel(form)` run symbolically over fresh input words: (the input
    variables, the output buffer's terms, the run's effects)."""
    import z3

    from semantics.machine.symbolic_run import SymBuffer, run_symbolic
    words = 32 * in_bytes(form) // 4
    xs = [z3.BitVec(f"in[{i}]", 32) for i in range(words)]
    launch = run_symbolic(kernel(form), (1, 1, 1), (32, 1, 1),
                          [SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * (8 * out_bytes(form)))])
    return xs, launch.buffers["out"][:32 * out_bytes(form) // 4], launch.effects


def evaluate(terms: list, xs: list, words: np.ndarray, model) -> list[int]:
    """The terms at inputs `xs = words`, each uninterpreted tensor-core function application
    replaced by `model(name, [argument bits])`: what the symbolic domain says the emulator
    must compute, if both gather the same arguments."""
    import z3

    from semantics.choices import FUNCTION_PREFIX
    subst = [(x, z3.BitVecVal(int(v), 32)) for x, v in zip(xs, words.ravel())]
    out = []
    for t in terms:
        t = z3.simplify(z3.substitute(t, *subst)) if z3.is_expr(t) else z3.BitVecVal(int(t), 32)
        apps: dict = {}
        todo = [t]
        while todo:
            u = todo.pop()
            if z3.is_app(u) and u.decl().name().startswith(FUNCTION_PREFIX):
                args = [z3.simplify(c).as_long() for c in u.children()]
                apps[u.get_id()] = (u, z3.BitVecVal(model(
                    u.decl().name()[len(FUNCTION_PREFIX):], args), u.sort().size()))
            elif z3.is_app(u):
                todo.extend(u.children())
        out.append(z3.simplify(z3.substitute(t, *apps.values())).as_long())
    return out
