"""A verdict as people and machines read it, from one definition: `verdict_lines` (what
`keq verify` and `keq tv` print) and `verdict_json` (their `--json`); certificates record the
same verdict's obligations (`verifier.certs`)."""

from __future__ import annotations

import numpy as np

from semantics.choices import Choices
from verifier.spec import PairSpec
from verifier.printed import first_difference
from verifier.verdict import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, PRINTED, Verdict


def choices_line(c: Choices, shared_fill: int | None = None, shared_from: str = "") -> str:
    """The choices on one line: both policies, a model's explicit values by constant name (a
    few), and the byte shared memory holds when one is given (`shared_from`: by whom)."""
    text = f"fill {c.fill}, schedule {c.schedule}"
    if c.layout != "packed":
        text += f", {c.layout} memory layout"
    if c.values:
        items = sorted(c.values.items())
        text += ", values " + ", ".join(f"{k}={int(v):#x}" for k, v in items[:4]) + \
            (f", ... ({len(items)} in all)" if len(items) > 4 else "")
    if shared_fill is not None:
        text += f", every shared byte {shared_fill:#04x} at launch" + \
            (f" ({shared_from})" if shared_from else "")
    return text


def _hex(v: int, bits: int) -> str:
    return f"0x{v:0{bits // 4}x}"


def verdict_lines(v: Verdict, written: dict | None = None) -> list[str]:
    """The verdict as `keq verify` prints it; `written` (optional, `writers`): who wrote each
    differing element."""
    written = written or {}
    lines: list[str] = []
    line = lines.append
    line(f"claim    {v.claim}")
    for s in v.stages:
        detail = f"  ({s.detail})" if s.detail else ""
        line(f"  {s.name:<20} {s.status:<12} {s.seconds:7.3f} s{detail}")
    for a in v.assumptions:
        line(f"  assuming {a}")
    label = {EQUIVALENT: "EQUIVALENT", NOT_EQUIVALENT: "NOT EQUIVALENT",
             INCONCLUSIVE: "INCONCLUSIVE"}[v.kind]
    line(f"verdict  {label}  ({v.assignments} launch shape(s) checked, {v.seconds:.2f} s)")
    if v.coverage:
        line(f"  covered: {v.coverage}")
    for r in v.reasons:
        line(f"  {r}")
    cex = v.counterexample
    if cex is not None:
        given = ", ".join(f"{k}={val}" for k, val in cex.scalars.items())
        line(f"given    {given}  (and the buffer contents saved with --save-counterexample)")
        if cex.note:
            line(f"  {cex.note}")
        if cex.shared_fill:
            line(f"  replayed with every shared byte {cex.shared_fill:#04x} at launch")
        if cex.choices is not None:
            line(f"  choices  {choices_line(cex.choices)}")
        names = list(cex.depends_on)
        if not names and cex.differences:
            # Found by testing: which inputs the element reads is not known; show the input
            # elements at its index, and say so.
            out, i = cex.differences[0][:2]
            names = [f"{n}[{i}]" for n, x in cex.inputs.items()
                     if n != out and hasattr(x, "reshape") and x.size > i]
            if names:
                line(f"  inputs at index {i}, where the first difference is (which of them "
                      f"it reads is not known: it was found by testing):")
        shown = 0
        for name in names:
            base, _, idx = name.partition("[")
            if idx and shown < 8:
                arr = cex.inputs[base].reshape(-1)
                i = int(idx[:-1])
                bits = arr.dtype.itemsize * 8
                raw = int(arr.view(f"u{arr.dtype.itemsize}")[i])
                line(f"  input {name} = {_hex(raw, bits)} ({arr[i]!s})")
                shown += 1
        for name, i, a, b in cex.differences[:8]:
            if name == PRINTED:
                ref, cand = ((cex.printed or {}).get(role, {}).get(i, ())
                             for role in ("reference", "candidate"))
                text = first_difference(ref, cand)
                line(f"  printf of thread {i} (global linear id): {text}")
                continue
            bits = cex.reference[name].dtype.itemsize * 8
            ra = cex.reference[name].reshape(-1)[i]
            ca = cex.candidate[name].reshape(-1)[i]
            line(f"  {name}[{i}]: reference {_hex(a, bits)} ({ra!s})  candidate "
                  f"{_hex(b, bits)} ({ca!s})")
            for role in ("reference", "candidate"):
                if (role, name, i) in written:
                    line(f"    {role} value written by "
                          f"{written[(role, name, i)] or 'no thread (the initial contents)'}")
    return lines


def choices_json(c) -> dict | None:
    if c is None:
        return None
    return {"fill": c.fill, "schedule": c.schedule, "layout": c.layout,
            "values": {k: int(x) for k, x in sorted(c.values.items())}}


def verdict_json(v: Verdict, written: dict | None = None,
                 spec: PairSpec | None = None) -> dict:
    """The verdict as `keq verify --json` prints it (the claim's named relaxations and
    target assumptions from `spec`)."""
    written = written or {}
    cex = v.counterexample
    return {
        "claim": v.claim,
        # (the claim's named relaxations and target assumptions, `verifier.spec.CLAIM_NAMES`)
        "allow": list(spec.allow) if spec is not None else [],
        "target_assumptions": list(spec.target_assumptions) if spec is not None else [],
        "verdict": v.kind, "reasons": list(v.reasons),
        "assumptions": list(v.assumptions), "launch_shapes": v.assignments,
        "coverage": v.coverage,
        "seconds": round(v.seconds, 3),
        "stages": [{"name": s.name, "status": s.status, "seconds": round(s.seconds, 4),
                    "detail": s.detail} for s in v.stages],
        "counterexample": None if cex is None else {
            "scalars": {k: (float(x) if isinstance(x, (float, np.floating)) else int(x))
                        for k, x in cex.scalars.items()},
            "note": cex.note,
            "shared_fill": cex.shared_fill,
            "choices": choices_json(cex.choices),
            "depends_on": list(cex.depends_on),
            "printed": None if cex.printed is None else {
                role: {str(t): list(lines) for t, lines in sorted(by_thread.items())}
                for role, by_thread in cex.printed.items()},
            "differences": [{"param": n, "index": i, "reference": a, "candidate": b,
                             "written_by": {r: written[(r, n, i)] for r in
                                            ("reference", "candidate") if (r, n, i) in written}}
                            for n, i, a, b in cex.differences],
        },
    }
