"""Comparing the two kernels' runs of one example: the difference between them
(`compare_runs`), or how the reference's run under other choices differs from its default run
(`reference_changes`).

A *difference* is any of:
- an out/inout element that differs under the mode (bitexact: bit patterns; real: within the
  tolerance, `compare.differing`);
- a fault of the candidate (memory fault, barrier divergence, CUDA error) where the reference
  ran clean;
- a data race in the candidate (a "race" effect: both accesses are named);
- a thread that prints other text with printf (emulator runs; `verifier.printed`), unless the
  claim ignores printf.
"""

from __future__ import annotations

import numpy as np

from verifier import printed
from verifier.fuzz.backends import SideRun
from verifier.fuzz.compare import OpsContext, Tolerance, differing
from verifier.fuzz.report import Difference, Mismatch
from verifier.spec import PairSpec
from verifier.verdict import PRINTED

SHOWN_PER_BUFFER = 8


def races(run: SideRun) -> list[str]:
    """The data races the run met, one line each (both accesses named)."""
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
    nan_payloads_free = nan_payloads_free or "nan-any" in spec.allow
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
    raced = races(cand)
    if raced:
        extra = f"; outputs also differ in {', '.join(m.param for m in mism)}" if mism else ""
        return Difference("race", f"the candidate has {len(raced)} data race(s){extra}", values,
                          scalars, ref, cand, mism, raced, approx, ctx)
    if mism:
        m = mism[0]
        return Difference("mismatch", f"{m.param} differs in {m.count} of {m.length} "
                          f"element(s)", values, scalars, ref, cand, mism, [], approx, ctx)
    threads = printed.differences(ref.final, cand.final) if printed.compared(spec) else []
    if threads:
        t = threads[0].index
        lines = (run.final.get(PRINTED, {}).get(t, ()) for run in (ref, cand))
        return Difference("printf", f"{len(threads)}{'+' if len(threads) == 16 else ''} "
                          f"thread(s) print other text; thread {t}: "
                          f"{printed.first_difference(*lines)}", values, scalars, ref, cand,
                          [], [], approx, ctx)
    return None


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
    nan_payloads_free = nan_payloads_free or "nan-any" in spec.allow
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
