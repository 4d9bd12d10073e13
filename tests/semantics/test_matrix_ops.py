"""ldmatrix, stmatrix and movmatrix (`semantics/ops/matrix.py`) against a numpy model of the
PTX ISA's fragment layout (9.7.14.5.15-17: register k of lane i holds row i>>2 of matrix k,
columns 2*(i%4) (low half) and 2*(i%4)+1; `.trans` is the same layout of the transpose).

Each kernel runs two CTAs of two warps. Lanes give their row addresses in a scrambled order
(lane l of warp w: shared row 32w + (5l+3) % 32), so a wrong matrix, row or lane order shows.
The symbolic domain runs the same kernels on solver variables, and its terms evaluated at the
emulator's inputs must give the emulator's outputs.
"""

from __future__ import annotations

import numpy as np
import pytest
import z3

from semantics.errors import PtxSyntaxError, UnsupportedError
from semantics.machine import MemoryFault, prepare, run_kernel
from semantics.machine.memory import UndefinedBehavior
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ops import lookup
from semantics.ptx import parse_ptx

CTAS, WARPS = 2, 2
THREADS = 32 * WARPS
ROWS = CTAS * THREADS                      # one 16-byte shared row per thread
PERM = (np.arange(32) * 5 + 3) % 32        # the row lane l of a warp addresses
FORMS = [(num, trans) for num in (1, 2, 4) for trans in (False, True)]

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
.reg .pred %p<4>;
.reg .b32 %r<48>;
.reg .b64 %rd<16>;
.shared .align 16 .b8 sm[1024];
ld.param.u64 %rd1, [in];
ld.param.u64 %rd2, [out];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %ntid.x;
mad.lo.u32 %r4, %r2, %r3, %r1;
and.b32 %r5, %r1, 31;
shr.u32 %r6, %r1, 5;
mad.lo.u32 %r7, %r5, 5, 3;
and.b32 %r7, %r7, 31;
shl.b32 %r8, %r6, 5;
add.u32 %r7, %r7, %r8;
mov.u32 %r9, sm;
shl.b32 %r10, %r7, 4;
add.u32 %r11, %r9, %r10;
shl.b32 %r12, %r1, 4;
add.u32 %r13, %r9, %r12;
mul.wide.u32 %rd3, %r4, 16;
add.s64 %rd4, %rd1, %rd3;
add.s64 %rd5, %rd2, %rd3;
"""
# %r4 global thread id, %r5 lane, %r11 the shared address of the row this lane gives,
# %r13 this thread's own shared row, %rd4 / %rd5 its 16 bytes of `in` / `out`.
FILL = "ld.global.v4.u32 {%r20,%r21,%r22,%r23}, [%rd4];\n" \
       "st.shared.v4.u32 [%r13], {%r20,%r21,%r22,%r23};\nbar.sync 0;\n"


def _regs(first: int, num: int) -> str:
    return "{" + ",".join(f"%r{first + k}" for k in range(num)) + "}"


def _store_regs(first: int, num: int) -> str:
    """Store registers %r{first}.. to `out` at the thread's place (`num` words per thread)."""
    at = f"mul.wide.u32 %rd6, %r4, {4 * num};\nadd.s64 %rd7, %rd2, %rd6;\n"
    if num == 1:
        return at + f"st.global.u32 [%rd7], %r{first};\n"
    return at + f"st.global.v{num}.u32 [%rd7], {_regs(first, num)};\n"


def _kernel(body: str):
    return prepare(parse_ptx(HEAD + body + "ret;\n}\n", "matrix.ptx"), "k")


def _ld_kernel(num: int, trans: bool, space: str = ".shared", guard: str = ""):
    t = ".trans" if trans else ""
    if space:
        addr = "%r11"
        pre = ""
    else:                                  # generic addressing: the row's generic address
        addr, pre = "%rd9", "cvt.u64.u32 %rd8, %r11;\ncvta.shared.u64 %rd9, %rd8;\n"
    return _kernel(FILL + pre + f"{guard}ldmatrix.sync.aligned.m8n8.x{num}{t}{space}.b16 "
                   f"{_regs(30, num)}, [{addr}];\n" + _store_regs(30, num))


def _st_kernel(num: int, trans: bool):
    t = ".trans" if trans else ""
    load = f"mul.wide.u32 %rd6, %r4, {4 * num};\nadd.s64 %rd7, %rd1, %rd6;\n" + \
        "".join(f"ld.global.u32 %r{30 + k}, [%rd7+{4 * k}];\n" for k in range(num))
    return _kernel("mov.u32 %r20, 0;\nst.shared.v4.u32 [%r13], {%r20,%r20,%r20,%r20};\n"
                   "bar.sync 0;\n" + load +
                   f"stmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 [%r11], {_regs(30, num)};\n"
                   "bar.sync 0;\nld.shared.v4.u32 {%r20,%r21,%r22,%r23}, [%r13];\n"
                   "st.global.v4.u32 [%rd5], {%r20,%r21,%r22,%r23};\n")


def _mov_kernel():
    return _kernel("mul.wide.u32 %rd6, %r4, 4;\nadd.s64 %rd7, %rd1, %rd6;\n"
                   "ld.global.u32 %r30, [%rd7];\n"
                   "movmatrix.sync.aligned.m8n8.trans.b16 %r31, %r30;\n" + _store_regs(31, 1))


# -- the model: the ISA's fragment layout, as numpy indexing ----------------------------------
LANE = np.arange(32)
GROUP, IN_GROUP = LANE >> 2, LANE % 4      # the ISA's groupID and threadID_in_group


def fragment(m: np.ndarray) -> np.ndarray:
    """The 32 words a warp holds of an 8x8 b16 matrix: lane i has row i>>2, columns
    2*(i%4) (low half) and 2*(i%4)+1 (high half)."""
    m = m.astype(np.uint32)
    return m[GROUP, 2 * IN_GROUP] | (m[GROUP, 2 * IN_GROUP + 1] << 16)


def matrix_of(words: np.ndarray) -> np.ndarray:
    """The 8x8 b16 matrix whose fragments the 32 lanes' `words` are."""
    m = np.zeros((8, 8), np.uint16)
    m[GROUP, 2 * IN_GROUP] = words & 0xFFFF
    m[GROUP, 2 * IN_GROUP + 1] = words >> 16
    return m


def _rows(buf: np.ndarray) -> np.ndarray:
    """A buffer of one 16-byte row per thread as [cta, warp, row, column] b16 elements."""
    return buf.view(np.uint16).reshape(CTAS, WARPS, 32, 8)


def model_ldmatrix(inp: np.ndarray, num: int, trans: bool) -> np.ndarray:
    """[cta, warp, lane, register] words ldmatrix gives from shared rows filled by `inp`."""
    rows = _rows(inp)
    out = np.zeros((CTAS, WARPS, 32, num), np.uint32)
    for c in range(CTAS):
        for w in range(WARPS):
            for k in range(num):
                m = rows[c, w][PERM[8 * k:8 * k + 8]]       # row r at lane 8k+r's address
                out[c, w, :, k] = fragment(m.T if trans else m)
    return out


def model_stmatrix(inp: np.ndarray, num: int, trans: bool) -> np.ndarray:
    """[cta, warp, row, column] b16 shared rows after stmatrix of the fragments in `inp`
    (rows no lane addresses stay zero)."""
    regs = inp.reshape(CTAS, WARPS, 32, num)
    out = np.zeros((CTAS, WARPS, 32, 8), np.uint16)
    for c in range(CTAS):
        for w in range(WARPS):
            for k in range(num):
                m = matrix_of(regs[c, w, :, k])
                out[c, w][PERM[8 * k:8 * k + 8]] = m.T if trans else m
    return out


def model_movmatrix(inp: np.ndarray) -> np.ndarray:
    words = inp.reshape(CTAS, WARPS, 32)
    return np.stack([[fragment(matrix_of(words[c, w]).T) for w in range(WARPS)]
                     for c in range(CTAS)])


# -- running both domains ---------------------------------------------------------------------
def _concrete(k, inp: np.ndarray, out_words: int) -> np.ndarray:
    res = run_kernel(k, None, CTAS, THREADS, [inp, np.zeros(out_words, np.uint32)],
                     detect_races=True)
    assert not [e for e in res.effects if e.kind in ("race", "undefined")], res.effects
    return res.buffers["out"]


def _symbolic_agrees(k, inp: np.ndarray, out_words: int, want: np.ndarray,
                     moved: int) -> None:
    """The symbolic run over fresh input words, evaluated at `inp`, gives `want`; the
    `moved` output words that hold input data are terms (the data stayed symbolic)."""
    xs = [z3.BitVec(f"in[{i}]", 32) for i in range(inp.size)]
    launch = run_symbolic(k, (CTAS, 1, 1), (THREADS, 1, 1),
                          [SymBuffer(32, tuple(xs)), SymBuffer(32, (0,) * out_words)])
    values = {str(x): int(v) for x, v in zip(xs, inp)}
    terms = launch.buffers["out"]
    got = [t if isinstance(t, int) else _evaluate(t, values) for t in terms]
    assert got == [int(v) for v in want]
    assert sum(not isinstance(t, int) for t in terms) == moved


def _evaluate(term, values: dict[str, int]) -> int:
    """`term` with its input variables (by name) set to `values`."""
    seen, at, stack = set(), [], [term]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            at.append((e, z3.BitVecVal(values[str(e)], e.size())))
        stack.extend(e.children())
    return z3.simplify(z3.substitute(term, *at)).as_long()


def _words(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


@pytest.mark.parametrize("num,trans", FORMS)
def test_ldmatrix_gives_the_isa_fragment_layout(num, trans):
    inp = _words(ROWS * 4, 10 * num + trans)
    k = _ld_kernel(num, trans)
    got = _concrete(k, inp, ROWS * num)
    want = model_ldmatrix(inp, num, trans)
    assert np.array_equal(got.reshape(want.shape), want)
    _symbolic_agrees(k, inp, ROWS * num, got, ROWS * num)


@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_with_a_generic_address_reads_shared_memory(trans):
    inp = _words(ROWS * 4, 7)
    got = _concrete(_ld_kernel(4, trans, space=""), inp, ROWS * 4)
    assert np.array_equal(got.reshape(CTAS, WARPS, 32, 4), model_ldmatrix(inp, 4, trans))


@pytest.mark.parametrize("num,trans", FORMS)
def test_stmatrix_stores_the_isa_fragment_layout(num, trans):
    inp = _words(ROWS * num, 20 * num + trans)
    k = _st_kernel(num, trans)
    got = _concrete(k, inp, ROWS * 4)
    want = model_stmatrix(inp, num, trans)
    assert np.array_equal(_rows(got), want)
    _symbolic_agrees(k, inp, ROWS * 4, got, ROWS * num)


def test_movmatrix_transposes_the_fragment():
    inp = _words(ROWS, 5)
    k = _mov_kernel()
    got = _concrete(k, inp, ROWS)
    assert np.array_equal(got.reshape(CTAS, WARPS, 32), model_movmatrix(inp))
    _symbolic_agrees(k, inp, ROWS, got, ROWS)


# -- undefined behaviour and refusals ---------------------------------------------------------
def test_ldmatrix_by_part_of_a_warp_is_undefined():
    k = _ld_kernel(1, False, guard="setp.lt.u32 %p1, %r5, 16;\n@%p1 ")
    with pytest.raises(UndefinedBehavior, match="another thread of the warp"):
        run_kernel(k, None, CTAS, THREADS, [_words(ROWS * 4, 1), np.zeros(ROWS, np.uint32)])


def test_ldmatrix_x4_in_a_partial_warp_is_undefined():
    k = _ld_kernel(4, False)
    with pytest.raises(UndefinedBehavior, match="fewer than 32 threads"):
        run_kernel(k, None, 1, 48, [_words(ROWS * 4, 1), np.zeros(ROWS * 4, np.uint32)])


def test_ldmatrix_with_a_generic_address_outside_shared_memory_is_undefined():
    k = _kernel("ldmatrix.sync.aligned.m8n8.x1.b16 {%r30}, [%rd4];\n" + _store_regs(30, 1))
    with pytest.raises(UndefinedBehavior, match="outside shared memory"):
        run_kernel(k, None, CTAS, THREADS, [_words(ROWS * 4, 1), np.zeros(ROWS, np.uint32)])


def test_a_misaligned_row_faults():
    k = _kernel(FILL + "add.u32 %r14, %r11, 8;\n"
                "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r30}, [%r14];\n" + _store_regs(30, 1))
    with pytest.raises(MemoryFault, match="misaligned 16-byte"):
        run_kernel(k, None, CTAS, THREADS, [_words(ROWS * 4, 1), np.zeros(ROWS, np.uint32)])


def test_a_vector_of_the_wrong_length_is_an_error():
    k = _kernel(FILL + "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r30,%r31}, [%r11];\n")
    with pytest.raises(PtxSyntaxError, match="takes 4 register"):
        run_kernel(k, None, 1, 32, [_words(ROWS * 4, 1), np.zeros(1, np.uint32)])


@pytest.mark.parametrize("line", [
    "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r30,%r31}, [%r11];",
    "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r30}, [%r11];",
    "ldmatrix.sync.aligned.m8n8.x1.shared.b8 {%r30}, [%r11];",
    "ldmatrix.aligned.m8n8.x1.shared.b16 {%r30}, [%r11];",
    "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%r11], {%r30};",
    "movmatrix.sync.aligned.m8n8.b16 %r30, %r31;",
])
def test_other_shapes_and_types_are_refused_by_name(line):
    text = HEAD + line + "\nret;\n}\n"
    (ins,) = [i for i in parse_ptx(text, "m.ptx").functions["k"].instructions
              if "matrix" in i.opcode]
    assert lookup(ins.form) is None
    with pytest.raises(UnsupportedError, match="no semantics"):
        prepare(parse_ptx(text, "m.ptx"), "k")
