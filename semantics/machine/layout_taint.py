"""Pointer provenance: where the numeric value of an address may become observable.

The PTX ISA does not say where buffers and variables lie (PTX ISA 5.1.4; a cudaMalloc'd
buffer is 256-byte aligned, a variable aligned as declared), so a kernel whose outputs depend
on an address's numeric value has no one meaning, while keq's domains each use one layout.
This analysis finds the instructions where that can happen, statically, so that running one
records a "layout" effect (`semantics.machine.layout`).

A forward may-analysis over the CFG (registers are not SSA: iterated to a fixpoint, joins at
block entries; a guarded write joins the old value) tracks per register a `Prov`: the bases
(buffers and variables) its value may derive from, whether it may be "mangled" (anything but
adding or subtracting values that are not addresses: a multiplication, a shift, a join with a
non-address, a sign extension) and whether it was truncated ("narrow": a 64-bit address cut to
32 bits still has its low bits). Bases: a kernel parameter the launch passes a buffer for
(`pointers`; None: every parameter read with a 64-bit `ld.param`, as nvcc passes pointers),
the address of a `.shared`/`.local`/`.const`/`.global` variable or `.param` (`mov %r, sym`,
kept through `cvta`), so `%SP` depots too. `.func` parameters and results carry what their
call sites and `st.param`s give them (the whole call tree is one analysis).

Findings (observable): an address stored to memory as data (`st`, except the `.param`
passing of call arguments and results; the data operands of `atom`/`red`; `shfl`, `vote`,
`match`, `redux`), compared (`setp`/`set`/`slct`/`min`/`max`) unless both sides derive from
the same single base by additions only (`p < base + n`, what loop strength reduction emits),
subtracted from or added to another address unless the same single base (a difference of two
pointers into one buffer is layout independent), and any use by an instruction this analysis
does not model. `x & m` is no finding when every base's alignment is a multiple of m + 1 (a
low-bit mask: `(uintptr_t)x & 0xFF` is 0 for a buffer) and keeps the address when `~m` is
such a mask (aligning down). A mangled address used as an address is fine: the access is
checked. Everything else an address flows into is mangled, never dropped: it stays sound.
"""

from __future__ import annotations

from semantics.ir.cfg import EXIT
from semantics.ir.nodes import Instruction
from semantics.ir.operands import Addr, Reg, Sym, Vec
from semantics.machine.layout_prov import (BUFFER_ALIGN, NONE, Access, Finding, Prov, dests,
                                           has_dest, join, mangled)
from semantics.machine.layout_transfer import step

class _Function:
    """One function of the call tree: what the analysis knows about it across rounds."""

    def __init__(self, k) -> None:
        self.k = k
        self.params = {p.name for p in k.fn.params}
        self.returns = {p.name for p in k.fn.returns}
        self.param_in: dict[str, Prov] = {}      # .func: what its call sites pass
        self.ret_out: dict[str, Prov] = {}       # .func: what it returns


class _Analysis:
    def __init__(self, k, pointers: frozenset[str] | None) -> None:
        from semantics.machine.kernel import call_tree
        self.entry = k
        self.pointers = pointers
        self.funcs = {f.name: _Function(f) for f in [k, *call_tree(k)]}
        self.vars = dict(k.module.variables)
        for f in self.funcs.values():
            self.vars.update({v.name: v for v in f.k.fn.local_vars})
        self.changed = False
        self.accesses: list[Access] = []

    # -- provenance of operands ------------------------------------------------------------
    def align_of(self, base: str) -> int:
        kind, _, name = base.partition(":")
        if kind == "param":
            return BUFFER_ALIGN
        v = self.vars.get(name)      # (as declared: keq aligns dynamic shared memory to 16,
        if v is None:                # the ISA promises only the declaration)
            return 1
        return v.align or max(v.type.bits // 8, 1)

    def symbol(self, f: _Function, name: str) -> Prov:
        v = self.vars.get(name)
        if v is not None and v.space in ("shared", "local", "const", "global"):
            return Prov(frozenset({f"{v.space}:{name}"}))
        if name in f.params or name in f.returns:
            return Prov(frozenset({f"param-space:{name}"}))
        return NONE

    def value(self, f: _Function, op, state: dict) -> Prov:
        if isinstance(op, Reg):
            return state.get((op.name, op.scope)) or NONE
        if isinstance(op, Sym):
            return self.symbol(f, op.name)
        if isinstance(op, Vec):
            return mangled(*(self.value(f, e, state) for e in op.elems))
        return NONE

    def param_load(self, f: _Function, ins: Instruction) -> Prov:
        """What `ld.param` of a parameter, argument or call result gives."""
        src = ins.operands[1] if len(ins.operands) > 1 else None
        if not isinstance(src, Addr) or not isinstance(src.base, Sym):
            return NONE
        name = src.base.name
        if f.k is self.entry and name in f.params:
            p = next(p for p in f.k.fn.params if p.name == name)
            pointer = name in self.pointers if self.pointers is not None else \
                p.type.bits == 64
            if not pointer:
                return NONE
            whole = src.offset == 0 and ins.form.types and ins.form.types[0].bits == 64
            return Prov(frozenset({f"param:{name}"}), not whole)
        if name in f.params:
            got = f.param_in.get(name, NONE)
            return got if src.offset == 0 else mangled(got)
        return NONE

    # -- the fixpoint ----------------------------------------------------------------------
    def run(self) -> list[Finding]:
        """The findings; `accesses` holds the confined accesses after it."""
        for _ in range(64 if len(self.funcs) > 1 else 0):
            # (a finite lattice: rounds until what call sites pass and results carry settle)
            self.changed = False
            for f in self.funcs.values():
                self._solve(f, None)
            if not self.changed:
                break
        found: list[Finding] = []
        for f in self.funcs.values():
            self._solve(f, found)
        return found

    def _solve(self, f: _Function, found: list | None) -> None:
        """Iterate `f`'s blocks to a fixpoint; with `found`, one more pass reporting."""
        blocks = f.k.cfg.blocks
        if not blocks:
            return
        entry: list[dict | None] = [None] * len(blocks)
        entry[0] = {}
        work = [0]
        while work:
            b = work.pop()
            state = dict(entry[b])
            for idx in range(blocks[b].start, blocks[b].end):
                step(self, f, idx, state, None)
            for s in blocks[b].succs:
                if s == EXIT:
                    continue
                merged = _join_states(entry[s], state)
                if merged != entry[s]:
                    entry[s] = merged
                    if s not in work:
                        work.append(s)
        if found is None:
            return
        seen: set[int] = set()
        for b, st in enumerate(entry):
            if st is None:
                continue                 # unreachable
            state = dict(st)
            for idx in range(blocks[b].start, blocks[b].end):
                self._confine(f, idx, state)
                step(self, f, idx, state, lambda i, m: (
                    None if i in seen else (seen.add(i), found.append(
                        Finding(f.k.name, i, f.k.instrs[i].loc, m)))))

    def _confine(self, f: _Function, idx: int, state: dict) -> None:
        """Record the access `idx` makes when its address derives from global buffers or
        shared variables only (on every path; mangled or not: computed from them)."""
        ins = f.k.instrs[idx]
        if ins.opcode not in ("ld", "ldu", "st", "atom", "red") or \
                ins.form.space not in (None, "global", "shared"):
            return
        at = next((op for op in ins.operands if isinstance(op, Addr)), None)
        if at is None or at.base is None:
            return
        p = self.value(f, at.base, state)
        if p.bases and not p.partial and all(
                b.partition(":")[0] in ("param", "global", "shared") for b in p.bases):
            self.accesses.append(Access(f.k.name, idx, p.bases))

    # -- across functions ------------------------------------------------------------------
    def pass_in(self, callee: str, param: str, p: Prov) -> None:
        g = self.funcs[callee]
        new = join(g.param_in.get(param), p)
        if new != g.param_in.get(param):
            g.param_in[param] = new
            self.changed = True

    def give_back(self, f: _Function, ret: str, p: Prov) -> None:
        new = join(f.ret_out.get(ret), p)
        if new != f.ret_out.get(ret):
            f.ret_out[ret] = new
            self.changed = True

    def describe(self, p: Prov) -> str:
        names = []
        for b in sorted(p.bases):
            kind, _, name = b.partition(":")
            names.append({"param": f"buffer parameter '{name}'",
                          "param-space": f"parameter '{name}' in .param space"}.get(
                kind, f".{kind} variable '{name}'"))
        return "the address of " + " or ".join(names)


def _join_states(a: dict | None, b: dict) -> dict:
    if a is None:
        return dict(b)
    out = dict(a)
    for key, v in b.items():
        out[key] = join(a.get(key), v)
    return out


def analyse(k, pointers: frozenset[str] | None = None) -> list[Finding]:
    """Every instruction of `k`'s call tree where an address's numeric value may become
    observable, for a launch whose buffer parameters are `pointers` (None: every parameter
    read as 64 bits)."""
    return _Analysis(k, pointers).run()


def provenance(k, pointers: frozenset[str] | None = None
               ) -> tuple[list[Finding], list[Access]]:
    """`analyse`'s findings, and every access confined to the buffers or variables its
    address derives from."""
    an = _Analysis(k, pointers)
    found = an.run()
    return found, an.accesses


__all__ = ["Prov", "Finding", "Access", "analyse", "provenance", "join", "NONE", "BUFFER_ALIGN",
           "dests", "has_dest"]
