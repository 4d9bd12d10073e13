"""A SASS kernel prepared for the SIMT executor: `prepare_sass(module, kernel)` returns an
object with the `PreparedKernel` interface (cfg, instrs, semantics, fn.params, layouts,
reg_type), so `Executor`, `run_kernel` and `run_symbolic` run SASS unchanged.

The adapter's choices, each for a reason:
- Parameters: EIATTR_KPARAM_INFO gives each parameter's offset and size in constant bank 0
  from the EIATTR_PARAM_CBANK base; they are named `<kernel>_param_<i>` as nvcc names the PTX
  parameters, so a launch passes the same arguments to a kernel's PTX and SASS. Types come
  from the caller (the pair spec, or the PTX the cubin was compiled from); without them a
  parameter is .u64 (8 bytes) or .b<bits>.
- `c[0x0][off]` below the parameters is the driver's launch block (`cbank_read`): ntid.xyz at
  0x0/0x4/0x8, nctaid.xyz at 0xc/0x10/0x14, the initial stack pointer at 0x28, the global
  memory descriptor at 0x118 (sm_80) / 0x208 (sm_90). Anything else there is refused.
- Control opcodes become the executor's own: BRA -> `bra`, EXIT -> `exit`, RET -> `ret`; a
  `@PT` guard is no guard, and an instruction under `@!PT` never executes (a NOP).
- Registers: R/UR are 32-bit, P/UP predicates; the executor's register map holds them.
- CALL targets (subroutines of the same listing) are prepared as callees that share the
  caller's registers (semantics.sass.ops.control).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from semantics.errors import KeqError, UnsupportedError
from semantics.ir.nodes import Form, Guard, Variable
from semantics.ir.operands import Reg
from semantics.ir.types import TYPES, PtxType
from semantics.machine.kernel import PreparedKernel
from semantics.sass.cfg import always_runs, build_sass_cfg, never_runs
from semantics.sass.nodes import SassFunction, SassInstruction, SassModule
from semantics.sass.operands import SassReg, SassTarget
from semantics.sass.ops.access import SASS_SCOPE, pkey

PRED = TYPES["pred"]
B32 = TYPES["b32"]
_CONTROL = {"BRA": "bra", "EXIT": "exit", "RET": "ret"}
DYNAMIC = "<dynamic shared>"
STACK_TOP = 0x00FFFC00       # c[0x0][0x28]: any value works, keq models no local memory
_DRIVER = {0x0: "%ntid.x", 0x4: "%ntid.y", 0x8: "%ntid.z",
           0xC: "%nctaid.x", 0x10: "%nctaid.y", 0x14: "%nctaid.z"}
_DESCRIPTORS = (0x118, 0x208)


@dataclass(frozen=True)
class SassFnView:
    """The `Function` fields the executor and the launchers read."""

    name: str
    kind: str
    params: tuple[Variable, ...]
    returns: tuple = ()
    local_vars: tuple = ()


@dataclass(eq=False)
class SassKernel(PreparedKernel):
    """A `PreparedKernel` (so `run_kernel` and `run_symbolic` take it as one) whose code is
    SASS: see the module docstring. `source` is the SASS function, `params_at` the
    (cbank offset, size, param name) of each parameter."""

    ISA: ClassVar[str] = "sass"
    source: SassFunction | None = None
    params_at: tuple[tuple[int, int, str], ...] = ()
    param_bank: int = 0
    shared_base: int = 0

    def convergence(self, warp_base):
        # `semantics.sass.convergence.Convergence(warp_base)` orders a converged warp's
        # accesses, but through the concrete detector's happens-before (a whole-warp join per
        # memory instruction) it made `keq tv` of a 256-thread kernel run past 10 minutes;
        # off until the concrete detector keeps warp intervals as the symbolic log does.
        return None

    def reg_type(self, reg) -> PtxType:
        if isinstance(reg, SassReg):
            return PRED if reg.is_predicate else B32
        if isinstance(reg, Reg) and reg.scope == SASS_SCOPE:
            return PRED          # predicates live under `pkey` keys
        return B32

    # -- constant bank ---------------------------------------------------------------------
    def cbank_read(self, x, bank: int, offset: int, nbytes: int):
        """`nbytes` of constant bank `bank` from `offset` as one value (little-endian)."""
        from semantics.sass.ops.access import fail
        d = x.d
        if bank != self.param_bank:
            fail(x, f"constant bank {bank:#x} (only the parameter bank is modelled)")
        pieces = []            # (value, bits), low first
        at, end = offset, offset + nbytes
        while at < end:
            hit = next(((s, n, name) for s, n, name in self.params_at if s <= at < s + n), None)
            if hit is not None:
                s, n, name = hit
                k = min(end, s + n) - at
                pieces.append((x.param_bytes(name, at - s, k), 8 * k))
                at += k
                continue
            if self.params_at and self.params_at[0][0] <= at < self._params_end():
                pieces.append((d.const(0, 8), 8))           # padding between parameters
                at += 1
                continue
            word, k = self._driver_word(x, at, end)
            pieces.append((word, 8 * k))
            at += k
        v, w = pieces[0]
        for p, pw in pieces[1:]:
            v, w = d.concat(p, v, pw, w), w + pw
        return v

    def _params_end(self) -> int:
        s, n, _ = self.params_at[-1]
        return s + n

    def _driver_word(self, x, at: int, end: int):
        from semantics.sass.ops.access import fail
        d = x.d
        if at % 4 or end - at < 4:
            fail(x, f"a partial read of driver constant c[0x0][{at:#x}]")
        if at in _DRIVER:
            return x.special(_DRIVER[at], B32), 4
        if at == 0x28:
            return d.const(STACK_TOP, 32), 4
        if at in _DESCRIPTORS or at - 4 in _DESCRIPTORS:
            return d.const(0, 32), 4
        fail(x, f"driver constant c[0x0][{at:#x}] is not modelled")


def shared_base_of(arch: str) -> int:
    """Where a CTA's user shared memory starts in the addresses LDS/STS see: 0x400 on sm_90
    (the first 1 KiB of the window is reserved), 0 before."""
    digits = "".join(c for c in arch.split("_")[-1] if c.isdigit())
    return 0x400 if digits and int(digits) >= 90 else 0


def _adapt(ins: SassInstruction) -> SassInstruction:
    """The instruction the executor sees: control opcodes renamed, guards normalized, the
    guard predicate under its register-map key."""
    if never_runs(ins):
        return replace(ins, form=Form("NOP"), guard=None)
    guard = None if always_runs(ins) else Guard(pkey(ins.guard.reg), ins.guard.negated)
    op = _CONTROL.get(ins.opcode)
    form = Form(op, ins.form.mods) if op else ins.form
    return replace(ins, form=form, guard=guard)


def _never(x) -> None:
    """An instruction under `@!PT` (ptxas' padding, e.g. `@!PT LDS RZ, [RZ]` before an
    LDGSTS on sm_90): it never executes, so it has no effect (not even its operands' reads)."""


def _semantics(fn: SassFunction) -> list[Callable]:
    from semantics.sass.ops import lookup
    sems, missing = [], []
    for ins in fn.instructions:
        if never_runs(ins):
            sems.append(_never)
            continue
        sem = lookup(ins.form)
        if sem is None:
            missing.append(ins)
        sems.append(sem)
    if missing:
        names = sorted({i.form.name for i in missing})
        more = f" (unsupported here: {', '.join(names)})" if len(names) > 1 else ""
        raise UnsupportedError(f"'{missing[0].form.name}' has no semantics in keq (unsupported "
                               f"SASS instruction in {fn.name}){more}", missing[0].loc)
    return sems


def _param_type(size: int) -> PtxType:
    return TYPES["u64"] if size == 8 else TYPES.get(f"b{size * 8}") or TYPES["b8"]


def prepare_sass(module: SassModule, kernel: str,
                 param_types: Sequence[PtxType] | None = None) -> SassKernel:
    """Prepare kernel `kernel` of a SASS listing for execution. `param_types`: the types of
    its parameters in order (their sizes must match the cubin's)."""
    fn = module.entries.get(kernel)
    if fn is None:
        names = ", ".join(module.entries) or "none"
        raise KeqError(f"{module.path}: no kernel named '{kernel}' in the SASS (kernels: {names})")
    if fn.param_cbank is None and fn.params:
        raise KeqError(f"{module.path}: kernel '{kernel}' has no EIATTR_PARAM_CBANK (a listing "
                       f"without .nv.info, e.g. cuobjdump -sass: disassemble the cubin with "
                       f"nvdisasm instead)")
    if param_types is not None and len(param_types) != len(fn.params):
        raise KeqError(f"{module.path}: kernel '{kernel}' has {len(fn.params)} parameter(s), "
                       f"{len(param_types)} type(s) given")
    params, at = [], []
    for k, p in enumerate(fn.params):
        t = param_types[k] if param_types is not None else _param_type(p.size)
        if t.bits != p.size * 8:
            raise KeqError(f"{module.path}: parameter {k} of '{kernel}' is {p.size} bytes in the "
                           f"cubin, but .{t.name} is {t.bits // 8}")
        name = f"{kernel}_param_{k}"
        params.append(Variable("param", t, name))
        at.append((fn.cbank_offset(p), p.size, name))
    bank = fn.param_cbank.bank if fn.param_cbank is not None else 0
    base = shared_base_of(module.arch)
    static = fn.shared_bytes or 0
    view = SassFnView(fn.name, "entry", tuple(params))
    k = _kernel(module, fn, view, tuple(at), bank, base, static)
    done: dict[str, SassKernel] = {}
    todo = [k]
    while todo:          # every subroutine the kernel calls, transitively, prepared once
        cur = todo.pop()
        for ins in cur.source.instructions:
            t = ins.operands[-1] if ins.opcode == "CALL" and ins.operands else None
            if not isinstance(t, SassTarget) or t.label is None or t.label in cur.callees:
                continue
            if t.label not in done:
                sub = module.by_name.get(t.label)
                if sub is None or sub.kind != "func":
                    raise UnsupportedError(f"CALL of '{t.label}', which is not a subroutine of "
                                           f"this listing", ins.loc)
                done[t.label] = _kernel(module, sub, SassFnView(sub.name, "func", ()),
                                        tuple(at), bank, base, static)
                todo.append(done[t.label])
            cur.callees[t.label] = done[t.label]
    return k


def _kernel(module, fn, view, at, bank, base, static) -> SassKernel:
    sems = _semantics(fn)
    cfg = build_sass_cfg(fn).cfg
    instrs = tuple(_adapt(i) for i in fn.instructions)
    dyn_at = (static + 15) // 16 * 16
    return SassKernel(module=module, fn=view, cfg=cfg, instrs=instrs, semantics=sems,
                      param_offsets={}, shared_offsets={DYNAMIC: dyn_at}, static_shared=static,
                      dynamic_shared_var=DYNAMIC, local_offsets={}, local_size=0,
                      const_offsets={}, const_size=0, global_vars={}, callees={},
                      source=fn, params_at=at, param_bank=bank, shared_base=base)
