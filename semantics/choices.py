"""What the PTX ISA leaves open, resolved in one place (DESIGN.md, "What the ISA leaves open").

Every value the ISA does not determine goes through one Domain operation,
`Domain.unspecified(name, w, keys, choices, args)`:
- symbolically it is a fresh bit-vector constant `keq!u!<name>!<key>` per lane (`keys` name
  each lane's thread, warp or CTA), or, with `args`, an uninterpreted function
  `keq!uf!<name>` of the instruction's inputs. A value the hardware fixes (a register read
  before any write, the NaN an f32 add returns) has a name without a read count, so reading
  it twice, or computing it alike in both kernels, gives the same term; a value chosen afresh
  by each read (`%clock`, `%warpid`, the order of contending atomics) carries its read count
  in the name, so each read is a new constant;
- concretely it is what a `Choices` gives: the explicit value of a solver model's constant
  (`values`, by the constant's name), or else its fill policy (`zero`, `pattern`: every byte
  0xa5, `random:SEED`). The emulator replays a counterexample with the model's values, so a
  difference that depends on one of these values reproduces, and the report names it.

Orders the hardware chooses are choices too: `schedule` says how the emulator orders
contending atomics (`lane` order, `reverse`, `random:SEED`), which path of a divergent
branch runs first, and the order of CTA batches. So is the memory layout: `layout` says
where buffers and `.shared` variables lie (`packed`, or `shifted`: other addresses with the
same alignment; `semantics.machine.layout`).

`Target` holds the assumptions a claim may name about the GPU it targets (`target_assumptions`
in the pair spec, e.g. "every f32 NaN result is the canonical NaN"): they narrow what is
open for both domains, and they are printed with every verdict.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping, Sequence

import numpy as np

CONSTANT_PREFIX = "keq!u!"        # per-lane constants: keq!u!<name>!<key>
FUNCTION_PREFIX = "keq!uf!"       # functions of an instruction's inputs: keq!uf!<name>
PATTERN_BYTE = 0xA5
FILLS = ("zero", "pattern", "random:SEED")
SCHEDULES = ("lane", "reverse", "random:SEED")
LAYOUTS = ("packed", "shifted")


class Openness(Enum):
    """The two kinds of "unspecified" (they need different claims)."""

    FIXED = "fixed"     # unknown, but fixed by the hardware: the same inputs give the same value
    FRESH = "fresh"     # chosen afresh by each run or read


class KeySpace(Enum):
    """What one unspecified value belongs to: a thread, a warp, a CTA (shared memory)."""

    THREAD = "t"
    WARP = "w"
    CTA = "c"


@dataclass(frozen=True)
class Target:
    """Assumptions about the target GPU that the claim names (never applied silently)."""

    canonical_nan: frozenset[str] = frozenset()     # formats whose NaN results are canonical
    # Floats read as real numbers (a claim in mode "real"): a sum's order cannot show, so
    # the order of contending float atomic adds does not matter.
    real_floats: bool = False
    # The claim allows two threads to store the same value to one place without ordering
    # (`allow = ["benign-write-races"]`): such stores are not reported as a race.
    benign_write_races: bool = False
    # The GPU architecture whose tensor-core datapath the emulator models (the claim's `arch`;
    # `semantics.tensor_core`): symbolically an mma is an open function whatever it is.
    arch: str = "sm_80"

    @classmethod
    def from_names(cls, names: Sequence[str], real_floats: bool = False,
                   allow: Sequence[str] = (), arch: str = "sm_80") -> "Target":
        formats: set[str] = set()
        for n in names:
            if n == "f32-nan-canonical":
                formats.add("f32")
            elif n == "f16-nan-canonical":
                formats |= {"f16", "bf16"}
            else:
                raise ValueError(f"unknown target assumption {n!r}")
        return cls(frozenset(formats), real_floats, "benign-write-races" in allow, arch)


def _parse_seeded(policy: str, allowed: Sequence[str], what: str) -> tuple[str, int]:
    if policy.startswith("random:"):
        seed = policy.split(":", 1)[1]
        if not seed.isdigit():
            raise ValueError(f"{what} {policy!r}: the seed after 'random:' must be a number")
        return "random", int(seed)
    if policy not in allowed:
        raise ValueError(f"unknown {what} {policy!r} (one of: {', '.join(allowed)})")
    return policy, 0


def _name_hash(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 over uint64 arrays: a deterministic pseudo-random value per key."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _pattern(w: int) -> int:
    return 1 if w == 1 else int.from_bytes(bytes([PATTERN_BYTE]) * ((w + 7) // 8), "little") \
        & ((1 << w) - 1)


@dataclass(frozen=True)
class Choices:
    """How the emulator resolves what the ISA leaves open (see the module docstring)."""

    fill: str = "zero"
    schedule: str = "lane"
    values: Mapping[str, int] = field(default_factory=dict)   # "<name>!<key>" -> value
    target: Target = field(default_factory=Target)
    # Where buffers and .shared variables lie (`semantics.machine.memory`): "packed" (the
    # symbolic domain's too) or "shifted" (other addresses, the same alignment).
    layout: str = "packed"

    def __post_init__(self) -> None:
        _parse_seeded(self.fill, ("zero", "pattern"), "fill policy")
        _parse_seeded(self.schedule, ("lane", "reverse"), "schedule")
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown memory layout {self.layout!r} (one of: "
                             f"{', '.join(LAYOUTS)})")

    # -- values ------------------------------------------------------------------------------
    def lanes(self, name: str, w: int, keys: "LaneKeys",
              natural: np.ndarray | None = None) -> np.ndarray:
        """One value per lane: the explicit value of `name!key` (exact key, then the key of
        a symbolic CTA), else the fill policy's (the `natural` value, when given, stands for
        zero: e.g. %warpid's tid / 32)."""
        mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        kind, seed = _parse_seeded(self.fill, ("zero", "pattern"), "fill policy")
        if kind == "random":
            h = np.uint64(_name_hash(name) ^ (seed * 0x2545F4914F6CDD1D & (2**64 - 1)))
            out = _mix(keys.hashed() ^ h) & mask
        elif natural is not None:
            out = np.asarray(natural).astype(np.uint64) & mask
        elif kind == "pattern":
            out = np.full(keys.exact.size, _pattern(w), dtype=np.uint64)
        else:
            out = np.zeros(keys.exact.size, dtype=np.uint64)
        if self.values:
            out = out.copy()
            for i, (exact, anywhere) in enumerate(keys.names()):
                v = self.values.get(f"{name}!{exact}")
                if v is None:
                    v = self.values.get(f"{name}!{anywhere}")
                if v is not None:
                    out[i] = np.uint64(int(v) & int(mask))
        return out

    def function(self, name: str, w: int, args: Sequence[np.ndarray],
                 default: np.ndarray) -> np.ndarray:
        """A value that is a function of an instruction's inputs (the NaN an f32 add
        returns): `default` (the emulator's model of the GPU) unless the fill policy is
        random, then a hash of the inputs."""
        kind, seed = _parse_seeded(self.fill, ("zero", "pattern"), "fill policy")
        if kind != "random":
            return default
        mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        h = np.full(default.shape, np.uint64(_name_hash(name) ^ seed), dtype=np.uint64)
        for a in args:
            h = _mix(h ^ np.asarray(a).astype(np.uint64))
        return h & mask

    def memory(self, prefix: str, space: KeySpace, exact: np.ndarray, local: np.ndarray,
               size: int) -> np.ndarray | int:
        """What never-written memory holds at launch: one row of `size` bytes per CTA
        (shared) or thread (local), `exact`/`local` their ids. Byte `o` of a row is the
        value of the constant `<prefix><o>!<key>` when the choices give one, else the fill
        policy's. Returns a plain byte when every byte is the same."""
        kind, seed = _parse_seeded(self.fill, ("zero", "pattern"), "fill policy")
        explicit = [(k, v) for k, v in self.values.items() if k.startswith(prefix)] \
            if self.values else []
        if kind != "random" and not explicit:
            return PATTERN_BYTE if kind == "pattern" else 0
        rows = np.asarray(exact).size
        if kind == "random":
            h = np.uint64(_name_hash(prefix) ^ seed)
            grid = (np.asarray(exact).astype(np.uint64)[:, None] << np.uint64(24)) ^ \
                np.arange(size, dtype=np.uint64)[None, :]
            out = (_mix(grid ^ h) & np.uint64(0xFF)).astype(np.uint8)
        else:
            out = np.full((rows, size), PATTERN_BYTE if kind == "pattern" else 0, np.uint8)
        row_of = {f"{space.value}{int(a)}": r for r, a in enumerate(np.asarray(exact))}
        for r, b in enumerate(np.asarray(local)):
            row_of.setdefault(f"{space.value}*{int(b)}", r)
        anywhere: dict[str, list[int]] = {}
        for r, b in enumerate(np.asarray(local)):
            anywhere.setdefault(f"{space.value}*{int(b)}", []).append(r)
        for k, v in explicit:
            offset, _, key = k[len(prefix):].partition("!")
            if not offset.isdigit() or int(offset) >= size:
                continue
            targets = anywhere.get(key, []) if "*" in key else \
                ([row_of[key]] if key in row_of else [])
            for r in targets:
                out[r, int(offset)] = int(v) & 0xFF
        return out

    # -- orders ------------------------------------------------------------------------------
    def order(self, name: str, keys: "LaneKeys", lanes: np.ndarray) -> np.ndarray:
        """The order in which contending lanes take effect: a sort key per lane (lower
        first; ties by lane). Explicit keys (a model's) come first, then the schedule."""
        kind, seed = _parse_seeded(self.schedule, ("lane", "reverse"), "schedule")
        if kind == "random":
            out = _mix(keys.hashed() ^ np.uint64(_name_hash(name) ^ seed)) \
                & np.uint64(0xFFFFFFFF)
        elif kind == "reverse":
            out = np.uint64(0xFFFFFFFF) - np.asarray(lanes).astype(np.uint64)
        else:
            out = np.zeros(keys.exact.size, dtype=np.uint64)
        if self.values:
            out = out.copy()
            for i, (exact, anywhere) in enumerate(keys.names()):
                v = self.values.get(f"{name}!{exact}", self.values.get(f"{name}!{anywhere}"))
                if v is not None:
                    out[i] = np.uint64(int(v) & 0xFFFFFFFF)
        return out

    def taken_first(self, site: str, visit: int) -> bool:
        """Which path of a divergent branch the emulator runs first."""
        kind, seed = _parse_seeded(self.schedule, ("lane", "reverse"), "schedule")
        if kind == "random":
            return bool(_mix(np.array([_name_hash(site) ^ seed ^ visit],
                                      dtype=np.uint64))[0] & np.uint64(1))
        return kind != "reverse"

    def with_values(self, values: Mapping[str, int]) -> "Choices":
        return Choices(self.fill, self.schedule, dict(values), self.target, self.layout)

    def describe(self) -> str:
        parts = []
        if self.fill != "zero":
            parts.append(f"fill {self.fill}")
        if self.schedule != "lane":
            parts.append(f"schedule {self.schedule}")
        if self.values:
            parts.append(f"{len(self.values)} chosen value(s)")
        if self.layout != "packed":
            parts.append(f"{self.layout} memory layout (buffers and shared variables at "
                         f"other addresses, equally aligned)")
        return ", ".join(parts) or "zero fill, lane-order schedule"


@dataclass(frozen=True)
class LaneKeys:
    """Which thread, warp or CTA each lane's value belongs to: `exact` ints (the global
    thread id, the global id of the warp's first thread, the linear CTA id), and `local`
    ints within the CTA, used instead when one symbolic CTA stands for every CTA."""

    space: KeySpace
    exact: np.ndarray
    local: np.ndarray
    symbolic_cta: bool = False
    counts: np.ndarray | None = None     # a fresh read's count per lane (`#k` in names)

    def names(self) -> list[tuple[str, str]]:
        """(exact key, key in any CTA) per lane, as constant names end."""
        s = self.space.value
        if self.symbolic_cta:
            out = [(f"{s}*{int(b)}", f"{s}*{int(b)}") for b in self.local]
        else:
            out = [(f"{s}{int(a)}", f"{s}*{int(b)}") for a, b in zip(self.exact, self.local)]
        if self.counts is not None:
            out = [(f"{a}#{int(c)}", f"{b}#{int(c)}") for (a, b), c in zip(out, self.counts)]
        return out

    def counted(self, counts: np.ndarray) -> "LaneKeys":
        """These keys for the `counts`-th read of one site (each lane its own count)."""
        return LaneKeys(self.space, self.exact, self.local, self.symbolic_cta,
                        np.asarray(counts))

    def hashed(self) -> np.ndarray:
        """One int per lane for seeded random values: the key and its read count."""
        ids = self.exact.astype(np.uint64)
        if self.counts is None:
            return ids
        return ids ^ (self.counts.astype(np.uint64) << np.uint64(40))

    def symbolic_names(self) -> list[str]:
        return [n for n, _ in self.names()]


def constant_name(name: str, key: str) -> str:
    return f"{CONSTANT_PREFIX}{name}!{key}"


def split_constant(full: str) -> tuple[str, str] | None:
    """(name, key) of a `keq!u!` constant, None for any other name."""
    if not full.startswith(CONSTANT_PREFIX):
        return None
    name, _, key = full[len(CONSTANT_PREFIX):].rpartition("!")
    return (name, key) if name else None


def _who(key: str) -> str:
    """A key as words: `t17` thread 17 (global id), `t*3` thread 3 of the (symbolic) CTA,
    `w32` the warp of thread 32, `c0` CTA 0, `c*0` every CTA; `#k` the k-th read."""
    base, _, count = key.partition("#")
    space, rest = base[:1], base[1:]
    anywhere = rest.startswith("*")
    n = rest.lstrip("*")
    word = {"t": f"thread {n}" + (" of its CTA" if anywhere else ""),
            "w": f"the warp of thread {n}" + (" of its CTA" if anywhere else ""),
            "c": "every CTA" if anywhere else f"CTA {n}"}.get(space, key)
    return word + (f" (read {int(count) + 1})" if count and count != "0" else "")


def describe_values(values: Mapping[str, int], limit: int = 4) -> list[str]:
    """The explicit choices of a counterexample in words, a few per kind: the order of each
    atomic's contending lanes, registers read before any write, never-written memory (bytes
    of one CTA or thread together), special registers."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for full, v in values.items():
        name, _, key = full.rpartition("!")
        groups.setdefault(name, []).append((key, int(v)))
    out = []
    for name, items in sorted(groups.items()):
        tag, _, what = name.partition("/")
        if what.startswith("atom@"):
            order = sorted(items, key=lambda kv: (kv[1], kv[0]))
            lanes = ", ".join(_who(k) for k, _ in order[:limit])
            more = ", ..." if len(order) > limit else ""
            out.append(f"the {tag}'s atomics at {what[5:]} take effect in the order "
                       f"{lanes}{more}")
        elif what.startswith(("shared/", "local/")):
            space, _, offset = what.partition("/")
            for key, v in sorted(items)[:limit]:
                out.append(f"{space} byte {offset} of the {tag} ({_who(key)}), never "
                           f"written: {v:#04x}")
        elif what.startswith("%"):
            reg, _, loc = what.partition("@")
            for key, v in sorted(items)[:limit]:
                out.append(f"{reg} of the {tag}" + (f" at {loc}" if loc else "") +
                           f" ({_who(key)}): {v}")
        else:
            frame, _, reg = what.rpartition("/")
            for key, v in sorted(items)[:limit]:
                out.append(f"register {reg} of the {tag} ({frame}), read before any write "
                           f"({_who(key)}): {v:#x}")
    return out


def chosen_values(model: Mapping[str, int | bool]) -> dict[str, int]:
    """The `keq!u!` constants of a solver model, as `Choices.values` (name!key -> value)."""
    out: dict[str, int] = {}
    for full, v in model.items():
        parts = split_constant(full)
        if parts is not None:
            out[f"{parts[0]}!{parts[1]}"] = int(v)
    return out


__all__ = ["Choices", "Target", "Openness", "KeySpace", "LaneKeys", "CONSTANT_PREFIX",
           "FUNCTION_PREFIX", "FILLS", "SCHEDULES", "LAYOUTS", "constant_name", "split_constant",
           "chosen_values", "PATTERN_BYTE"]
