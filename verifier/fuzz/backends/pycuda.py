"""The pycuda backend: both kernels run on a real NVIDIA GPU.

The PTX text of each side is loaded with `pycuda.driver.module_from_buffer` (the driver JIT
compiles it for the device), buffers are allocated with `mem_alloc`, filled with
`memcpy_htod`, the kernel is launched with the spec's grid, block and dynamic shared memory,
the context is synchronized and the buffers copied back with `memcpy_dtoh`. Every CUDA call
goes through pycuda, which raises `pycuda.driver.Error` on any failing status; those become a
fault of the side (a launch failure such as an illegal address) or, at load time, bad input.

Each buffer gets a 256-byte guard after its end, filled with a canary pattern and checked
after the launch: a write past the end is reported as a fault (reads past the end are
invisible on a GPU; the emulator backend reports them).

pycuda is imported lazily: without it, or without a CUDA driver or device, `get_backend`
raises `NoGpu`, a one-line error (exit 3). Install on a GPU machine with
``pip install -e '.[gpu]'`` (pycuda builds from its sdist against the installed CUDA driver
and toolkit headers).
"""

from __future__ import annotations

import atexit
from dataclasses import dataclass
from typing import Any

import numpy as np

from semantics.errors import KeqError
from verifier.fuzz.backends.base import SideRun
from verifier.spec import PairSpec, Side

GUARD = 256
CANARY = 0xA5


class NoGpu(KeqError):
    """No pycuda, no CUDA driver or no device: the pycuda backend cannot run here."""


class GpuFault(KeqError):
    """A CUDA error while running a kernel (e.g. an illegal address) or a guard overwrite."""


_STATE: dict[str, Any] = {}


def load_pycuda():
    """(pycuda.driver, context, device name, driver version) or raise NoGpu in one line."""
    if "drv" in _STATE:
        return _STATE["drv"], _STATE["ctx"], _STATE["name"], _STATE["driver"]
    try:
        import pycuda.driver as drv          # noqa: PLC0415 (lazy on purpose)
    except ImportError as e:
        raise NoGpu(f"no GPU backend: pycuda is not importable ({e}); install it on a machine "
                    f"with an NVIDIA driver: pip install -e '.[gpu]'") from None
    except Exception as e:                   # pycuda present, libcuda.so missing, ...
        raise NoGpu(f"no CUDA driver/GPU: importing pycuda failed: {e}") from None
    try:
        drv.init()
        count = drv.Device.count()
    except Exception as e:
        raise NoGpu(f"no CUDA driver/GPU: cuInit failed: {e}") from None
    if count == 0:
        raise NoGpu("no CUDA driver/GPU: the driver reports no CUDA device")
    dev = drv.Device(0)
    ctx = dev.make_context()
    atexit.register(_pop, ctx)
    v = drv.get_driver_version()
    _STATE.update(drv=drv, ctx=ctx, name=dev.name(),
                  driver=f"CUDA driver API {v // 1000}.{v % 1000 // 10}",
                  cc=dev.compute_capability())
    return drv, ctx, _STATE["name"], _STATE["driver"]


def _pop(ctx) -> None:
    try:
        ctx.pop()
    except Exception:
        pass


def scalar_arg(p, value):
    """A scalar param as the numpy scalar pycuda packs with the right width."""
    if p.type == "bf16":
        return np.uint16(int(value))
    return np.dtype(p.dtype).type(value)


@dataclass
class PycudaSide:
    side: Side
    spec: PairSpec
    function: Any
    drv: Any

    @property
    def role(self) -> str:
        return self.side.role

    @property
    def kernel(self) -> str:
        return self.side.kernel

    def run(self, values: dict, scalars: dict) -> SideRun:
        drv = self.drv
        grid, block = self.side.launch(scalars)
        allocs: dict[str, tuple[Any, int]] = {}
        args = []
        try:
            for name in self.side.arg_names:
                p = self.spec.param(name)
                if p.is_scalar:
                    args.append(scalar_arg(p, values[name]))
                    continue
                host = np.ascontiguousarray(values[name])
                nbytes = host.nbytes
                dev = drv.mem_alloc(nbytes + GUARD)
                raw = np.full(nbytes + GUARD, CANARY, dtype=np.uint8)
                raw[:nbytes] = host.view(np.uint8)
                drv.memcpy_htod(dev, raw)
                allocs[name] = (dev, nbytes)
                args.append(dev)
            self.function(*args, block=tuple(block), grid=tuple(grid),
                          shared=self.side.dynamic_shared)
            drv.Context.synchronize()
            final = dict(values)
            for name, (dev, nbytes) in allocs.items():
                raw = np.empty(nbytes + GUARD, dtype=np.uint8)
                drv.memcpy_dtoh(raw, dev)
                if (raw[nbytes:] != CANARY).any():
                    first = int(np.flatnonzero(raw[nbytes:] != CANARY)[0])
                    return SideRun(None, GpuFault(
                        f"{self.side.kernel} wrote {first} byte(s) past the end of buffer "
                        f"{name!r} (guard overwritten on the GPU)"))
                p = self.spec.param(name)
                final[name] = raw[:nbytes].view(p.dtype).copy()
            return SideRun(final, None, (), None)
        except drv.Error as e:
            # An illegal address leaves the context unusable: report it; later calls fail too.
            return SideRun(None, GpuFault(f"CUDA error in {self.side.kernel}: {e}"))
        finally:
            for dev, _ in allocs.values():
                try:
                    dev.free()
                except Exception:
                    pass


class PycudaBackend:
    name = "pycuda"
    measures_coverage = False

    def __init__(self) -> None:
        self.drv, self.ctx, self.device, self.driver = load_pycuda()

    def describe(self) -> str:
        return f"pycuda on {self.device} ({self.driver})"

    def load(self, ptx_text: str, kernel: str, where: str):
        try:
            mod = self.drv.module_from_buffer(ptx_text.encode() + b"\0")
            return mod, mod.get_function(kernel)
        except self.drv.Error as e:
            raise KeqError(f"{where}: the CUDA driver could not load the PTX: {e}") from None

    def prepare(self, spec: PairSpec) -> dict[str, PycudaSide]:
        out = {}
        self._modules = []
        for s in (spec.reference, spec.candidate):
            if s.then:
                raise KeqError(f"{spec.path}: the {s.role} has {len(s.launches)} launches; "
                               f"the pycuda backend runs one kernel per side (use the "
                               f"emulator backend)")
            mod, fn = self.load(s.ptx.read_text(), s.kernel, str(s.ptx))
            self._modules.append(mod)
            out[s.role] = PycudaSide(s, spec, fn, self.drv)
        return out


__all__ = ["PycudaBackend", "NoGpu", "GpuFault", "load_pycuda"]
