"""Obligations and their canonical SMT-LIB2 text.

An obligation is a z3 Boolean term `phi` that must be UNSAT for the claim to hold (phi says
"the kernels differ"). Its SMT-LIB2 text is canonical: the logic is chosen from what the term
uses, declarations come sorted by name, and whitespace is normalized, so that the sha256 of the
text is a stable cache key and certificate hash (the obligation's name is not part of it).

Portable text and `fp.to_ieee_bv`
---------------------------------
z3 prints `fp.to_ieee_bv`, which is not SMT-LIB (the standard omits it because NaN has many
bit patterns); bitwuzla and cvc5 reject it. The portable text replaces each distinct
`fp.to_ieee_bv(t)` with a fresh bit-vector constant `keq!aux!ieee!k` and adds, for each FP
sort (e, s) that occurs under `fp.to_ieee_bv`, one fresh constant `keq!aux!nan!e!s` with

    (fp.isNaN ((_ to_fp e s) keq!aux!nan!e!s))                              ; a NaN pattern
    (ite (fp.isNaN t) (= keq!aux!ieee!k keq!aux!nan!e!s) (= ((_ to_fp e s) keq!aux!ieee!k) t))

This is z3's own meaning of `fp.to_ieee_bv` made explicit: for a non-NaN t, `to_fp` is a
bijection between the non-NaN bit patterns and the non-NaN values (`=` is identity, so +0 and
-0 differ), so the second disjunct pins keq!aux!ieee!k to the IEEE bits of t; for a NaN t, z3
answers one unspecified NaN pattern per sort, the same for every NaN (checked by
tests/unit/test_solvers.py against the installed z3). Hence the two formulas are
equisatisfiable, and a model of either restricted to the obligation's own constants is a model
of the other. The direction soundness needs holds unconditionally: from any model of phi, under
ANY choice of the bits of NaN, setting keq!aux!nan!e!s to that choice and keq!aux!ieee!k to the
value of `fp.to_ieee_bv(t)` satisfies the rewritten text, so "portable text UNSAT" implies
"phi UNSAT" whatever a solver takes `fp.to_ieee_bv(NaN)` to be. keq's canonicalizing `ite(isNaN ...)`
around results is not needed for this argument.

Every operator of the rewritten term is checked against a list of SMT-LIB standard operators;
anything else (integers, reals, arrays, quantifiers, z3-only operators) makes the obligation
"z3-only": its text is then z3's own dialect, and the portfolio runs only z3 on it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property

import z3

# The translation's own auxiliary constants (`keq!aux!ieee!k`, `keq!aux!nan!e!s`) and only
# they carry this prefix: it is refused in an obligation's own constants, and solvers' models
# leave these out. keq's other constants (`keq!indexed!A!4`, `keq!u!...` for values the
# hardware leaves unspecified) are ordinary constants of the obligation, in every model. No
# user name can collide with either: spec param names are identifiers
# ([A-Za-z_][A-Za-z_0-9]*, checked by the spec loader), which never contain `!`.
AUX_PREFIX = "keq!aux!"

_PORTABLE_KINDS = {getattr(z3, n) for n in """
Z3_OP_TRUE Z3_OP_FALSE Z3_OP_EQ Z3_OP_DISTINCT Z3_OP_ITE Z3_OP_AND Z3_OP_OR Z3_OP_XOR Z3_OP_NOT
Z3_OP_IMPLIES Z3_OP_UNINTERPRETED
Z3_OP_BNUM Z3_OP_BIT1 Z3_OP_BIT0 Z3_OP_BNEG Z3_OP_BADD Z3_OP_BSUB Z3_OP_BMUL Z3_OP_BSDIV
Z3_OP_BUDIV Z3_OP_BSREM Z3_OP_BUREM Z3_OP_BSMOD Z3_OP_ULEQ Z3_OP_SLEQ Z3_OP_UGEQ Z3_OP_SGEQ
Z3_OP_ULT Z3_OP_SLT Z3_OP_UGT Z3_OP_SGT Z3_OP_BAND Z3_OP_BOR Z3_OP_BNOT Z3_OP_BXOR Z3_OP_BNAND
Z3_OP_BNOR Z3_OP_BXNOR Z3_OP_CONCAT Z3_OP_SIGN_EXT Z3_OP_ZERO_EXT Z3_OP_EXTRACT Z3_OP_REPEAT
Z3_OP_BCOMP Z3_OP_BSHL Z3_OP_BLSHR Z3_OP_BASHR Z3_OP_ROTATE_LEFT Z3_OP_ROTATE_RIGHT
Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN Z3_OP_FPA_RM_NEAREST_TIES_TO_AWAY Z3_OP_FPA_RM_TOWARD_POSITIVE
Z3_OP_FPA_RM_TOWARD_NEGATIVE Z3_OP_FPA_RM_TOWARD_ZERO Z3_OP_FPA_NUM Z3_OP_FPA_PLUS_INF
Z3_OP_FPA_MINUS_INF Z3_OP_FPA_NAN Z3_OP_FPA_PLUS_ZERO Z3_OP_FPA_MINUS_ZERO Z3_OP_FPA_ADD
Z3_OP_FPA_SUB Z3_OP_FPA_NEG Z3_OP_FPA_MUL Z3_OP_FPA_DIV Z3_OP_FPA_REM Z3_OP_FPA_ABS
Z3_OP_FPA_MIN Z3_OP_FPA_MAX Z3_OP_FPA_FMA Z3_OP_FPA_SQRT Z3_OP_FPA_ROUND_TO_INTEGRAL
Z3_OP_FPA_EQ Z3_OP_FPA_LT Z3_OP_FPA_GT Z3_OP_FPA_LE Z3_OP_FPA_GE Z3_OP_FPA_IS_NAN
Z3_OP_FPA_IS_INF Z3_OP_FPA_IS_ZERO Z3_OP_FPA_IS_NORMAL Z3_OP_FPA_IS_SUBNORMAL
Z3_OP_FPA_IS_NEGATIVE Z3_OP_FPA_IS_POSITIVE Z3_OP_FPA_FP Z3_OP_FPA_TO_FP
Z3_OP_FPA_TO_FP_UNSIGNED Z3_OP_FPA_TO_UBV Z3_OP_FPA_TO_SBV
""".split()}
_PORTABLE_SORTS = {z3.Z3_BOOL_SORT, z3.Z3_BV_SORT, z3.Z3_FLOATING_POINT_SORT,
                   z3.Z3_ROUNDING_MODE_SORT}

_TOKEN = re.compile(r'\|[^|]*\||"(?:[^"]|"")*"|[()]|[^\s()|";]+')


def canonical_whitespace(text: str) -> str:
    """One space between tokens, none inside parentheses; quoted symbols kept verbatim."""
    out: list[str] = []
    prev = "("
    for tok in _TOKEN.findall(text):
        if not (prev == "(" or tok == ")"):
            out.append(" ")
        out.append(tok)
        prev = tok
    return "".join(out)


def postorder(roots):
    """Every node of the DAG below `roots` once, children before parents."""
    seen: set[int] = set()
    order = []
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        node, expanded = stack.pop()
        nid = node.get_id()
        if expanded:
            order.append(node)
            continue
        if nid in seen:
            continue
        seen.add(nid)
        stack.append((node, True))
        if z3.is_app(node):
            for i in reversed(range(node.num_args())):
                stack.append((node.arg(i), False))
        elif z3.is_quantifier(node):
            stack.append((node.body(), False))
    return order


def _update(node, args):
    n = len(args)
    arr = (z3.Ast * n)()
    for i, a in enumerate(args):
        arr[i] = a.as_ast()
    return z3.z3._to_expr_ref(z3.Z3_update_term(node.ctx_ref(), node.as_ast(), n, arr), node.ctx)


@dataclass(frozen=True)
class Decl:
    """One uninterpreted constant or function of an obligation."""

    name: str
    domain: tuple[str, ...]        # argument sorts as SMT-LIB text; () for a constant
    range: str                     # result sort as SMT-LIB text
    width: int | None              # bit width of a bit-vector constant, else None

    def smtlib(self) -> str:
        return f"(declare-fun {smt_symbol(self.name)} ({' '.join(self.domain)}) {self.range})"


_SIMPLE = re.compile(r"^[A-Za-z~!@$%^&*_\-+=<>.?/][A-Za-z0-9~!@$%^&*_\-+=<>.?/]*$")


def smt_symbol(name: str) -> str:
    if _SIMPLE.match(name):
        return name
    if "|" in name or "\\" in name:
        raise ValueError(f"symbol {name!r} cannot be written in SMT-LIB2")
    return f"|{name}|"


def _decls(nodes) -> dict[str, Decl]:
    out: dict[str, Decl] = {}
    for node in nodes:
        if not (z3.is_app(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED):
            continue
        f = node.decl()
        d = Decl(f.name(), tuple(f.domain(i).sexpr() for i in range(f.arity())),
                 f.range().sexpr(),
                 f.range().size() if f.arity() == 0 and z3.is_bv_sort(f.range()) else None)
        old = out.get(d.name)
        if old is not None and old != d:
            raise ValueError(f"two declarations named {d.name!r}: {old} and {d}")
        out[d.name] = d
    return out


@dataclass(frozen=True)
class Translation:
    text: str                       # canonical SMT-LIB2 text (portable unless z3-only)
    portable: bool                  # False: z3-only (text is z3's dialect)
    reason: str                     # why z3-only; "" when portable
    logic: str
    decls: tuple[Decl, ...]         # the obligation's own declarations (no AUX_PREFIX ones)
    fp_sorts: tuple[tuple[int, int], ...] = ()   # (ebits, sbits) of every FP sort used


def _logic(nodes, portable: bool) -> str:
    if not portable:
        return "ALL"
    bv = fp = uf = False
    for node in nodes:
        k = node.sort().kind()
        bv |= k == z3.Z3_BV_SORT
        fp |= k in (z3.Z3_FLOATING_POINT_SORT, z3.Z3_ROUNDING_MODE_SORT)
        if z3.is_app(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            uf |= node.decl().arity() > 0
    if fp:
        return ("QF_UF" if uf else "QF_") + ("BVFP" if bv else "FP")
    return "QF_UFBV" if uf else "QF_BV"


_TOTAL_DIVISION = {z3.Z3_OP_BUDIV_I: z3.UDiv, z3.Z3_OP_BUREM_I: z3.URem,
                   z3.Z3_OP_BSDIV_I: lambda a, b: a / b, z3.Z3_OP_BSREM_I: z3.SRem,
                   z3.Z3_OP_BSMOD_I: lambda a, b: a % b}


def _nonzero_numeral(t) -> bool:
    return z3.is_bv_value(t) and t.as_long() != 0


def _not_portable(nodes) -> str:
    for node in nodes:
        if z3.is_quantifier(node) or z3.is_var(node):
            return "quantifier"
        if node.sort().kind() not in _PORTABLE_SORTS:
            return f"sort {node.sort().sexpr()}"
        if node.decl().kind() not in _PORTABLE_KINDS:
            return f"operator {node.decl().name()}"
    return ""


def _text(logic: str, decls, assertion) -> str:
    lines = [f"(set-logic {logic})"]
    lines += [d.smtlib() for d in sorted(decls, key=lambda d: d.name)]
    lines.append("(assert " + canonical_whitespace(assertion.sexpr()) + ")")
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


def translate(phi: z3.BoolRef) -> Translation:
    """The canonical SMT-LIB2 text of `phi` (see the module docstring)."""
    if not z3.is_bool(phi):
        raise TypeError(f"an obligation is a z3 Boolean term, got {type(phi).__name__}")
    nodes = postorder([phi])
    decls = _decls(nodes)
    for name in decls:
        if name.startswith(AUX_PREFIX):
            raise ValueError(f"the prefix {AUX_PREFIX!r} is reserved: {name!r}")
    own = tuple(sorted(decls.values(), key=lambda d: d.name))

    # Rewrite fp.to_ieee_bv bottom-up (see the module docstring).
    new: dict[int, z3.ExprRef] = {}
    ieee: dict[int, z3.BitVecRef] = {}       # rewritten t -> its keq!aux!ieee!k
    nan: dict[tuple[int, int], z3.BitVecRef] = {}
    side: list[z3.BoolRef] = []
    for node in nodes:
        if not z3.is_app(node) or node.num_args() == 0:
            new[node.get_id()] = node
            continue
        args = [new[node.arg(i).get_id()] for i in range(node.num_args())]
        if len(args) == 1 and node.decl().kind() in (z3.Z3_OP_AND, z3.Z3_OP_OR):
            # z3 keeps a one-argument (and x) / (or x); SMT-LIB requires two or more
            # arguments and bitwuzla rejects it: it is x.
            new[node.get_id()] = args[0]
        elif node.decl().kind() == z3.Z3_OP_FPA_TO_IEEE_BV:
            t = args[0]
            b = ieee.get(t.get_id())
            if b is None:
                e, s = t.sort().ebits(), t.sort().sbits()
                nb = nan.get((e, s))
                if nb is None:
                    nb = nan[(e, s)] = z3.BitVec(f"{AUX_PREFIX}nan!{e}!{s}", e + s)
                    side.append(z3.fpIsNaN(z3.fpBVToFP(nb, t.sort())))
                b = ieee[t.get_id()] = z3.BitVec(f"{AUX_PREFIX}ieee!{len(ieee)}", e + s)
                side.append(z3.If(z3.fpIsNaN(t), b == nb, z3.fpBVToFP(b, t.sort()) == t))
            new[node.get_id()] = b
        elif node.decl().kind() in _TOTAL_DIVISION and _nonzero_numeral(args[1]):
            # z3's simplifier turns a division by a non-zero constant into its internal
            # bvudiv_i (and the like), which no other solver reads: with that divisor it is
            # the SMT-LIB operation itself.
            new[node.get_id()] = _TOTAL_DIVISION[node.decl().kind()](args[0], args[1])
        elif all(a.eq(node.arg(i)) for i, a in enumerate(args)):
            new[node.get_id()] = node
        else:
            new[node.get_id()] = _update(node, args)
    rewritten = new[phi.get_id()]
    assertion = z3.And(rewritten, *side) if side else rewritten
    rnodes = postorder([assertion])
    fp_sorts = tuple(sorted({(n.sort().ebits(), n.sort().sbits()) for n in rnodes
                             if n.sort().kind() == z3.Z3_FLOATING_POINT_SORT}))
    reason = _not_portable(rnodes)
    if reason:
        return Translation(_text("ALL", own, phi), False, reason, "ALL", own, fp_sorts)
    logic = _logic(rnodes, True)
    return Translation(_text(logic, _decls(rnodes).values(), assertion), True, "", logic, own,
                       fp_sorts)


def to_smtlib2(phi: z3.BoolRef) -> str:
    """Deterministic SMT-LIB2 text of `phi` (portable when possible; see `translate`)."""
    return translate(phi).text


class Obligation:
    """A named claim: `phi` must be UNSAT for the claim to hold."""

    def __init__(self, phi: z3.BoolRef, name: str = "obligation") -> None:
        if not z3.is_bool(phi):
            raise TypeError(f"an obligation is a z3 Boolean term, got {type(phi).__name__}")
        self.phi = phi
        self.name = name

    @cached_property
    def translation(self) -> Translation:
        return translate(self.phi)

    @property
    def text(self) -> str:
        return self.translation.text

    @property
    def portable(self) -> bool:
        return self.translation.portable

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def decls(self) -> tuple[Decl, ...]:
        return self.translation.decls

    @cached_property
    def z3_text(self) -> str:
        """z3's own dialect (keeps fp.to_ieee_bv), for running z3 from text."""
        return _text("ALL", self.decls, self.phi)

    def __repr__(self) -> str:
        kind = "portable" if self.portable else f"z3-only ({self.translation.reason})"
        return f"Obligation({self.name!r}, {self.sha256[:12]}, {kind})"
