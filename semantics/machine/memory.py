"""State spaces, the address map, and memory for the concrete domain.

Address map (all numbers are byte addresses):
- global: each buffer gets its own allocation at `GLOBAL_BASE` upwards, 256-byte aligned (as
  cudaMalloc gives), with an unmapped guard gap between allocations. Generic addresses of
  global memory equal their global addresses (`cvta.to.global` is the identity).
- shared: per-CTA offsets from 0 (static variables first, then dynamic shared memory); the
  generic window is `SHARED_WINDOW + offset`.
- local: per-thread offsets from 0; generic window `LOCAL_WINDOW + offset`.
- const: module `.const` variables at offsets from 0. param: kernel parameters by offset.
An access outside every allocation, or misaligned for its size, is a `MemoryFault` naming the
thread, the instruction and the address, the way compute-sanitizer reports it.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

import numpy as np

from semantics.errors import KeqError, SourceLoc

GLOBAL_BASE = 0x0000_0010_0000_0000
GLOBAL_GAP = 0x1000
SHARED_WINDOW = 0x0001_0000_0000_0000
LOCAL_WINDOW = 0x0002_0000_0000_0000
WINDOW_SIZE = 0x0000_0001_0000_0000


class MemoryFault(KeqError):
    """An out-of-bounds, misaligned or otherwise invalid access by a thread."""

    def __init__(self, message: str, loc: SourceLoc, kernel: str, thread: str, address: int,
                 line_text: str | None = None) -> None:
        super().__init__(message)
        self.loc, self.kernel, self.thread, self.address = loc, kernel, thread, address
        self.line_text = line_text

    def render(self) -> str:
        out = f"{self.loc}: error: {self} (kernel {self.kernel}, {self.thread})"
        text = self.line_text or linecache.getline(self.loc.file, self.loc.line)
        if text:
            out += f"\n{text.rstrip().expandtabs(1)}\n{' ' * max(self.loc.col - 1, 0)}^"
        return out


@dataclass(frozen=True, slots=True)
class Allocation:
    name: str
    base: int
    size: int


class GlobalLayout:
    """Where each global buffer lives."""

    def __init__(self) -> None:
        self.allocs: list[Allocation] = []
        self._next = GLOBAL_BASE

    def allocate(self, name: str, size: int) -> Allocation:
        a = Allocation(name, self._next, size)
        self.allocs.append(a)
        self._next += (max(size, 1) + GLOBAL_GAP + 255) // 256 * 256
        return a

    def bases(self) -> np.ndarray:
        return np.array([a.base for a in self.allocs], dtype=np.uint64)

    def find(self, addr: int) -> Allocation | None:
        for a in self.allocs:
            if a.base <= addr < a.base + a.size:
                return a
        return None


class ConcreteMemory:
    """Byte-addressed memory of every state space as numpy arrays, accessed a whole lane
    vector at a time. Global memory is one flat array laid out like the address map; shared
    memory is one row per CTA of the batch, local memory one row per lane."""

    def __init__(self, layout: GlobalLayout, buffers: dict[str, np.ndarray],
                 const: bytes = b"") -> None:
        self.layout = layout
        last = layout.allocs[-1] if layout.allocs else None
        total = (last.base + last.size - GLOBAL_BASE) if last else 0
        self.g = np.zeros(total, dtype=np.uint8)
        self.g_init = np.zeros(total, dtype=bool)
        for a in layout.allocs:
            off = a.base - GLOBAL_BASE
            if a.name in buffers:
                raw = np.ascontiguousarray(buffers[a.name]).view(np.uint8).reshape(-1)
                n = min(raw.size, a.size)
                self.g[off:off + n] = raw[:n]
        self._bases = np.array([a.base for a in layout.allocs], dtype=np.uint64)
        self._ends = np.array([a.base + a.size for a in layout.allocs], dtype=np.uint64)
        self.const = np.frombuffer(const, dtype=np.uint8).copy() if const else np.zeros(0, np.uint8)
        self.shared = np.zeros((0, 0), np.uint8)
        self.shared_init = np.zeros((0, 0), bool)
        self.local = np.zeros((0, 0), np.uint8)
        self.local_init = np.zeros((0, 0), bool)
        self.cta_of_lane = np.zeros(0, np.int64)
        self.uninitialized_reads: list[tuple[int, int]] = []   # (lane, shared offset)

    def new_batch(self, cta_of_lane: np.ndarray, ctas: int, shared_size: int,
                  local_size: int, shared_fill=0, local_fill=0) -> None:
        """`shared_fill`, `local_fill`: what each CTA's shared memory and each thread's
        local memory hold at launch (PTX leaves it unspecified): a byte, or an array of
        bytes of the memory's shape (`semantics.choices.Choices.memory`)."""
        self.cta_of_lane = cta_of_lane
        self.shared = np.empty((ctas, shared_size), np.uint8)
        self.shared[...] = shared_fill
        self.shared_init = np.zeros((ctas, shared_size), bool)
        self.local = np.empty((cta_of_lane.size, local_size), np.uint8)
        self.local[...] = local_fill
        self.local_init = np.zeros((cta_of_lane.size, local_size), bool)

    def buffer(self, name: str) -> np.ndarray:
        for a in self.layout.allocs:
            if a.name == name:
                off = a.base - GLOBAL_BASE
                return self.g[off:off + a.size]
        raise KeyError(name)

    # -- address resolution ----------------------------------------------------------------
    def locate(self, space: str, addr: np.ndarray, nbytes: int, mask: np.ndarray,
               lanes: np.ndarray | None = None):
        """-> (flat array, flat offsets, init-tracking array or None, bad lanes, reason).
        `lanes`: the lane of each address (default: address i is lane i); it picks the CTA's
        shared memory and the lane's local memory."""
        addr = addr.astype(np.uint64)
        if space == "generic":
            in_shared = (addr >= SHARED_WINDOW) & (addr < SHARED_WINDOW + WINDOW_SIZE)
            in_local = (addr >= LOCAL_WINDOW) & (addr < LOCAL_WINDOW + WINDOW_SIZE)
            kinds = {"shared": in_shared & mask, "local": in_local & mask,
                     "global": ~in_shared & ~in_local & mask}
            used = [k for k, m in kinds.items() if m.any()]
            if len(used) > 1:
                bad = kinds[used[1]]
                return None, None, None, bad, "one generic access spans several state spaces"
            space = used[0] if used else "global"
            if space == "shared":
                addr = addr - np.uint64(SHARED_WINDOW)
            elif space == "local":
                addr = addr - np.uint64(LOCAL_WINDOW)
        if space == "global":
            idx = np.searchsorted(self._bases, addr, side="right").astype(np.int64) - 1
            safe = np.maximum(idx, 0)
            ok = (idx >= 0) & (addr + np.uint64(nbytes) <= self._ends[safe]) if idx.size and \
                self._bases.size else np.zeros(addr.shape, bool)
            bad = mask & ~ok
            flat = np.where(mask & ok, addr - np.uint64(GLOBAL_BASE), 0).astype(np.int64)
            return self.g, flat, self.g_init, bad, "out of bounds of every global buffer"
        if space == "shared":
            size = self.shared.shape[1]
            ok = addr + np.uint64(nbytes) <= np.uint64(size)
            bad = mask & ~ok
            cta = self.cta_of_lane if lanes is None else self.cta_of_lane[lanes]
            flat = np.where(mask & ok, cta * size + addr.astype(np.int64), 0)
            return self.shared.reshape(-1), flat, self.shared_init.reshape(-1), bad, \
                f"out of bounds of shared memory ({size} bytes)"
        if space == "local":
            size = self.local.shape[1]
            ok = addr + np.uint64(nbytes) <= np.uint64(size)
            bad = mask & ~ok
            if lanes is None:
                lanes = np.arange(addr.size, dtype=np.int64)
            flat = np.where(mask & ok, lanes * size + addr.astype(np.int64), 0)
            return self.local.reshape(-1), flat, self.local_init.reshape(-1), bad, \
                f"out of bounds of local memory ({size} bytes)"
        if space == "const":
            size = self.const.size
            ok = addr + np.uint64(nbytes) <= np.uint64(size)
            bad = mask & ~ok
            flat = np.where(mask & ok, addr.astype(np.int64), 0)
            return self.const, flat, None, bad, f"out of bounds of constant memory ({size} bytes)"
        raise ValueError(space)

    @staticmethod
    def gather(arr: np.ndarray, flat: np.ndarray, nbytes: int) -> np.ndarray:
        raw = arr[flat[:, None] + np.arange(nbytes)]
        return np.ascontiguousarray(raw).view(f"<u{nbytes}").reshape(-1).astype(np.uint64)

    @staticmethod
    def scatter(arr: np.ndarray, flat: np.ndarray, nbytes: int, value: np.ndarray) -> None:
        raw = value.astype(f"<u{nbytes}").view(np.uint8).reshape(-1, nbytes)
        arr[flat[:, None] + np.arange(nbytes)] = raw
