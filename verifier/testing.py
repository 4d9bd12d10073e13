"""Testing on the emulator under the choices the PTX ISA leaves open (`semantics.choices`).

A difference seen on the emulator is a counterexample when it is a legal execution of both
kernels: every fill of never-written memory and every order of contending atomics is one the
GPU may give, so an emulator run under any `Choices` is legal, provided

- neither kernel used an approximate function (the host's approximations are not the GPU's)
  or had undefined behaviour (a value silicon is not bound to produce), and
- the reference's outputs do not depend on those choices: the claim is about a deterministic
  reference, so one whose outputs change with them is an error about the spec.

When the candidate's run consulted what the ISA leaves open (its effects say so), it runs
again under other choices (every never-written byte 0xa5, the reverse order, random values
and orders): a forgotten `smem[i] = 0` gives the right answer from zeros, a float sum by
atomics the right answer in lane order. When its run executed an instruction where the numeric
value of an address may show (a "layout" effect: `semantics.machine.layout_taint`), it also
runs under the shifted memory layout (other buffer and shared-variable addresses, equally
aligned): one the GPU may give, and the symbolic domain cannot try.
"""

from __future__ import annotations

import numpy as np

from semantics.choices import Choices
from semantics.errors import KeqError
from verifier.effects import MODELLED
from verifier import printed
from verifier.emulate import EmulatedSide, run_side
from verifier.verdict import Difference


def ordinary_floats(inputs: dict, seed: int) -> dict:
    """`inputs` with every float buffer redrawn as ordinary finite values (moderate
    magnitudes, both signs, some exact small ones): random bit patterns are NaN and infinity
    heavy, and a sum with one NaN in it is NaN in every order."""
    rng = np.random.default_rng(seed)
    out = dict(inputs)
    for n, v in inputs.items():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            mag = np.exp2(rng.uniform(-8, 8, v.shape))
            vals = np.where(rng.random(v.shape) < 0.5, -mag, mag)
            exact = rng.integers(-4, 5, v.shape) / 2.0
            out[n] = np.where(rng.random(v.shape) < 0.2, exact, vals).astype(v.dtype)
    return out


# Values where float kernels meet the edges of their range: exp of -128 underflows (a
# softmax whose running max starts at 0 divides 0 by 0 there), exp of 128 overflows, and
# 2^-130 is subnormal (flushed under .ftz). Random bit patterns and ordinary_floats reach
# such a value in every element of a row almost never.
EDGE_VALUES = (-128.0, 128.0, 2.0 ** -130)


def uniform_floats(inputs: dict, value: float) -> dict:
    """`inputs` with every float buffer filled with `value` (integer buffers unchanged)."""
    out = dict(inputs)
    for n, v in inputs.items():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            out[n] = np.full(v.shape, value, dtype=v.dtype)
    return out


def alternatives(ctx, seed: int, effects=()) -> list[Choices]:
    """Other resolutions of what the ISA leaves open than the emulator's default; with a
    "layout" effect among `effects`, the shifted memory layout too (first: a difference
    it shows needs nothing else)."""
    t = ctx.choices.target
    out = [Choices("pattern", "lane", {}, t), Choices("zero", "reverse", {}, t),
           Choices(f"random:{seed}", f"random:{seed}", {}, t)]
    if any(e.kind == "layout" for e in effects):
        out.insert(0, Choices(target=t, layout="shifted"))
    return out


def _copies(inputs: dict) -> dict:
    return {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in inputs.items()}


def _outputs(spec, final: dict) -> dict:
    out = {p.name: final[p.name] for p in spec.params
           if p.is_buffer and p.access in ("out", "inout")}
    if printed.compared(spec):
        out[printed.PRINTED] = final.get(printed.PRINTED, {})
    return out


def _same(a: dict, b: dict) -> bool:
    if a.get(printed.PRINTED, {}) != b.get(printed.PRINTED, {}):
        return False
    return all(np.array_equal(np.ascontiguousarray(a[k]).view(np.uint8),
                              np.ascontiguousarray(b[k]).view(np.uint8))
               for k in a if k != printed.PRINTED)


def proves_nothing(effects) -> bool:
    """Effects that make an emulator run's values no evidence about the GPU: the host's
    approximations, undefined behaviour, and values the hardware fixes as a function of the
    inputs that the emulator only models (the NaN an f32 add returns: the GPU's may be
    another, the same in both kernels), and results that depend on the wmma fragment layout
    keq chose ("fragment")."""
    return any(e.kind in ("approximation", "undefined", "unspecified", "fragment")
               for e in effects)


def consulted(effects) -> bool:
    """Did the run read what the ISA leaves open (so other choices may change it)? A
    "layout" effect counts (another layout may change it), though it is not MODELLED:
    symbolically it stops the proof."""
    return any(e.kind in MODELLED or e.kind == "layout" for e in effects)


def differences(spec, ref: dict, cand: dict) -> tuple[Difference, ...]:
    """The output elements (at most 16 per buffer) whose bits differ between two runs."""
    diffs = []
    for p in spec.params:
        if not p.is_buffer or p.access not in ("out", "inout"):
            continue
        a = np.ascontiguousarray(ref[p.name]).view(f"u{p.dtype.itemsize}").reshape(-1)
        b = np.ascontiguousarray(cand[p.name]).view(f"u{p.dtype.itemsize}").reshape(-1)
        differ = a != b
        if p.is_float and "nan-any" in getattr(spec, "allow", ()):
            differ &= ~(_nan_bits(a, p) & _nan_bits(b, p))      # (any NaN equals any NaN)
        for i in np.nonzero(differ)[0][:16].tolist():
            diffs.append(Difference(p.name, i, int(a[i]), int(b[i])))
    if printed.compared(spec):
        diffs.extend(printed.differences(ref, cand))
    return tuple(diffs)


def _nan_bits(bits: np.ndarray, p) -> np.ndarray:
    """Which elements (bit patterns of float param `p`) are NaNs."""
    exp_bits, frac_bits = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}[p.type]
    v = bits.astype(np.uint64)
    exp = (v >> np.uint64(frac_bits)) & np.uint64((1 << exp_bits) - 1)
    return (exp == np.uint64((1 << exp_bits) - 1)) & ((v & np.uint64((1 << frac_bits) - 1)) != 0)


def check_reference_determined(ctx, scalars: dict, inputs: dict, ref_final: dict, ref_effects,
                               seed: int) -> None:
    """Raise (an error about the spec) when the reference read what the ISA leaves open and
    its outputs change with the choices."""
    if not consulted(ref_effects):
        return
    want = _outputs(ctx.spec, ref_final)
    for choices in alternatives(ctx, seed, ref_effects):
        final, _ = run_side(ctx.spec.side("reference"), _copies(inputs), scalars,
                            choices=choices, tag="reference")
        if not _same(want, _outputs(ctx.spec, final)):
            kinds = sorted({e.what for e in ref_effects
                            if e.kind in MODELLED or e.kind == "layout"})
            raise KeqError(f"the reference's outputs depend on what the PTX ISA leaves open "
                           f"({kinds[0]}; with {choices.describe()} they differ): the claim "
                           f"is about a deterministic reference")


def difference_under_choices(ctx, scalars: dict, inputs: dict, rep: dict[str, EmulatedSide],
                             seed: int, other_choices: bool = False
                             ) -> tuple[Choices, dict, tuple] | None:
    """(choices, the candidate's final values, differences) of the first legal execution
    whose outputs differ from the reference's: `rep` (role -> `EmulatedSide`, the
    emulator's default choices) first, then the candidate under other choices when its run
    consulted them or `other_choices` says the caller knows it depends on them (morally
    strong accesses in an order the scheduler picks, found by the symbolic race log: a run
    without the race detector records no effect for them). None when nothing counts."""
    ref_final, ref_result = rep["reference"]
    cand_final, cand_result = rep["candidate"]
    if proves_nothing(ref_result.effects) or proves_nothing(cand_result.effects):
        return None
    tries = [(ctx.choices, cand_final)]
    if other_choices or consulted(cand_result.effects):
        tries += [(c, None) for c in alternatives(ctx, seed, cand_result.effects)]
    for choices, final in tries:
        if final is None:
            final, result = run_side(ctx.spec.side("candidate"), _copies(inputs), scalars,
                                     choices=choices, tag="candidate")
            if proves_nothing(result.effects):
                continue
        diffs = differences(ctx.spec, ref_final, final)
        if diffs:
            check_reference_determined(ctx, scalars, inputs, ref_final, ref_result.effects,
                                       seed)
            return choices, final, diffs
    return None


def note_for(choices: Choices, effects) -> str:
    """What a counterexample found by testing says of the choices it needed."""
    used = sorted({f"{e.what} at {e.loc}" for e in effects if e.kind in MODELLED})
    if choices.layout != "packed":
        used += sorted({f"an address's numeric value reaches {e.what} at {e.loc}"
                        for e in effects if e.kind == "layout"})
    if not used:
        return ""
    return (f"the candidate reads what the PTX ISA leaves open ({'; '.join(used[:3])}); "
            f"with {choices.describe()}, one execution the GPU may give, the outputs differ")


__all__ = ["ordinary_floats", "uniform_floats", "EDGE_VALUES", "alternatives", "difference_under_choices", "check_reference_determined",
           "differences", "note_for", "proves_nothing", "consulted"]
