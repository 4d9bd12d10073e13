"""Every corpus kernel's committed SASS (sm_80 and sm_90; sm_90a for Triton's), run on the concrete emulator, leaves
exactly the buffers its PTX leaves, on random inputs at the spec's random shapes; a kernel
whose PTX faults must fault the same way in SASS."""

from __future__ import annotations

import dataclasses
import glob
from pathlib import Path

import numpy as np
import pytest

from semantics.errors import UnsupportedError
from semantics.machine import MemoryFault
from semantics.sass import parse_sass_file
from verifier.emulate import run_side
from verifier.spec import load_spec
from verifier.spec.inputs import draw_scalars, make_inputs

ROOT = Path(__file__).resolve().parents[2]


def _cases():
    seen = set()
    for f in sorted(glob.glob(str(ROOT / "kernels/*/*.toml"))):
        spec = load_spec(f)
        for side in (spec.reference, spec.candidate):
            key = (str(side.ptx), side.kernel)
            if key in seen:
                continue
            seen.add(key)
            for arch in ("sm_80", "sm_90", "sm_90a"):            # sm_90a: Triton's
                sass = Path(str(side.ptx)[:-4] + f".{arch}.sass")
                if sass.is_file():
                    yield pytest.param(spec, side, sass, id=f"{side.kernel}-{arch}")


def _sass_side(spec, side, path: Path):
    types = tuple("u64" if spec.param(n).is_buffer else spec.param(n).type
                  for n in side.arg_names)
    return dataclasses.replace(side, ptx=path, module=parse_sass_file(path), isa="sass",
                               param_types=types)


def _run(side, vals, sc):
    try:
        return run_side(side, vals, sc)[0]
    except MemoryFault as e:
        return ("fault", e.address)


# Kernels whose SASS calls into the CUDA runtime (a device assert, printf: `LEPC` and
# `CALL.ABS.NOINC` through constant bank 4, printf's arguments spilled with `STL`), which keq's
# SASS semantics do not read yet: refused by name, the SASS instruction that stops it.
RUNTIME_CALLS = {k: f"'{op}' has no semantics in keq" for k, op in (
    ("encoder_forward_vec4", "LEPC"), ("encoder_forward_vec4_assert_off_by_one", "LEPC"),
    ("encoder_forward_printf", "STL.64"), ("encoder_forward_printf_else", "STL.64"),
    ("encoder_forward_printf_unsigned", "STL.64"))}
# The wmma epilogue that scales each register by its own factor: what it computes depends on
# which element each register holds, which PTX leaves open (the emulator runs keq's layout,
# the SASS the GPU's), so the two may differ; the PTX run says so with a "fragment" effect,
# and the SASS (HMMA, issue 30) must run.
LAYOUT_DEPENDENT = {"wmma_gemm_ragged"}
# ... and the split-k kernels, whose acquire loads and release stores compile to strong loads
# and stores with memory barriers (`LD.E.STRONG.GPU`, `MEMBAR`, `CCTL.IVALL`, `ERRBAR`), which
# have no SASS semantics yet: what they order would need the memory model on SASS too
RUNTIME_CALLS.update({k: "'LD.E.STRONG.GPU' has no semantics" for k in (
    "serial", "serial_early_release", "fixup")})
# ... and the instructions of kernels/texture, fp8, block_reduce and pdl that have no SASS
# semantics yet (issue 32): texture fetches and gathers, surface loads, fp8 packing and
# unpacking, bar.red, and griddepcontrol.launch_dependents (PREEXIT)
RUNTIME_CALLS.update({k: r"'(TEX|TLD4)\.[A-Z0-9.]*' has no semantics" for k in (
    "blur_tex", "blur_tex_offbyone", "shift_tex", "copy3d_tex", "copy3d_tex_swapped", "quad_ref",
    "quad_gather", "quad_gather_order", "upsample_tex", "upsample_tex_pairs",
    "upsample_tex_corner")})
RUNTIME_CALLS.update({k: "'SULD.D.BA.2D.STRONG.SM.TRAP' has no semantics" for k in (
    "scale_surf", "scale_surf_elements")})
RUNTIME_CALLS.update({k: r"'F2FP\.[A-Z0-9_.]*E4M3[A-Z0-9_.]*' has no semantics" for k in (
    "quantize_e4m3", "quantize_e4m3_x2", "quantize_e4m3_x2_swapped", "quantize_e5m2_x2",
    "dequantize_e4m3", "dequantize_e4m3_x2")})
RUNTIME_CALLS.update({k: "'BAR.RED.POPC.DEFER_BLOCKING' has no semantics" for k in (
    "count_by_bar_red", "count_by_bar_red_swapped")})
RUNTIME_CALLS["row_sums_pdl"] = "'PREEXIT' has no semantics"
# ... and the unfused cross-entropy, whose thread-0 branch around logf/__logf ptxas marks
# warp-uniform (`@P0 BRA.U`): a uniform branch has no SASS semantics yet
RUNTIME_CALLS.update({k: "'BRA.U' has no semantics" for k in (
    "log_softmax_nll", "log_softmax_nll_logf")})
# Refusals keyed by file, for kernels whose names other files share (tensorcore/mma_gemm's
# gemm_direct is also splitk's): none left since HMMA, LDSM, LDGSTS and PRMT have semantics
BY_FILE: dict[str, dict[str, str]] = {"mma_gemm.ptx": {}, "mma_ladder.ptx": {}}


@pytest.mark.parametrize("spec,side,sass", list(_cases()))
def test_sass_matches_ptx(spec, side, sass):
    sside = _sass_side(spec, side, sass)
    refused = BY_FILE.get(side.ptx.name, RUNTIME_CALLS).get(side.kernel)
    if refused:
        sc = draw_scalars(spec, np.random.default_rng(7))
        with pytest.raises(UnsupportedError, match=refused):
            _run(sside, make_inputs(spec, sc, np.random.default_rng(7)), sc)
        return
    rng = np.random.default_rng(7)
    if side.kernel in LAYOUT_DEPENDENT:
        sc = draw_scalars(spec, rng)
        vals = make_inputs(spec, sc, rng)
        run_side(sside, vals, sc)
        effects = run_side(side, vals, sc)[1].effects
        assert any(e.kind == "fragment" for e in effects), effects
        return
    for _ in range(2):
        sc = draw_scalars(spec, rng)
        vals = make_inputs(spec, sc, rng)
        want, got = _run(side, vals, sc), _run(sside, vals, sc)
        if isinstance(want, tuple):
            assert got == want, f"PTX faults at {want[1]:#x}, SASS: {got}"
            continue
        assert not isinstance(got, tuple), f"SASS faults at {got[1]:#x}, PTX does not"
        for name in side.arg_names:
            if spec.param(name).is_buffer:
                a, b = want[name], got[name]
                assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), \
                    f"{name} differs at {sc}: first index " \
                    f"{int(np.nonzero(a.view(np.uint8) != b.view(np.uint8))[0][0])}"
