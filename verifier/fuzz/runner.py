"""The differential runner both backends share: draw an example, run reference and candidate,
compare under the pair's mode, and let hypothesis shrink any difference to a minimal example.

A *difference* is any of:
- an out/inout element that differs under the mode (bitexact: bit patterns; real: within the
  tolerance, `compare.differing`);
- a fault of the candidate (memory fault, barrier divergence, CUDA error) where the reference
  ran clean;
- a data race in the candidate (a "race" effect: both accesses are named).
A fault or race in the *reference* is an error of the spec or the reference kernel:
`ReferenceError_` (exit 3), reported with the shrunk example that shows it.

Real-mode floats are compared within a tolerance (`compare.differing`); the default one,
``auto:4``, is derived per example from n, the float operations on the path to an element,
and S_n, the sum of the n largest input magnitudes (`compare.auto_bound`). n is counted while
the kernels run on the emulator: every float instruction that rounds (add sub mul fma mad div
rcp sqrt rsqrt ex2 lg2 sin cos tanh cvt, and their SASS forms) adds 1 to the lane that
executed it, and n is the largest count of one thread over both kernels, plus every float
atomic add of the launch (an accumulator in memory chains all threads' adds). Where the
kernels run elsewhere (the GPU), each side is run once more on the emulator to count, once per
distinct scalar values (the trip counts follow the scalars; the first example's buffers stand
for the others). Where the emulator cannot run a side, n is counted statically: each float
instruction once, times T per enclosing loop, T the largest integer scalar of the example or
the block's thread count, whichever is larger (an upper bound, loose by orders of magnitude
for loops).

What the PTX ISA leaves open (never-written registers and memory, the order of contending
atomics: `semantics.choices`) is resolved by a `Choices`. The reference always runs under the
pair's defaults (zero fill, lane order). With `fill`/`schedule` given, the candidate runs under
them, and a reference whose run read something open runs again under them too: if its outputs
change, the claim (about a deterministic reference) is wrong, `ReferenceError_`. Without them
the choices are varied: the candidate runs under the defaults, and when that run read
something open (an effect of kind "uninitialized" or "nondeterministic") once more under each
of pattern fill, reverse schedule and random:SEED fill and schedule (SEED derived from the
example, so shrinking sees the same choices for the same example), until one differs; that
difference is reported with its choices (`Difference.choices`). A reference whose run read
something open runs under the same other choices (every one of them, or the given ones).
A random fill also changes what the hardware fixes for both kernels alike (the NaN an
operation returns, a function of its inputs): under it the candidate is compared with the
reference's run under the same choices, and an element NaN in both runs is no difference (a
random function is not the hardware's, so payloads alone are no evidence). Only the emulator
backend honours choices (`supports_choices`); the GPU makes its own.

Fuzzing is bounded testing, not a proof: a clean run says what was covered (examples, the
scalar values tried, and the fraction of each kernel's basic blocks and branch directions that
ran), never "equivalent".
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from semantics.choices import Choices
from semantics.errors import KeqError
from verifier.emulate import choices_of
from verifier.testing import alternatives as _alternatives, consulted as _consulted
from verifier.fuzz.backends import Backend, SideRun
from verifier.fuzz.compare import (DEFAULT_REAL_TOLERANCE, OpsContext, Tolerance, differing,
                                   parse_tolerance)
from verifier.fuzz.report import (ROLES, Difference, FuzzReport, KernelCoverage, Mismatch,
                                  OpsStats)
from verifier.fuzz.strategies import from_spec
from verifier.spec import PairSpec, draw_scalars, is_float_type

DEFAULT_EXAMPLES = 100
SHOWN_PER_BUFFER = 8


class ReferenceError_(KeqError):
    """The reference faulted or raced on an allowed input: the spec or the reference is wrong."""


class _Found(Exception):
    def __init__(self, diff: Difference) -> None:
        super().__init__(diff.summary)
        self.diff = diff


class _RefBad(Exception):
    def __init__(self, message: str, values, scalars) -> None:
        super().__init__(message)
        self.message, self.values, self.scalars = message, values, scalars


def resolve_tolerance(spec: PairSpec, text: str | None) -> Tolerance | None:
    if spec.mode == "bitexact":
        if text is not None:
            raise KeqError(f"--tolerance {text}: {spec.name} is a bitexact pair (bit patterns "
                           f"are compared); a tolerance applies to mode = \"real\" pairs only")
        return None
    return parse_tolerance(text if text is not None else DEFAULT_REAL_TOLERANCE)


# ------------------------------------------------------------------ float operation counts

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


class _OpCounter:
    """Per-lane counts of the float instructions a launch executed (see the module
    docstring), filled by the wrapped semantic functions of `_counting_kernel`. Each executor
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


def _counting_kernel(k, counter: _OpCounter, done: dict | None = None):
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
        cc = _counting_kernel(c, counter, done)
        new.callees[name] = cc if cc is not None else c
    return new


def _loop_depths(cfg) -> list[int]:
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
class _StaticOps:
    """Float instructions of a kernel by loop depth: n = sum over depths d of count * T^d."""
    by_depth: dict[int, int]
    atomics_by_depth: dict[int, int]

    def ops(self, trips: int, threads: int) -> int:
        n = sum(c * trips ** d for d, c in self.by_depth.items())
        return n + threads * sum(c * trips ** d for d, c in self.atomics_by_depth.items())


def static_ops(k) -> _StaticOps | None:
    cfg = getattr(k, "cfg", None)
    instrs = getattr(k, "instrs", None)
    if cfg is None or instrs is None:
        return None
    depths = _loop_depths(cfg)
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
    return _StaticOps(ops, atoms)


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


class _OpsCounting:
    """n per example for both sides: counted on the emulator as the backend's runners run,
    where they run a prepared kernel that can be wrapped (`prepared`: the emulator backend);
    else on the emulator in a run of its own, once per distinct scalar values (the GPU
    backend; loop trip counts follow the scalars); else statically."""

    CACHE = 4096

    def __init__(self, spec: PairSpec, runners: dict) -> None:
        self.spec = spec
        self.counters: dict[str, _OpCounter] = {}
        self.replay: dict[str, tuple[Any, _OpCounter]] = {}
        self.cache: dict[tuple, int] = {}
        self.static: dict[str, _StaticOps | None] = {}
        self.how: dict[str, str] = {}
        for role in ROLES:
            r = runners[role]
            k = getattr(r, "prepared", None)
            counter = _OpCounter()
            ck = _counting_kernel(k, counter) if k is not None else None
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
            ck = _counting_kernel(k, counter) if k is not None else None
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


def _races(run: SideRun) -> list[str]:
    return [f"{e.what} ({e.loc})" for e in run.effects if e.kind == "race"]


def _approx(run: SideRun) -> list[str]:
    return sorted({f"{e.what} at {e.loc}" for e in run.effects if e.kind == "approximation"})


def _elem(p, a: np.ndarray, i: int):
    return a[i].item() if a.dtype != np.float16 else float(a[i])


def compare_runs(spec: PairSpec, values: dict, scalars: dict, ref: SideRun, cand: SideRun,
                 tol: Tolerance | None, ctx: OpsContext | None = None,
                 nan_payloads_free: bool = False) -> Difference | None:
    """The difference between two clean-or-faulting side runs, or None (`ctx`: n, M and S_n
    for an auto tolerance; `nan_payloads_free`: an element NaN in both runs is no
    difference, as under a random fill, where the NaN an operation returns is a random
    function of its inputs, one the hardware need not be)."""
    approx = sorted(set(_approx(ref)) | set(_approx(cand)))
    if cand.fault is not None:
        return Difference("fault", f"the candidate faulted: {cand.fault.render()}", values,
                          scalars, ref, cand, approximations=approx, ops=ctx)
    mism = []
    for p in spec.buffers:
        if p.access not in ("out", "inout"):
            continue
        r, c = ref.final[p.name], cand.final[p.name]
        idx = differing(p, r, c, spec.mode, tol, ctx)
        if nan_payloads_free:
            idx = idx[~_both_nan(p, r, c, idx)]
        if idx.size:
            first = [(int(i), _elem(p, r, int(i)), _elem(p, c, int(i)))
                     for i in idx[:SHOWN_PER_BUFFER]]
            mism.append(Mismatch(p.name, int(idx.size), int(r.size), first))
    races = _races(cand)
    if races:
        extra = f"; outputs also differ in {', '.join(m.param for m in mism)}" if mism else ""
        return Difference("race", f"the candidate has {len(races)} data race(s){extra}", values,
                          scalars, ref, cand, mism, races, approx, ctx)
    if mism:
        m = mism[0]
        return Difference("mismatch", f"{m.param} differs in {m.count} of {m.length} "
                          f"element(s)", values, scalars, ref, cand, mism, [], approx, ctx)
    return None


def consulted(run: SideRun) -> bool:
    """Did the run read what the ISA leaves open, so other choices may change it
    (`verifier.testing.consulted`: effects of kind "uninitialized", "nondeterministic", ...)?"""
    return _consulted(run.effects)


def alternatives(base: Choices, seed: int, effects=()) -> list[Choices]:
    """The other choices a varied run tries, `verifier.testing.alternatives`: every
    never-written byte 0xa5, the reverse order, seeded random values and orders (and what
    else that function adds for the run's `effects`)."""
    return _alternatives(SimpleNamespace(choices=base), seed, effects)


def _key(c: Choices) -> tuple:
    return (c.fill, c.schedule, getattr(c, "layout", "packed"))


def example_seed(seed_: int, values: dict) -> int:
    """A seed derived from the fuzz seed and the example's contents (the same example gives
    the same random choices, which shrinking needs)."""
    h = hashlib.blake2b(str(seed_).encode(), digest_size=4)
    for k in sorted(values):
        v = values[k]
        h.update(k.encode())
        h.update(np.ascontiguousarray(v).tobytes() if isinstance(v, np.ndarray)
                 else repr(v).encode())
    return int.from_bytes(h.digest(), "little")


def _open_reads(run: SideRun) -> str:
    used = sorted({f"{e.what} at {e.loc}" for e in run.effects if _consulted((e,))})
    return "; ".join(used[:2]) + (f"; and {len(used) - 2} more" if len(used) > 2 else "")


def shares_fixed_values(c: Choices) -> bool:
    """Whether `c` changes the values the hardware fixes as a function of an instruction's
    inputs (the NaN an f32 add returns: `Choices.function`), which both kernels of a pair
    share: only a random fill does. Under such choices the reference runs under them too."""
    return c.fill.startswith("random:")


def _both_nan(p, a: np.ndarray, b: np.ndarray, idx: np.ndarray) -> np.ndarray:
    if not p.is_float or not idx.size:
        return np.zeros(idx.size, dtype=bool)
    if p.type == "bf16":
        x = (np.asarray(a, np.uint32)[idx] << np.uint32(16)).view(np.float32)
        y = (np.asarray(b, np.uint32)[idx] << np.uint32(16)).view(np.float32)
    else:
        x, y = np.asarray(a)[idx], np.asarray(b)[idx]
    return np.isnan(x) & np.isnan(y)


def reference_changes(spec: PairSpec, ref: SideRun, again: SideRun,
                      tol: Tolerance | None, ctx: OpsContext | None,
                      nan_payloads_free: bool = False) -> str | None:
    """How the reference's run under other choices differs from its default run (a fault,
    an output under the mode), or None. `nan_payloads_free`: an element NaN in both runs
    does not count (under a random fill the NaN an operation returns is another function
    of its inputs, fixed by the hardware for both kernels alike, not a choice of the run)."""
    if again.fault is not None:
        return f"it faults ({again.fault.render()})"
    for p in spec.buffers:
        if p.access not in ("out", "inout"):
            continue
        idx = differing(p, ref.final[p.name], again.final[p.name], spec.mode, tol, ctx)
        if nan_payloads_free:
            idx = idx[~_both_nan(p, ref.final[p.name], again.final[p.name], idx)]
        if idx.size:
            i = int(idx[0])
            return (f"{p.name}[{i}] is {_shown(p, again.final[p.name], i)} instead of "
                    f"{_shown(p, ref.final[p.name], i)} ({idx.size} element(s) differ)")
    return None


def _shown(p, a: np.ndarray, i: int) -> str:
    bits = np.ascontiguousarray(a).view(np.dtype(f"<u{a.dtype.itemsize}"))[i]
    return f"{_elem(p, a, i)} (0x{int(bits):0{2 * a.dtype.itemsize}x})"


def _fmt_scalars(scalars: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in scalars.items())


def fuzz(spec: PairSpec, backend: Backend, *, examples: int = DEFAULT_EXAMPLES,
         seed_: int = 0, time_budget: float | None = None, tolerance: str | None = None,
         finite: bool = False, fixed: dict | None = None,
         progress: Callable[[int, int, float], None] | None = None,
         fill: str | None = None, schedule: str | None = None) -> FuzzReport:
    """Fuzz one pair. Raises KeqError for bad input and `ReferenceError_` when the reference
    faults or races, or its outputs depend on the choices (module docstring); returns the
    report otherwise (`report.difference` set when one was found). `fill`/`schedule`: the
    candidate's choices (`semantics.choices` policies); neither: vary them.
    """
    if examples < 1:
        raise KeqError(f"--examples {examples}: must be at least 1")
    if time_budget is not None and not time_budget > 0:
        raise KeqError(f"--time-budget {time_budget}: must be a positive number of seconds")
    tol = resolve_tolerance(spec, tolerance)
    draw_scalars(spec, np.random.default_rng(seed_), fixed=fixed)   # satisfiable? (else exit 3)
    base = choices_of(spec)
    given_choices = None
    if fill is not None or schedule is not None:
        try:
            given_choices = Choices(fill or "zero", schedule or "lane", {}, base.target)
        except ValueError as e:
            raise KeqError(str(e)) from None
    runners = backend.prepare(spec)
    honours = all(getattr(runners[r], "supports_choices", False) for r in ROLES)
    if given_choices is not None and not honours:
        raise KeqError(f"--fill/--schedule: the {getattr(backend, 'name', 'given')} backend "
                       f"runs the kernels where the hardware makes these choices itself; "
                       f"they apply to the emulator backend")
    strategy = from_spec(spec, finite=finite, fixed=fixed)
    rep = FuzzReport(spec, backend.describe(), spec.mode, tol, seed_, examples)
    rep.choices = given_choices
    rep.varied = given_choices is None and honours
    cand_choices = given_choices if given_choices is not None else base

    def run_as(role: str, values: dict, scalars: dict, choices: Choices) -> SideRun:
        if honours:
            return runners[role].run(values, scalars, choices)
        return runners[role].run(values, scalars)

    def reference_depends(values, scalars, ref, again: SideRun, choices: Choices, ctx) -> None:
        how = reference_changes(spec, ref, again, tol, ctx, shares_fixed_values(choices))
        if how is not None:
            raise _RefBad(f"the reference's outputs depend on what the PTX ISA leaves open "
                          f"(its run met {_open_reads(ref)}): under {choices.describe()} "
                          f"{how}, unlike its run under the defaults ({base.describe()}); "
                          f"the claim is about a deterministic reference: fix the reference "
                          f"or the spec", values, scalars)
    rep.coverage = {r: KernelCoverage(runners[r].kernel) for r in ROLES}
    counting = _OpsCounting(spec, runners) if tol is not None and tol.derived else None
    if counting is not None:
        rep.ops = OpsStats(dict(counting.how), {r: 0 for r in ROLES})
    rep.scalar_values = {p.name: set() for p in spec.scalars}
    cov_union: dict[str, Any] = {}
    state = {"calls": 0, "shrink_calls": 0, "found": False, "t0": time.perf_counter(), "t_found": None,
             "last_progress": 0.0}

    def one(values: dict) -> None:
        scalars = {p.name: values[p.name] for p in spec.scalars}
        if not state["found"]:
            state["calls"] += 1
            for k, v in scalars.items():
                rep.scalar_values[k].add(v)
        else:
            state["shrink_calls"] += 1
        if counting is not None:
            counting.before("reference")
        ref = run_as("reference", values, scalars, base)
        if ref.fault is not None:
            raise _RefBad(f"the reference faulted on an input the spec allows: "
                          f"{ref.fault.render()}", values, scalars)
        rr = _races(ref)
        if rr:
            raise _RefBad(f"the reference has a data race on an input the spec allows: {rr[0]}",
                          values, scalars)
        ctx = None
        if counting is not None:
            n_ref = counting.count("reference", scalars, values)
            counting.before("candidate")
        cand = run_as("candidate", values, scalars, cand_choices)
        if counting is not None:
            n_cand = counting.count("candidate", scalars, values)
            n = max(n_ref, n_cand)
            ctx = OpsContext(n, *input_scale(spec, values, n))
            if not state["found"]:
                rep.ops.ops_max["reference"] = max(rep.ops.ops_max["reference"], n_ref)
                rep.ops.ops_max["candidate"] = max(rep.ops.ops_max["candidate"], n_cand)
                rep.ops.magnitude_max = max(rep.ops.magnitude_max, ctx.magnitude)
                rep.ops.scale_max = max(rep.ops.scale_max, ctx.scale or 0.0)
        for role, run in (("reference", ref), ("candidate", cand)):
            if run.coverage is not None:
                prev = cov_union.get(role)
                cov_union[role] = run.coverage if prev is None else _merge(prev, run.coverage)
        refs: dict[tuple, SideRun] = {}

        def ref_under(c: Choices) -> SideRun:
            """The reference's run to compare a candidate run under `c` with: its default
            run, or its run under `c` where `c` changes what both kernels share."""
            if not shares_fixed_values(c):
                return ref
            key = _key(c)
            if key not in refs:
                refs[key] = run_as("reference", values, scalars, c)
                if refs[key].fault is not None:
                    raise _RefBad(f"the reference faulted under {c.describe()}: "
                                  f"{refs[key].fault.render()}", values, scalars)
            return refs[key]

        if consulted(ref):
            others = [given_choices] if given_choices is not None else \
                alternatives(base, example_seed(seed_, values), ref.effects) \
                if rep.varied else []
            for c in others:
                if c != base:
                    if _key(c) not in refs:
                        refs[_key(c)] = run_as("reference", values, scalars, c)
                    again = refs[_key(c)]
                    reference_depends(values, scalars, ref, again, c, ctx)
        diff = compare_runs(spec, values, scalars, ref_under(cand_choices), cand, tol, ctx,
                            shares_fixed_values(cand_choices))
        if diff is not None and honours:
            diff.choices = cand_choices
        if diff is None and rep.varied and consulted(cand):
            if not state["found"]:
                rep.varied_examples += 1
            for alt in alternatives(base, example_seed(seed_, values), cand.effects):
                diff = compare_runs(spec, values, scalars, ref_under(alt),
                                    run_as("candidate", values, scalars, alt), tol, ctx,
                                    shares_fixed_values(alt))
                if diff is not None:
                    diff.choices = alt
                    break
        if progress is not None and not state["found"]:
            now = time.perf_counter()
            if now - state["last_progress"] > 0.2:
                state["last_progress"] = now
                progress(state["calls"], examples, now - state["t0"])
        if diff is not None:
            if not state["found"]:
                state["found"] = True
                state["t_found"] = time.perf_counter()
                state["found_at"] = state["calls"]
            raise _Found(diff)

    def hypothesis_run(n: int, s: int) -> None:
        @settings(max_examples=n, database=None, deadline=None, derandomize=False,
                  phases=(Phase.explicit, Phase.generate, Phase.shrink),
                  verbosity=Verbosity.quiet, report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @seed(s)
        @given(strategy)
        def prop(values):
            one(values)
        prop()

    found: Difference | None = None
    try:
        if time_budget is None:
            hypothesis_run(examples, seed_)
        else:
            chunk, i = max(1, min(25, examples)), 0
            while state["calls"] < examples:
                if time.perf_counter() - state["t0"] >= time_budget:
                    rep.stopped_by = "time budget"
                    break
                hypothesis_run(min(chunk, examples - state["calls"]), seed_ * 1_000_003 + i)
                i += 1
    except _Found as e:
        found = e.diff
    except _RefBad as e:
        raise ReferenceError_(f"{spec.name}: {e.message}\n  given (shrunk): "
                              f"{_fmt_scalars(e.scalars)}") from None
    end = time.perf_counter()
    if found is not None:
        rep.difference = found
        rep.stopped_by = "difference"
        rep.examples = state["found_at"]
        rep.seconds = state["t_found"] - state["t0"]
        rep.shrink_seconds = end - state["t_found"]
        rep.shrink_runs = state["shrink_calls"]
    else:
        rep.examples = state["calls"]
        rep.seconds = end - state["t0"]
    for role in ROLES:
        kc = rep.coverage[role]
        c = cov_union.get(role)
        if c is not None:
            kc.measured = True
            kc.blocks_seen, kc.blocks_total = len(c.blocks_seen), c.blocks_total
            kc.branches_seen, kc.branches_total = len(c.branches_seen), c.branches_total
    return rep


def _merge(a, b):
    if hasattr(a, "merge"):
        return a.merge(b)
    return type(a)(a.blocks_total, a.blocks_seen | b.blocks_seen, a.branches_total,
                   a.branches_seen | b.branches_seen)
