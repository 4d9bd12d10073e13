"""A kernel prepared for execution: its CFG, the semantic function of each instruction, the
widths of its registers, and the layout of its parameters, shared, local and const memory.

Preparing refuses, by name and location, every instruction that has no semantics: nothing is
skipped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from semantics.errors import KeqError, UnsupportedError
from semantics.ir.cfg import Cfg, build_cfg
from semantics.ir.nodes import Function, Instruction, Module, Variable
from semantics.ir.operands import Addr, Reg, Sym
from semantics.ir.types import PtxType
from semantics.ops import lookup

_RANGE = re.compile(r"^(.*?)([0-9]+)$")


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


@dataclass
class PreparedKernel:
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
    _reg_types: dict[tuple[str, int], PtxType] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.fn.name

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


def prepare(module: Module, kernel: str) -> PreparedKernel:
    fn = module.functions.get(kernel)
    if fn is None or fn.kind != "entry":
        names = ", ".join(module.entries) or "none"
        raise KeqError(f"{module.path}: no kernel (.entry) named '{kernel}' (kernels: {names})")
    instrs = fn.instructions
    sems: list[Callable] = []
    for ins in instrs:
        sem = lookup(ins.form)
        if sem is None:
            raise UnsupportedError(f"'{ins.form.name}' has no semantics in keq (unsupported "
                                   f"instruction in kernel {fn.name})", ins.loc)
        sems.append(sem)
    for ins in instrs:
        if ins.opcode == "call":
            raise UnsupportedError(f"calls ('{ins.form.name}') are not supported yet: inline "
                                   f"the callee (kernel {fn.name})", ins.loc)
    # Parameters are laid out in order at their natural alignment (the ABI of .param space).
    param_offsets: dict[str, int] = {}
    off = 0
    for p in fn.params:
        a = p.align or max(p.type.bits // 8, 1)
        off = _align(off, a)
        param_offsets[p.name] = off
        off += p.size_bytes or 0
    # Shared: module variables this kernel references, then its own; dynamic shared last.
    used = {op.name for ins in instrs for op in _symbols(ins)}
    shared_offsets: dict[str, int] = {}
    local_offsets: dict[str, int] = {}
    const_offsets: dict[str, int] = {}
    dynamic = None
    shared_end = local_end = const_end = 0
    candidates = [v for v in module.variables.values() if v.name in used] + list(fn.local_vars)
    for v in candidates:
        a = v.align or max(v.type.bits // 8, 1)
        size = v.size_bytes
        if v.space == "shared":
            if size is None:
                dynamic = v.name
                continue
            shared_end = _align(shared_end, a)
            shared_offsets[v.name] = shared_end
            shared_end += size
        elif v.space == "local":
            local_end = _align(local_end, a)
            local_offsets[v.name] = local_end
            local_end += size or 0
        elif v.space == "const":
            const_end = _align(const_end, a)
            const_offsets[v.name] = const_end
            const_end += size or 0
    if dynamic is not None:
        shared_offsets[dynamic] = _align(shared_end, 16)
    global_vars = {v.name: v for v in module.variables.values()
                   if v.space == "global" and v.name in used}
    return PreparedKernel(module, fn, build_cfg(fn), instrs, sems, param_offsets,
                          shared_offsets, shared_end, dynamic, local_offsets, local_end,
                          const_offsets, const_end, global_vars)


def _symbols(ins: Instruction):
    for op in ins.operands:
        if isinstance(op, Sym):
            yield op
        elif isinstance(op, Addr) and isinstance(op.base, Sym):
            yield op.base
