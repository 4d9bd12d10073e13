"""What kernels print with `printf`, as an output of the claim.

CUDA orders no printf output across threads, and each call's text comes out whole
(CUDA C++ Programming Guide, "Formatted Output"). So the claim compares, for every thread
(matched by global linear id: CTA-major, x fastest, as the emulator numbers them), the
sequence of calls it makes: the same number, and call by call the same text. Unless the
spec says `allow = ["printf-ignored"]`, which drops printf from the claim.

Symbolically a call is a format and the bits of the arguments it reads
(`semantics.machine.system_calls.Printed`), made under the lane's mask. For one thread with
calls r_1..r_n (guards g_i) in the reference and c_1..c_m (guards h_j) in the candidate, the
streams are equal when the counts of calls made are, and every r_i and c_j made at the same
position print the same: the same format, and the same bits where it reads them (a double's
NaN payload aside, which no conversion prints). Each of these is an `ElementPair` the
outputs stage decides like any output element (testing first, then the solvers, every model
replayed). Equal bits print equal text; unequal bits of a `%f` may print the same (1e-9 and
2e-9 both print 0.000000): a model that differs only there does not replay, and the verdict
is Inconclusive, named (`verifier.counterexample`).

Concretely (`differences`) the emulator renders each call's text (`printf_format.render`)
and compares the threads' sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import z3

from semantics.machine.printf_format import Conversion, PrintFormat
from verifier.verdict import PRINTED, Difference

ASSUMPTION = ("printf output compared per thread (matched by global linear id), call by call, "
              "as C's printf formats it; the printf buffer holds all of it")
MAX_PAIRS = 4096          # position pairs per claim before the comparison is left to testing


@dataclass(frozen=True)
class PrintedOutput:
    """What an `ElementPair` of printed output names: one thread's stream (the param's
    place in the outputs stage)."""

    name: str
    type: str
    is_float: bool = False
    is_buffer: bool = False
    access: str = "out"


def compared(spec) -> bool:
    return "printf-ignored" not in spec.allow


def differences(ref: dict, cand: dict) -> list[Difference]:
    """The threads (at most 16) whose printed calls differ between two emulator runs; the
    difference's values are how many calls each made."""
    a, b = ref.get(PRINTED, {}), cand.get(PRINTED, {})
    out = []
    for t in sorted(set(a) | set(b)):
        ra, rb = a.get(t, ()), b.get(t, ())
        if ra != rb:
            out.append(Difference(PRINTED, t, len(ra), len(rb)))
            if len(out) == 16:
                break
    return out


def first_difference(ref_lines: tuple, cand_lines: tuple) -> str:
    """The first call at which two threads' printed sequences part, for reports."""
    for k, (x, y) in enumerate(zip(ref_lines, cand_lines)):
        if x != y:
            return f"call {k + 1}: reference printed {x!r}, candidate {y!r}"
    k = min(len(ref_lines), len(cand_lines))
    extra = ref_lines[k:] or cand_lines[k:]
    who = "reference" if len(ref_lines) > len(cand_lines) else "candidate"
    return (f"the {who} makes {len(extra)} more call(s), the first printing {extra[0]!r} "
            f"({len(ref_lines)} against {len(cand_lines)})")


# -- the symbolic comparison -----------------------------------------------------------------
def _records(prints: Iterable) -> dict[int, list[tuple[Any, PrintFormat, list]]]:
    """Per global thread id: (guard, format, argument values) of each call it may make."""
    out: dict[int, list] = {}
    for p in prints:
        for lane, g in enumerate(p.mask):
            if isinstance(g, bool) or hasattr(g, "dtype"):
                if not bool(g):
                    continue
                g = True
            out.setdefault(int(p.gtid[lane]), []).append(
                (g, p.format, [v[lane] for v in p.args]))
    return out


def _term(v, bits: int):
    v = int(v) if not z3.is_expr(v) else v
    return z3.BitVecVal(v, bits) if isinstance(v, int) else v


def _bits_read(c: Conversion, v, bits: int):
    """The bits of one argument that its text depends on: the low bits an integer
    conversion prints, or a double with every NaN of one sign made one."""
    if not c.is_float:
        keep = c.bits
        if isinstance(v, int) or not z3.is_expr(v):
            return int(v) & ((1 << keep) - 1), keep
        return (z3.Extract(keep - 1, 0, v) if keep < bits else v), keep
    if not z3.is_expr(v):
        v = int(v)
        nan = (v >> 52) & 0x7FF == 0x7FF and v & ((1 << 52) - 1)
        return ((v & (1 << 63)) | 0x7FF8000000000000 if nan else v), 64
    nan = z3.And(z3.Extract(62, 52, v) == 0x7FF, z3.Extract(51, 0, v) != 0)
    return z3.If(nan, (v & (1 << 63)) | 0x7FF8000000000000, v), 64


def _payload(fmt: PrintFormat, args: list):
    """The bits of a call's arguments its text depends on, as one value (int or term) and
    its width."""
    parts = []
    values = iter(zip(args, fmt.reads()))
    for c in fmt.conversions:
        for _ in c.stars:                   # a `*` width or precision: an int, all of it
            v, _ = next(values)
            parts.append((v if z3.is_expr(v) else int(v), 32))
        v, (_, n) = next(values)
        parts.append(_bits_read(c, v, n * 8))
    if not parts:
        return 0, 1
    width = sum(w for _, w in parts)
    if all(not z3.is_expr(p) for p, _ in parts):
        acc = 0
        for p, w in parts:
            acc = (acc << w) | (int(p) & ((1 << w) - 1))
        return acc, width
    terms = [_term(p, w) for p, w in parts]
    return (terms[0] if len(terms) == 1 else z3.Concat(*terms)), width


def _count(recs: list):
    """How many of `recs` run, and the position (calls before it) of each."""
    n, positions = 0, []
    for g, _, _ in recs:
        positions.append(n)
        n = n + (1 if g is True else z3.If(g, z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)))
    return n, positions


def _and(*conds):
    conds = [c for c in conds if c is not True]
    if any(c is False for c in conds):
        return False
    return True if not conds else (conds[0] if len(conds) == 1 else z3.And(*conds))


def _same_position(p, q):
    if isinstance(p, int) and isinstance(q, int):
        return p == q
    return _term(p, 32) == _term(q, 32)


def element_pairs(ref_prints, cand_prints, element_pair) -> list:
    """`element_pair(param, index, ref, cand, live)` for every comparison the two printed
    streams need (module doc); None when there are too many to build."""
    ref, cand = _records(ref_prints), _records(cand_prints)
    out = []
    for t in sorted(set(ref) | set(cand)):
        rs, cs = ref.get(t, []), cand.get(t, [])
        nr, pr = _count(rs)
        nc, pc = _count(cs)
        out.append(element_pair(PrintedOutput(f"printf calls of thread {t}", "u32"), 0, nr, nc,
                                True))
        for i, (g, fmt, args) in enumerate(rs):
            for j, (h, fmt2, args2) in enumerate(cs):
                live = _and(g, h, _same_position(pr[i], pc[j]))
                if live is False:
                    continue
                if len(out) > MAX_PAIRS:
                    return None
                name = f"printf call of thread {t}"
                if fmt.text != fmt2.text:
                    out.append(element_pair(PrintedOutput(name, "u1"), i + 1, 0, 1, live))
                    continue
                a, w = _payload(fmt, args)
                b, _ = _payload(fmt2, args2)
                out.append(element_pair(PrintedOutput(name, f"u{w}"), i + 1, a, b, live))
    return out


__all__ = ["ASSUMPTION", "PRINTED", "PrintedOutput", "compared", "differences",
           "element_pairs", "first_difference"]
