"""What the silicon check prints (the dry run) and writes (the markdown table of a GPU run)."""

from __future__ import annotations

import datetime
import subprocess
from dataclasses import dataclass, field

from bench.silicon.check import Element, FormRun


@dataclass
class GpuResult:
    """One form's GPU run against the emulator."""

    elements: int
    matches: int
    mismatches: list[Element]
    mismatch_count: int
    bounded: int
    outside: list[Element] = field(default_factory=list)
    how: str = ""


def dry_line(run: FormRun) -> str:
    bound = (f"emulator in bound {run.inside}/{run.bounded}" if run.bounded
             else "no bound (tensor_range bounds f16/bf16 inputs only)")
    model = "model sample ok" if not run.model_diffs else \
        f"MODEL SAMPLE DIFFERS x{len(run.model_diffs)}"
    return f"{run.form.name:44s} {run.instances:5d} instances  {bound}  {model}  " \
           f"{run.seconds:.1f} s"


def _hex(form_fmt_bits: int, v: int) -> str:
    return f"0x{v:0{form_fmt_bits // 4}x}"


def _short(e: Element, width: int) -> str:
    r = e.results
    return f"{e.set}#{e.instance} D[{e.row}][{e.col}]: emu {_hex(width, r['emulator'])} " \
           f"gpu {_hex(width, r['gpu'])}"


def _details(run: FormRun, e: Element, width: int) -> list[str]:
    k = run.form.k
    a, b, c = e.args[:k], e.args[k:2 * k], e.args[-1]
    res = ", ".join(f"{who} {_hex(width, v)}" for who, v in e.results.items())
    return [f"- {e.set} instance {e.instance}, D[{e.row}][{e.col}]: {res}",
            f"  - A row: {' '.join(hex(x) for x in a)}",
            f"  - B col: {' '.join(hex(x) for x in b)}",
            f"  - C: {hex(c)}"]


def nvidia_smi_driver() -> str:
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown (no nvidia-smi)"


def _head(device: str, driver: str, command: str, commit: str, outside: int) -> list[str]:
    lines = ["# Tensor cores on silicon: every mma.sync form against keq's emulator", "",
             f"- GPU: {device}; {driver}; nvidia-smi driver {nvidia_smi_driver()}",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; "
             f"keq commit {commit}",
             f"- command: `{command}`",
             "- emulator: keq's sm_90 model (semantics/tensor_core.py, 25 fraction bits); "
             "bound: verifier/mma_bounds.py `tensor_range` (f16/bf16 inputs only)", ""]
    if outside:
        lines += [f"**SOUNDNESS PROBLEM: {outside} GPU result(s) lie outside keq's bound.** "
                  "A refutation through tensor_range can be wrong on this GPU: widen the "
                  "bound (verifier/mma_bounds.py) before trusting any refutation of an mma "
                  "pair. Details below.", ""]
    return lines


def markdown(runs: list[FormRun], gpu: dict[str, GpuResult], device: str, driver: str,
             command: str, commit: str, skipped: dict[str, str]) -> str:
    outside = sum(len(g.outside) for g in gpu.values())
    lines = _head(device, driver, command, commit, outside)
    lines += ["| form | instances | bit-exact matches vs emulator (sm_90 model) | mismatches "
              "(first 3) | GPU outside keq's bound |", "|---|---|---|---|---|"]
    for run in runs:
        g = gpu[run.form.name]
        w = {"f16": 16, "f32": 32, "f64": 64}[run.form.d]
        first = "; ".join(_short(e, w) for e in g.mismatches[:3]) or "none"
        bound = f"{len(g.outside)} of {g.bounded}" if g.bounded else "not bounded"
        if g.outside:
            bound = f"**{bound} (SOUNDNESS)**"
        lines.append(f"| `{run.form.name}` | {run.instances} | {g.matches} / {g.elements} "
                     f"elements | {g.mismatch_count}: {first} | {bound} |")
    for name, why in skipped.items():
        lines.append(f"| `{name}` | 0 | skipped: {why} | | |")
    lines += ["", "Kernels were loaded by: " + ", ".join(
        sorted({g.how for g in gpu.values()})) + ".", ""]
    for run in runs:
        g = gpu[run.form.name]
        w = {"f16": 16, "f32": 32, "f64": 64}[run.form.d]
        if g.mismatches or g.outside:
            lines += [f"## `{run.form.name}`", ""]
        if g.outside:
            lines += ["Outside keq's bound (first 10):", ""]
            for e in g.outside[:10]:
                lines += _details(run, e, w)
            lines.append("")
        if g.mismatches:
            lines += [f"Mismatches (first 10 of {g.mismatch_count}; `sm_80 model` is the "
                      "24-bit datapath's value):", ""]
            for e in g.mismatches[:10]:
                lines += _details(run, e, w)
            lines.append("")
    return "\n".join(lines)


__all__ = ["GpuResult", "dry_line", "markdown"]
