"""`keq fuzz --semantics`: the instruction conformance suite (`semantics.conformance`) with a
backend as one side.

- `--backend emulator`: concrete (numpy) vs symbolic (z3) domains, the existing suite.
- `--backend pycuda`: the GPU vs the concrete emulator. Per form, a tiny PTX kernel is
  generated (`gpu_kernel_ptx`): thread i loads its operands from one global buffer per input
  register (element i), executes the instruction, and stores each destination register to
  one output buffer per destination. Hypothesis draws the operands (`draw_inputs`: random
  values mixed with NaN payloads, +-0, +-inf, subnormals, extreme normals and integer
  extremes), after a deterministic sweep of the specials. Exact forms must agree bit for bit;
  approximate forms (`*.approx`, `div.full`) are compared against the documented maximum
  error of the PTX ISA (`APPROX_BOUNDS`), NaN against any NaN.

Warp shuffles are skipped on the GPU: the table's cases run a partial warp with membermask
-1, which the ISA leaves undefined on hardware.
"""

from __future__ import annotations

import math
import re
import sys
import time
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, given, seed, settings

from semantics.errors import KeqError
from semantics.ir.types import TYPES

# Maximum error of approximate forms per the PTX ISA, as (kind, value): "rel" relative error,
# "ulp" units in the last place (f32). Where the ISA states a bound only on a sub-range, keq
# uses it everywhere and reports a violation outside it as a difference to look at.
APPROX_BOUNDS = {
    "ex2.approx": ("rel", 2.0 ** -22),
    "lg2.approx": ("abs_or_rel", 2.0 ** -22),
    "rcp.approx": ("ulp", 1),
    "rsqrt.approx": ("rel", 2.0 ** -22.9),
    "sqrt.approx": ("rel", 2.0 ** -23),
    "div.approx": ("ulp", 2),
    "div.full": ("ulp", 2),
    "tanh.approx": ("rel", 2.0 ** -10.9),
}


@dataclass
class FormResult:
    line: str
    entry: str
    status: str          # pass | FAIL | skipped
    detail: str = ""


def _bound_for(line: str):
    for k, b in APPROX_BOUNDS.items():
        if line.startswith(k):
            return b
    return None


# ------------------------------------------------------------------ the generated GPU kernel

def _width(t: str) -> int:
    pt = TYPES[t]
    return 1 if pt.kind == "pred" else pt.bits // 8


def _address(param: str, w: int) -> list[str]:
    return [f"    ld.param.u64 %kq_p, [{param}];", "    cvta.to.global.u64 %kq_p, %kq_p;",
            f"    mul.wide.u32 %kq_o, %kq_t, {w};", "    add.u64 %kq_q, %kq_p, %kq_o;"]


def gpu_kernel_ptx(c, sm: str = "sm_90") -> str:
    """PTX of `.entry k(in..., out...)`: thread i runs `c.line` on element i of each input
    buffer and stores element i of each output buffer (predicates as one byte, 0 or 1)."""
    from semantics.conformance import dest_regs
    regs = c.reg_decls
    ins_ = list(c.inputs)
    outs = [r.name for r in dest_regs(_first_instruction(c))]
    params = [f".param .u64 kq_in{i}" for i in range(len(ins_))] + \
             [f".param .u64 kq_out{i}" for i in range(len(outs))]
    body = [f"    .reg .{t} {n};" for n, t in regs.items()]
    body += ["    .reg .u32 %kq_t;", "    .reg .u64 %kq_o, %kq_p, %kq_q;", "    .reg .b16 %kq_h;",
             "    mov.u32 %kq_t, %tid.x;"]
    for i, r in enumerate(ins_):
        w = _width(regs[r])
        body += _address(f"kq_in{i}", w)
        if TYPES[regs[r]].kind == "pred":
            body += ["    ld.global.u8 %kq_h, [%kq_q];", f"    setp.ne.u16 {r}, %kq_h, 0;"]
        else:
            body.append(f"    ld.global.b{8 * w} {r}, [%kq_q];")
    body.append("    " + c.line.strip().rstrip(";") + ";")
    for k, r in enumerate(outs):
        w = _width(regs[r])
        body += _address(f"kq_out{k}", w)
        if TYPES[regs[r]].kind == "pred":
            body += [f"    selp.u16 %kq_h, 1, 0, {r};", "    st.global.u8 [%kq_q], %kq_h;"]
        else:
            body.append(f"    st.global.b{8 * w} [%kq_q], {r};")
    return (f".version 8.0\n.target {sm}\n.address_size 64\n"
            f".visible .entry k({', '.join(params)})\n{{\n" + "\n".join(body)
            + "\n    ret;\n}\n")


def _dest_regs_of(c) -> list[str]:
    from semantics.conformance import dest_regs
    return [r.name for r in dest_regs(_first_instruction(c))]


def _first_instruction(c):
    from semantics.conformance import parsed_ptx, ptx_kernel
    return parsed_ptx(ptx_kernel(c.line, c.reg_decls)).functions["k"].instructions[0]


class GpuForms:
    """Runs conformance cases on the GPU through pycuda (one compiled module per form)."""

    def __init__(self) -> None:
        from verifier.fuzz.backends.pycuda import load_pycuda
        self.drv, self.ctx, self.device, self.driver = load_pycuda()
        from verifier.fuzz.backends import pycuda as pc
        cc = pc._STATE.get("cc", (9, 0))
        self.sm = f"sm_{cc[0]}{cc[1]}"
        self._fns: dict[str, object] = {}

    def _function(self, c):
        f = self._fns.get(c.line)
        if f is None:
            text = gpu_kernel_ptx(c, self.sm)
            mod = self.drv.module_from_buffer(text.encode() + b"\0")
            f = self._fns[c.line] = (mod, mod.get_function("k"))
        return f[1]

    def backend(self, c, inputs: dict[str, list]):
        from semantics.conformance import Outcome, dest_regs
        drv = self.drv
        regs = c.reg_decls
        n = len(next(iter(inputs.values()))) if inputs else c.lanes
        outs = [r.name for r in dest_regs(_first_instruction(c))]
        args, keep, host_out = [], [], {}
        for r in c.inputs:
            w = _width(regs[r])
            a = np.array([int(bool(v)) if w == 1 and TYPES[regs[r]].kind == "pred"
                          else int(v) & ((1 << (8 * w)) - 1) for v in inputs[r]],
                         dtype=f"<u{w}")
            d = drv.mem_alloc(max(a.nbytes, 1))
            drv.memcpy_htod(d, a)
            args.append(d)
            keep.append(d)
        for r in outs:
            w = _width(regs[r])
            host_out[r] = np.zeros(n, dtype=f"<u{w}")
            d = drv.mem_alloc(max(host_out[r].nbytes, 1))
            drv.memcpy_htod(d, host_out[r])
            args.append(d)
            keep.append(d)
        self._function(c)(*args, block=(n, 1, 1), grid=(1, 1))
        drv.Context.synchronize()
        values = {}
        for r, d in zip(outs, keep[len(c.inputs):]):
            drv.memcpy_dtoh(host_out[r], d)
            if TYPES[regs[r]].kind == "pred":
                values[r] = [bool(x) for x in host_out[r]]
            else:
                values[r] = [int(x) for x in host_out[r]]
        for d in keep:
            d.free()
        return Outcome(values, set())


def _to_f(bits: int, t: str) -> float:
    if t in ("f32", "b32", "u32", "s32"):
        return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def _within(e_bits: int, g_bits: int, t: str, bound) -> bool:
    e, g = _to_f(e_bits, t), _to_f(g_bits, t)
    if math.isnan(e) or math.isnan(g):
        return math.isnan(e) and math.isnan(g)
    if math.isinf(e) or math.isinf(g) or e == 0 or g == 0:
        return e == g or abs(e - g) <= 2.0 ** -126
    kind, v = bound
    if kind == "ulp":
        oe = e_bits if e >= 0 else -(e_bits & 0x7FFF_FFFF)
        og = g_bits if g >= 0 else -(g_bits & 0x7FFF_FFFF)
        return abs(oe - og) <= v
    if kind == "abs_or_rel":
        return abs(e - g) <= v or abs(e - g) <= v * abs(e)
    return abs(e - g) <= v * abs(e)


def compare_gpu(c, inputs, gpu: GpuForms) -> str | None:
    """None when the GPU and the emulator agree on `inputs`, else a message."""
    from semantics.conformance import concrete_backend, to_hex
    ref = concrete_backend(c, inputs)
    got = gpu.backend(c, inputs)
    bound = _bound_for(c.line) if ref.approximate else None
    regs = c.reg_decls
    for reg, evals in ref.values.items():
        for lane, (e, g) in enumerate(zip(evals, got.values.get(reg, []))):
            ok = (e == g) if bound is None else _within(int(e), int(g), regs[reg], bound)
            if not ok:
                ins = ", ".join(f"{r}={to_hex(v[lane])}" for r, v in inputs.items())
                b = f" (bound {bound[0]} {bound[1]:g})" if bound else ""
                return (f"{reg} lane {lane}: emulator {to_hex(e)}, GPU {to_hex(g)}{b}; "
                        f"inputs {ins}")
    return None


# ------------------------------------------------------------------ the command

def _select(forms, pattern: str | None):
    if pattern is None:
        return list(forms)
    try:
        rx = re.compile(pattern)
    except re.error as e:
        raise KeqError(f"--forms {pattern!r}: not a regular expression ({e})") from None
    out = [c for c in forms if rx.search(c.line)]
    if not out:
        raise KeqError(f"--forms {pattern!r} matches no form line")
    return out


def run_forms(forms, backend: str, examples: int, seed_: int) -> tuple[list[FormResult], str]:
    from semantics.conformance import (check_form, concrete_backend, draw_inputs,
                                       special_inputs, symbolic_backend)
    gpu = GpuForms() if backend == "pycuda" else None
    where = (f"{gpu.device}, {gpu.driver}" if gpu else
             "emulator: concrete (numpy) vs symbolic (z3) domains")
    results = []
    for c in forms:
        if not c.supported:
            results.append(FormResult(c.line, c.entry, "skipped", "no semantics in keq yet"))
            continue
        if gpu is not None and not c.is_lanewise:
            results.append(FormResult(c.line, c.entry, "skipped",
                                      "partial-warp shuffle with membermask -1 is undefined "
                                      "on hardware"))
            continue

        def check(inputs, c=c):
            if gpu is None:
                check_form(c, inputs, concrete_backend, symbolic_backend)
            else:
                msg = compare_gpu(c, inputs, gpu)
                if msg:
                    raise AssertionError(msg)
        try:
            check(special_inputs(c, lanes=24 if c.is_lanewise else None))
            if examples == 0:
                results.append(FormResult(c.line, c.entry, "pass", "specials sweep only"))
                continue

            @settings(max_examples=examples, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), print_blob=False)
            @seed(seed_)
            @given(draw_inputs(c))
            def prop(inputs):
                check(inputs)
            prop()
            approx = " (within the documented error bound)" if gpu and _bound_for(c.line) else ""
            results.append(FormResult(c.line, c.entry, "pass", approx.strip(" ()")))
        except AssertionError as e:
            results.append(FormResult(c.line, c.entry, "FAIL", str(e).strip().splitlines()[0]))
    return results, where


def results_table(results: list[FormResult], where: str) -> str:
    n = {s: sum(r.status == s for r in results) for s in ("pass", "FAIL", "skipped")}
    lines = [f"Conformance: {where}", "",
             f"{n['pass']} pass, {n['FAIL']} fail, {n['skipped']} skipped, of {len(results)} "
             f"form lines", "", "| form line | tier entry | result | detail |",
             "|---|---|---|---|"]
    for r in results:
        d = r.detail.replace("|", "\\|")
        lines.append(f"| `{r.line}` | {r.entry} | {r.status} | {d} |")
    return "\n".join(lines) + "\n"


def run_semantics(args) -> int:
    from semantics.conformance import FORMS
    forms = _select(FORMS, args.forms)
    examples = 25 if args.examples is None else args.examples
    if examples < 0:
        raise KeqError(f"--examples {examples}: must be at least 0 (0: only the specials sweep)")
    t0 = time.perf_counter()
    results, where = run_forms(forms, args.backend, examples, args.seed)
    table = results_table(results, where)
    if args.table:
        with open(args.table, "w") as f:
            f.write(table)
    if args.json:
        import json
        print(json.dumps({"where": where, "seconds": round(time.perf_counter() - t0, 2),
                          "results": [r.__dict__ for r in results]}, indent=2))
    else:
        print(table, end="")
        print(f"({time.perf_counter() - t0:.1f} s, {examples} hypothesis examples per form "
              f"after the specials sweep, seed {args.seed})")
    sys.stdout.flush()
    return 1 if any(r.status == "FAIL" for r in results) else 0
