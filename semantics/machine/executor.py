"""The SIMT executor: runs a prepared kernel over a batch of CTAs in any domain.

All threads of the batch are lanes of one vector and execute each instruction together under an
active mask. A divergent branch pushes both paths on a reconvergence stack and the paths run one
after the other, meeting again at the branch's immediate post-dominator (the stack-based SIMT
model). Running CTAs of a batch in lockstep is one legal schedule; for race-free kernels every
schedule gives the same result, and races are what the verifier checks separately.

The executor is also the context (`x`) that instruction semantics receive: operand reads and
masked writes, memory through a domain-specific port, warp geometry, barriers, and effects
(approximations and undefined behaviour, recorded with the lanes they happen on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from semantics.choices import Choices, KeySpace, LaneKeys
from semantics.errors import KeqError, ShapeMachineryNeeded, SourceLoc
from semantics.ir.cfg import EXIT
from semantics.ir.nodes import Instruction
from semantics.ir.operands import Addr, FloatImm, IntImm, Neg, Operand, Reg, Sink, SpecialReg, Sym
from semantics.ir.types import PtxType
from semantics.machine import special_registers
from semantics.machine.async_copies import AsyncCopies
from semantics.machine.fragments import FragmentTags
from semantics.machine.system_calls import system_call
from semantics.machine.termination import (LoopWatch, Parking, Unscheduled, loop_name,
                                           others_could_run, sibling, step_budget)
from semantics.machine.kernel import PreparedKernel
from semantics.machine.memory import SHARED_WINDOW, Trap, UndefinedBehavior
from semantics.machine.reads_ahead import dead_destinations, mentions_from, opcodes_from


class UnrollLimit(KeqError):
    """A loop whose exit depends on symbolic data ran more iterations than the bound.
    `lanes`: each lane's condition of still being in the loop (the verifier asks a solver
    for inputs that keep a lane there, and the emulator whether it ever leaves)."""

    def __init__(self, message: str, loc: SourceLoc, bound: int, lanes=None) -> None:
        super().__init__(message)
        self.loc, self.bound, self.lanes = loc, bound, lanes


class ExecutionError(KeqError):
    """The kernel did something with no defined result (barrier divergence, step limit...)."""

    def __init__(self, message: str, loc: SourceLoc | None = None) -> None:
        super().__init__(message)
        self.loc = loc

    def render(self) -> str:
        return f"{self.loc}: error: {self}" if self.loc else f"error: {self}"


class NonTermination(ExecutionError):
    """The kernel does not finish: a loop spins without progress, or the step budget ran out
    (`semantics.machine.termination`)."""


@dataclass(frozen=True)
class Effect:
    """A side channel (Alive2 style): something a result depends on besides the inputs."""

    kind: str            # "approximation" | "undefined" | "nondeterministic"
    what: str            # e.g. "ex2.approx.f32", "division by zero"
    loc: SourceLoc


class MemoryPort(Protocol):
    def load(self, x: "Executor", space: str, addr: Any, nbytes: int, mask: Any,
             align: int | None) -> Any: ...
    def store(self, x: "Executor", space: str, addr: Any, nbytes: int, value: Any,
              mask: Any, align: int | None) -> None: ...
    def atomic(self, x: "Executor", space: str, addr: Any, nbytes: int, update, mask: Any) -> Any: ...


def thread_name_of(geom: "Geometry", global_tid: int) -> str:
    """'block (x,y,z) thread (x,y,z)' of a global thread id (CTA-major, x fastest)."""
    c, t = divmod(global_tid, geom.threads_per_cta)
    gx, gy, _ = geom.grid
    cta = (c % gx, (c // gx) % gy, c // (gx * gy))
    bx, by, _ = geom.block
    tid = (t % bx, (t // bx) % by, t // (bx * by))
    return f"block ({cta[0]},{cta[1]},{cta[2]}) thread ({tid[0]},{tid[1]},{tid[2]})"


@dataclass(frozen=True)
class Geometry:
    """Launch geometry of one batch: which CTAs, and the block shape."""

    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    ctas: tuple[tuple[int, int, int], ...]

    @property
    def threads_per_cta(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def lanes(self) -> int:
        return self.threads_per_cta * len(self.ctas)


class Executor:
    def __init__(self, kernel: PreparedKernel, domain, port: MemoryPort, geom: Geometry,
                 params: dict[str, Any], *, max_steps: int | None = None,
                 dynamic_shared: int = 0, unroll: int | None = None,
                 caller: "Executor | None" = None,
                 special_terms: dict[str, Any] | None = None,
                 prune=None, settle=None, choices: Choices | None = None,
                 tag: str = "k") -> None:
        self.k = kernel
        self.d = domain
        self.port = port
        self.geom = geom
        self.params = params
        self.max_steps = step_budget() if max_steps is None else max_steps
        self.unroll = unroll
        self.visits: dict[int, int] = {}
        self.dynamic_shared = dynamic_shared
        self.regs: dict[Reg, Any] = {}
        # Registers some lanes of which hold no written value (a placeholder 0): per register,
        # the lanes certainly unwritten (a bool array) and, per lane written only under a
        # symbolic condition, the condition under which it is not. A read by such a lane gets
        # the register's unspecified launch value (`_launch_value`), fixed per thread.
        self.undef: dict[Reg, tuple[np.ndarray, dict[int, Any]]] = {}
        # What the ISA leaves open is resolved by `choices` (semantics.choices); `tag` names
        # this kernel's run in the names of its unspecified values (the pair's role).
        self.choices = choices if choices is not None else \
            (caller.choices if caller is not None else Choices())
        self.tag = caller.tag if caller is not None else tag
        self._keys: dict[KeySpace, LaneKeys] = {}
        self._key_names: dict[KeySpace, list[str]] = {}
        # Fresh reads per (site, what), counted per lane; calls per callee (a frame's
        # registers start unwritten at each call): shared by every frame of one launch.
        self.reads: dict[tuple, np.ndarray] = caller.reads if caller is not None else {}
        self.calls: dict[str, int] = caller.calls if caller is not None else {}
        self.frame = kernel.name
        if caller is not None:
            k = self.calls[kernel.name] = self.calls.get(kernel.name, 0) + 1
            self.frame = f"{kernel.name}#{k}"
        self.effects: list[Effect] = []
        # What `printf` calls print, in the order they run (`system_calls.Printed`): one list
        # per launch, shared by every frame.
        self.prints: list = caller.prints if caller is not None else []
        self.effect_keys: set[tuple[str, str, SourceLoc]] = set()
        self.ins: Instruction | None = None
        self.mask: Any = None
        n = geom.lanes
        t = geom.threads_per_cta
        lane = np.arange(n, dtype=np.int64)
        self.lane_in_cta = lane % t
        self.cta_of_lane = lane // t
        bx, by, _ = geom.block
        self._special: dict[str, np.ndarray] = {
            "%tid.x": self.lane_in_cta % bx, "%tid.y": (self.lane_in_cta // bx) % by,
            "%tid.z": self.lane_in_cta // (bx * by),
            "%laneid": self.lane_in_cta % 32,
        }
        ctas = np.array(geom.ctas, dtype=np.int64).reshape(-1, 3)
        for k, c in enumerate("xyz"):
            self._special[f"%ntid.{c}"] = np.full(n, geom.block[k])
            self._special[f"%nctaid.{c}"] = np.full(n, geom.grid[k])
            self._special[f"%ctaid.{c}"] = ctas[self.cta_of_lane, k]
        # Special registers whose value is a symbolic term, the same in every lane (a
        # symbolic launch shape's %nctaid): they override the concrete table.
        self.special_terms = dict(special_terms or {})
        # `prune(mask) -> mask`: drop lanes whose symbolic mask is infeasible (the verifier's
        # solver); called on loop re-entry so loops bounded by symbolic values terminate.
        self.prune = prune
        # `settle(mask) -> mask`: a symbolic lane mask that decides the same way in every
        # allowed launch shape becomes that concrete value (the verifier evaluates it over
        # all of them). Exact within the claim, and it spares the lane `If(mask, new, old)`
        # merges and symbolic address resolution.
        self.settle = settle
        # Merge avoidance (see `semantics.machine.reads_ahead`): the mask the current block
        # was entered with, the reconvergence stack, and what pending lanes may still read.
        self.block_mask: Any = None
        self.stack: list[list] = []
        self._ahead: list[frozenset] | None | bool = False       # False: not computed yet
        self._dead: frozenset[int] | None | bool = False
        self._others: frozenset | None = None
        self._opcodes: list[frozenset] | None = None      # (`may_meet_later`)
        lid = self._special["%laneid"]
        self._special["%lanemask_eq"] = np.left_shift(1, lid)
        self._special["%lanemask_lt"] = np.left_shift(1, lid) - 1
        self._special["%lanemask_le"] = np.left_shift(1, lid + 1) - 1
        self._special["%lanemask_ge"] = (~(np.left_shift(1, lid) - 1)) & 0xFFFFFFFF
        self._special["%lanemask_gt"] = (~(np.left_shift(1, lid + 1) - 1)) & 0xFFFFFFFF
        # First lane of each lane's warp (warps never span CTAs).
        self.warp_base = self.cta_of_lane * t + (self.lane_in_cta // 32) * 32
        # Lanes that are done: exited threads, and in a called function the lanes that did not
        # make the call or have returned. `thread_exits` are lanes that ran `exit` here.
        self.exited = domain.pconst(False) if caller is None else domain.pnot(caller.mask)
        self.thread_exits = domain.pconst(False)
        self.caller = caller
        # `cp.async` copies in flight, per lane (`semantics.machine.async_copies`), and the
        # serial of the one being issued while its accesses run (the race detectors read it).
        self.async_copies = AsyncCopies.for_lanes(geom.lanes) if caller is None \
            else caller.async_copies
        self.async_copy: int | None = None
        # .param variables of this frame (call arguments and return values), per lane:
        # name -> {(offset, bytes): value}
        self.param_store: dict[str, dict[tuple[int, int], Any]] = {}
        self.barrier_epoch = 0
        # Per CTA of the batch: how many barriers it has passed (its barrier interval).
        self.cta_epoch = np.zeros(len(geom.ctas), dtype=np.int64) if caller is None \
            else caller.cta_epoch        # one barrier count per CTA, whatever the frame
        # Per lane: how many bar.warp.sync its whole warp has run (`warp_sync`); the symbolic
        # race log orders a warp's accesses in different counts.
        self.warp_epoch = np.zeros(geom.lanes, dtype=np.int64) if caller is None \
            else caller.warp_epoch
        # Per CTA: the barriers it may pass, each the (symbolic) condition under which all
        # its live threads arrive there (a barrier in a loop over a symbolic trip count).
        # Two accesses are in one interval when the same certain barriers precede them and
        # none of the possible barriers between them runs (`SymbolicRaceLog`).
        self.cta_barriers: list[list] = [[] for _ in range(len(geom.ctas))] if caller is None \
            else caller.cta_barriers
        gx, gy, _ = geom.grid
        linear_cta = ctas[:, 0] + ctas[:, 1] * gx + ctas[:, 2] * gx * gy
        self.global_tid = linear_cta[self.cta_of_lane] * t + self.lane_in_cta
        self.instr_index = 0
        # Set when a branch or guard depends on symbolic data: the set of memory accesses is
        # then data-dependent (the verifier needs to know).
        self.symbolic_control = False
        self.blocks_seen: set[int] = set()
        self.blocks_entered: set[int] = set()
        self._watch = LoopWatch()
        self._parking = Parking()
        self.branches_seen: set[tuple[int, bool]] = set()
        # Thread-instructions executed (concrete domain only): each basic-block run adds its
        # length times the lanes that entered it (guarded-off lanes count, as on hardware).
        self.thread_instrs = 0
        # Registers holding wmma fragment elements (`semantics.machine.fragments`).
        self.fragments = FragmentTags() if kernel.uses_wmma else None
        # SASS: which warps the hardware certainly has converged (`semantics.sass.convergence`)
        self.convergence = kernel.convergence(self.warp_base) if caller is None else \
            caller.convergence

    # -- operand access (the API of semantic functions) ------------------------------------
    @property
    def form(self):
        return self.ins.form

    def operand(self, i: int) -> Operand:
        return self.ins.operands[i]

    def _resize(self, v, have: int, want: PtxType | int, signed: bool | None = None):
        """Width-adapt a value: truncate, or extend by `signed` (default: `want`'s
        signedness). PTX extends narrow ld/cvt results by the *instruction* type."""
        w = want if isinstance(want, int) else want.bits
        if have == w:
            return v
        if have > w:
            return self.d.extract(v, w - 1, 0, have)
        if signed is None:
            signed = False if isinstance(want, int) else want.is_signed
        return self.d.sext(v, have, w) if signed else self.d.zext(v, have, w)

    def read(self, i: int | Operand, t: PtxType):
        op = self.ins.operands[i] if isinstance(i, int) else i
        d = self.d
        if isinstance(op, Reg):
            rt = self.k.reg_type(op)
            if rt.kind == "pred":
                return d.bool_to_bv(self.read_pred(op), t.bits)
            v = self.regs.get(op)
            if v is None:
                v = self._launch_value(op, rt.bits)
            elif op in self.undef:
                v = self._defined(op, v, rt.bits)
            return self._resize(v, rt.bits, t)
        if isinstance(op, IntImm):
            return d.const(op.value, t.bits)
        if isinstance(op, FloatImm):
            return d.const(_float_imm_bits(op, t), t.bits)
        if isinstance(op, SpecialReg):
            return self.special(op.name, t)
        if isinstance(op, Sym):
            return d.const(self.symbol_address(op.name), t.bits)
        raise ExecutionError(f"operand '{op}' cannot be read as a .{t.name} value", self.ins.loc)

    def read_pred(self, i: int | Operand):
        op = self.ins.operands[i] if isinstance(i, int) else i
        if isinstance(op, Neg):
            return self.d.pnot(self.read_pred(op.operand))
        if isinstance(op, Reg):
            rt = self.k.reg_type(op)
            if rt.kind == "pred":
                v = self.regs.get(op)
                if v is None:
                    return self._as_pred(self._launch_value(op, 1))
                if op in self.undef:
                    return self._as_pred(self._defined(op, self.d.bool_to_bv(v, 1), 1))
                return v
            return self.d.pnot(self.d.eq(self.read(op, rt), self.d.const(0, rt.bits), rt.bits))
        if isinstance(op, IntImm):
            return self.d.pconst(op.value != 0)
        raise ExecutionError(f"operand '{op}' is not a predicate", self.ins.loc)

    def write(self, i: int | Operand, value, t: PtxType, mask=None) -> None:
        op = self.ins.operands[i] if isinstance(i, int) else i
        if isinstance(op, Sink):
            return
        if not isinstance(op, Reg):
            raise ExecutionError(f"cannot write to operand '{op}'", self.ins.loc)
        rt = self.k.reg_type(op)
        if rt.kind == "pred":
            self.write_pred(op, self.d.pnot(self.d.eq(value, self.d.const(0, t.bits), t.bits)))
            return
        v = self._resize(value, t.bits, rt, signed=t.is_signed)
        self._commit(op, v, rt.bits, mask)

    def write_pred(self, i: int | Operand, p, mask=None) -> None:
        op = self.ins.operands[i] if isinstance(i, int) else i
        if isinstance(op, Sink):
            return
        m = self.mask if mask is None else mask
        if self.d.must_all(m) or self._unobserved(op, mask):
            self.regs[op] = p
            self.undef.pop(op, None)
            return
        old = self._merge_base(op, m, 1, pred=True)
        self.regs[op] = self.d.pite(m, p, old)

    def _unobserved(self, reg: Reg, mask) -> bool:
        """Can no lane outside the current path read `reg` again? Then a write under the
        block's own mask needs no merge with the old value. Lanes outside that mask have
        exited or wait in a pending stack entry; only those may read it."""
        if mask is not None or self.mask is not self.block_mask \
                or self.d.is_concrete(self.mask):
            return False         # a guarded write: lanes of this very path keep `old`
        if self._others is None:
            if self._ahead is False:
                self._ahead = mentions_from(self.k.cfg, self.k.instrs)
            if self._ahead is None:
                self._others = frozenset({None})
            else:
                self._others = frozenset().union(
                    *(self._ahead[e[0]] for e in self.stack[:-1] if e[0] != EXIT))
        return None not in self._others and reg not in self._others

    def _commit(self, reg: Reg, v, w: int, mask) -> None:
        m = self.mask if mask is None else mask
        if self.d.must_all(m) or self._unobserved(reg, mask):
            self.regs[reg] = v
            self.undef.pop(reg, None)
            return
        old = self._merge_base(reg, m, w)
        self.regs[reg] = self.d.ite(m, v, old, w)

    # -- registers no instruction wrote (PTX ISA 5.1.1: their values are unspecified) ------
    def _launch_value(self, reg: Reg, w: int, only=None):
        """The value `reg` holds in each lane before any write: fixed by the hardware,
        unknown, the same at every read (one constant per thread and register)."""
        self.effect("uninitialized", f"register {reg.name} read before any write",
                    None if only is None else _pred_of(self.d, only))
        return self.d.unspecified(f"{self.tag}/{self.frame}/{reg.name}", w,
                                  self.lane_keys(KeySpace.THREAD), self.choices, only=only)

    def _as_pred(self, v):
        return self.d.pnot(self.d.eq(v, self.d.const(0, 1), 1))

    def _defined(self, reg: Reg, v, w: int):
        """`v` with the lanes that never wrote `reg`, and may read it now, given their launch
        values: lanes certainly unwritten get it, lanes written under a condition get
        `If(unwritten, launch value, v)` unless that condition cannot hold where this read
        happens (`settle`: decided alike at every allowed launch shape)."""
        certain, conds = self.undef[reg]
        now = _maybe(self.mask)
        undef = certain & now
        d = self.d
        if conds:
            lanes = [i for i in conds if now[i]]
            if lanes and self.settle is not None:
                tests = [False] * self.geom.lanes
                for i in lanes:
                    m = self.mask[i]
                    tests[i] = conds[i] if m is True else _pand_term(m, conds[i])
                settled = self.settle(tests)
                lanes = [i for i in lanes if not (settled[i] is False)]
            if lanes:
                launch = self._launch_value(reg, w, only=_lanes_mask(lanes, self.geom.lanes))
                v = list(v)
                for i in lanes:
                    v[i] = _ite_term(conds[i], launch[i], v[i], w)
        if not undef.any():
            return v
        launch = self._launch_value(reg, w, only=undef)
        return d.ite(_pred_of(d, undef), launch, v, w)

    def _merge_base(self, reg: Reg, m, w: int, pred: bool = False):
        """The old value a masked write of `reg` merges with, and the bookkeeping of which
        lanes stay unwritten: lanes the write certainly covers become written, lanes it
        certainly misses stay as they were, and a lane written under a symbolic condition
        stays unwritten where the condition fails (`_defined` decides at the read)."""
        old = self.regs.get(reg)
        if old is None:
            entry = (np.ones(self.geom.lanes, dtype=bool), {})
            old = self.d.pconst(False) if pred else self.d.const(0, w)
        else:
            entry = self.undef.get(reg)
            if entry is None:
                return old
        certain, conds = entry
        sure, maybe = _certain(m), _maybe(m)
        conditional = maybe & ~sure
        new_conds = {i: c for i, c in conds.items() if not sure[i]}
        for i in np.flatnonzero(conditional & (certain | np.isin(np.arange(certain.size),
                                                                list(conds)))).tolist():
            missed = _not_term(m[i])
            new_conds[i] = missed if i not in conds else _pand_term(conds[i], missed)
        left = certain & ~maybe
        if left.any() or new_conds:
            self.undef[reg] = (left, new_conds)
        else:
            self.undef.pop(reg, None)
        return old

    # -- keys of unspecified values ----------------------------------------------------------
    def lane_key_name(self, space: KeySpace, lane: int) -> str:
        """The key one lane's unspecified value of `space` has in constant names."""
        names = self._key_names.get(space)
        if names is None:
            names = self._key_names[space] = self.lane_keys(space).symbolic_names()
        return names[lane]

    def lane_keys(self, space: KeySpace) -> LaneKeys:
        """Which thread, warp or CTA each lane's unspecified value belongs to. With one
        symbolic CTA for every CTA (`%ctaid` a term), the keys are those within the CTA."""
        keys = self._keys.get(space)
        if keys is None:
            symbolic_cta = any(n.startswith("%ctaid") for n in self.special_terms)
            t = self.geom.threads_per_cta
            cta = self.global_tid // t
            if space is KeySpace.THREAD:
                exact, local = self.global_tid, self.lane_in_cta
            elif space is KeySpace.WARP:
                local = (self.lane_in_cta // 32) * 32
                exact = cta * t + local
            else:
                exact, local = cta, np.zeros_like(cta)
            keys = self._keys[space] = LaneKeys(space, exact, local, symbolic_cta)
        return keys

    def special(self, name: str, t: PtxType):
        term = self.special_terms.get(name)
        if term is not None:
            return self._resize(self.d.splat(term, 32), 32, t.bits, False)
        arr = self._special.get(name)
        if arr is None:
            if name == "%dynamic_smem_size":
                return self.d.const(self.dynamic_shared, t.bits)
            if not special_registers.is_open(name):
                special_registers.refuse(self, name)
            v, w = special_registers.read_open(self, name)
            return self._resize(v, w, t.bits, False)
        return self.d.from_ints(arr, t.bits)

    def _spin(self, pc: int, mask):
        """The path on top of the stack re-entered block `pc` with nothing changed: run a
        waiting sibling path first (it may be what this loop waits for), or end the lanes
        that spin (`semantics.machine.termination`). Returns the mask to go on with, or None
        when the stack changed."""
        stack = self.stack
        other = sibling(stack, self.d)
        shared = self._watch.reads_shared(self)
        self._watch.forget(pc, stack[-1])
        if other is not None:
            stack.append(stack.pop(other))     # (it runs to its reconvergence point first)
            return None
        if self._parking.park(self, mask):
            return None
        self.mask = mask
        self.ins = self.k.instrs[self.k.cfg.blocks[pc].start]
        if shared and others_could_run(self, mask):
            raise Unscheduled(f"{loop_name(self, pc)} waits while other threads that lockstep "
                              f"execution holds back could change what it reads", self.ins.loc)
        what = f"{loop_name(self, pc)} spins forever: it comes back with the same values " \
               f"and no thread can change what it reads"
        certain = _certain(mask)
        if certain.any():
            raise NonTermination(f"{what} ({self.thread_name(int(np.flatnonzero(certain)[0]))})",
                                 self.ins.loc)
        self.undefined_if(self.d.pconst(True), what, NonTermination)
        self.exited = self.d.por(self.exited, mask)     # (they never leave the loop)
        stack.pop()
        return None

    def _taken_first(self, pc: int) -> bool:
        """Which path of the divergent branch ending block `pc` runs first: the schedule's
        (`Choices.taken_first`; the default, lane order, runs the taken path first)."""
        key = (self.k.name, pc, "branch")
        visit = self.visits.get(key, 0)
        self.visits[key] = visit + 1
        return self.choices.taken_first(f"{self.k.name}@{pc}", visit)

    def read_count(self, site) -> np.ndarray:
        """How many times each lane has run the current instruction's `site` before (a
        fresh value's read count: `semantics.choices`); counts the lanes that may run it."""
        key = (self.k.name, self.instr_index, site)
        counts = self.reads.get(key)
        if counts is None:
            counts = self.reads[key] = np.zeros(self.geom.lanes, dtype=np.int64)
        before = counts.copy()
        counts += _maybe(self.mask)
        return before

    def symbol_address(self, name: str) -> int:
        k = self.k
        if name in k.shared_offsets:
            return k.shared_offsets[name]
        if name in k.local_offsets:
            return k.local_offsets[name]
        if name in k.const_offsets:
            return k.const_offsets[name]
        if name in k.param_offsets:
            return k.param_offsets[name]
        addr = self.params.get(("global-var", name))
        if addr is not None:
            return addr
        raise ExecutionError(f"symbol '{name}' has no address in this launch", self.ins.loc)

    def space_of_symbol(self, name: str) -> str:
        k = self.k
        for space, table in (("shared", k.shared_offsets), ("local", k.local_offsets),
                             ("const", k.const_offsets), ("param", k.param_offsets)):
            if name in table:
                return space
        return "global"

    # -- memory ----------------------------------------------------------------------------
    def address(self, i: int, width: int = 64):
        """The address an `[base+offset]` operand denotes, as a `width`-bit value."""
        op = self.ins.operands[i]
        if not isinstance(op, Addr):
            raise ExecutionError(f"expected an address operand, found '{op}'", self.ins.loc)
        d = self.d
        if op.base is None:
            base = d.const(0, width)
        elif isinstance(op.base, Reg):
            rt = self.k.reg_type(op.base)
            base = self._resize(self.read(op.base, rt), rt.bits, width)
        else:
            base = d.const(self.symbol_address(op.base.name), width)
        return d.add(base, d.const(op.offset, width), width) if op.offset else base

    def load(self, space: str, addr, nbytes: int, mask=None, align: int | None = None):
        return self.port.load(self, space, addr, nbytes, self.mask if mask is None else mask,
                              align)

    def store(self, space: str, addr, nbytes: int, value, mask=None,
              align: int | None = None) -> None:
        self.port.store(self, space, addr, nbytes, value, self.mask if mask is None else mask,
                        align)

    def atomic(self, space: str, addr, nbytes: int, update, mask=None,
               discarded: bool = False):
        """An atomic update; `atomic_site` names the order keys of its lanes (the order in
        which contending lanes take effect: `semantics.machine.atomic_order`), one per
        lane and execution; `discarded`: the instruction returns no old value (`red`)."""
        self.atomic_site = (f"{self.tag}/atom@{self.site}",
                            self.lane_keys(KeySpace.THREAD).counted(
                                self.read_count(("atom",))))
        self.atomic_unread = discarded or self.result_unread
        # what the race log compares cross-instruction atomics by: the same commutative
        # update with no old value read cannot show its order (`symbolic_races`)
        self.atomic_class = getattr(update, "op", "*") \
            if self.atomic_unread and getattr(update, "order_free", False) else "*"
        self.atomic_update = update
        return self.port.atomic(self, space, addr, nbytes, update,
                                self.mask if mask is None else mask)

    def param_read(self, name: str, offset: int, nbytes: int):
        """`ld.param`: a kernel parameter, or a .param variable of this frame."""
        entries = self.param_store.get(name)
        if entries is None:
            if name in self.params:
                return self.param_bytes(name, offset, nbytes)
            if any(v.name == name and v.space == "param" for v in self.k.fn.local_vars):
                return self.d.const(0, nbytes * 8)       # declared, never written
            raise ExecutionError(f"'{name}' is not a parameter of {self.k.name}", self.ins.loc)
        hit = entries.get((offset, nbytes))
        if hit is not None:
            return hit
        for (o, n), v in entries.items():
            if o <= offset and offset + nbytes <= o + n:
                lo = (offset - o) * 8
                return self.d.extract(v, lo + nbytes * 8 - 1, lo, n * 8)
        return self.d.const(0, nbytes * 8)

    def param_write(self, name: str, offset: int, nbytes: int, value, mask=None) -> None:
        """`st.param` into a .param variable of this frame (masked like a register)."""
        m = self.mask if mask is None else mask
        entries = self.param_store.setdefault(name, {})
        old = entries.get((offset, nbytes))
        if old is None:
            old = self.d.const(0, nbytes * 8)
        for key in [k for k in entries if k != (offset, nbytes)
                    and k[0] < offset + nbytes and offset < k[0] + k[1]]:
            del entries[key]        # a partial overlap: the narrower view is stale
        entries[(offset, nbytes)] = value if self.d.must_all(m) else \
            self.d.ite(m, value, old, nbytes * 8)

    def call(self, name: str, rets: list, args: list) -> None:
        """Run a `.func` for the active lanes, in a frame of its own (a runtime function:
        `semantics.machine.system_calls`)."""
        if name in self.k.system_calls:
            system_call(self, name, rets, args)
            return
        callee = self.k.callees[name]
        sub = Executor(callee, self.d, self.port, self.geom, self.params,
                       max_steps=self.max_steps, dynamic_shared=self.dynamic_shared,
                       unroll=self.unroll, caller=self, special_terms=self.special_terms,
                       prune=self.prune, settle=self.settle)
        if len(args) != len(callee.fn.params) or len(rets) != len(callee.fn.returns):
            raise ExecutionError(f"call of {name} with {len(args)} argument(s) and "
                                 f"{len(rets)} result(s); it takes {len(callee.fn.params)} "
                                 f"and {len(callee.fn.returns)}", self.ins.loc)
        for p, a in zip(callee.fn.params, args):
            if isinstance(a, Sym):
                sub.param_store[p.name] = dict(self.param_store.get(a.name, {}))
            else:
                sub.param_store[p.name] = {(0, p.type.bits // 8): self.read(a, p.type)}
        sub.run()
        for r, p in zip(rets, callee.fn.returns):
            if not isinstance(r, Sym):
                raise ExecutionError(f"a call result must be a .param variable, not '{r}'",
                                     self.ins.loc)
            for (o, n), v in sub.param_store.get(p.name, {}).items():
                self.param_write(r.name, o, n, v)
        self.exited = self.d.por(self.exited, sub.thread_exits)
        self.thread_exits = self.d.por(self.thread_exits, sub.thread_exits)
        for e in sub.effects:
            key = (e.kind, e.what, e.loc)
            if key not in self.effect_keys:
                self.effect_keys.add(key)
                self.effects.append(e)
        self.symbolic_control |= sub.symbolic_control
        self.thread_instrs += sub.thread_instrs

    def param_bytes(self, name: str, offset: int, nbytes: int):
        """A kernel parameter's bytes [offset, offset+nbytes) as a uniform value."""
        value, width = self.params[name]
        w = nbytes * 8
        if offset * 8 + w > width:
            raise ExecutionError(f"read past the end of parameter '{name}'", self.ins.loc)
        return self.d.extract(self.d.splat(value, width), offset * 8 + w - 1, offset * 8, width)

    def thread_name(self, lane: int) -> str:
        return self.thread_name_of(int(self.global_tid[lane]))

    def thread_name_of(self, global_tid: int) -> str:
        return thread_name_of(self.geom, global_tid)

    # -- undefined behaviour and open values -----------------------------------------------
    def undefined_if(self, cond, what: str, error=None) -> None:
        """Undefined behaviour where `cond` holds in an executing lane (DESIGN.md: in the
        candidate it refutes, in the reference it is an error about the spec): raised as a
        fault where it certainly happens; under a symbolic condition an obligation of the
        symbolic launch (`ShapeObligation`, decided with the bounds), which a fixed-input run
        leaves to that machinery (`ShapeMachineryNeeded`)."""
        self._fault_if(cond, what, "undefined behaviour", error)

    def trap_if(self, cond, what: str) -> None:
        """A trap where `cond` holds in an executing lane (`trap`, a failed `assert`): the
        launch ends in an error, judged like undefined behaviour (`undefined_if`)."""
        self._fault_if(cond, what, "trap", None)

    def _fault_if(self, cond, what: str, kind: str, error) -> None:
        d = self.d
        m = d.pand(self.mask, cond)
        certain = _certain(m)
        if certain.any():
            lane = int(np.flatnonzero(certain)[0])
            if error is not None:
                raise error(f"{what} ({self.thread_name(lane)})", self.ins.loc)
            fault = Trap if kind == "trap" else UndefinedBehavior
            raise fault(f"{kind}: {what}", self.ins.loc, self.k.name,
                        self.thread_name(lane), 0)
        maybe = _maybe(m)
        if not maybe.any():
            return
        lanes = np.flatnonzero(maybe).tolist()
        if getattr(self.port, "exists_of_lane", None) is None:
            raise ShapeMachineryNeeded(f"'{self.form.name}' may have {kind} ({what}) under a "
                                       f"data-dependent condition", self.ins.loc)
        from semantics.machine.symbolic_port import undefined_obligation
        # (in a maximal launch, only where the lane's CTA exists at the shape)
        self.port.obligations.append(undefined_obligation(
            f"'{self.form.name}': {what} (first: {self.thread_name(lanes[0])})", self.ins.loc,
            [self.port.own_condition(m[i], i) for i in lanes], kind))

    def may_meet_later(self, opcode: str) -> bool:
        """May a path waiting on the stack still reach an instruction of `opcode` (a warp
        operation that lanes absent from this one might meet it on, sm_70's independent
        thread scheduling)? Waiting paths resume at their entry and at every join below."""
        if self._opcodes is None:
            self._opcodes = opcodes_from(self.k.cfg, self.k.instrs)
        for entry in self.stack[:-1]:
            for pc in (entry[0], entry[1]):
                if pc != EXIT and opcode in self._opcodes[pc]:
                    return True
        return False

    def open_value(self, what: str, w: int, lanes=None):
        """A value the ISA leaves open, chosen afresh at each execution (a `shfl` reading a
        lane that does not take part): one per lane and read (`semantics.choices`)."""
        self.effect("nondeterministic", what,
                    None if lanes is None else _pred_of(self.d, lanes))
        keys = self.lane_keys(KeySpace.THREAD).counted(self.read_count(("open", what)))
        return self.d.unspecified(f"{self.tag}/{what}@{self.ins.loc}", w, keys, self.choices,
                                  only=lanes)

    def fence(self) -> None:
        """A `fence`/`membar` by the executing lanes: the memory port's race detection orders
        accesses through it (`semantics.machine.happens_before`)."""
        hook = getattr(self.port, "fence", None)
        if hook is not None:
            hook(self, np.flatnonzero(_certain(self.mask)))

    def grid_wait(self) -> None:
        """`griddepcontrol.wait` by the executing lanes: where the memory port logs a
        programmatic dependent launch, what they access from here on is ordered after the
        launch before (`semantics.machine.grid_dependency`)."""
        hook = getattr(self.port, "grid_wait", None)
        if hook is not None:
            hook(self, np.flatnonzero(_maybe(self.mask)))

    def certain_lanes(self, p=None) -> np.ndarray:
        """The lanes where `p` (default: the mask) certainly holds."""
        return np.flatnonzero(_certain(self.mask if p is None else p))

    def maybe_lanes(self, p=None) -> np.ndarray:
        """The lanes where `p` (default: the mask) may hold."""
        return np.flatnonzero(_maybe(self.mask if p is None else p))

    def complete_async(self, done: list[tuple[int, np.ndarray]]) -> None:
        """The `cp.async` copies `done` ((serial, lanes) each) complete here: the memory
        port's race detection ends their time in flight (`semantics.machine.async_copies`)."""
        hook = getattr(self.port, "complete_async", None)
        if hook is not None:
            for serial, lanes in done:
                hook(self, serial, lanes)

    def warp_sync(self, lanes: np.ndarray, whole_warp: bool) -> None:
        """`bar.warp.sync` by `lanes` (one warp's participants; `whole_warp`: every thread
        of the warp that has not exited): the memory port's race detection orders their
        accesses through it, and a whole warp's starts a new warp interval."""
        if whole_warp:
            self.warp_epoch[lanes] += 1
        hook = getattr(self.port, "warp_sync", None)
        if hook is not None:
            hook(self, lanes, whole_warp)

    # -- effects, barriers -----------------------------------------------------------------
    def effect(self, kind: str, what: str, cond=None) -> None:
        m = self.mask if cond is None else self.d.pand(self.mask, cond)
        if not self.d.may_any(m):
            return
        key = (kind, what, self.ins.loc)
        if key not in self.effect_keys:
            self.effect_keys.add(key)
            self.effects.append(Effect(kind, what, self.ins.loc))

    def _threads_exited(self):
        """Lanes whose thread has exited (in a called function, `exited` also holds lanes
        that merely did not make the call)."""
        if self.caller is None:
            return self.exited
        return self.d.por(self.caller._threads_exited(), self.thread_exits)

    def barrier(self) -> None:
        """bar.sync: every CTA with a lane here must have all its live lanes here."""
        d = self.d
        live = d.pnot(self._threads_exited())
        missing = d.pand(live, d.pnot(self.mask))
        arrival: dict[int, tuple | None] = {}       # per CTA, see `_arrival`

        def arrives(cta: int) -> tuple | None:
            if cta not in arrival:
                arrival[cta] = self._arrival(cta, live)
            return arrival[cta]
        if d.may_any(missing):
            here = np.asarray(_concrete_bools(self.mask), dtype=bool)
            miss = np.asarray(_concrete_bools(missing), dtype=bool)
            ctas_here = set(self.cta_of_lane[here].tolist())
            bad = [i for i in np.nonzero(miss)[0].tolist() if self.cta_of_lane[i] in ctas_here
                   and arrives(int(self.cta_of_lane[i])) is None]
            if bad:
                raise ExecutionError(
                    f"barrier divergence: {self.thread_name(bad[0])} does not reach this "
                    f"'{self.ins.form.name}' while other threads of its block do",
                    self.ins.loc)
        self.barrier_epoch += 1
        # A new barrier interval for CTAs whose lanes certainly arrive. Under a symbolic mask
        # the barrier runs exactly where the mask holds when every live lane of the CTA
        # arrives under that one mask (`_arrival`); it is recorded with that condition.
        # Otherwise it counts as no barrier: fewer intervals can only show more races.
        surely = np.array([isinstance(m, (bool, np.bool_)) and bool(m) for m in self.mask],
                          dtype=bool)
        certain = np.unique(self.cta_of_lane[surely])
        self.cta_epoch[certain] += 1
        maybe = np.array([not isinstance(m, (bool, np.bool_)) for m in self.mask], dtype=bool)
        for cta in set(np.unique(self.cta_of_lane[maybe]).tolist()) - set(certain.tolist()):
            how = arrives(cta)
            if how is not None and how[0] == "s":
                self.cta_barriers[cta].append(how[1])

    @property
    def site(self) -> str:
        """The current instruction's place, for the names of what the ISA leaves open there:
        the file's name, not its path (a reproducer replays from any checkout)."""
        loc = self.ins.loc
        return f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}:{loc.col}"

    @property
    def result_unread(self) -> bool:
        """Does no instruction ever read the register the current instruction writes first
        (an atomic whose old value is unused)? Then a memory port need not build it."""
        if self._dead is False:
            self._dead = dead_destinations(self.k.instrs)
        return self._dead is not None and self.instr_index in self._dead

    def _arrival(self, cta: int, live) -> tuple | None:
        """("c", bool) or ("s", mask): the one mask every live lane of `cta` arrives under
        (all of them live or exited for certain); None when they differ. ("c", False) when
        no lane is live. When they all share one, they all reach the barrier or none does:
        no divergence, whatever the mask's value (a loop over a symbolic trip count that
        every thread runs alike)."""
        lanes = np.nonzero(self.cta_of_lane == cta)[0].tolist()
        found: tuple | None = None
        for i in lanes:
            if isinstance(live[i], (bool, np.bool_)) and not live[i]:
                continue                     # exited for sure
            if not isinstance(live[i], (bool, np.bool_)):
                return None
            m = self.mask[i]
            here = ("c", bool(m)) if isinstance(m, (bool, np.bool_)) else ("s", m)
            if found is None:
                found = here
            elif found[0] != here[0] or (here[0] == "c" and found[1] != here[1]) or \
                    (here[0] == "s" and found[1].get_id() != here[1].get_id()):
                return None
        return found or ("c", False)

    # -- the SIMT loop ---------------------------------------------------------------------
    def run(self) -> None:
        k = self.k
        cfg = k.cfg
        if not cfg.blocks:
            return
        d = self.d
        stack: list[list] = [[0, EXIT, d.pconst(True)]]
        self.stack = stack
        steps = 0
        sems = k.semantics
        instrs = k.instrs
        frags = self.fragments
        counting = isinstance(self.exited, np.ndarray)
        while stack or self._parking.resume(stack):
            top = stack[-1]
            pc, rpc, mask = top
            if pc == rpc or pc == EXIT:
                stack.pop()
                continue
            mask = d.pand(mask, d.pnot(self.exited))
            if self.settle is not None and not d.is_concrete(mask):
                mask = self.settle(mask)
            if not d.may_any(mask):
                stack.pop()
                continue
            block = cfg.blocks[pc]
            self.blocks_seen.add(pc)
            if pc in self.blocks_entered and self._watch.spinning(self, pc, top):
                mask = self._spin(pc, mask)
                if mask is None:
                    continue
            self.blocks_entered.add(pc)
            if self.unroll is not None and self.symbolic_control:
                n = self.visits.get(pc, 0) + 1
                self.visits[pc] = n
                if n > 1 and self.prune is not None and not d.is_concrete(mask):
                    mask = self.prune(mask)
                    if not d.may_any(mask):
                        stack.pop()
                        continue
                if n > self.unroll:
                    label = block.labels[0] if block.labels else f"block {pc}"
                    raise UnrollLimit(f"the loop at {label} depends on symbolic data and did "
                                      f"not finish within {self.unroll} iterations",
                                      instrs[block.start].loc, self.unroll, list(mask))
            self.block_mask, self._others = mask, None
            conv = self.convergence
            if conv is not None:
                conv.block(self, mask)
            if counting:
                self.thread_instrs += (block.end - block.start) * int(np.count_nonzero(mask))
            for idx in range(block.start, block.end):
                ins = instrs[idx]
                self.ins = ins
                self.instr_index = idx
                if conv is not None:
                    conv.instruction(self, ins.opcode, mask)
                m = mask
                if ins.guard is not None:
                    g = self.read_pred(ins.guard.reg)
                    m = d.pand(m, d.pnot(g) if ins.guard.negated else g)
                    if self.settle is not None and not d.is_concrete(m):
                        m = self.settle(m)
                    if not self.symbolic_control and not d.is_concrete(m):
                        self.symbolic_control = True
                self.mask = m
                op = ins.opcode
                if op == "bra" or op in ("ret", "exit", "trap"):
                    break
                if d.may_any(m):
                    if frags is not None and op != "wmma":
                        frags.plain(self, ins)
                    sems[idx](self)
            steps += block.end - block.start
            if steps > self.max_steps:
                raise NonTermination(f"{loop_name(self, pc)} did not finish within the step "
                                     f"budget of {self.max_steps} instructions per thread "
                                     f"(--max-steps); still running: "
                                     f"{self.thread_name(int(np.flatnonzero(_maybe(mask))[0]))}",
                                     instrs[block.start].loc)
            last = instrs[block.end - 1]
            if last.opcode in ("ret", "exit", "trap"):
                if last.opcode == "trap":
                    self.trap_if(d.pconst(True), "the kernel executed 'trap'")
                self.exited = d.por(self.exited, self.mask)
                if last.opcode == "exit" or self.caller is None:
                    self.thread_exits = d.por(self.thread_exits, self.mask)
                remaining = d.pand(mask, d.pnot(self.mask))
                if block.fallthrough is not None and d.may_any(remaining):
                    top[0], top[2] = block.fallthrough, remaining
                else:
                    stack.pop()
                continue
            if last.opcode != "bra":
                top[0] = block.succs[0]
                top[2] = mask
                continue
            taken = self.mask
            if block.fallthrough is None:        # unconditional
                top[0], top[2] = block.branch_target, mask
                continue
            not_taken = d.pand(mask, d.pnot(taken))
            any_t, any_n = d.may_any(taken), d.may_any(not_taken)
            if any_t:
                self.branches_seen.add((pc, True))
            if any_n:
                self.branches_seen.add((pc, False))
            if any_t and not any_n:
                top[0], top[2] = block.branch_target, mask
            elif any_n and not any_t:
                top[0], top[2] = block.fallthrough, mask
            else:
                ipdom = cfg.ipdom[pc]
                join = EXIT if ipdom is None else ipdom
                top[0], top[2] = join, mask
                paths = [[block.fallthrough, join, not_taken], [block.branch_target, join, taken]]
                if self.choices.schedule != "lane" and not self._taken_first(pc):
                    paths.reverse()           # (the path on top of the stack runs first)
                stack.extend(paths)


def _certain(p) -> np.ndarray:
    """The lanes where a (concrete or symbolic) mask certainly holds."""
    if isinstance(p, np.ndarray):
        return p.astype(bool)
    return np.array([x is True or (isinstance(x, np.bool_) and bool(x)) for x in p],
                    dtype=bool)


def _maybe(p) -> np.ndarray:
    """The lanes where a mask may hold (a term may)."""
    if isinstance(p, np.ndarray):
        return p.astype(bool)
    return np.array([not (isinstance(x, (bool, np.bool_)) and not x) for x in p], dtype=bool)


def _lanes_mask(lanes: list[int], n: int) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    out[lanes] = True
    return out


def _not_term(c):
    import z3
    return z3.Not(c)


def _pand_term(a, b):
    import z3
    return z3.And(a, b)


def _ite_term(c, a, b, w: int):
    import z3
    t = b if not isinstance(b, (int, np.integer)) else z3.BitVecVal(int(b), w)
    return z3.If(c, a, t)


def _pred_of(d, arr: np.ndarray):
    """A concrete bool lane vector as the domain's predicate."""
    return d.pnot(d.eq(d.from_ints(arr.astype(np.int64), 1), d.const(0, 1), 1))


def _concrete_bools(p) -> list[bool]:
    return [bool(x) if isinstance(x, (bool, np.bool_)) else True for x in p]


def _float_imm_bits(op: FloatImm, t: PtxType) -> int:
    if t.bits == op.width or not t.is_float:
        return op.bits & ((1 << t.bits) - 1)
    import struct
    value = struct.unpack("<d", struct.pack("<Q", op.bits))[0] if op.width == 64 else \
        struct.unpack("<f", struct.pack("<I", op.bits))[0]
    arr = np.array([value], dtype=np.float64)
    from semantics.domains.fp_numpy import from_f64, round_to
    fmt = "bf16" if t.kind == "bf" else f"f{t.bits}"
    return int(from_f64(fmt, round_to(fmt, "rn", arr))[0])


__all__ = ["Executor", "Geometry", "Effect", "ExecutionError", "MemoryPort", "SHARED_WINDOW"]
