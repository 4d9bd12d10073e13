"""The emulator's side of the silicon check, per form: draw the instances, run keq's emulator
on the generated kernel (sm_90's model), check every result against verifier.mma_bounds'
range and a sample against semantics.tensor_core computed straight from the matrices.

The second check guards the harness itself: the host packs registers with keq's layout and
the emulator gathers with it; computing D from the matrices without any layout catches a
packing bug here, so that a GPU mismatch later means silicon differs, not the script.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field

import numpy as np

from bench.silicon.forms import Form, kernel_ptx
from bench.silicon.inputs import Mats, Shapes, decode, sets_for
from bench.silicon.lanes import d_words, pack, unpack_d
from semantics.choices import Choices, Target
from semantics.machine import prepare, run_kernel
from semantics.ptx import parse_ptx
from semantics.tensor_core import dot, fma_chain
from verifier.mma_bounds import tensor_range

ARCH = "sm_90"
MODEL_SAMPLE = 4                 # instances per set recomputed from the matrices


@dataclass
class Element:
    """One D element of one instance, with what produced it (for a report)."""

    set: str
    instance: int
    row: int
    col: int
    args: list[int]              # row of A, column of B, then C (bits)
    results: dict[str, int]      # "emulator", "gpu", "model" ... -> D's bits


@dataclass
class FormRun:
    form: Form
    mats: dict[str, Mats]
    emu: dict[str, np.ndarray]                 # set -> D bits (n, M, N)
    instances: int = 0
    bounded: int = 0                           # elements tensor_range bounds
    inside: int = 0                            # ... of which the emulator is inside
    outside: list[Element] = field(default_factory=list)
    model_diffs: list[Element] = field(default_factory=list)
    seconds: float = 0.0


def shapes(form: Form) -> Shapes:
    lay = form.layout
    return Shapes(form.a, form.b, form.c, lay.m, lay.n, lay.k)


def draw(form: Form, per_set: int, seed: int, only: list[str] | None = None) -> dict[str, Mats]:
    """The instances of every input set, each seeded by (seed, form, set): reproducible in
    another process and on another machine."""
    s = shapes(form)
    out = {}
    for name, gen in sets_for(s).items():
        if only is None or name in only:
            rng = np.random.default_rng([seed, zlib.crc32(f"{form.name}/{name}".encode())])
            out[name] = gen(s, rng, per_set)
    return out


def concat_sets(form: Form, mats: dict[str, Mats]) -> list[np.ndarray]:
    parts = [pack(form, *m) for m in mats.values()]
    return [np.concatenate([p[i] for p in parts]) for i in range(3)]


def split_sets(mats: dict[str, Mats], d: np.ndarray) -> dict[str, np.ndarray]:
    out, at = {}, 0
    for name, m in mats.items():
        out[name] = d[at:at + len(m[0])]
        at += len(m[0])
    return out


def run_emulator(form: Form, mats: dict[str, Mats]) -> dict[str, np.ndarray]:
    """keq's emulator on the generated kernel, all sets in one launch (a CTA per instance)."""
    a, b, c = concat_sets(form, mats)
    kernel = prepare(parse_ptx(kernel_ptx(form), f"{form.name}.ptx"), "silicon_mma")
    choices = Choices(target=Target(arch=ARCH))
    res = run_kernel(kernel, None, len(a), 32, [a, b, c, d_words(form, len(a))],
                     choices=choices)
    return split_sets(mats, unpack_d(form, res.buffers["pd"]))


def args_of(mats: Mats, n: int, i: int, j: int) -> list[int]:
    a, b, c = mats
    return [int(x) for x in a[n, i, :]] + [int(x) for x in b[n, :, j]] + [int(c[n, i, j])]


def within(form: Form, args: list[int], d_bits: int) -> bool | None:
    """Is D inside keq's bound for these operands? None where tensor_range bounds nothing."""
    r = tensor_range(form.name, args)
    if r is None:
        return None
    lo, hi, fmt = r
    v, low, high = (float(decode(fmt, np.array([x], np.uint64))[0]) for x in (d_bits, lo, hi))
    return bool(low <= v <= high)


def check_bounds(run: FormRun, results: dict[str, np.ndarray], who: str
                 ) -> tuple[int, int, list[Element]]:
    """(bounded, inside, outside elements) of `results` (the emulator's or the GPU's)."""
    bounded = inside = 0
    outside: list[Element] = []
    for name, m in run.mats.items():
        d = results[name]
        for n, i, j in np.ndindex(d.shape):
            args = args_of(m, n, i, j)
            ok = within(run.form, args, int(d[n, i, j]))
            if ok is None:
                continue
            bounded += 1
            inside += ok
            if not ok:
                outside.append(Element(name, n, i, j, args, {who: int(d[n, i, j])}))
    return bounded, inside, outside


def model_value(form: Form, args: list[int], arch: str = ARCH) -> int:
    """D straight from semantics.tensor_core, no layout involved."""
    k = form.k
    if form.a == "f64":
        return fma_chain(args[:k], args[k:2 * k], args[-1])
    return dot(form.a, args[:k], args[k:2 * k], args[-1], form.c, form.d, form.b, arch)


def check_model(run: FormRun, sample: int = MODEL_SAMPLE) -> list[Element]:
    diffs = []
    for name, m in run.mats.items():
        d = run.emu[name]
        for n, i, j in np.ndindex(min(sample, len(d)), *d.shape[1:]):
            args = args_of(m, n, i, j)
            want = model_value(run.form, args)
            if want != int(d[n, i, j]):
                diffs.append(Element(name, n, i, j, args,
                                     {"emulator": int(d[n, i, j]), "model": want}))
    return diffs


def emulate_form(form: Form, per_set: int, seed: int, only: list[str] | None = None) -> FormRun:
    """Everything the dry run does for one form (a pool worker: no GPU state here)."""
    t0 = time.perf_counter()
    mats = draw(form, per_set, seed, only)
    run = FormRun(form, mats, run_emulator(form, mats))
    run.instances = sum(len(m[0]) for m in mats.values())
    run.bounded, run.inside, run.outside = check_bounds(run, run.emu, "emulator")
    run.model_diffs = check_model(run)
    run.seconds = time.perf_counter() - t0
    return run


__all__ = ["ARCH", "Element", "FormRun", "check_bounds", "emulate_form", "model_value"]
