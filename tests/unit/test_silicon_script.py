"""bench/silicon_tensor_cores.py, the tensor-core silicon check, kept working without a GPU:
the dry run on a few forms and sets (every kernel assembles with ptxas, the emulator stays in
keq's bound and agrees with semantics.tensor_core), and the GPU path end to end against a fake
driver that runs the emulator (so the one GPU run a later session gets does not crash)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import silicon_tensor_cores as script  # noqa: E402
from bench.silicon import gpu as gpu_mod  # noqa: E402
from bench.silicon.check import ARCH, emulate_form  # noqa: E402
from bench.silicon.forms import FORMS, assemble, kernel_ptx  # noqa: E402
from semantics.choices import Choices, Target  # noqa: E402
from semantics.machine import prepare, run_kernel  # noqa: E402
from semantics.ptx import parse_ptx  # noqa: E402

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas on PATH")
SMALL = ["m16n8k16.row.col.f32.f16", "m16n8k8.row.col.f16.f16", "m16n8k4.row.col.f32", "m8n8k4",
         "f16.e5m2.e4m3"]


@needs_ptxas
def test_every_generated_kernel_assembles():
    assert [(f.name, err) for f in FORMS if (err := assemble(kernel_ptx(f)))] == []


def test_assembly_errors_are_caught():
    if shutil.which("ptxas") is None:
        pytest.skip("no ptxas on PATH")
    assert assemble(kernel_ptx(FORMS[0]).replace("mma.sync", "mma.snyc")) is not None


@needs_ptxas
def test_dry_run_on_a_subset(capsys):
    rc = script.main(["--dry-run", "--per-set", "2", "--jobs", "1", "--forms", *SMALL])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "5 forms" in out and "MODEL SAMPLE DIFFERS" not in out


def test_every_set_is_in_bound_for_a_bounded_form():
    form = next(f for f in FORMS if f.name == "mma.m16n8k16.row.col.f16.f16.f16.f16")
    run = emulate_form(form, 2, 1)
    assert len(run.mats) == 7 and run.bounded > 0
    assert run.outside == [] and run.model_diffs == []


class _FakeDrv:
    """pycuda.driver's few calls the script makes, the 'GPU' being keq's emulator; `flip`
    XORs D's first word of every launch (a planted silicon difference)."""

    class Error(Exception):
        pass

    class Context:
        @staticmethod
        def synchronize() -> None:
            pass

    def __init__(self, flip: int) -> None:
        self.flip = flip

    In = InOut = staticmethod(lambda x: x)

    def module_from_buffer(self, buf: bytes):
        ptx, flip = buf.rstrip(b"\0").decode(), self.flip

        class Module:
            def get_function(self, name):
                def launch(a, b, c, d, block, grid):
                    res = run_kernel(prepare(parse_ptx(ptx, "fake.ptx"), name), None, grid[0],
                                     block[0], [a, b, c, np.zeros_like(d)],
                                     choices=Choices(target=Target(arch=ARCH)))
                    d[:] = res.buffers["pd"].reshape(d.shape)
                    d.flat[0] ^= d.dtype.type(flip)
                return launch
        return Module()


@pytest.mark.parametrize("flip, rc", [(0, 0), (0x40000000, 1)])
def test_gpu_path_against_a_fake_driver(tmp_path, monkeypatch, flip, rc):
    """flip 0: everything bit-exact, exit 0; flipping an exponent bit of an f32 result puts
    it far outside the bound: the table says SOUNDNESS and the exit code is 1."""
    monkeypatch.setattr(gpu_mod, "open_gpu", lambda: (_FakeDrv(flip), "FakeGPU", "fake"))
    out = tmp_path / "table.md"
    got = script.main(["--out", str(out), "--per-set", "1", "--jobs", "1", "--sets", "random",
                       "--forms", "m16n8k8.row.col.f32.f16"])
    text = out.read_text()
    assert got == rc, text
    assert "FakeGPU" in text and "`mma.m16n8k8.row.col.f32.f16.f16.f32` | 1 |" in text
    assert ("SOUNDNESS PROBLEM" in text) == bool(flip)
    assert ("128 / 128 elements" in text) == (not flip)
