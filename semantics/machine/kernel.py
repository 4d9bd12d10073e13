"""A kernel prepared for execution: its CFG, the semantic function of each instruction, the
widths of its registers, and the layout of its parameters, shared, local and const memory.

Preparing refuses, by name and location, every instruction that has no semantics: nothing is
skipped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, ClassVar

from semantics.errors import KeqError, UnsupportedError
from semantics.ir.cfg import Cfg, build_cfg
from semantics.ir.nodes import Function, Instruction, Module, Variable
from semantics.ir.operands import Addr, OperandList, Reg, Sym
from semantics.ir.types import PtxType
from semantics.machine.memory import SHARED_SPACING
from semantics.machine.system_calls import is_system_call
from semantics.ops import lookup

_RANGE = re.compile(r"^(.*?)([0-9]+)$")


def align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


@dataclass
class PreparedKernel:
    ISA: ClassVar[str] = "ptx"         # ("sass": `semantics.sass.machine.SassKernel`)
    module: Module
    fn: Function
    cfg: Cfg
    instrs: tuple[Instruction, ...]
    semantics: list[Callable]
    param_offsets: dict[str, int]
    shared_offsets: dict[str, int]
    static_shared: int
    dynamic_shared_var: str | None
    local_offsets: dict[str, int]
    local_size: int
    const_offsets: dict[str, int]
    const_size: int
    global_vars: dict[str, Variable]
    callees: dict[str, "PreparedKernel"] = field(default_factory=dict)
    # runtime functions it calls (`semantics.machine.system_calls`: assert, printf)
    system_calls: frozenset[str] = frozenset()
    _reg_types: dict[tuple[str, int], PtxType] = field(default_factory=dict)
    # Each .shared variable's first byte in a CTA's compact row (declaration order, packed:
    # the bytes the emulator stores), and its declared size (the dynamic array has none).
    # `shared_offsets` are addresses in the shared window, one window per variable
    # (`semantics.machine.memory.SHARED_SPACING`). Empty for SASS (its offsets are the row).
    shared_rows: dict[str, int] = field(default_factory=dict)
    shared_sizes: dict[str, int] = field(default_factory=dict)
    shared_aligns: dict[str, int] = field(default_factory=dict)
    # the kernel as launches run it, by (pointer parameters, layout): `machine.layout`
    _launches: dict = field(default_factory=dict, repr=False)
    # static analyses made on demand, by name (`spin_waits`)
    analyses: dict = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.fn.name

    @cached_property
    def uses_wmma(self) -> bool:
        """Does it run `wmma`? Then its fragments' registers are tracked
        (`semantics.machine.fragments`)."""
        return any(i.opcode == "wmma" for i in self.instrs)

    def convergence(self, warp_base):
        """What the executor tells of each warp's convergence (None: PTX, where only
        `bar.warp.sync` orders a warp; SASS: `semantics.sass.convergence`)."""
        return None

    def reg_type(self, reg: Reg) -> PtxType:
        key = (reg.name, reg.scope)
        t = self._reg_types.get(key)
        if t is None:
            t = self._find_reg_type(reg)
            self._reg_types[key] = t
        return t

    def _find_reg_type(self, reg: Reg) -> PtxType:
        m = _RANGE.match(reg.name)
        for d in self.fn.reg_decls:
            if d.scope != reg.scope:
                continue
            if d.count is None and d.name == reg.name:
                return d.type
            if d.count is not None and m and d.name == m.group(1) and int(m.group(2)) < d.count:
                return d.type
        raise KeqError(f"register {reg.name} has no declaration in {self.fn.name}")


# Calls nested deeper than this are refused by name. Without recursion a call chain is at
# most as deep as the module has functions; each level costs a few Python frames when it runs,
# so the limit keeps well inside Python's own recursion limit. Recursion is refused by name.
MAX_CALL_DEPTH = 64


def prepare(module: Module, kernel: str) -> PreparedKernel:
    fn = module.functions.get(kernel)
    if fn is None or fn.kind != "entry":
        names = ", ".join(module.entries) or "none"
        raise KeqError(f"{module.path}: no kernel (.entry) named '{kernel}' (kernels: {names})")
    return _prepare_function(module, fn, {}, (fn.name,))


def _prepare_function(module: Module, fn: Function, done: dict[str, PreparedKernel],
                      chain: tuple[str, ...]) -> PreparedKernel:
    """Prepare `fn` and, recursively, every function it calls (each once); `chain` holds
    the calls that lead here, the kernel first."""
    instrs = fn.instructions
    sems: list[Callable] = []
    for ins in instrs:
        sem = lookup(ins.form)
        if sem is None:
            raise UnsupportedError(f"'{ins.form.name}' has no semantics in keq (unsupported "
                                   f"instruction in kernel {fn.name})", ins.loc)
        sems.append(sem)
    callees: dict[str, PreparedKernel] = {}
    system_calls: set[str] = set()
    for ins in instrs:
        if ins.opcode == "call":
            name = _callee_name(ins)
            if name in callees:
                continue
            if name in chain:
                cycle = " -> ".join(chain[chain.index(name):] + (name,))
                raise UnsupportedError(f"a recursive call ({cycle}): keq does not model "
                                       f"recursion", ins.loc)
            if len(chain) > MAX_CALL_DEPTH:
                raise UnsupportedError(f"calls nested deeper than {MAX_CALL_DEPTH} levels are "
                                       f"not supported (semantics.machine.kernel.MAX_CALL_DEPTH)",
                                       ins.loc)
            if is_system_call(name, module.declarations.get(name)):
                system_calls.add(name)
                continue
            callee = module.functions.get(name)
            if callee is None or callee.kind != "func":
                raise UnsupportedError(f"call of '{name}', which has no body in this module "
                                       f"(an external or system function)", ins.loc)
            if name not in done:
                done[name] = _prepare_function(module, callee, done, chain + (name,))
            callees[name] = done[name]
    # Parameters are laid out in order at their natural alignment (the ABI of .param space).
    param_offsets: dict[str, int] = {}
    off = 0
    for p in fn.params:
        a = p.align or max(p.type.bits // 8, 1)
        off = align_up(off, a)
        param_offsets[p.name] = off
        off += p.size_bytes or 0
    k = PreparedKernel(module, fn, build_cfg(fn), instrs, sems, param_offsets, {}, 0, None,
                       {}, 0, {}, 0, {}, callees)
    k.system_calls = frozenset(system_calls)
    if fn.kind == "entry":
        _lay_out_memory(module, [k, *call_tree(k)])
    return k


def call_tree(k: PreparedKernel) -> list[PreparedKernel]:
    out: dict[str, PreparedKernel] = {}
    todo = list(k.callees.values())
    while todo:
        c = todo.pop()
        if c.name not in out:
            out[c.name] = c
            todo.extend(c.callees.values())
    return list(out.values())


def _lay_out_memory(module: Module, tree: list[PreparedKernel]) -> None:
    """One shared/local/const layout for a kernel and every function it calls (they run in
    the same threads): module variables any of them references, then each one's own
    variables; dynamic shared memory last. Every function of the tree gets the same tables.
    Shared variables are stored packed in that order (`shared_rows`) but each has an address
    window of its own (`shared_offsets`, see `semantics.machine.memory`)."""
    used = {op.name for k in tree for ins in k.instrs for op in _symbols(ins)}
    shared_offsets: dict[str, int] = {}
    shared_sizes: dict[str, int] = {}
    shared_aligns: dict[str, int] = {}
    local_offsets: dict[str, int] = {}
    const_offsets: dict[str, int] = {}
    dynamic = None
    shared_end = local_end = const_end = 0
    candidates = [v for v in module.variables.values() if v.name in used]
    for k in tree:
        candidates += list(k.fn.local_vars)
    for v in candidates:
        a = v.align or max(v.type.bits // 8, 1)
        size = v.size_bytes
        if v.space == "shared":
            shared_aligns[v.name] = a
            if size is None:
                dynamic = v.name
                continue
            shared_end = align_up(shared_end, a)
            shared_offsets[v.name] = shared_end
            shared_sizes[v.name] = size
            shared_end += size
        elif v.space == "local":
            local_end = align_up(local_end, a)
            local_offsets[v.name] = local_end
            local_end += size or 0
        elif v.space == "const":
            const_end = align_up(const_end, a)
            const_offsets[v.name] = const_end
            const_end += size or 0
    if dynamic is not None:
        shared_offsets[dynamic] = align_up(shared_end, 16)
        shared_aligns[dynamic] = max(shared_aligns[dynamic], 16)
    windows = {name: align_up(i * SHARED_SPACING, shared_aligns[name])
               for i, name in enumerate(shared_offsets)}
    global_vars = {v.name: v for v in module.variables.values()
                   if v.space == "global" and v.name in used}
    for k in tree:
        k.shared_offsets, k.static_shared, k.dynamic_shared_var = \
            windows, shared_end, dynamic
        k.shared_rows, k.shared_sizes, k.shared_aligns = \
            shared_offsets, shared_sizes, shared_aligns
        k.local_offsets, k.local_size = local_offsets, local_end
        k.const_offsets, k.const_size = const_offsets, const_end
        k.global_vars = global_vars


def _callee_name(ins: Instruction) -> str:
    """The direct callee of `call [(rets),] f, (args);` — indirect calls are refused."""
    ops = [op for op in ins.operands if not isinstance(op, OperandList)]
    if len(ops) != 1 or not isinstance(ops[0], Sym):
        raise UnsupportedError(f"indirect call '{ins}' is not supported", ins.loc)
    return ops[0].name


def _symbols(ins: Instruction):
    for op in ins.operands:
        if isinstance(op, Sym):
            yield op
        elif isinstance(op, Addr) and isinstance(op.base, Sym):
            yield op.base


# A race report between two lanes of one warp in a SASS kernel ends with this. In PTX such a
# pair races (independent thread scheduling: only bar.warp.sync orders the warp), but in SASS
# a converged warp issues its lanes' accesses in instruction order, which ptxas relies on
# when it deletes a converged warp's bar.warp.sync. `semantics.sass.convergence` orders them
# where keq is certain the warp is converged; a race it leaves is no refutation (`verifier`
# makes the verdict Inconclusive, named).
ONE_WARP_IN_SASS = "(two lanes of one warp, in SASS)"


def one_warp_in_sass(x, tid: int, other_tid: int) -> bool:
    """Are global thread ids `tid` and `other_tid` lanes of one warp of a SASS kernel?"""
    t = x.geom.threads_per_cta
    return x.k.ISA == "sass" and tid // t == other_tid // t and (tid % t) // 32 == (other_tid % t) // 32
