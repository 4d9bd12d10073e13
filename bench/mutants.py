"""Mutation testing of keq's soundness over the corpus: mutate each equivalent pair's candidate
PTX one instruction at a time, run `keq verify` on every mutant, and check every mutant keq
calls equivalent on the emulator fuzzer (`keq fuzz`), which must not refute it.

    .venv/bin/python bench/mutants.py                         # every equivalent corpus pair
    .venv/bin/python bench/mutants.py kernels/vector_add/vec4.toml --per-pair 10
    .venv/bin/python bench/mutants.py --list kernels/reduce/i32_warp_shfl.toml   # ids only
    .venv/bin/python bench/mutants.py --json mutants.json --keep /tmp/mutants

Mutants: one instruction of the candidate's `.entry` (or of a `.func` it calls) edited, the
file otherwise byte-identical. Operators (stable short names, `OPERATORS`): opcode swaps
(add>sub, sub>add, add>mul, mul>add, and>or, or>and, min>max, max>min, shl>shr, shr>shl),
setp comparisons (cmp-strict lt<->le, cmp-swap lt<->gt, cmp-eqne eq<->ne), integer
immediates and `[reg+offset]` offsets +-1 (imm+1, imm-1, addr+1, addr-1), a dropped barrier
or store (drop-bar, drop-st), swapped operands (swap-sub, swap-div, swap-rem, swap-setp,
swap-selp), another special register (sreg-tid-xy, sreg-ctaid-ntid, sreg-lane-warp,
sreg-tid-warpid), another atomic operation (atom>add, atom>max, atom>min, atom>exch,
atom>or), another shuffle offset or mask (shfl-b+1, shfl-b-1, shfl-b*2, shfl-b/2,
shfl-mask), and a negated guard (guard-not). A mutant's id is `FAMILY/PAIR#OP@LINE`
(`.K`, the operand's index, appended where one operator edits two operands of one line).
Mutants that do not parse, or parse to the same instructions, are dropped and counted.
At most `--per-pair` mutants per pair are run, drawn round-robin over the operators in an
order fixed by `--seed`.

Each mutant runs in a fresh process: `keq verify MUTANT.toml --json -j J` (killed: exit 1;
inconclusive: exit 2, or past `--timeout-s`; equivalent: exit 0; bad: exit 3; internal: exit 4,
an exit 3 that names a keq bug, or an exit that does not match the JSON verdict, e.g. a
traceback). Every equivalent mutant is then fuzzed once per fill / schedule policy
(`--fill zero|pattern|random:1`, `--schedule reverse|random:1`, where `keq fuzz` has them);
a fuzz difference is a WRONG EQUIVALENT. Exit status 1 if any wrong equivalent or internal
error was found, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from semantics.ir.operands import Addr, IntImm, Pair, Reg, SpecialReg  # noqa: E402
from semantics.ptx import parse_ptx  # noqa: E402

# -- operators ----------------------------------------------------------------------------

OPERATORS: tuple[str, ...] = (
    "add>sub", "sub>add", "add>mul", "mul>add", "and>or", "or>and", "min>max", "max>min",
    "shl>shr", "shr>shl",
    "cmp-strict", "cmp-swap", "cmp-eqne",
    "imm+1", "imm-1", "addr+1", "addr-1",
    "drop-bar", "drop-st",
    "swap-sub", "swap-div", "swap-rem", "swap-setp", "swap-selp",
    "sreg-tid-xy", "sreg-ctaid-ntid", "sreg-lane-warp", "sreg-tid-warpid",
    "atom>add", "atom>max", "atom>min", "atom>exch", "atom>or",
    "shfl-b+1", "shfl-b-1", "shfl-b*2", "shfl-b/2", "shfl-mask",
    "guard-not",
)

_OPCODE_SWAPS = {"add>sub": ("add", "sub"), "sub>add": ("sub", "add"),
                 "and>or": ("and", "or"), "or>and": ("or", "and"),
                 "min>max": ("min", "max"), "max>min": ("max", "min")}
_CMP = {
    "cmp-strict": {"lt": "le", "le": "lt", "gt": "ge", "ge": "gt", "lo": "ls", "ls": "lo",
                   "hi": "hs", "hs": "hi", "ltu": "leu", "leu": "ltu", "gtu": "geu",
                   "geu": "gtu"},
    "cmp-swap": {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "lo": "hi", "hi": "lo",
                 "ls": "hs", "hs": "ls", "ltu": "gtu", "gtu": "ltu", "leu": "geu",
                 "geu": "leu"},
    "cmp-eqne": {"eq": "ne", "ne": "eq", "equ": "neu", "neu": "equ"},
}
_SREG = {
    "sreg-tid-xy": {"%tid.x": "%tid.y", "%tid.y": "%tid.x"},
    "sreg-ctaid-ntid": {f"%{a}.{c}": f"%{b}.{c}" for c in "xyz"
                        for a, b in (("ctaid", "ntid"), ("ntid", "ctaid"))},
    "sreg-lane-warp": {"%laneid": "%warpid", "%warpid": "%laneid"},
    "sreg-tid-warpid": {"%tid.x": "%warpid"},
}
_ATOM_OPS = ("add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec")
_SWAPPED = {"sub": "swap-sub", "div": "swap-div", "rem": "swap-rem", "setp": "swap-setp",
            "selp": "swap-selp"}
# opcodes whose first operand is not a destination register
_NO_DEST = frozenset("st red bar barrier bra brx ret exit call prefetch prefetchu membar trap "
                     "nanosleep".split())
_INT_LIT = re.compile(r"^(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]+|[0-9]+)(U?)$")
_ADDR_OFF = re.compile(r"^(\[\s*[^\s+\]]+\s*\+\s*)(-?(?:0[xX][0-9a-fA-F]+|[0-9]+))(\s*\])$")
_GUARD = re.compile(r"@(!?)\s*")
_WORD = re.compile(r"[A-Za-z][\w.:]*")


@dataclass(frozen=True)
class Mutant:
    """One edited line of a candidate's PTX. `line` is 1-based; `tag` the operand index when
    the id needs it to be unique."""

    pair: str
    op: str
    line: int
    original: str            # the line's text (without its line ending)
    mutated: str
    tag: int | None = None
    operand: int | None = None   # the operand edited (None: the opcode, guard or instruction)

    @property
    def id(self) -> str:
        return f"{self.pair}#{self.op}@{self.line}" + ("" if self.tag is None else f".{self.tag}")

    @property
    def slug(self) -> str:
        return re.sub(r"[^\w.@+-]", "_", f"{self.op}@{self.line}"
                      + ("" if self.tag is None else f".{self.tag}"))

    def apply(self, text: str) -> str:
        """The whole file with this mutant's line edited; every other byte unchanged."""
        lines = text.splitlines(keepends=True)
        old = lines[self.line - 1]
        body = old.rstrip("\r\n")
        if body != self.original:
            raise ValueError(f"{self.id}: line {self.line} is not the one mutated")
        lines[self.line - 1] = self.mutated + old[len(body):]
        return "".join(lines)


@dataclass
class _Span:
    """Where one instruction sits in its line: [start, end) from its guard to its ';'."""

    start: int
    end: int
    guard: tuple[int, int] | None      # the '@...' text span (to the register's end)
    word: tuple[int, int]
    operands: list[tuple[int, int]]


def _split(line: str, col: int) -> _Span | None:
    start = col - 1
    i = start
    guard = None
    m = _GUARD.match(line, i)
    if m:
        j = m.end()
        r = re.compile(r"%?[\w$]+").match(line, j)
        if not r:
            return None
        guard = (i, r.end())
        i = r.end()
        while i < len(line) and line[i].isspace():
            i += 1
    w = _WORD.match(line, i)
    if not w:
        return None
    word = (w.start(), w.end())
    end = line.find(";", w.end())
    if end < 0:
        return None
    operands: list[tuple[int, int]] = []
    depth = 0
    s = w.end()
    for k in range(w.end(), end + 1):
        ch = line[k] if k < end else ","
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            a, b = s, k
            while a < b and line[a].isspace():
                a += 1
            while b > a and line[b - 1].isspace():
                b -= 1
            if a < b:
                operands.append((a, b))
            s = k + 1
    return _Span(start, end + 1, guard, word, operands)


def _lit(value: int, like: str) -> str:
    """`value` written as `like` is (hex stays hex, a U suffix stays)."""
    m = _INT_LIT.match(like)
    hexa = bool(m and m.group(2)[:2].lower() == "0x")
    suffix = m.group(3) if m else ""
    if hexa and value >= 0:
        digits = len(m.group(2)) - 2
        return f"0x{value:0{digits}x}{suffix}"
    return f"{value}{suffix}"


def _lit_value(text: str) -> int | None:
    m = _INT_LIT.match(text)
    if not m:
        return None
    body = m.group(2)
    base = 16 if body[:2].lower() == "0x" else 2 if body[:2].lower() == "0b" else \
        8 if len(body) > 1 and body[0] == "0" else 10
    v = int(body[2:] if base in (2, 16) else body, base)
    return -v if m.group(1) else v


def _constants(fn) -> dict[str, int]:
    """Registers written exactly once in `fn`, by a `mov` of an integer immediate."""
    writes: Counter = Counter()
    value: dict[str, int] = {}
    for ins in fn.instructions:
        if ins.opcode in _NO_DEST or not ins.operands:
            continue
        d = ins.operands[0]
        for r in ((d.first, d.second) if isinstance(d, Pair) else (d,)):
            if isinstance(r, Reg):
                writes[r.name] += 1
        if ins.opcode == "mov" and isinstance(d, Reg) and len(ins.operands) == 2 \
                and isinstance(ins.operands[1], IntImm) and ins.guard is None:
            value[d.name] = ins.operands[1].value
    return {r: v for r, v in value.items() if writes[r] == 1}


def _edits(ins, line: str, consts: dict[str, int]):
    """(op, operand index or None, new line) for every mutation of `ins` on `line`."""
    sp = _split(line, ins.loc.col)
    if sp is None:
        return
    word = line[sp.word[0]:sp.word[1]]
    parts = word.split(".")
    opc, mods = parts[0], parts[1:]

    def with_word(new: str) -> str:
        return line[:sp.word[0]] + new + line[sp.word[1]:]

    def with_operand(k: int, new: str) -> str:
        a, b = sp.operands[k]
        return line[:a] + new + line[b:]

    def otext(k: int) -> str:
        a, b = sp.operands[k]
        return line[a:b]

    ops_ok = len(sp.operands) == len(ins.operands)
    # opcode swaps
    for name, (a, b) in _OPCODE_SWAPS.items():
        if opc == a:
            yield name, None, with_word(".".join([b, *mods]))
    if opc == "add" and "cc" not in mods and "sat" not in mods:
        t = mods[-1] if mods else ""
        if t[:1] in ("s", "u") and t[1:].isdigit():
            yield "add>mul", None, with_word(".".join(["mul", "lo", *mods]))
        elif t[:1] == "f":
            yield "add>mul", None, with_word(".".join(["mul", *mods]))
    if opc == "mul" and "wide" not in mods and "hi" not in mods:
        yield "mul>add", None, with_word(".".join(["add", *[m for m in mods if m != "lo"]]))
    if opc == "shl":
        yield "shl>shr", None, with_word(".".join(["shr", *mods]))
    if opc == "shr" and mods:
        t = mods[-1]
        yield "shr>shl", None, with_word(".".join(["shl", *mods[:-1], "b" + t[1:]]))
    # comparisons
    if opc in ("setp", "set"):
        for name, table in _CMP.items():
            for k, m in enumerate(mods):
                if m in table:
                    yield name, None, with_word(".".join([opc, *mods[:k], table[m],
                                                          *mods[k + 1:]]))
                    break
    # atomics
    if opc in ("atom", "red"):
        k = next((k for k, m in enumerate(mods) if m in _ATOM_OPS), None)
        if k is not None and mods[k] != "cas":
            cur, t = mods[k], mods[-1]
            targets = ("max", "min", "exch", "or") if cur == "add" else ("add",)
            for to in targets:
                nt = t
                if to in ("or", "exch"):
                    if t[:1] in ("s", "u"):
                        nt = "b" + t[1:]
                    elif t[:1] == "f" and to == "or":
                        continue
                elif t[:1] == "b":
                    nt = "u" + t[1:]
                if opc == "red" and to == "exch":
                    continue                  # red has no exch
                new = [*mods[:k], to, *mods[k + 1:]]
                new[-1] = nt
                yield f"atom>{to}", None, with_word(".".join([opc, *new]))
    # dropped barrier or store
    if (opc in ("bar", "barrier") and "sync" in mods) or \
            (opc == "st" and ins.form.space in ("global", "shared", "shared::cta")):
        dropped = line[:sp.start] + line[sp.end:]
        if line[sp.end:].strip() == "":
            dropped = line[:sp.start] + "// dropped: " + line[sp.start:sp.end] + line[sp.end:]
        yield ("drop-bar" if opc in ("bar", "barrier") else "drop-st"), None, dropped
    # guard
    if sp.guard is not None and ins.guard is not None:
        g0, g1 = sp.guard
        reg = str(ins.guard.reg)
        yield "guard-not", None, line[:g0] + ("@" if ins.guard.negated else "@!") + reg + \
            line[g1:]
    if not ops_ok:
        return
    # swapped operands
    symmetric = opc in ("setp", "set") and ins.form.cmp in ("eq", "ne", "equ", "neu")
    if opc in _SWAPPED and len(ins.operands) >= 3 and otext(1) != otext(2) and not symmetric:
        a1, b1 = sp.operands[1]
        a2, b2 = sp.operands[2]
        yield (_SWAPPED[opc], None,
               line[:a1] + line[a2:b2] + line[b1:a2] + line[a1:b1] + line[b2:])
    # special registers
    for k, o in enumerate(ins.operands):
        if isinstance(o, SpecialReg) and otext(k) == o.name:
            for name, table in _SREG.items():
                if o.name in table:
                    yield name, k, with_operand(k, table[o.name])
    # integer immediates
    for k, o in enumerate(ins.operands):
        if isinstance(o, IntImm) and (v := _lit_value(otext(k))) is not None:
            for name, nv in (("imm+1", v + 1), ("imm-1", v - 1)):
                if opc in ("bar", "barrier") and nv < 0:
                    continue
                yield name, k, with_operand(k, _lit(nv, otext(k)))
    # address offsets
    if ins.form.space != "param":
        for k, o in enumerate(ins.operands):
            if isinstance(o, Addr) and (m := _ADDR_OFF.match(otext(k))):
                v = _lit_value(m.group(2))
                if v is None:
                    continue
                for name, nv in (("addr+1", v + 1), ("addr-1", v - 1)):
                    yield name, k, with_operand(k, m.group(1) + _lit(nv, m.group(2))
                                                + m.group(3))
    # shuffles
    if opc == "shfl" and "sync" in mods and len(ins.operands) == 5:
        b = ins.operands[2]
        bv = b.value if isinstance(b, IntImm) else \
            consts.get(b.name) if isinstance(b, Reg) else None
        if bv is not None:
            seen = {bv}
            for name, nv in (("shfl-b+1", bv + 1), ("shfl-b-1", bv - 1),
                             ("shfl-b*2", bv * 2), ("shfl-b/2", bv // 2)):
                if nv < 0 or nv in seen:
                    continue
                seen.add(nv)
                yield name, 2, with_operand(2, str(nv))
        mk = ins.operands[4]
        mv = mk.value if isinstance(mk, IntImm) else \
            consts.get(mk.name) if isinstance(mk, Reg) else None
        if mv is not None and mv & 0xFFFFFFFF == 0xFFFFFFFF:
            yield "shfl-mask", 4, with_operand(4, "0x0000ffff")


def reached_functions(module, kernel: str) -> list:
    """`kernel` and the `.func`s it calls, directly or not, in module order."""
    fns = module.functions
    todo, seen = [kernel], {kernel}
    while todo:
        fn = fns[todo.pop()]
        for ins in fn.instructions:
            if ins.opcode != "call":
                continue
            for o in ins.operands:
                name = getattr(o, "name", None)
                if name in fns and name not in seen:
                    seen.add(name)
                    todo.append(name)
    return [f for f in fns.values() if f.name in seen]


@dataclass
class Generated:
    mutants: list[Mutant]
    edits: int = 0                 # edits proposed
    unparsable: int = 0            # dropped: the mutant does not parse
    no_op: int = 0                 # dropped: same text as another mutant, or same instructions
    unparsable_ids: list[str] = field(default_factory=list)


def _instrs_at(module, names: list[str], line: int) -> list[str] | None:
    out = []
    for n in names:
        fn = module.functions.get(n)
        if fn is None:
            return None
        out += [str(i) for i in fn.instructions if i.loc.line == line]
    return out


def generate(text: str, kernel: str, pair: str, path: str = "<ptx>",
             check: bool = True) -> Generated:
    """Every mutant of `kernel` (and the .funcs it calls) in the PTX `text`, in line order
    then operator order. With `check`, each is parsed and those that do not parse, or parse
    to the same instructions as the original, are dropped (and counted)."""
    module = parse_ptx(text, path)
    fns = reached_functions(module, kernel)
    names = [f.name for f in fns]
    lines = text.splitlines()
    order = {op: i for i, op in enumerate(OPERATORS)}
    raw: list[tuple[int, int, int | None, str]] = []      # line, op index, operand, new line
    for fn in fns:
        consts = _constants(fn)
        for ins in fn.instructions:
            ln = ins.loc.line
            for op, k, new in _edits(ins, lines[ln - 1], consts):
                raw.append((ln, order[op], k, new))
    raw.sort(key=lambda r: (r[0], r[1], -1 if r[2] is None else r[2]))
    g = Generated([], edits=len(raw))
    seen: set[tuple[int, str]] = set()
    keyed: list[tuple[int, int, int | None, str]] = []
    for r in raw:
        if r[3] == lines[r[0] - 1] or (r[0], r[3]) in seen:
            g.no_op += 1
            continue
        seen.add((r[0], r[3]))
        keyed.append(r)
    count = Counter((ln, op) for ln, op, _, _ in keyed)
    for ln, opi, k, new in keyed:
        m = Mutant(pair, OPERATORS[opi], ln, lines[ln - 1], new,
                   tag=k if count[(ln, opi)] > 1 else None, operand=k)
        if check:
            try:
                mod = parse_ptx(m.apply(text), path)
            except Exception:            # noqa: BLE001 (any parse failure drops the mutant)
                g.unparsable += 1
                g.unparsable_ids.append(m.id)
                continue
            after = _instrs_at(mod, names, ln)
            if after is None:
                g.unparsable += 1
                g.unparsable_ids.append(m.id)
                continue
            if after == _instrs_at(module, names, ln):
                g.no_op += 1
                continue
        g.mutants.append(m)
    return g


def select(mutants: list[Mutant], n: int, seed: int, pair: str) -> list[Mutant]:
    """At most `n` mutants, round-robin over the operators (operator order and the order
    within each operator shuffled by `seed` and the pair's name, so a run is reproducible),
    returned in line order."""
    if n <= 0 or n >= len(mutants):
        return list(mutants)
    rng = random.Random(f"{seed}:{pair}")
    groups: dict[str, list[Mutant]] = defaultdict(list)
    for m in mutants:
        groups[m.op].append(m)
    ops = [op for op in OPERATORS if op in groups]
    rng.shuffle(ops)
    for op in ops:
        rng.shuffle(groups[op])
    chosen: list[Mutant] = []
    while len(chosen) < n:
        for op in ops:
            if groups[op] and len(chosen) < n:
                chosen.append(groups[op].pop())
    return sorted(chosen, key=lambda m: (m.line, OPERATORS.index(m.op), m.tag or 0))


# -- specs --------------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]")
_PATH_KEY = re.compile(r"""^(\s*)(ptx|sass|cubin)(\s*=\s*)("(?:[^"\\]|\\.)*"|'[^']*')(.*)$""")


def rewrite_spec(text: str, spec_dir: Path, mutant_ptx: Path) -> str:
    """The spec `text` (read from `spec_dir`) with the candidate's `ptx` pointing at
    `mutant_ptx` (a candidate's `sass`/`cubin` commented out: it was the original's) and
    every other side path made absolute; every other line unchanged."""
    out = []
    section = None
    for line in text.splitlines(keepends=True):
        h = _HEADER.match(line)
        if h and not line.lstrip().startswith("[["):
            section = h.group(1)
        elif line.lstrip().startswith("[["):
            section = None
        m = _PATH_KEY.match(line.rstrip("\r\n"))
        if m and section in ("reference", "candidate"):
            ending = line[len(line.rstrip("\r\n")):]
            key = m.group(2)
            value = tomllib.loads(f"v = {m.group(4)}")["v"]
            if section == "candidate" and key == "ptx":
                new = str(mutant_ptx)
            elif section == "candidate":
                out.append(f"# (mutant) {line.rstrip(chr(13) + chr(10))}{ending}")
                continue
            else:
                new = str((spec_dir / value).resolve())
            line = f"{m.group(1)}{key}{m.group(3)}{json.dumps(new)}{m.group(5)}{ending}"
        out.append(line)
    result = "".join(out)
    doc = tomllib.loads(result)
    if doc.get("candidate", {}).get("ptx") != str(mutant_ptx):
        raise ValueError("the spec's [candidate] ptx could not be rewritten (an inline "
                         "table?)")
    return result


def pair_name(spec_path: Path, doc: dict) -> str:
    try:
        return str(spec_path.resolve().relative_to(KERNELS).with_suffix(""))
    except ValueError:
        return doc.get("name") or spec_path.stem


def corpus_specs() -> list[Path]:
    out = []
    for p in sorted(KERNELS.glob("*/*.toml")):
        with open(p, "rb") as f:
            if tomllib.load(f).get("expect") == "equivalent":
                out.append(p)
    return out


# -- running keq --------------------------------------------------------------------------

_KEQ = ("import sys\nsys.path.insert(0, {root!r})\n"
        "from verifier.cli.main import entry\nentry()")


def keq(args: list[str], timeout_s: float) -> dict:
    """One `keq ARGS` in a fresh process (this tree's sources) and its own process group,
    killed with its children past `timeout_s`."""
    cmd = [sys.executable, "-c", _KEQ.format(root=str(ROOT)), *args]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    timed_out = False

    def kill() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)     # the process group this call started
        except ProcessLookupError:
            pass
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill()
        out, err = proc.communicate()
    except BaseException:                           # Ctrl-C: leave no solver running
        kill()
        raise
    return {"rc": proc.returncode, "stdout": out, "stderr": err, "timed_out": timed_out,
            "seconds": time.perf_counter() - t0}


_EXPECT_RC = {"equivalent": 0, "not-equivalent": 1, "inconclusive": 2}


def shorten(reason: str, width: int = 90) -> str:
    """A reason with paths, numbers and long names folded, so that alike reasons count as
    one."""
    r = re.sub(r"/\S+/", "", reason.strip().splitlines()[0] if reason.strip() else "")
    r = re.sub(r"0x[0-9a-fA-F]+|\d+", "N", r)
    return r if len(r) <= width else r[:width - 3] + "..."


def classify(res: dict, timeout_s: float) -> tuple[str, str, dict | None]:
    """(outcome, reason, verdict JSON) of one `keq verify --json` run."""
    if res["timed_out"]:
        return "inconclusive", f"timeout ({timeout_s:g} s)", None
    rc = res["rc"]
    err_tail = next((ln for ln in reversed(res["stderr"].strip().splitlines()) if ln.strip()),
                    "")
    v = None
    try:
        v = json.loads(res["stdout"])
    except (json.JSONDecodeError, TypeError):
        pass
    verdict = v.get("verdict") if isinstance(v, dict) else None
    if rc in (0, 1, 2) and verdict is not None and _EXPECT_RC.get(verdict) == rc:
        outcome = {0: "equivalent", 1: "killed", 2: "inconclusive"}[rc]
        reason = (v.get("reasons") or [""])[0] if rc == 2 else ""
        if rc == 1:
            cex = v.get("counterexample") or {}
            reason = cex.get("note") or ""
        return outcome, reason, v
    if rc == 3:
        if "keq bug" in res["stderr"] or "internal error" in res["stderr"].lower():
            return "internal", err_tail, v
        return "bad", err_tail, v
    if rc == 4:
        return "internal", err_tail, v
    return "internal", f"exit {rc} (verdict {verdict}): {err_tail}", v


POLICIES = (("--fill", "zero"), ("--fill", "pattern"), ("--fill", "random:1"),
            ("--schedule", "reverse"), ("--schedule", "random:1"))


def fuzz_policies(timeout_s: float) -> tuple[list[tuple[str, ...]], list[str]]:
    """The policy options `keq fuzz --help` lists (one run each), and the missing ones."""
    res = keq(["fuzz", "--help"], timeout_s)
    text = res["stdout"] + res["stderr"]
    have = [p for p in POLICIES if re.search(re.escape(p[0]) + r"\b", text)]
    missing = sorted({p[0] for p in POLICIES} - {p[0] for p in have})
    return (have or [()]), missing


def fuzz_check(spec: Path, policies, examples: int, seed: int, timeout_s: float,
               work: Path) -> list[dict]:
    runs = []
    for k, pol in enumerate(policies):
        repro = work / f"{spec.stem}.fuzz{k}.npz"
        res = keq(["fuzz", str(spec), "--examples", str(examples), "--seed", str(seed),
                   "--repro", str(repro), *pol], timeout_s)
        out = res["stdout"]
        if res["timed_out"]:
            status = "timeout"
        elif res["rc"] == 1 and "NOT EQUIVALENT" in out:
            status = "refuted"
        elif res["rc"] == 0:
            status = "clean"
        else:
            status = f"error (exit {res['rc']})"
        head = (out.strip() or res["stderr"].strip()).splitlines()[:6]
        runs.append({"policy": " ".join(pol) or "default", "status": status,
                     "seconds": round(res["seconds"], 2), "head": head})
    return runs


# -- the bench ----------------------------------------------------------------------------

def _machine() -> str:
    parts = [f"{platform.machine()}, {os.cpu_count()} core(s)",
             f"Python {platform.python_version()}"]
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
        if rev:
            parts.append(f"keq git {rev}{'+dirty' if dirty else ''}")
    except (OSError, subprocess.SubprocessError):
        pass
    return ", ".join(parts)


def _prepare(spec: Path, args) -> tuple[str, dict]:
    """Generate and select one pair's mutants: (pair name, info)."""
    text = spec.read_text()
    doc = tomllib.loads(text)
    pair = pair_name(spec, doc)
    cand = doc.get("candidate", {})
    info: dict = {"spec": str(spec), "expect": doc.get("expect"), "mutants": [],
                  "skipped": None}
    if "ptx" not in cand:
        info["skipped"] = "the candidate is not PTX"
        return pair, info
    ptx = (spec.parent / cand["ptx"]).resolve()
    ptext = ptx.read_text()
    g = generate(ptext, cand["kernel"], pair, str(ptx))
    chosen = select(g.mutants, args.per_pair, args.seed, pair)
    info.update(ptx=str(ptx), ptx_text=ptext, spec_text=text, edits=g.edits,
                unparsable=g.unparsable, unparsable_ids=g.unparsable_ids, no_op=g.no_op,
                available=len(g.mutants), chosen=chosen,
                by_op_available=dict(Counter(m.op for m in g.mutants)))
    return pair, info


def _run_one(m: Mutant, info: dict, args, work: Path, policies) -> dict:
    d = work / m.pair.replace("/", "__")
    d.mkdir(parents=True, exist_ok=True)
    mptx = d / f"{m.slug}.ptx"
    mptx.write_text(m.apply(info["ptx_text"]))
    mspec = d / f"{m.slug}.toml"
    mspec.write_text(rewrite_spec(info["spec_text"], Path(info["spec"]).parent, mptx))
    res = keq(["verify", str(mspec), "--json", "-j", str(args.jobs)], args.timeout_s)
    outcome, reason, v = classify(res, args.timeout_s)
    rec = {"id": m.id, "pair": m.pair, "op": m.op, "line": m.line,
           "original": m.original.strip(), "mutated": m.mutated.strip(),
           "outcome": outcome, "reason": reason, "exit": res["rc"],
           "seconds": round(res["seconds"], 2),
           "keq_seconds": v.get("seconds") if isinstance(v, dict) else None,
           "stderr_tail": res["stderr"].strip().splitlines()[-5:] if outcome in
           ("bad", "internal") else [], "fuzz": []}
    if outcome == "equivalent" and not args.no_fuzz:
        rec["fuzz"] = fuzz_check(mspec, policies, args.examples, args.seed, args.timeout_s, d)
        for run, pol in zip(rec["fuzz"], policies):
            if run["status"] == "refuted" and _baseline(m.pair, info, pol, args, work):
                run["status"] = "refuted-baseline"
    return rec


_BASELINES: dict[tuple[str, tuple], bool] = {}
_BASELINE_LOCK = threading.Lock()


def _baseline(pair: str, info: dict, policy: tuple, args, work: Path) -> bool:
    """Whether the same fuzz run (policy, seed, examples) refutes the unmutated pair too:
    then a refutation of a mutant is no evidence against keq (a real-mode pair past the
    fuzzer's tolerance, say). Run once per pair and policy."""
    key = (pair, policy)
    with _BASELINE_LOCK:
        if key in _BASELINES:
            return _BASELINES[key]
    d = work / pair.replace("/", "__")
    d.mkdir(parents=True, exist_ok=True)
    spec = d / "unmutated.toml"
    spec.write_text(rewrite_spec(info["spec_text"], Path(info["spec"]).parent,
                                 Path(info["ptx"])))
    run = fuzz_check(spec, [policy], args.examples, args.seed, args.timeout_s, d)[0]
    with _BASELINE_LOCK:
        _BASELINES[key] = run["status"] == "refuted"
    return _BASELINES[key]


def _fuzz_state(rec: dict) -> str:
    """'' (not fuzzed), 'refuted', 'checked' (every run ran), or 'incomplete'."""
    if not rec["fuzz"]:
        return ""
    st = [r["status"] for r in rec["fuzz"]]
    if "refuted" in st:
        return "refuted"
    if "refuted-baseline" in st:
        return "baseline"
    return "checked" if all(s == "clean" for s in st) else "incomplete"


def _tally(recs: list[dict]) -> dict:
    c = Counter(r["outcome"] for r in recs)
    f = Counter(_fuzz_state(r) for r in recs)
    return {"run": len(recs), "killed": c["killed"], "inconclusive": c["inconclusive"],
            "equivalent": c["equivalent"], "bad": c["bad"], "internal": c["internal"],
            "fuzz_checked": f["checked"] + f["refuted"], "fuzz_refuted": f["refuted"],
            "fuzz_incomplete": f["incomplete"] + f["baseline"], "fuzz_baseline": f["baseline"],
            "seconds": round(sum(r["seconds"] + sum(x["seconds"] for x in r["fuzz"])
                                 for r in recs), 1)}


def _row(label: str, extra: str, t: dict, width: int) -> str:
    return (f"   {label:<{width}} {extra} {t['run']:>4} {t['killed']:>6} "
            f"{t['inconclusive']:>6} {t['equivalent']:>5} {t['bad']:>4} {t['internal']:>4} "
            f"{t['fuzz_checked']:>5}/{t['fuzz_refuted']:<3} {t['seconds']:>7.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="*", metavar="SPEC.toml",
                    help="pair specs to mutate (default: every kernels/*/*.toml whose "
                         "expect is equivalent)")
    ap.add_argument("--per-pair", type=int, default=20, metavar="N",
                    help="mutants run per pair at most (default 20: about 15 to 25 minutes "
                         "for the corpus on 2 cores; 0: all)")
    ap.add_argument("--seed", type=int, default=0, help="mutant choice and fuzz seed (0)")
    ap.add_argument("--timeout-s", type=float, default=60.0, metavar="S",
                    help="wall-clock limit of one keq process (default 60; past it a verify "
                         "counts as inconclusive (timeout))")
    ap.add_argument("--jobs", type=int, default=1, metavar="J",
                    help="keq verify -j J (default 1)")
    ap.add_argument("--workers", type=int, default=1, metavar="W",
                    help="mutants checked at once (default 1)")
    ap.add_argument("--examples", type=int, default=50, metavar="N",
                    help="keq fuzz --examples per policy for each equivalent mutant (50)")
    ap.add_argument("--no-fuzz", action="store_true", help="skip the fuzz check")
    ap.add_argument("--list", action="store_true",
                    help="print the chosen mutants' ids and edited lines; run nothing")
    ap.add_argument("--keep", metavar="DIR", help="write the mutants here and keep them")
    ap.add_argument("--json", metavar="F", help="write every mutant's record and the totals")
    ap.add_argument("--quiet", action="store_true", help="no line per mutant")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    specs = [Path(s).resolve() for s in args.specs] if args.specs else corpus_specs()
    pairs: dict[str, dict] = {}
    for s in specs:
        pair, info = _prepare(s, args)
        pairs[pair] = info
    if args.list:
        for pair, info in pairs.items():
            if info["skipped"]:
                print(f"{pair}: skipped ({info['skipped']})")
                continue
            print(f"{pair}: {info['available']} mutant(s), {info['unparsable']} unparsable, "
                  f"{len(info['chosen'])} chosen")
            for m in info["chosen"]:
                print(f"  {m.id:<48} {m.mutated.strip()}")
        return 0

    print(f"bench/mutants.py — {_machine()}")
    policies, missing = fuzz_policies(args.timeout_s)
    if missing:
        once = "with the others" if policies != [()] else "once, with keq fuzz's defaults"
        print(f"fill/schedule policies unavailable: {', '.join(missing)} (not in `keq fuzz "
              f"--help`): equivalent mutants are fuzzed {once}")
    print(f"per pair <= {args.per_pair or 'all'} mutant(s), seed {args.seed}, timeout "
          f"{args.timeout_s:g} s, keq verify -j {args.jobs}, {args.workers} worker(s), fuzz "
          f"{args.examples} example(s) x {len(policies)} run(s) per equivalent mutant")
    todo = [(m, info) for info in pairs.values() if not info["skipped"]
            for m in info["chosen"]]
    total = len(todo)
    recs: list[dict] = []
    ctx = tempfile.TemporaryDirectory(prefix="keq-mutants-") if not args.keep else None
    work = Path(args.keep) if args.keep else Path(ctx.name)
    work.mkdir(parents=True, exist_ok=True)
    try:
        with ThreadPoolExecutor(max(1, args.workers)) as pool:
            futures = [pool.submit(_run_one, m, info, args, work, policies)
                       for m, info in todo]
            for i, fut in enumerate(futures):
                rec = fut.result()
                recs.append(rec)
                if not args.quiet:
                    fz = ""
                    if rec["fuzz"]:
                        fz = "  fuzz " + ", ".join(f"{r['policy']}: {r['status']}"
                                                   for r in rec["fuzz"])
                    why = f"  ({shorten(rec['reason'], 70)})" if rec["reason"] and \
                        rec["outcome"] != "killed" else ""
                    print(f"[{i + 1:>4}/{total}] {rec['id']:<50} {rec['outcome']:<12} "
                          f"{rec['seconds']:6.1f} s{why}{fz}", flush=True)
    finally:
        if ctx is not None:
            ctx.cleanup()
    elapsed = time.perf_counter() - t_start
    return _report(args, pairs, recs, policies, missing, elapsed)


def _report(args, pairs, recs, policies, missing, elapsed) -> int:
    by_pair: dict[str, list[dict]] = defaultdict(list)
    by_op: dict[str, list[dict]] = defaultdict(list)
    for r in recs:
        by_pair[r["pair"]].append(r)
        by_op[r["op"]].append(r)
    w = max([len(p) for p in pairs] + [12])
    head = (f"   {{:<{w}}} {{:>5}} {{:>5}} {{:>4}} {{:>6}} {{:>6}} {{:>5}} {{:>4}} {{:>4}} "
            f"{{:>9}} {{:>7}}")
    print("\n== per pair (avail: mutants that parse; unp: edits that do not parse; run: "
          "checked; fuzz: equivalents fuzzed/refuted)")
    print(head.format("pair", "avail", "unp", "run", "killed", "inconc", "equiv", "bad",
                      "int", "fuzz c/r", "secs"))
    tot_av = tot_unp = 0
    for pair, info in pairs.items():
        if info["skipped"]:
            print(f"   {pair:<{w}} skipped: {info['skipped']}")
            continue
        tot_av += info["available"]
        tot_unp += info["unparsable"]
        print(_row(pair, f"{info['available']:>5} {info['unparsable']:>5}",
                   _tally(by_pair[pair]), w))
    total = _tally(recs)
    print(_row("total", f"{tot_av:>5} {tot_unp:>5}", total, w))

    print("\n== per operator")
    print(head.format("operator", "avail", "", "run", "killed", "inconc", "equiv", "bad",
                      "int", "fuzz c/r", "secs"))
    avail_op: Counter = Counter()
    for info in pairs.values():
        avail_op.update(info.get("by_op_available", {}))
    for op in OPERATORS:
        if avail_op[op] or by_op[op]:
            print(_row(op, f"{avail_op[op]:>5} {'':>5}", _tally(by_op[op]), w))

    reasons = Counter(shorten(r["reason"]) for r in recs if r["outcome"] == "inconclusive")
    if reasons:
        print("\n== top inconclusive reasons")
        for reason, n in reasons.most_common(8):
            print(f"   {n:>4}  {reason}")
    bad = [r for r in recs if r["outcome"] == "bad"]
    if bad:
        print("\n== bad (exit 3: keq refused the mutant as input)")
        for reason, n in Counter(shorten(r["reason"]) for r in bad).most_common(8):
            print(f"   {n:>4}  {reason}")
    internal = [r for r in recs if r["outcome"] == "internal"]
    if internal:
        print("\n== INTERNAL ERRORS (keq bugs)")
        for r in internal:
            print(f"   {r['id']}  {r['mutated']}\n      {shorten(r['reason'], 150)}")
    wrong = [r for r in recs if _fuzz_state(r) == "refuted"]
    print(f"\n== WRONG EQUIVALENTS (keq proved, fuzz refuted): {len(wrong)}")
    for r in wrong:
        print(f"   {r['id']}  {r['mutated']}")
        for f in r["fuzz"]:
            if f["status"] == "refuted":
                print(f"      [{f['policy']}]")
                for ln in f["head"]:
                    print(f"        {ln}")
    incomplete = [r for r in recs if _fuzz_state(r) in ("incomplete", "baseline")]
    if incomplete:
        print(f"\n== equivalents not fuzz-checked in full (a run that did not finish, or "
              f"refuted-baseline: the unmutated pair is refuted by the same run): "
              f"{len(incomplete)}")
        for r in incomplete:
            print(f"   {r['id']}  " + ", ".join(f"{f['policy']}: {f['status']}"
                                               for f in r["fuzz"]))
    if missing:
        print(f"\nfill/schedule policies unavailable: {', '.join(missing)}")
    score = total["killed"] / max(1, total["run"] - total["bad"])
    print(f"\nkilled {total['killed']}/{total['run']} ({100 * score:.0f}% of those keq "
          f"accepted as input), elapsed {elapsed:.0f} s, {_machine()}")
    if args.json:
        out = {"machine": _machine(), "elapsed_s": round(elapsed, 1),
               "options": {k: v for k, v in vars(args).items() if k != "json"},
               "fuzz_policies": [" ".join(p) or "default" for p in policies],
               "policies_unavailable": missing,
               "pairs": {p: {k: v for k, v in i.items()
                             if k not in ("ptx_text", "spec_text", "chosen", "mutants")}
                         | {"tally": _tally(by_pair[p])} for p, i in pairs.items()},
               "operators": {op: _tally(by_op[op]) for op in OPERATORS if by_op[op]},
               "total": total, "mutants": recs}
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 1 if wrong or internal else 0


if __name__ == "__main__":
    sys.exit(main())
