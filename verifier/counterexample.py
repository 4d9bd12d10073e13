"""Counterexamples: solver models and random tests become concrete inputs, both kernels are
replayed on the emulator, and only a reproduced difference (or fault, or race) is reported."""

from __future__ import annotations

import numpy as np

from semantics.errors import KeqError
from semantics.machine import MemoryFault
from semantics.machine.executor import ExecutionError
from verifier.approx_evidence import bounded_difference, for_every_function, mentions_functions
from verifier.emulate import EmulatedSide, run_side
from verifier.printed import PRINTED
from verifier.spec import (PairSpec, ParamSpec, draw_scalars, first_allowed, int_bounds,
                           make_inputs, type_bits)
from semantics.choices import Choices, describe_values
from verifier.terms import free_constants
from verifier.testing import (EDGE_VALUES, difference_under_choices, differences, note_for,
                              ordinary_floats, uniform_floats)
from verifier.run import Run
from verifier.verdict import NOT_EQUIVALENT, Counterexample, InternalError, Verdict


def scalar_domain(p: ParamSpec) -> list[int] | None:
    """An integer scalar's allowed values, None when it has no range or values. Only integer
    scalars shape a launch (the spec loader refuses a float in an expression); a float
    scalar's values are not a list of launch shapes: None."""
    if p.is_float:
        return None
    if p.values is not None:
        return list(p.values)
    if p.range is not None:
        return list(range(p.range[0], p.range[1] + 1))
    return None


def shape_text(env: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(env.items())) or "the only launch shape"


def variables_in(terms) -> set[str]:
    """Names of the uninterpreted constants in terms."""
    return {str(c) for c in free_constants(*[t for t in terms if not isinstance(t, int)])}


def _replay(ctx: Run, env: dict, inputs: dict, *, races: bool = False,
            shared_fill: int | None = None,
            choices: Choices | None = None) -> dict[str, EmulatedSide]:
    """Both kernels on the emulator; `choices` (default: the context's) resolves what the
    ISA leaves open, each kernel under its role's names (`semantics.choices`)."""
    spec = ctx.spec
    kernel = getattr(ctx, "kernel", None)       # (prepared once per run)
    return {role: run_side(spec.side(role), inputs, env, detect_races=races,
                           shared_fill=shared_fill,
                           choices=choices if choices is not None else ctx.choices, tag=role,
                           prepared=kernel(role) if kernel is not None else None)
            for role in ("reference", "candidate")}


def _far_apart(spec: PairSpec, ref: dict, cand: dict, rel: float = 1e-3) -> bool:
    """Some output differs by more than rounding plausibly explains (a heuristic for choosing
    shapes to check, never evidence): integers at all, floats beyond `rel` of their size."""
    for p in spec.params:
        if not p.is_buffer or p.access not in ("out", "inout"):
            continue
        a = np.asarray(ref[p.name]).reshape(-1)
        b = np.asarray(cand[p.name]).reshape(-1)
        if a.dtype.kind != "f":
            if np.any(a != b):
                return True
            continue
        with np.errstate(all="ignore"):
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            scale = np.maximum(1.0, np.maximum(np.abs(a64), np.abs(b64)))
            far = np.abs(a64 - b64) > rel * scale
        if np.any(far & np.isfinite(a64) & np.isfinite(b64)):
            return True
    return False


def writers(spec: PairSpec, cex: Counterexample, limit: int = 8) -> dict:
    """(role, output, index) -> who stored the value the counterexample reports there
    ("block (..) thread (..) at FILE:LINE:COL", "" when no thread did), for its first
    `limit` differences, by replaying each kernel on its inputs with the race detector's
    shadow memory (which remembers each byte's last writer)."""
    from verifier.emulate import prepare_side
    out: dict = {}
    for role in ("reference", "candidate"):
        side = spec.side(role)
        inputs = {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in cex.inputs.items()}
        try:
            _, result = run_side(side, inputs, cex.scalars, detect_races=True,
                                 shared_fill=cex.shared_fill)
        except (MemoryFault, ExecutionError, KeqError):
            continue
        ptx_name = {name: kp.name for name, kp in zip(side.arg_names,
                                                      prepare_side(side).fn.params)}
        for name, i, _, _ in cex.differences[:limit]:
            if name == PRINTED:
                continue
            who = (result.writers or {}).get(ptx_name.get(name, ""))
            if who is not None:
                out[(role, name, i)] = who(i * spec.param(name).dtype.itemsize)
    return out


def model_inputs(ctx, env, value_of, variables, seed) -> tuple[dict, dict]:
    """Concrete (scalars, inputs) from a solver model; `value_of(variable) -> bit pattern`.
    Inputs the model does not mention are random."""
    spec = ctx.spec
    rng = np.random.default_rng(seed)
    scalars = dict(env)
    for name, (pname, idx, v) in variables.items():
        if idx is None:
            p = spec.param(pname)
            scalars[pname] = from_bits(p, value_of(v))
            if not p.allows(scalars[pname]):
                # The model does not mention this scalar (`value_of` answers 0 for it): the
                # obligation does not depend on it, so any allowed value replays it. (One it
                # mentions is allowed: the claim's constraints are in every obligation.)
                scalars[pname] = first_allowed(p)
    inputs = make_inputs(spec, scalars, rng)
    bounds = {p.name: p.element_bounds(scalars) for p in spec.buffers if p.elements}
    for name, (pname, idx, v) in variables.items():
        if idx is not None:
            arr = inputs[pname]
            raw = arr.view(f"u{arr.dtype.itemsize}")
            if idx < raw.size:        # a maximal launch's elements past this shape's length
                bits = value_of(v)
                if pname in bounds and not _within(bits, arr.dtype, bounds[pname]):
                    continue    # not in the model (0 by default): its random value stays
                raw[idx] = bits
    inputs.update({k: v for k, v in scalars.items()})
    return scalars, inputs


def _within(bits: int, dtype: np.dtype, bounds: tuple[int, int]) -> bool:
    """Is the element with bit pattern `bits` in the inclusive `bounds`? (Every element a
    model mentions is: the claim's constraints are in every obligation.)"""
    value = int(np.array([bits], dtype=f"u{dtype.itemsize}").view(dtype)[0])
    return bounds[0] <= value <= bounds[1]


def model_counterexample(ctx, env, value_of, variables, seed,
                          chosen: dict[str, int] | None = None) -> Verdict:
    """`value_of(variable) -> bit pattern` reads the solver's model; `chosen` holds its
    values for what the ISA leaves open (`semantics.choices.chosen_values`): the replay
    uses them, so a difference that depends on one reproduces and names it."""
    spec = ctx.spec
    scalars, inputs = model_inputs(ctx, env, value_of, variables, seed)
    choices = ctx.choices.with_values(chosen) if chosen else ctx.choices
    rep = _replay(ctx, scalars, {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                 for k, v in inputs.items()}, choices=choices)
    ref, cand = rep["reference"].final, rep["candidate"].final
    diffs = differences(spec, ref, cand)
    if not diffs:
        if ctx.witness_of.startswith("printf call"):
            return ctx.inconclusive(f"{ctx.witness_of} may differ in the bits of an argument "
                                    f"at these inputs, but prints the same text there (a "
                                    f"%f rounds them alike): printed text is compared only "
                                    f"as bits symbolically")
        if ctx.spec.mode == "real":
            return ctx.inconclusive("the kernels differ as real functions at these inputs, "
                                    "but their floats agree there: the difference is below "
                                    "rounding (no replayable counterexample)")
        if ctx.assumptions or mentions_functions(ctx.witness):
            return ctx.inconclusive("the solver found inputs on which the kernels may differ "
                                      "only through approximate functions or values the PTX "
                                      "ISA leaves unspecified (such as the NaN an operation "
                                      "returns); the emulator's model of them shows no "
                                      "difference")
        raise InternalError("a solver model did not reproduce on the emulator (keq bug): "
                            f"{shape_text(scalars)}")
    unsettled = _depends_on_reference_choices(ctx, scalars, inputs, choices, diffs)
    if unsettled is not None:
        return unsettled
    if mentions_functions(ctx.witness) and not for_every_function(ctx.witness, value_of,
                                                                      variables, chosen or {}):
        return ctx.inconclusive("the kernels differ on these inputs only for some of the "
                                  "values the hardware fixes but the PTX ISA leaves open (the "
                                  "NaN an operation returns, an approximate function's "
                                  "value within its documented error bound): name a target "
                                  "assumption to decide it")
    depends = []
    if ctx.witness is not None:
        depends = sorted(variables_in(ctx.witness), key=lambda n: (n.split("[")[0], len(n), n))
    cex = Counterexample.of(scalars, inputs, _outs(spec, ref), _outs(spec, cand), diffs,
                         depends_on=tuple(depends), choices=choices,
                         note=describe_choices(choices, rep))
    return Verdict(NOT_EQUIVALENT, "", (f"{len(diffs)}+ output element(s) differ",),
                   counterexample=cex)


def _depends_on_reference_choices(ctx, scalars, inputs, choices, diffs) -> Verdict | None:
    """A difference that needs the reference's own unspecified values is no counterexample
    to the claim: the reference's outputs are then not determined by its inputs, an error
    about the spec. Seen by running the reference again with its chosen values left to
    the fill policy and two other fills: other outputs mean its outputs depend on them."""
    own = {k: v for k, v in choices.values.items() if k.startswith("reference/")}
    if not own and not _reads_unspecified(ctx, scalars, inputs, choices):
        return None
    outs = []
    for fill in ("zero", "pattern", "random:1"):
        again = Choices(fill, choices.schedule,
                        {k: v for k, v in choices.values.items() if k not in own},
                        choices.target, choices.layout)
        final, _ = run_side(ctx.spec.side("reference"),
                            {k: (v.copy() if isinstance(v, np.ndarray) else v)
                             for k, v in inputs.items()}, scalars, choices=again,
                            tag="reference")
        outs.append(_outs(ctx.spec, final))
    if all(_same_outputs(outs[0], o) for o in outs[1:]):
        return None
    raise KeqError(f"the reference's outputs depend on what the PTX ISA leaves open (at "
                   f"{shape_text(scalars)}: never-written registers or memory, volatile special "
                   f"registers, the order of atomics): the claim is about a deterministic "
                   f"reference")


def _reads_unspecified(ctx, scalars, inputs, choices) -> bool:
    _, result = run_side(ctx.spec.side("reference"),
                         {k: (v.copy() if isinstance(v, np.ndarray) else v)
                          for k, v in inputs.items()}, scalars, choices=choices,
                         tag="reference")
    return any(e.kind in ("uninitialized", "nondeterministic") for e in result.effects)


def _same_outputs(a: dict, b: dict) -> bool:
    if a.get(PRINTED, {}) != b.get(PRINTED, {}):
        return False
    return all(np.array_equal(np.asarray(a[k]).view(np.uint8), np.asarray(b[k]).view(np.uint8))
               for k in a if k != PRINTED)


def describe_choices(choices: Choices, rep: dict | None = None) -> str:
    """One line naming the values the ISA leaves open that a counterexample chose."""
    if not choices.values and choices.fill == "zero" and choices.schedule == "lane" and \
            choices.layout == "packed":
        return ""
    shown = describe_values(choices.values)
    return ("with what the PTX ISA leaves open chosen as: "
            + ("; ".join(shown) if shown else choices.describe()))


def _outs(spec: PairSpec, vals: dict) -> dict:
    out = {p.name: vals[p.name] for p in spec.params
           if p.is_buffer and p.access in ("out", "inout")}
    if PRINTED in vals:
        out[PRINTED] = vals[PRINTED]     # (kept apart by `Counterexample.of`)
    return out


def from_bits(p: ParamSpec, bits: int):
    """A scalar's value from its bit pattern, as keq passes it (`scalar_value`): a float is
    a numpy float of its type (bf16: np.uint16 bits), its exact bits kept (a NaN's payload
    and a signalling NaN would not survive a Python float)."""
    if p.is_float:
        return np.array([bits], dtype=f"u{type_bits(p.type) // 8}").view(p.dtype)[0]
    lo, hi = int_bounds(p.type)
    w = type_bits(p.type)
    return bits - (1 << w) if lo < 0 and bits >= 1 << (w - 1) else bits


def concrete_inputs(ctx, env: dict, seed: int, *,
                     random_scalars: bool = False) -> tuple[dict, dict]:
    """Replay inputs for a launch shape: random buffer contents, and the free scalars at their
    least allowed value (for replays whose behaviour does not depend on them) or, with
    `random_scalars`, drawn within their ranges."""
    rng = np.random.default_rng(seed)
    scalars = dict(env)
    for p in ctx.spec.scalars:
        if p.name not in scalars:
            if random_scalars:
                scalars[p.name] = draw_scalars(ctx.spec, rng, fixed=scalars)[p.name]
            else:
                scalars[p.name] = first_allowed(p)
    inputs = make_inputs(ctx.spec, scalars, rng)
    inputs.update(scalars)
    return scalars, inputs


def tested_difference(ctx, env: dict, seed: int, trials: int,
                         terms: dict | None = None, other_choices: bool = False
                         ) -> Verdict | None:
    """Run both kernels on float buffers filled with one edge value each (`EDGE_VALUES`),
    then on random inputs of this launch shape (`trials` sets; none at all for 0); a bit
    difference (bitexact) in a legal execution is a counterexample as it stands (`verifier.testing`: under other
    choices of what the ISA leaves open too). In real mode only differences the real check
    would also see count, so testing is skipped there."""
    if ctx.spec.mode == "real":
        return None
    edges = len(EDGE_VALUES) if trials > 0 else 0
    for k in range(edges + trials):
        scalars, inputs = concrete_inputs(ctx, env, seed + 1 + k, random_scalars=True)
        if k < edges:       # (first: one edge value shows a range bug at once)
            inputs = uniform_floats(inputs, EDGE_VALUES[k])
        elif k % 2:
            inputs = ordinary_floats(inputs, seed + 1 + k)
        found = replayed_difference(ctx, scalars, inputs, seed + k, terms, other_choices)
        if found is not None:
            return found
    return None


def replayed_difference(ctx, scalars: dict, inputs: dict, seed: int,
                        terms: dict | None = None, other_choices: bool = False,
                        note: str = "found by random testing before solving",
                        faults: bool = False) -> Verdict | None:
    """Both kernels on the emulator with these inputs (bitexact mode): their outputs
    differing in a legal execution (under the run's choices, or others the ISA allows) is a
    counterexample as it stands; `note` says where the inputs came from. With `faults`, a
    fault of the candidate on them is the verdict too (else it is raised)."""
    if ctx.spec.mode == "real":
        return None
    fresh = {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in inputs.items()}
    try:
        rep = _replay(ctx, scalars, fresh)
    except (MemoryFault, ExecutionError) as e:
        if not faults:
            raise
        replay_fault(ctx, "reference", scalars, seed, inputs)    # (raises if it is its fault)
        return faulted("candidate", scalars, inputs, e)
    found = difference_under_choices(ctx, scalars, inputs, rep, seed, other_choices)
    if found is None:
        found = bounded_difference(ctx, scalars, inputs, rep, terms, seed)
        if found is None:
            return None
        note = ("the outputs differ for every value of the approximate instructions and "
                "tensor cores within the bounds keq admits (the ISA's documented error "
                "bounds, verifier/approx_bounds.py; for mma, truncation to 22 bits below "
                "the largest term, verifier/mma_bounds.py) and every NaN an operation may "
                "return")
    choices, cand, diffs = found
    note = note_for(choices, rep["candidate"].result.effects) or (
        f"with {choices.describe()}, one execution the GPU may give, the outputs differ"
        if choices != ctx.choices else note)
    # The inputs that matter: those the first differing element's terms mention.
    pair = (terms or {}).get(diffs[0][:2], ())
    depends = sorted(variables_in(pair), key=lambda n: (n.split("[")[0], len(n), n))
    cex = Counterexample.of(scalars, inputs, _outs(ctx.spec, rep["reference"].final),
                         _outs(ctx.spec, cand), diffs, note=note,
                         depends_on=tuple(depends), choices=choices)
    return Verdict(NOT_EQUIVALENT, "", (f"{len(diffs)}+ output element(s) differ",),
                   counterexample=cex)


def fault_counterexample(ctx, env, error, seed) -> Verdict:
    scalars, inputs = concrete_inputs(ctx, env, seed)
    try:
        _replay(ctx, scalars, inputs)
    except (MemoryFault, ExecutionError) as e:
        cex = Counterexample(scalars, inputs, {}, {}, (), note=e.render())
        return Verdict(NOT_EQUIVALENT, "", (f"the candidate faults: {e}",), counterexample=cex)
    raise InternalError(f"the candidate faulted symbolically but not on replay: {error}")


def faulted(role: str, scalars: dict, inputs: dict, e) -> Verdict:
    """A fault on replay: a verdict for the candidate, an error about the spec for the
    reference."""
    if role == "reference":
        raise KeqError(f"the reference kernel faults at {shape_text(scalars)}: "
                       f"{e.render()}") from None
    cex = Counterexample(scalars, inputs, {}, {}, (), note=e.render())
    return Verdict(NOT_EQUIVALENT, "", (f"the candidate faults: {e}",), counterexample=cex)


def replay_fault(ctx, role: str, scalars: dict, seed: int,
                 inputs: dict | None = None) -> Verdict | None:
    """Run `role` concretely at `scalars` (random inputs unless given); a fault is a verdict
    (about the spec for the reference). None when it does not fault. A candidate's fault is
    a refutation only on an input where the reference runs cleanly: where the reference
    faults too (a gather whose indices the spec leaves unbounded), the input is outside any
    claim the reference can satisfy, an error about the spec."""
    if inputs is None:
        scalars, inputs = concrete_inputs(ctx, scalars, seed)
    try:
        run_side(ctx.spec.side(role), {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                       for k, v in inputs.items()}, scalars)
    except (MemoryFault, ExecutionError) as e:
        if role == "candidate":
            replay_fault(ctx, "reference", scalars, seed, inputs)   # (raises if it faults)
        return faulted(role, scalars, inputs, e)
    return None


def replay_race(ctx, role: str, scalars: dict, inputs: dict,
                orders: bool = False) -> Verdict | None | str:
    """Run `role` with the emulator's race detector: a race is a verdict (about the spec for
    the reference); None when there is none on these inputs (with `orders`: ORDERED when
    morally strong accesses met instead)."""
    try:
        _, result = run_side(ctx.spec.side(role), inputs, scalars, detect_races=True,
                             choices=ctx.choices, tag=role)
    except (MemoryFault, ExecutionError) as e:     # (an .nc load of written memory, ...)
        return faulted(role, scalars, inputs, e)
    races = [e for e in result.effects if e.kind == "race"]
    if not races:
        if orders and any(e.kind == "nondeterministic" and e.what.startswith(ORDERED)
                          for e in result.effects):
            return ORDERED
        return None
    if role == "reference":
        raise KeqError(f"the reference kernel has a data race at {shape_text(scalars)}: "
                       f"{races[0].what}")
    cex = Counterexample(scalars, inputs, {}, {}, (), note=races[0].what)
    return Verdict(NOT_EQUIVALENT, "", (f"the candidate has a data race: {races[0].what}",),
                   counterexample=cex)


ORDERED = "morally strong accesses"      # (the concrete detector's effect for them)


def race_check(ctx, env, seed) -> Verdict | None | str:
    """Races at one shape whose accesses do not depend on the inputs: a verdict, None, or
    the string ORDERED when morally strong accesses met in an order the scheduler chooses
    (no race, but the outputs may depend on it: the caller checks the shape the symbolic
    launch's way, every access logged)."""
    scalars, inputs = concrete_inputs(ctx, env, seed)
    for role in ("reference", "candidate"):
        verdict = replay_race(ctx, role, scalars, inputs, orders=True)
        if verdict is not None:
            return verdict
    return None


def pretest(ctx, envs: list[dict], seed: int) -> Verdict | None:
    """Testing before the symbolic run, at the launch shapes `envs`: both kernels on the
    emulator with its race detector, on random inputs. A fault, a race or (bitexact) an
    output difference seen there is a verdict as it stands, concrete and reproducible; the
    symbolic run of a racy or buggy pair can take seconds to say the same. A fault or race
    in the reference is an error about the spec. None when these runs show nothing (which
    proves nothing: the symbolic run decides)."""
    if ctx.trials <= 0:
        return None
    spec = ctx.spec
    for k, env in enumerate(envs):
        scalars, inputs = concrete_inputs(ctx, env, seed + 7 + k, random_scalars=True)
        if spec.mode != "bitexact":
            # finite, moderate floats: real-mode outputs far apart then mean something
            rng = np.random.default_rng(seed + 11 + k)
            for n, v in inputs.items():
                if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                    inputs[n] = rng.uniform(-1.0, 1.0, v.shape).astype(v.dtype)
        elif k % 2:
            inputs = ordinary_floats(inputs, seed + 11 + k)
        finals, effects, runs = {}, {}, {}
        for role in ("reference", "candidate"):
            copied = {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in inputs.items()}
            try:
                final, result = run_side(spec.side(role), copied, scalars, detect_races=True,
                                         choices=ctx.choices, tag=role)
            except (MemoryFault, ExecutionError) as e:
                return faulted(role, scalars, inputs, e)
            races = [e for e in result.effects if e.kind == "race"]
            if races:
                if role == "reference":
                    raise KeqError(f"the reference kernel has a data race at "
                                   f"{shape_text(scalars)}: {races[0].what}")
                cex = Counterexample(scalars, inputs, {}, {}, (), note=races[0].what)
                return Verdict(NOT_EQUIVALENT, "", (f"the candidate has a data race: "
                                                    f"{races[0].what}",), counterexample=cex)
            effects[role] = list(result.effects)
            finals[role] = final
            runs[role] = EmulatedSide(final, result)
        if spec.mode != "bitexact":
            # Rounding differences prove nothing in real mode, but a large one marks a shape
            # worth checking on its own should the whole claim stay undecided.
            if _far_apart(spec, finals["reference"], finals["candidate"]):
                ctx.suspects.append({n: env[n] for n in env})
            continue
        found = difference_under_choices(ctx, scalars, inputs, runs, seed + k)
        if found is not None:
            choices, cand, diffs = found
            note = note_for(choices, runs["candidate"].result.effects) or \
                "found by random testing before the symbolic run"
            cex = Counterexample.of(scalars, inputs, _outs(spec, finals["reference"]),
                                 _outs(spec, cand), diffs, note=note, choices=choices)
            return Verdict(NOT_EQUIVALENT, "", (f"{len(diffs)}+ output element(s) differ",),
                           counterexample=cex)
    return None
