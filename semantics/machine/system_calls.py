"""Calls of the functions the CUDA runtime provides and a module only declares
(`.extern .func`): device `assert` and `printf`, as nvcc emits them.

- `__assertfail(message, file, line, function, char_size)`: what a failed `assert` calls.
  The thread prints the message and traps: the launch ends with an error
  (cudaErrorAssert). keq treats it as a trap (`Executor.trap_if`): in the candidate it
  refutes where it can happen, with the input; in the reference it is an error about the
  spec (an input the claim allows makes the reference fail). The message names the
  assertion the way CUDA prints it, when its strings are constants of the module.
- `vprintf(format, arguments)`: printf. What it prints is an output of the kernel: each call
  is a `Printed` record (the format, and the bits of the arguments the format reads, per
  lane), in the order the thread makes its calls; `verifier.printed` compares each thread's
  sequence. A format keq cannot read (not a constant string of the module, `%s`, `%p`,
  `%n`) is a `printf` effect instead: the claim is Inconclusive on it (named), unless the
  spec says `allow = ["printf-ignored"]` (printed in the claim). The call's result, the
  number of arguments or a negative error, is an open value.
Every other function without a body is refused by name (`semantics.machine.kernel`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from semantics.ir.nodes import Function, Variable
from semantics.ir.operands import Addr, IntImm, Reg, Sym
from semantics.errors import SourceLoc
from semantics.ir.types import TYPES
from semantics.machine.mentions import mentions
from semantics.machine.printf_format import PrintFormat, parse_format


# name -> (parameters, results) of the declaration nvcc emits
SYSTEM_FUNCTIONS: dict[str, tuple[int, int]] = {"__assertfail": (5, 0), "vprintf": (2, 1)}


def is_system_call(name: str, declared: Function | None) -> bool:
    """A call of a runtime function keq models: declared without a body, with the
    parameters and results CUDA's declaration has."""
    shape = SYSTEM_FUNCTIONS.get(name)
    return (shape is not None and declared is not None and declared.body is None
            and (len(declared.params), len(declared.returns)) == shape)


def c_string(var: Variable) -> str | None:
    """A module variable's initializer as a NUL-terminated C string, or None."""
    if var.init is None or var.type.bits != 8:
        return None
    codes = [int(c) for c in re.findall(r"-?\d+", var.init)]
    if 0 in codes:
        codes = codes[:codes.index(0)]
    try:
        return bytes(c & 0xFF for c in codes).decode("utf-8", "replace")
    except ValueError:
        return None


@dataclass(frozen=True)
class AssertMessage:
    """What a failed `assert` reports (any part keq cannot read is None)."""

    expression: str | None
    file: str | None
    line: int | None
    function: str | None

    def text(self) -> str:
        where = ":".join(str(p) for p in (self.file, self.line) if p is not None)
        out = f"assertion `{self.expression}` failed" if self.expression is not None \
            else "a device assertion failed"
        if where:
            out += f" ({where}"
            out += f", in {self.function})" if self.function else ")"
        return out


@dataclass(frozen=True, eq=False)
class Printed:
    """One `vprintf` call by the lanes of `mask` (a domain predicate): per argument the
    format reads (`format.reads()`), its bits in every lane, and each lane's global thread
    id (`gtid`)."""

    loc: SourceLoc
    format: PrintFormat
    mask: Any
    args: tuple[Any, ...]
    gtid: np.ndarray


def system_call(x, name: str, rets: list, args: list) -> None:
    """Run `name` (a key of SYSTEM_FUNCTIONS) for the executing lanes of the executor `x`
    (untyped, as in `semantics.ops`: the executor imports this module)."""
    if name == "__assertfail":
        x.trap_if(x.d.pconst(True), _assert_message(x, args).text())
        return
    _printf(x, args)
    for r in rets:
        if isinstance(r, Sym) and _result_read(x, r):
            x.param_write(r.name, 0, 4, x.open_value("the result of vprintf", 32))


def _result_read(x, ret: Sym) -> bool:
    """Is the call's result read: loaded (`ld.param [ret]`) into a register that another
    instruction names? nvcc loads it even when the source ignores it."""
    count = mentions(x.k.instrs)
    for ins in x.k.instrs:
        ops = ins.operands
        if ins.opcode == "ld" and len(ops) == 2 and isinstance(ops[1], Addr) \
                and ops[1].base == ret:
            dst = ops[0].elems if hasattr(ops[0], "elems") else (ops[0],)
            if any(not isinstance(r, Reg) or count.get(r, 0) > 1 for r in dst):
                return True
        elif ins.opcode != "call" and any(op == ret for op in ops):
            return True
    return False


def _printf(x, args: list) -> None:
    """Record what the executing lanes print, or a `printf` effect naming why keq cannot."""
    name = _constant_arg(x, args[0])
    var = x.k.global_vars.get(name) if isinstance(name, str) else None
    text = None if var is None else c_string(var)
    if text is None:
        x.effect("printf", "printf with a format that is not a constant string")
        return
    fmt = parse_format(text)
    if fmt.unsupported is not None:
        x.effect("printf", f"printf({_c_literal(text)}): {fmt.unsupported}")
        return
    # The look-back found where the format came from; the pointer the call got must be
    # that string in every lane that prints, or the text is not known.
    d = x.d
    pointer = d.where(x.mask, _pointer_arg(x, args[0]))
    want = x.params.get(("global-var", name))
    if want is None or not d.must_all(d.por(d.pnot(x.mask), d.eq(pointer, d.const(want, 64),
                                                                  64))):
        x.effect("printf", f"printf({_c_literal(text)}) with a format pointer keq cannot "
                 f"follow")
        return
    buf = _pointer_arg(x, args[1])
    values = tuple(x.load("generic", d.add(buf, d.const(o, 64), 64) if o else buf, n, align=n)
                   for o, n in fmt.reads())
    x.prints.append(Printed(x.ins.loc, fmt, x.mask, values, x.global_tid.copy()))


def _pointer_arg(x, arg):
    """A 64-bit call argument's value in every lane."""
    if isinstance(arg, Sym):
        return x.param_read(arg.name, 0, 8)
    return x.read(arg, TYPES["u64"])


def _c_literal(text: str) -> str:
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _assert_message(x, args: list) -> AssertMessage:
    parts = [_constant_arg(x, a) for a in args[:4]]
    text = [c_string(x.k.global_vars[p]) if isinstance(p, str) and p in x.k.global_vars
            else None for p in parts]
    return AssertMessage(text[0], text[1], parts[2] if isinstance(parts[2], int) else None,
                         text[3])


_LOOK_BACK = 48     # instructions: nvcc puts a call's argument set-up right before it


def _constant_arg(x, arg) -> str | int | None:
    """What a call argument was set from, read from the code before the call (for reports
    only, never for a verdict): a module variable's name (`mov.u64 %rd, $str; cvta.global
    .u64 %rd2, %rd; st.param.b64 [param0], %rd2`) or an immediate (`st.param.b32 [param2],
    13`); None otherwise."""
    if not isinstance(arg, Sym):
        return None
    instrs, i = x.k.instrs, x.instr_index
    src, j = None, i - 1
    while j >= max(i - _LOOK_BACK, 0):
        ins, j = instrs[j], j - 1
        ops = ins.operands
        if src is None:
            if ins.opcode == "st" and ops and isinstance(ops[0], Addr) \
                    and ops[0].base == arg and ops[0].offset == 0:
                src = ops[1]
        elif ins.opcode in ("mov", "cvta") and len(ops) == 2 and ops[0] == src:
            src = ops[1]
        if isinstance(src, Sym):
            return src.name
        if isinstance(src, IntImm):
            return src.value
        if src is not None and not isinstance(src, Reg):
            return None
    return None


__all__ = ["SYSTEM_FUNCTIONS", "AssertMessage", "Printed", "c_string", "is_system_call", "system_call"]
