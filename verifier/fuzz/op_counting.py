"""Counting n, the float operations on the path to an element, for the real-mode ``auto``
tolerance (`compare.auto_bound`), and S_n, the sum of the n largest input magnitudes
(`input_scale`).

n is counted while the kernels run on the emulator: every float instruction that rounds (add
sub mul fma mad div rcp sqrt rsqrt ex2 lg2 sin cos tanh cvt, and their SASS forms) adds 1 to
the lane that executed it, and n is the largest count of one thread over both kernels, plus
every float atomic add of the launch (an accumulator in memory chains all threads' adds).
Where the kernels run elsewhere (the GPU), each side is run once more on the emulator to
count, once per distinct scalar values (the trip counts follow the scalars; the first
example's buffers stand for the others). Where the emulator cannot run a side, n is counted
statically: each float instruction once, times T per enclosing loop, T the largest integer
scalar of the example or the block's thread count, whichever is larger (an upper bound, loose
by orders of magnitude for loops).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from semantics.errors import KeqError
from verifier.fuzz.report import ROLES
from verifier.spec import PairSpec, is_float_type


# PTX opcodes that round when their type is a float type (min, max, abs, neg, setp, mov and
# the shuffles are exact and not counted); atom/red .add on a float type chain threads.
_PTX_ROUNDING = frozenset(("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt",
                           "ex2", "lg2", "sin", "cos", "tanh", "cvt"))
_SASS_ROUNDING = frozenset(("FADD", "FMUL", "FFMA", "FADD32I", "FMUL32I", "FFMA32I", "DADD",
                            "DMUL", "DFMA", "HADD2", "HMUL2", "HFMA2", "HADD2_32I",
                            "HMUL2_32I", "HFMA2_32I", "MUFU", "F2F", "I2F", "FRND", "DRND"))


def float_op_kind(ins) -> str | None:
    """"op" for an instruction that rounds a float result, "atomic" for a float atomic add,
    None otherwise (PTX and SASS instructions)."""
    form = getattr(ins, "form", None)
    if form is None:
        return None
    op = form.opcode
    mods = form.mods
    if op.isupper():                                    # SASS
        if op in ("RED", "ATOM", "ATOMS", "ATOMG", "REDG") and "ADD" in mods and \
                any(m in ("F32", "F64", "F16x2", "F32.FTZ.RN", "BF16x2") for m in mods):
            return "atomic"
        return "op" if op in _SASS_ROUNDING else None
    types = form.types
    is_float = any(is_float_type(t.name.removesuffix("x2")) for t in types[:1])
    if op in ("atom", "red"):
        return "atomic" if "add" in mods and any(is_float_type(t.name.removesuffix("x2"))
                                                  for t in types) else None
    return "op" if op in _PTX_ROUNDING and is_float else None


class OpCounter:
    """Per-lane counts of the float instructions a launch executed (see the module
    docstring), filled by the wrapped semantic functions of `counting_kernel`. Each executor
    (one per batch of CTAs) gets its lane vector as an attribute; a callee's executor shares
    its caller's."""

    ATTR = "_keq_fuzz_float_ops"

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.atomics = 0

    def reset(self) -> None:
        self.arrays = []
        self.atomics = 0

    def ops(self) -> int:
        top = max((int(a.max()) for a in self.arrays if a.size), default=0)
        return top + self.atomics

    def _lanes(self, x, m) -> np.ndarray | None:
        root = x
        while getattr(root, "caller", None) is not None:
            root = root.caller
        arr = getattr(root, self.ATTR, None)
        if arr is None or arr.shape != m.shape:
            arr = np.zeros(m.shape, dtype=np.int64)
            self.arrays.append(arr)
            try:
                setattr(root, self.ATTR, arr)
            except AttributeError:
                return None
        if root is not x:
            try:
                setattr(x, self.ATTR, arr)
            except AttributeError:
                pass
        return arr

    def wrap(self, fn: Callable, kind: str) -> Callable:
        attr = self.ATTR
        if kind == "atomic":
            def counted(x):
                m = x.mask
                self.atomics += int(np.count_nonzero(m)) if isinstance(m, np.ndarray) else 1
                return fn(x)
            return counted

        def counted(x):
            m = x.mask
            arr = getattr(x, attr, None)
            if arr is None or arr.shape != getattr(m, "shape", None):
                arr = self._lanes(x, m) if isinstance(m, np.ndarray) else None
            if arr is not None:
                arr += m
            return fn(x)
        return counted


def counting_kernel(k, counter: OpCounter, done: dict | None = None):
    """A copy of a prepared kernel (and its callees) whose float instructions count into
    `counter`; None when it has no per-instruction semantics to wrap."""
    done = {} if done is None else done
    if id(k) in done:
        return done[id(k)]
    sems = getattr(k, "semantics", None)
    instrs = getattr(k, "instrs", None)
    if not dataclasses.is_dataclass(k) or sems is None or instrs is None or \
            len(sems) != len(instrs):
        return None
    wrapped = list(sems)
    for i, ins in enumerate(instrs):
        kind = float_op_kind(ins)
        if kind is not None:
            wrapped[i] = counter.wrap(sems[i], kind)
    new = dataclasses.replace(k, semantics=wrapped, callees={})
    done[id(k)] = new
    for name, c in getattr(k, "callees", {}).items():
        cc = counting_kernel(c, counter, done)
        new.callees[name] = cc if cc is not None else c
    return new


def loop_depths(cfg) -> list[int]:
    """Per basic block, the number of natural loops that contain it."""
    nb = len(cfg.blocks)
    depth = [0] * nb
    if not nb:
        return depth
    state = [0] * nb                          # 0 new, 1 on the DFS stack, 2 done
    back: list[tuple[int, int]] = []
    stack = [(0, iter(cfg.blocks[0].succs))]
    state[0] = 1
    while stack:
        b, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[b] = 2
            stack.pop()
            continue
        if nxt < 0:
            continue
        if state[nxt] == 1:
            back.append((b, nxt))
        elif state[nxt] == 0:
            state[nxt] = 1
            stack.append((nxt, iter(cfg.blocks[nxt].succs)))
    bodies: dict[int, set[int]] = {}
    for latch, head in back:
        body = bodies.setdefault(head, {head})
        work = [latch]
        while work:
            x = work.pop()
            if x in body:
                continue
            body.add(x)
            work.extend(cfg.preds[x])
    for body in bodies.values():
        for x in body:
            depth[x] += 1
    return depth


@dataclass
class StaticOps:
    """Float instructions of a kernel by loop depth: n = sum over depths d of count * T^d."""
    by_depth: dict[int, int]
    atomics_by_depth: dict[int, int]

    def ops(self, trips: int, threads: int) -> int:
        n = sum(c * trips ** d for d, c in self.by_depth.items())
        return n + threads * sum(c * trips ** d for d, c in self.atomics_by_depth.items())


def static_ops(k) -> StaticOps | None:
    cfg = getattr(k, "cfg", None)
    instrs = getattr(k, "instrs", None)
    if cfg is None or instrs is None:
        return None
    depths = loop_depths(cfg)
    ops: dict[int, int] = {}
    atoms: dict[int, int] = {}
    for b in cfg.blocks:
        for ins in instrs[b.start:b.end]:
            kind = float_op_kind(ins)
            if kind is not None:
                into = ops if kind == "op" else atoms
                into[depths[b.index]] = into.get(depths[b.index], 0) + 1
    for c in getattr(k, "callees", {}).values():          # a call counts its callee once
        if c is not k:
            sub = static_ops(c)
            if sub is not None:
                for d, n in sub.by_depth.items():
                    ops[d] = ops.get(d, 0) + n
                for d, n in sub.atomics_by_depth.items():
                    atoms[d] = atoms.get(d, 0) + n
    return StaticOps(ops, atoms)


def input_scale(spec: PairSpec, values: dict, n: int) -> tuple[float, float]:
    """(M, S_n): the largest finite magnitude among the float in/inout buffers and float
    scalars, and the sum of the n largest of those magnitudes."""
    parts = []
    for p in spec.params:
        if not p.is_float or (p.is_buffer and p.access not in ("in", "inout")):
            continue
        v = values[p.name]
        if p.type == "bf16":
            a = (np.asarray(v, dtype=np.uint32).reshape(-1) << np.uint32(16)).view(np.float32)
        else:
            a = np.asarray(v).reshape(-1)
        if a.size:
            with np.errstate(invalid="ignore", over="ignore"):
                a = np.abs(a.astype(np.float64))
            parts.append(a[np.isfinite(a)])
    mags = np.concatenate(parts) if parts else np.zeros(0)
    if not mags.size:
        return 0.0, 0.0
    if n < mags.size:
        top = np.partition(mags, mags.size - n)[mags.size - n:]
    else:
        top = mags
    return float(mags.max()), float(top.sum())


class OpsCounting:
    """n per example for both sides: counted on the emulator as the backend's runners run,
    where they run a prepared kernel that can be wrapped (`prepared`: the emulator backend);
    else on the emulator in a run of its own, once per distinct scalar values (the GPU
    backend; loop trip counts follow the scalars); else statically."""

    CACHE = 4096

    def __init__(self, spec: PairSpec, runners: dict) -> None:
        self.spec = spec
        self.counters: dict[str, OpCounter] = {}
        self.replay: dict[str, tuple[Any, OpCounter]] = {}
        self.cache: dict[tuple, int] = {}
        self.static: dict[str, StaticOps | None] = {}
        self.how: dict[str, str] = {}
        for role in ROLES:
            r = runners[role]
            k = getattr(r, "prepared", None)
            counter = OpCounter()
            ck = counting_kernel(k, counter) if k is not None else None
            if ck is not None:
                try:
                    r.prepared = ck
                except (AttributeError, TypeError):
                    ck = None
            if ck is not None:
                self.counters[role] = counter
                self.how[role] = "emulator"
                continue
            if k is None:
                try:
                    from verifier.emulate import prepare_side
                    k = prepare_side(self._side(role))
                except Exception:                 # noqa: BLE001 - not for the emulator
                    k = None
            ck = counting_kernel(k, counter) if k is not None else None
            if ck is not None:
                self.replay[role] = (ck, counter)
                self.how[role] = "emulator replay"
            self.static[role] = static_ops(k) if k is not None else None
            self.how.setdefault(role, "static")

    def _side(self, role: str):
        return self.spec.reference if role == "reference" else self.spec.candidate

    def before(self, role: str) -> None:
        c = self.counters.get(role)
        if c is not None:
            c.reset()

    def count(self, role: str, scalars: dict, values: dict | None = None) -> int:
        c = self.counters.get(role)
        if c is not None:
            n = c.ops()
            c.reset()
            return max(1, n)
        if role in self.replay and values is not None:
            key = (role, tuple(sorted((k, repr(v)) for k, v in scalars.items())))
            if key not in self.cache:
                n = self._replay(role, values, scalars)
                if n is None:
                    del self.replay[role]
                    self.how[role] = "static"
                    return self._static(role, scalars)
                if len(self.cache) > self.CACHE:
                    self.cache.clear()
                self.cache[key] = n
            return self.cache[key]
        return self._static(role, scalars)

    def _replay(self, role: str, values: dict, scalars: dict) -> int | None:
        from verifier.emulate import run_side
        ck, counter = self.replay[role]
        counter.reset()
        try:
            run_side(self._side(role), values, scalars, prepared=ck)
        except KeqError:
            pass                # a fault: what ran until then is counted
        except Exception:       # noqa: BLE001 - the emulator cannot run it: count statically
            return None
        n = counter.ops()
        counter.reset()
        return max(1, n)

    def _static(self, role: str, scalars: dict) -> int:
        grid, block = self._side(role).launch(scalars)
        threads = int(np.prod(block))
        ints = [abs(int(v)) for k, v in scalars.items() if not self.spec.param(k).is_float]
        trips = max([threads, 2] + ints)
        st = self.static.get(role)
        if st is None:
            return max(1, trips)
        return max(1, st.ops(trips, threads * int(np.prod(grid))))
