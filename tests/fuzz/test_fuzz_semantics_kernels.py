"""The per-form PTX kernels `keq fuzz --semantics --backend pycuda` sends to the GPU, checked
here on the emulator: run through `run_kernel` (buffers in, buffers out), each must give what
the single-instruction harness gives. A wrong load width, address or store would show."""

from __future__ import annotations

import numpy as np
import pytest

from semantics.conformance import FORMS, concrete_backend, special_inputs
from semantics.ir.types import TYPES
from semantics.machine import run_kernel
from semantics.ptx import parse_ptx
from verifier.fuzz.semantics_check import _dest_regs_of, _width, gpu_kernel_ptx

SAMPLE = [c for c in FORMS if c.supported and c.is_lanewise][::7]


@pytest.mark.parametrize("c", SAMPLE, ids=[c.line.split(" ")[0] + f"#{i}"
                                            for i, c in enumerate(SAMPLE)])
def test_generated_kernel_matches_the_harness(c):
    inputs = special_inputs(c, lanes=16)
    want = concrete_backend(c, inputs)
    regs = c.reg_decls
    args = []
    for r in c.inputs:
        w = _width(regs[r])
        args.append(np.array([int(v) & ((1 << (8 * w)) - 1) for v in inputs[r]], f"<u{w}"))
    outs = _dest_regs_of(c)
    for r in outs:
        args.append(np.zeros(16, f"<u{_width(regs[r])}"))
    m = parse_ptx(gpu_kernel_ptx(c), "<gen>")
    res = run_kernel(m, "k", 1, 16, args)
    for k, r in enumerate(outs):
        got = res.buffers[f"kq_out{k}"].tolist()
        exp = want.values[r]
        if TYPES[regs[r]].kind == "pred":
            exp = [int(bool(v)) for v in exp]
        if want.approximate:
            continue
        assert got == exp, (c.line, r)


def test_there_are_kernels_for_every_supported_lanewise_form():
    assert len(SAMPLE) > 30
    for c in FORMS:
        parse_ptx(gpu_kernel_ptx(c), "<gen>")
