"""Kernel-pair specs: the TOML contract a user writes (DESIGN.md, "The pair spec").

This module is the user-facing contract for reading a spec. `load_spec(path)` reads the TOML,
checks every key against the format below, and returns frozen dataclasses; anything it does not
accept is a `LocatedError` rendered as ``file:line:col: error: message`` with the offending line
and a caret under the key or value (inside an expression string: under the bad token).

Format (paths are relative to the TOML file)::

    name = "family/pair"               # required, non-empty string
    description = "..."                # optional string
    mode = "bitexact"                  # required: bitexact | real
    expect = "equivalent"              # required: equivalent | not-equivalent | inconclusive
                                       #   | bad-spec (keq must refuse the claim: exit 3)
    assume = ["n % 4 == 0"]            # optional: predicates over integer scalar params
    allow = ["benign-write-races"]     # optional: named relaxations of the claim
    target_assumptions = ["f32-nan-canonical"]   # optional: named assumptions about the GPU

    [reference]                        # required, and [candidate] likewise
    ptx = "k.ptx"                      # required; must exist and parse
    sass = "k.sm_90.sass"              # optional; must exist (not read yet)
    kernel = "k"                       # required; an .entry of the PTX
    grid = ["ceil_div(n, 256)", 1, 1]  # required: 1 to 3 ints or integer expressions
    block = [256, 1, 1]                # required, likewise
    args = ["a", "b", "c", "n"]        # optional: the .entry params in order, by spec param name
    dynamic_shared = 16                # optional: dynamic (extern) shared memory bytes, default 0

    [[param]]                          # one per parameter, in .entry order unless `args`
    name = "a"                         # required identifier, unique
    buffer = "f32"                     # exactly one of buffer / scalar; element type
    length = "n"                       # buffer only, required: elements, integer expression
    access = "in"                      # buffer only, required: in | out | inout | scratch
    # scalar = "s32"; range = [lo, hi] (inclusive) | values = [...] (scalar only, optional)
    # a float scalar's range/values are finite numbers (ints or floats), each rounded to the
    # type (round to nearest even); a value is one bit pattern (-0.0 is not 0.0), a range
    # compares as floats (NaN is in none, -0.0 is in [0.0, 1.0]); float scalars may not
    # appear in expressions

`allow` and `target_assumptions` take the names of `model.CLAIM_NAMES` (each with the line the
claim prints); unknown names are refused. A kernel declared `.reqntid` / `.maxntid` must be
launched with that block shape / at most that many threads per block at every block shape the
spec allows (`_Loader.launch_bounds`).

Types: f16 bf16 f32 f64 s8 s16 s32 s64 u8 u16 u32 u64. In numpy a bf16 buffer is a uint16
array of bit patterns; every other type maps to the numpy dtype of the same name.

Expressions (grid, block, length, assume) are parsed by a small recursive-descent parser, never
`eval`: integer literals, integer scalar param names, ``+ - * // %``, unary minus,
parentheses, ``ceil_div(a, b)``, ``min(a, b, ...)``, ``max(a, b, ...)``; `assume` entries are
predicates: comparisons ``== != < <= > >=`` (chains like ``1 <= n <= 8`` allowed), combined
with ``and`` / ``or`` / ``not``. ``//`` and ``%`` are Python's floor division and modulo.

Without `args`, the spec's params map to the kernel's .entry params in order and their counts
must match; with `args`, the listed params do (params a side does not list are not passed to
it; each param must be used by at least one side). A buffer maps to a 64-bit .param (its
address); a scalar to a .param of the same width.

API: `load_spec(path) -> PairSpec`; `Side.launch(scalars) -> (grid, block)`;
`Side.kernel_args(values) -> list` (values by spec param name, in .entry order);
`ParamSpec.length_of(scalars)`; `PairSpec.check_assumptions(scalars) -> bool`;
`draw_scalars(spec, rng, fixed=None)` (uniform within range/values, rejection sampling under
`assume`); `make_inputs(spec, scalars, rng)` (random bit patterns for every buffer: the claim
covers every content of in/inout buffers and every initial content of out buffers).
"""

from __future__ import annotations

# The package's modules, by responsibility (each imports only those above it):
#   errors          SpecError, the located error every spec problem raises
#   expressions     parse_expr / Expr: the safe expression parser and evaluator
#   toml_locations  TomlPositions: TOML key paths -> line:col; located-error helpers
#   model           PairSpec, Side, ParamSpec; the format's value sets; type helpers
#   loading         load_spec / loads_spec: TOML -> checked PairSpec
#   inputs          draw_scalars, scalar_value, first_allowed, random_buffer, make_inputs
from verifier.spec.errors import SpecError
from verifier.spec.expressions import Expr, ExprError, Node, parse_expr
from verifier.spec.inputs import (DRAW_ATTEMPTS, draw_scalars, first_allowed, make_inputs,
                                  random_buffer, scalar_value)
from verifier.spec.loading import (BUFFER_KEYS, SCALAR_KEYS, SIDE_KEYS, TOP_KEYS, load_spec,
                                   loads_spec)
from verifier.spec.model import (ACCESS, CLAIM_NAMES, EXPECTS, FLOAT_FORMATS, MODES, TYPES,
                                 PairSpec, ParamSpec, Side, dtype_of, float_bits, float_value,
                                 int_bounds, is_float_type, type_bits)
from verifier.spec.toml_locations import Path_, TomlPositions

__all__ = ["PairSpec", "Side", "ParamSpec", "Expr", "SpecError", "load_spec", "loads_spec",
           "parse_expr", "draw_scalars", "make_inputs", "random_buffer", "scalar_value",
           "dtype_of", "MODES", "EXPECTS", "ACCESS", "TYPES"]
