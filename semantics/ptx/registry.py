"""The PTX instruction registry: which opcodes exist and which modifiers each one takes.

Two levels of strictness:
- opcodes in `STRICT` list every modifier they accept and how many type modifiers; anything
  else is a located syntax error. These are the opcodes of tiers 1 and 2 of PTX-COVERAGE.md
  (the ones that have, or will have, semantics).
- opcodes in `PERMISSIVE` (tensor cores, async copies, textures, surfaces, ...) accept any
  well-formed modifier list; they are parsed into typed forms and kept, and any later stage
  refuses them by name as unsupported.
An opcode in neither table is not PTX: a located error.
"""

from __future__ import annotations

from dataclasses import dataclass

from semantics.ir.types import TYPES

ROUNDING = frozenset("rn rz rm rp rna rs rni rzi rmi rpi".split())
COMPARISONS = frozenset("eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan".split())
BOOLOPS = frozenset("and or xor".split())
SPACES = frozenset("global shared local const param generic".split())
VECTORS = {"v2": 2, "v4": 4, "v8": 8, "v16": 16}

# Opcodes whose `.global/.shared/...` modifier names the state space they access.
SPACE_OPCODES = frozenset("ld ldu st atom red cvta isspacep prefetch prefetchu".split())
# Opcodes whose and/or/xor modifier is a predicate combiner (elsewhere it is an operation).
BOOLOP_OPCODES = frozenset("setp set".split())

_ORDER = "relaxed acquire release acq_rel sc weak mmio volatile"
_SCOPE = "cta cluster gpu sys"
_CACHE_LD = ("ca cg cs lu cv nc L1::evict_normal L1::evict_unchanged L1::evict_first "
             "L1::evict_last L1::no_allocate L2::evict_normal L2::evict_first L2::evict_last "
             "L2::64B L2::128B L2::256B L2::cache_hint unified")
_CACHE_ST = ("wb cg cs wt L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last "
             "L1::no_allocate L2::evict_normal L2::evict_first L2::evict_last L2::cache_hint")
_ATOM_OPS = "add min max exch cas and or xor inc dec noftz"
_SPACE_MODS = "global shared shared::cta shared::cluster local const param generic"


@dataclass(frozen=True, slots=True)
class OpcodeSpec:
    """Modifiers an opcode accepts (other than types) and its type-modifier count range."""

    allowed: frozenset[str] | None      # None: permissive
    min_types: int = 0
    max_types: int = 1


def _s(mods: str, min_types: int = 1, max_types: int | None = None) -> OpcodeSpec:
    return OpcodeSpec(frozenset(mods.split()), min_types,
                      min_types if max_types is None else max_types)


_ARITH_ROUND = "rn rz rm rp ftz sat"

STRICT: dict[str, OpcodeSpec] = {
    # integer and float arithmetic
    "add": _s(f"{_ARITH_ROUND} cc"), "sub": _s(f"{_ARITH_ROUND} cc"),
    "addc": _s("cc"), "subc": _s("cc"),
    "mul": _s(f"lo hi wide {_ARITH_ROUND}"),
    "mad": _s(f"lo hi wide cc {_ARITH_ROUND}"), "madc": _s("lo hi cc"),
    "mul24": _s("lo hi"), "mad24": _s("lo hi sat"), "sad": _s(""),
    "div": _s("approx full rn rz rm rp ftz"), "rem": _s(""),
    "abs": _s("ftz"), "neg": _s("ftz"),
    "min": _s("ftz NaN xorsign abs relu"), "max": _s("ftz NaN xorsign abs relu"),
    "fma": _s("rn rz rm rp ftz sat relu oob"),
    "copysign": _s(""),
    "testp": _s("finite infinite number notanumber normal subnormal"),
    "rcp": _s("approx rn rz rm rp ftz"), "sqrt": _s("approx rn rz rm rp ftz"),
    "rsqrt": _s("approx ftz"), "sin": _s("approx ftz"), "cos": _s("approx ftz"),
    "lg2": _s("approx ftz"), "ex2": _s("approx ftz"), "tanh": _s("approx"),
    # bits
    "and": _s(""), "or": _s(""), "xor": _s(""), "not": _s(""), "cnot": _s(""),
    "shl": _s(""), "shr": _s(""), "shf": _s("l r clamp wrap"),
    "popc": _s(""), "clz": _s(""), "brev": _s(""), "bfind": _s("shiftamt"),
    "bfe": _s(""), "bfi": _s(""), "fns": _s(""), "bmsk": _s("clamp wrap"),
    "szext": _s("clamp wrap"), "prmt": _s("f4e b4e rc8 ecl ecr rc16"),
    "lop3": _s("and or"), "dp4a": _s("", 2), "dp2a": _s("lo hi", 2),
    # comparison and selection
    "setp": _s(" ".join(COMPARISONS | BOOLOPS) + " ftz", 1, 2),
    "set": _s(" ".join(COMPARISONS | BOOLOPS) + " ftz", 2),
    "selp": _s(""), "slct": _s("ftz", 2),
    # data movement and conversion
    "mov": _s("v2 v4"),
    "cvt": _s("rn rz rm rp rna rs rni rzi rmi rpi ftz sat relu satfinite", 2),
    "cvta": _s(f"to {_SPACE_MODS}", 1),
    "ld": _s(f"{_SPACE_MODS} v2 v4 v8 {_ORDER} {_SCOPE} {_CACHE_LD}"),
    "ldu": _s(f"global v2 v4"),
    "st": _s(f"{_SPACE_MODS} v2 v4 v8 {_ORDER} {_SCOPE} {_CACHE_ST}"),
    "atom": _s(f"{_SPACE_MODS} {_ATOM_OPS} {_ORDER} {_SCOPE} v2 v4 v8 L2::cache_hint"),
    "red": _s(f"{_SPACE_MODS} {_ATOM_OPS} {_ORDER} {_SCOPE} v2 v4 v8 L2::cache_hint"),
    "isspacep": _s(_SPACE_MODS, 0), "prefetch": _s(f"{_SPACE_MODS} L1 L2 L2::evict_last "
                                                    "L2::evict_normal tensormap", 0),
    # control flow
    "bra": _s("uni", 0), "brx": _s("idx uni", 0), "call": _s("uni", 0), "ret": _s("uni", 0),
    "exit": _s("", 0), "trap": _s("", 0), "brkpt": _s("", 0), "nanosleep": _s(""),
    # warp and block
    "bar": _s("sync arrive red warp cta aligned popc and or", 0, 1),
    "barrier": _s("sync arrive red aligned cta popc and or", 0, 1),
    "membar": _s("cta gl sys proxy", 0),
    "shfl": _s("sync up down bfly idx"),
    "vote": _s("sync all any uni ballot"),
    "activemask": _s(""), "match": _s("sync any all"),
    "redux": _s("sync add min max and or xor abs NaN"),
    "elect": _s("sync", 0),
    "griddepcontrol": _s("launch_dependents wait", 0),
    "pmevent": _s("mask", 0),
}

PERMISSIVE: frozenset[str] = frozenset("""
    tex tld4 txq suld sust sured suq istypep mma wmma wgmma ldmatrix stmatrix movmatrix cp
    mbarrier tensormap multimem applypriority discard createpolicy setmaxnreg fence
    alloca stacksave stackrestore mapa getctarank clusterlaunchcontrol tcgen05 cvt.pack
    vabsdiff vadd vsub vmad vmax vmin vset vshl vshr vabsdiff2 vadd2 vsub2 vavrg2 vmax2 vmin2
    vset2 vabsdiff4 vadd4 vsub4 vavrg4 vmax4 vmin4 vset4 prefetchu ld.async st.async red.async
    cp.async ldu
""".split())


def spec_for(opcode: str) -> OpcodeSpec | None:
    spec = STRICT.get(opcode)
    if spec is not None:
        return spec
    if opcode in PERMISSIVE:
        return OpcodeSpec(None, 0, 8)
    return None


def is_type(mod: str) -> bool:
    return mod in TYPES
