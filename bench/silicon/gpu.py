"""The GPU's side of the silicon check: the same kernels and instances through pycuda.

pycuda is optional (the `gpu` extra) and imported only here, only when a GPU run is asked
for, through verifier.fuzz.backends.pycuda.load_pycuda (one line NoGpu when absent).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bench.silicon.check import Element, FormRun, args_of, concat_sets, model_value, \
    split_sets, within
from bench.silicon.forms import TARGET, Form, kernel_ptx
from bench.silicon.lanes import d_words, unpack_d

POISON = 0xA5                    # D's bytes before the launch: an unwritten D shows


def open_gpu() -> tuple[Any, str, str]:
    """(pycuda.driver, device name, driver version); raises NoGpu without one."""
    from verifier.fuzz.backends.pycuda import load_pycuda   # lazy: imports pycuda
    drv, _ctx, name, driver = load_pycuda()
    return drv, name, driver


def _cubin(ptx: str) -> bytes | None:
    """The kernel assembled by a local ptxas, when the driver's JIT refuses the PTX (a
    driver older than the PTX ISA version) and ptxas is on PATH."""
    if shutil.which("ptxas") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        r = subprocess.run(["ptxas", f"-arch={TARGET}", str(src), "-o", str(out)],
                           capture_output=True)
        return out.read_bytes() if r.returncode == 0 else None


def load(drv, form: Form) -> tuple[Any, Any, str]:
    """(module, function, how): the driver's JIT of the PTX, else a local ptxas's cubin."""
    ptx = kernel_ptx(form)
    try:
        mod = drv.module_from_buffer(ptx.encode() + b"\0")
        how = "driver JIT"
    except drv.Error as e:
        cubin = _cubin(ptx)
        if cubin is None:
            raise RuntimeError(f"{form.name}: the driver refused the PTX ({e}) and no "
                               f"local ptxas could assemble it") from None
        mod, how = drv.module_from_buffer(cubin), "ptxas 13 cubin"
    return mod, mod.get_function("silicon_mma"), how


def run_gpu(drv, form: Form, run: FormRun) -> tuple[dict[str, np.ndarray], str]:
    """D per set from the GPU, and how the kernel was loaded."""
    a, b, c = concat_sets(form, run.mats)
    d = d_words(form, len(a))
    d.view(np.uint8)[:] = POISON
    _mod, fn, how = load(drv, form)
    fn(drv.In(a), drv.In(b), drv.In(c), drv.InOut(d), block=(32, 1, 1), grid=(len(a), 1))
    drv.Context.synchronize()
    return split_sets(run.mats, unpack_d(form, d)), how


def compare(run: FormRun, gpu: dict[str, np.ndarray], keep: int = 200
            ) -> tuple[int, int, list[Element]]:
    """(elements, bit-exact matches, the first `keep` mismatches with the sm_80 model's
    value too: a mismatch the 24-bit model matches says the 25-bit sm_90 claim is wrong)."""
    total = same = 0
    diffs: list[Element] = []
    for name, m in run.mats.items():
        emu, dev = run.emu[name], gpu[name]
        total += emu.size
        same += int((emu == dev).sum())
        for n, i, j in zip(*np.nonzero(emu != dev)):
            if len(diffs) >= keep:
                break
            args = args_of(m, n, i, j)
            diffs.append(Element(name, int(n), int(i), int(j), args, {
                "emulator": int(emu[n, i, j]), "gpu": int(dev[n, i, j]),
                "sm_80 model": model_value(run.form, args, "sm_80")}))
    return total, same, diffs


def gpu_bounds(run: FormRun, gpu: dict[str, np.ndarray]) -> tuple[int, list[Element]]:
    """(bounded elements, GPU results outside the bound). Only elements whose bits differ
    from the emulator's are checked again: equal bits share the emulator's verdict, which the
    emulator run already required to be inside (this keeps the GPU phase to seconds)."""
    outside: list[Element] = []
    for name, m in run.mats.items():
        dev = gpu[name]
        for n, i, j in zip(*np.nonzero(run.emu[name] != dev)):
            args = args_of(m, n, i, j)
            if within(run.form, args, int(dev[n, i, j])) is False:
                outside.append(Element(name, int(n), int(i), int(j), args,
                                       {"emulator": int(run.emu[name][n, i, j]),
                                        "gpu": int(dev[n, i, j])}))
    # equal bits outside: only where the emulator itself failed (the dry run's failure)
    outside += [e for e in run.outside
                if int(gpu[e.set][e.instance, e.row, e.col]) == e.results["emulator"]]
    return run.bounded, outside


__all__ = ["compare", "gpu_bounds", "open_gpu", "run_gpu"]
