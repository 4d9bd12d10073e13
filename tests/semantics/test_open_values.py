"""What the PTX ISA leaves open, in both domains (`semantics.choices`): registers read before
any write, volatile special registers, and the order of contending atomics. The emulator
resolves each by its `Choices`; the symbolic domain makes it a constant that a model names,
and the emulator given the model's values computes what the symbolic terms say."""

from __future__ import annotations

import numpy as np
import z3

from semantics.choices import Choices, chosen_values
from semantics.machine import prepare, run_kernel
from semantics.machine.symbolic_run import SymBuffer, run_symbolic
from semantics.ptx import parse_ptx

HEAD = ".version 8.8\n.target sm_90\n.address_size 64\n"


def _kernel(body: str, regs: str = ".reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;"):
    text = HEAD + (".visible .entry k(.param .u64 out)\n{\n" + regs + "\n"
                   "ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\n"
                   "mul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n" + body +
                   "st.global.u32 [%rd3], %r2;\nret;\n}\n")
    return prepare(parse_ptx(text, "k.ptx"), "k")


def _concrete(k, n: int, choices: Choices | None = None) -> list[int]:
    out = np.zeros(n, np.uint32)
    return run_kernel(k, None, 1, n, [out], choices=choices, tag="t").buffers[
        "out"].tolist()


def _symbolic(k, n: int) -> list:
    launch = run_symbolic(k, (1, 1, 1), (n, 1, 1), [SymBuffer(32, tuple([0] * n))], tag="t")
    return launch.buffers["out"]


def _eval(term, values: dict) -> int:
    if isinstance(term, int):
        return term
    subst = [(c, z3.BitVecVal(values.get(str(c), 0), c.size()))
             for c in _constants(term)]
    return z3.simplify(z3.substitute(term, *subst)).as_long()


def _constants(t) -> list:
    seen, out, stack = set(), [], [t]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(e)
        stack.extend(e.children())
    return out


def _agree_under(k, n: int, values: dict[str, int]) -> list[int]:
    """The symbolic outputs at the constants' `values` equal the emulator's under them."""
    sym = _symbolic(k, n)
    full = {f"keq!u!{name}": v for name, v in values.items()}
    want = [_eval(t, full) for t in sym]
    got = _concrete(k, n, Choices(values=chosen_values(full)))
    assert got == want, (got, want)
    return got


def test_a_register_read_before_any_write_is_its_launch_value():
    k = _kernel("add.u32 %r2, %r5, %r1;\n")          # %r5 never written
    assert _concrete(k, 4) == [0, 1, 2, 3]            # zero fill
    assert _concrete(k, 4, Choices("pattern")) == [0xA5A5A5A5 + i for i in range(4)]
    sym = _symbolic(k, 4)
    assert all("keq!u!t/k/%r5!t" in str(t) for t in sym)
    assert _agree_under(k, 4, {"t/k/%r5!t2": 40}) == [0, 1, 42, 3]


def test_a_register_written_by_some_lanes_is_its_launch_value_in_the_others():
    k = _kernel("and.b32 %r3, %r1, 1;\nsetp.eq.u32 %p1, %r3, 0;\n@%p1 mov.u32 %r2, 7;\n")
    assert _concrete(k, 4) == [7, 0, 7, 0]
    assert _concrete(k, 4, Choices("pattern")) == [7, 0xA5A5A5A5, 7, 0xA5A5A5A5]
    sym = _symbolic(k, 4)
    assert sym[0] == 7 and sym[2] == 7 and "%r2!t1" in str(sym[1])
    assert _agree_under(k, 4, {"t/k/%r2!t1": 5, "t/k/%r2!t3": 6}) == [7, 5, 7, 6]


def test_a_predicate_read_before_any_write_is_open_too():
    k = _kernel("mov.u32 %r2, 1;\n@%p3 mov.u32 %r2, 2;\n")
    assert _concrete(k, 2) == [1, 1] and _concrete(k, 2, Choices("pattern")) == [2, 2]
    assert _agree_under(k, 2, {"t/k/%p3!t1": 1}) == [1, 2]


def test_warpid_is_fresh_per_read_and_below_nwarpid():
    k = _kernel("mov.u32 %r3, %warpid;\nmov.u32 %r4, %warpid;\nsub.u32 %r2, %r3, %r4;\n")
    assert _concrete(k, 64) == [0] * 64               # natural values: the same warp index
    sym = _symbolic(k, 64)
    assert not isinstance(sym[0], int)                # two reads, two values
    s = z3.Solver()
    s.add(sym[0] != 0)
    assert s.check() == z3.sat
    k2 = _kernel("mov.u32 %r3, %warpid;\nmov.u32 %r4, %nwarpid;\n"
                 "setp.lt.u32 %p1, %r3, %r4;\nselp.u32 %r2, 1, 0, %p1;\n")
    assert set(_concrete(k2, 64, Choices("random:5"))) == {1}
    s = z3.Solver()
    s.add(_symbolic(k2, 64)[40] == 0)
    assert s.check() == z3.unsat                      # %warpid < %nwarpid at every read


def test_contending_atomics_take_effect_in_the_order_of_their_keys():
    body = ("ld.param.u64 %rd4, [out];\natom.global.add.u32 %r2, [%rd4], 1;\n")
    k = _kernel(body)
    # lanes 0..3 each add 1 to out[0] and store the old value to out[lane] (lane 0 last)
    assert _concrete(k, 4)[1:] == [1, 2, 3]           # lane order
    rev = _concrete(k, 4, Choices(schedule="reverse"))
    assert rev[1:] == [2, 1, 0]
    sym = _symbolic(k, 4)
    names = sorted({str(c) for t in sym if not isinstance(t, int) for c in _constants(t)})
    assert names == [f"keq!u!t/atom@k.ptx:14:1!t{i}#0" for i in range(4)]
    order = {"t/atom@k.ptx:14:1!t0#0": 3, "t/atom@k.ptx:14:1!t1#0": 0,
             "t/atom@k.ptx:14:1!t2#0": 2, "t/atom@k.ptx:14:1!t3#0": 1}
    assert _agree_under(k, 4, order)[1:] == [0, 2, 1]
