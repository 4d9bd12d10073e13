"""State spaces, the address map, and memory for the concrete domain.

Address map (all numbers are byte addresses):
- global: each buffer gets its own allocation at `GLOBAL_BASE` upwards, 256-byte aligned (as
  cudaMalloc gives), with an unmapped guard gap between allocations. Generic addresses of
  global memory equal their global addresses (`cvta.to.global` is the identity).
- shared: per-CTA offsets; every `.shared` variable (and the dynamic `extern .shared` array)
  in a window of its own, `SHARED_SPACING` apart (`SharedVar`), so an access computed from
  one variable that leaves it faults whatever lies there on a GPU (PTX ISA 5.1.4: where
  variables lie is not specified). The bytes are stored compactly, one row per CTA, each
  variable at its `row` offset (the names of never-written bytes use that offset). A SASS
  kernel has one window from 0 (ptxas fixed its layout). The generic window is
  `SHARED_WINDOW + offset`.
- local: per-thread offsets from 0; generic window `LOCAL_WINDOW + offset`.
- const: module `.const` variables at offsets from 0. param: kernel parameters by offset.
An access outside every allocation, or misaligned for its size, is a `MemoryFault` naming the
thread, the instruction and the address, the way compute-sanitizer reports it.

Both maps have a second layout, "shifted" (`semantics.choices.Choices.layout`): buffers in
reverse order from another base, gaps odd multiples of 256 bytes, and shared variables in
reverse order from 0x400. A kernel whose outputs depend on where memory lies (a numeric
address reaching its outputs: `semantics.machine.layout_taint`) shows it there.
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
# Each .shared variable's window: more than any GPU's shared memory (228 KiB on sm_90), so
# an offset past a variable but inside its window is beyond it on every GPU.
SHARED_SPACING = 0x10_0000
# The shifted layout: buffers downwards from here, each gap an odd multiple of 256 bytes
# (19 * 256), so addresses differ from the packed layout in every bit above the 256-byte
# alignment; shared variables from 0x400 (sm_90 reserves the window's first KiB).
SHIFTED_GLOBAL_TOP = 0x0000_7F40_0000_0000
SHIFTED_GAP = 0x1300
SHIFTED_SHARED_START = 0x400


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


class UndefinedBehavior(MemoryFault):
    """A thread did something the PTX ISA leaves undefined (a warp operation whose
    membermask leaves the executing thread out, `fns` with base > 31, an `.nc` load of
    memory the kernel writes): a fault of the kernel, reported like one."""


class Trap(MemoryFault):
    """A thread stopped the launch on purpose: `trap`, or a failed device `assert`
    (`call __assertfail`, `semantics.machine.system_calls`). The launch ends with an error
    on a GPU, so, like a fault, in the candidate it refutes and in the reference it is an
    error about the spec."""


@dataclass(frozen=True, slots=True)
class Allocation:
    name: str
    base: int
    size: int


@dataclass(frozen=True, slots=True)
class SharedVar:
    """One `.shared` variable of a launch: its offset in the shared window (this layout's),
    where its bytes lie in a CTA's compact row, and its size (the dynamic array's is the
    launch's dynamic shared size)."""

    name: str
    address: int
    row: int
    size: int


class GlobalLayout:
    """Where each global buffer lives: upwards from `GLOBAL_BASE` in allocation order
    (packed), or downwards from `SHIFTED_GLOBAL_TOP` (shifted)."""

    def __init__(self, shifted: bool = False) -> None:
        self.allocs: list[Allocation] = []
        self.shifted = shifted
        self._next = SHIFTED_GLOBAL_TOP if shifted else GLOBAL_BASE

    def allocate(self, name: str, size: int) -> Allocation:
        if self.shifted:
            self._next -= (max(size, 1) + 255) // 256 * 256 + SHIFTED_GAP
            a = Allocation(name, self._next, size)
        else:
            a = Allocation(name, self._next, size)
            self._next += (max(size, 1) + GLOBAL_GAP + 255) // 256 * 256
        self.allocs.append(a)
        return a

    @property
    def base(self) -> int:
        """The lowest address of any allocation (global memory's first byte)."""
        return min((a.base for a in self.allocs), default=GLOBAL_BASE)

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
                 const: bytes = b"", read_only: frozenset[str] = frozenset()) -> None:
        self.layout = layout
        self.base = layout.base
        allocs = sorted(layout.allocs, key=lambda a: a.base)
        total = max((a.base + a.size - self.base for a in allocs), default=0)
        self.g = np.zeros(total, dtype=np.uint8)
        self.g_init = np.zeros(total, dtype=bool)
        for a in allocs:
            off = a.base - self.base
            if a.name in buffers:
                raw = np.ascontiguousarray(buffers[a.name]).view(np.uint8).reshape(-1)
                n = min(raw.size, a.size)
                self.g[off:off + n] = raw[:n]
        self._bases = np.array([a.base for a in allocs], dtype=np.uint64)
        self._ends = np.array([a.base + a.size for a in allocs], dtype=np.uint64)
        self._allocs = allocs
        # The allocations the launch declares read-only (a claim's `in` buffers): a write
        # into one is a fault of the kernel (`written_read_only`).
        self._read_only = np.array([a.name in read_only for a in allocs] or [False])
        # While an access whose address derives from some buffers or shared variables runs
        # (`semantics.machine.layout`): their names ("global:NAME" the allocation,
        # "shared:NAME"). Landing in another one is out of bounds, as on a GPU where they lie
        # elsewhere. None: no such restriction (an address of unknown provenance).
        self.confined: frozenset[str] | None = None
        self.shared_vars: tuple[SharedVar, ...] | None = None
        self._sh_starts = self._sh_ends = self._sh_rows = np.zeros(0, np.uint64)
        self.const = np.frombuffer(const, dtype=np.uint8).copy() if const else np.zeros(0, np.uint8)
        self.shared = np.zeros((0, 0), np.uint8)
        self.shared_init = np.zeros((0, 0), bool)
        self.local = np.zeros((0, 0), np.uint8)
        self.local_init = np.zeros((0, 0), bool)
        self.cta_of_lane = np.zeros(0, np.int64)
        self.uninitialized_reads: list[tuple[int, int]] = []   # (lane, shared offset)

    def new_batch(self, cta_of_lane: np.ndarray, ctas: int, shared_size: int,
                  local_size: int, shared_fill=0, local_fill=0,
                  shared_vars: "tuple[SharedVar, ...] | None" = None) -> None:
        """`shared_fill`, `local_fill`: what each CTA's shared memory and each thread's
        local memory hold at launch (PTX leaves it unspecified): a byte, or an array of
        bytes of the memory's shape (`semantics.choices.Choices.memory`). `shared_vars`:
        the window of each shared variable (`SharedVar`, rows within `shared_size`); None:
        one window of `shared_size` bytes from offset 0 (a SASS kernel's)."""
        self.cta_of_lane = cta_of_lane
        if shared_vars is not None:
            ordered = tuple(sorted(shared_vars, key=lambda v: v.address))
            self.shared_vars = ordered
            self._sh_starts = np.array([v.address for v in ordered], dtype=np.uint64)
            self._sh_ends = np.array([v.address + v.size for v in ordered], dtype=np.uint64)
            self._sh_rows = np.array([v.row for v in ordered], dtype=np.int64)
        else:
            self.shared_vars = None
        self.shared = np.empty((ctas, shared_size), np.uint8)
        self.shared[...] = shared_fill
        self.shared_init = np.zeros((ctas, shared_size), bool)
        self.local = np.empty((cta_of_lane.size, local_size), np.uint8)
        self.local[...] = local_fill
        self.local_init = np.zeros((cta_of_lane.size, local_size), bool)

    def written_read_only(self, arr: np.ndarray, flat: np.ndarray, lanes: np.ndarray
                          ) -> tuple[np.ndarray, str]:
        """Which of `lanes` (a mask over `flat`, in-bounds offsets into `arr`) land in a
        read-only allocation, and the first one's name."""
        if arr is not self.g or not self._read_only.any() or not lanes.any():
            return np.zeros(lanes.shape, bool), ""
        addr = flat.astype(np.uint64) + np.uint64(self.base)
        idx = np.maximum(np.searchsorted(self._bases, addr, side="right").astype(np.int64) - 1, 0)
        hit = lanes & self._read_only[idx]
        name = self._allocs[int(idx[np.flatnonzero(hit)[0]])].name if hit.any() else ""
        return hit, name

    def others_may_write(self, arr: np.ndarray, flat: np.ndarray, lanes: np.ndarray) -> bool:
        """May another thread change what a load of `flat` (by `lanes`) reads: shared memory,
        or global memory outside the read-only buffers (local memory is the thread's own)?"""
        if arr is self.g:
            return bool(lanes.any()) and not self.written_read_only(arr, flat, lanes)[0][
                lanes].all()
        return arr is self.shared or arr.base is self.shared

    def buffer(self, name: str) -> np.ndarray:
        for a in self.layout.allocs:
            if a.name == name:
                off = a.base - self.base
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
            reason = "out of bounds of every global buffer"
            if self.confined is not None:
                ok, reason = self._confine(ok, safe, mask, "global", self._allocs, reason)
            bad = mask & ~ok
            flat = np.where(mask & ok, addr - np.uint64(self.base), 0).astype(np.int64)
            return self.g, flat, self.g_init, bad, reason
        if space == "shared":
            return self._locate_shared(addr, nbytes, mask, lanes)
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

    def _locate_shared(self, addr: np.ndarray, nbytes: int, mask: np.ndarray,
                       lanes: np.ndarray | None):
        size = self.shared.shape[1]
        cta = self.cta_of_lane if lanes is None else self.cta_of_lane[lanes]
        arr, init = self.shared.reshape(-1), self.shared_init.reshape(-1)
        if self.shared_vars is None:
            ok = addr + np.uint64(nbytes) <= np.uint64(size)
            bad = mask & ~ok
            flat = np.where(mask & ok, cta * size + addr.astype(np.int64), 0)
            return arr, flat, init, bad, f"out of bounds of shared memory ({size} bytes)"
        # The variable whose window holds the address: the last one starting at or below it.
        idx = np.searchsorted(self._sh_starts, addr, side="right").astype(np.int64) - 1
        if not self._sh_starts.size:
            return arr, np.zeros(addr.shape, np.int64), init, mask.copy(), \
                "out of bounds of shared memory (the kernel declares none)"
        safe = np.maximum(idx, 0)
        ok = (idx >= 0) & (addr + np.uint64(nbytes) <= self._sh_ends[safe])
        bad = mask & ~ok
        inside = (addr - self._sh_starts[safe]).astype(np.int64)
        flat = np.where(mask & ok, cta * size + self._sh_rows[safe] + inside, 0)
        reason = "out of bounds of every shared variable"
        if bad.any():
            first = int(idx[np.flatnonzero(bad)[0]])
            if first >= 0:
                v = self.shared_vars[first]
                reason = f"out of bounds of shared variable '{v.name}' ({v.size} bytes)"
        if self.confined is not None:
            ok, reason = self._confine(ok, safe, mask, "shared", self.shared_vars, reason)
            bad = mask & ~ok
            flat = np.where(mask & ok, flat, 0)
        return arr, flat, init, bad, reason

    def _confine(self, ok: np.ndarray, region: np.ndarray, mask: np.ndarray, kind: str,
                 regions, reason: str) -> tuple[np.ndarray, str]:
        """`ok` less the lanes that landed in a region the access may not reach (its address
        derives from others: `confined`), and the reason naming the one it left."""
        allowed = np.array([f"{kind}:{r.name}" in self.confined for r in regions] or [False])
        inside = ok & allowed[region] if len(regions) else ok
        if not (mask & ~inside).any():
            return inside, reason
        own = [r for r in regions if f"{kind}:{r.name}" in self.confined]
        if not own:              # (derived from shared variables, landed in a buffer, ...)
            other, _, name = sorted(self.confined)[0].partition(":")
            what = "shared variable" if other == "shared" else "buffer"
            return inside, f"out of bounds of {what} '{name}'"
        r = own[0]
        what = "shared variable" if kind == "shared" else "buffer"
        return inside, f"out of bounds of {what} '{r.name}' ({r.size} bytes)"

    @staticmethod
    def gather(arr: np.ndarray, flat: np.ndarray, nbytes: int) -> np.ndarray:
        raw = arr[flat[:, None] + np.arange(nbytes)]
        return np.ascontiguousarray(raw).view(f"<u{nbytes}").reshape(-1).astype(np.uint64)

    @staticmethod
    def scatter(arr: np.ndarray, flat: np.ndarray, nbytes: int, value: np.ndarray) -> None:
        raw = value.astype(f"<u{nbytes}").view(np.uint8).reshape(-1, nbytes)
        arr[flat[:, None] + np.arange(nbytes)] = raw
