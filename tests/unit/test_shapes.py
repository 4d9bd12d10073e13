"""Symbolic launch shapes (verifier/coverage/symbolic_launch.py) and the pieces they stand on: spec expressions
as z3 terms, the maximal-launch plan, the float abstraction, canonical commutative operands,
and the symbolic race log, on small kernels written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import z3

from semantics.domains.symbolic import SymbolicDomain
from verifier.abstraction import FloatAbstraction
from verifier.equiv import EQUIVALENT, INCONCLUSIVE, NOT_EQUIVALENT, verify
from verifier.shape_plan import ShapeFallback, plan
from verifier.spec import load_spec
from verifier.spec.expressions import parse_expr

from replaying import assert_replays

K = Path(__file__).resolve().parents[2] / "kernels"


@pytest.mark.parametrize("text", ["ceil_div(n, 256)", "n * 4 + 3", "n % 4 == 0", "min(n, 7)",
                                  "max(n, 3) - 1", "n // 3", "-n // 4", "n % 5",
                                  "n > 2 and not n == 7"])
def test_expression_to_z3_agrees_with_eval(text):
    e = parse_expr(text, predicate=any(op in text for op in ("==", ">", "<")))
    n = z3.BitVec("n", 64)
    term = e.to_z3({"n": n})
    for v in (-9, -1, 0, 1, 3, 5, 255, 256, 257, 1001):
        got = z3.simplify(z3.substitute(term, (n, z3.BitVecVal(v, 64))))
        got = z3.is_true(got) if z3.is_bool(got) else got.as_signed_long()
        assert got == e.eval({"n": v}), (text, v)


def test_expression_to_z3_folds_concrete_values():
    assert parse_expr("ceil_div(n, 256)").to_z3({"n": 1000}) == 4


def test_plan_is_the_maximal_launch_of_every_allowed_shape():
    sp = plan(load_spec(K / "vector_add/vec4.toml"), {})
    assert sp.names == ("n",) and sp.count == 2048
    assert sp.grids == {"reference": (8, 1, 1), "candidate": (2, 1, 1)}
    assert sp.lengths == {"a": 2048, "b": 2048, "c": 2048}


def test_plan_with_a_pinned_scalar_has_nothing_symbolic():
    with pytest.raises(ShapeFallback, match="no scalar shapes the launch"):
        plan(load_spec(K / "vector_add/vec4.toml"), {"n": 5})


@pytest.mark.parametrize("text", ["ceil_div(n, 256)", "n * m + 3", "n % 4 == 0", "min(n, 7, m)",
                                  "max(n, 3) - m", "n // 3", "-n // 4", "n % 5", "3 < n <= m",
                                  "n > 2 and not n == 7 or m == 1"])
def test_expression_at_many_points_agrees_with_eval(text):
    import numpy as np
    e = parse_expr(text, predicate=any(op in text for op in ("==", ">", "<")))
    points = [(n, m) for n in (-9, -1, 0, 1, 3, 5, 255, 256, 257, 2**40) for m in (1, 7, 300)]
    got = e.eval_many({"n": np.array([n for n, _ in points], dtype=object),
                       "m": np.array([m for _, m in points], dtype=object)})
    assert [bool(g) if e.is_predicate else g for g in got] == \
        [e.eval({"n": n, "m": m}) for n, m in points]


def test_expression_at_many_points_refuses_a_zero_divisor_anywhere():
    import numpy as np
    with pytest.raises(ZeroDivisionError):
        parse_expr("ceil_div(8, n)").eval_many({"n": np.array([4, 0, 2], dtype=object)})


def _grid_spec(tmp_path, grid: str, length: str, assume: str = "", block: str = "32") -> Path:
    ptx = HEAD.replace("{", "{{").replace("}", "}}") + STORE
    ptx = ptx.replace(".param .u32 p_n)", ".param .u32 p_n, .param .u32 p_m)")
    (tmp_path / "k.ptx").write_text(ptx.format(value="%r5"))
    f = tmp_path / "grid.toml"
    f.write_text(f"""
name = "t/grid"
mode = "bitexact"
expect = "equivalent"
assume = [{assume}]
[reference]
ptx = "k.ptx"
kernel = "k"
grid = [{grid}, 1, 1]
block = [{block}, 1, 1]
[candidate]
ptx = "k.ptx"
kernel = "k"
grid = ["ceil_div(n, 32)", 1, 1]
block = [32, 1, 1]
[[param]]
name = "out"
buffer = "u32"
length = "{length}"
access = "out"
[[param]]
name = "n"
scalar = "s32"
range = [0, 40]
[[param]]
name = "m"
scalar = "s32"
values = [3, 1, 8]
""")
    return f


@pytest.mark.parametrize("grid, length, assume, block", [
    ('"ceil_div(n, 32)"', "n * m", '"n >= 1"', "32"),
    ('"max(ceil_div(n, 16), m)"', "min(n, 4 * m)", '"n % m == 0", "n > 0"', "32"),
    ('"ceil_div(n, 32)"', "n", "", "32"),                       # grid 0 at n=0: an error
    ('"1"', "n - 5", '"n > 0"', "32"),                          # a negative length: an error
    ('"ceil_div(n, 32)"', "n", '"n > 0", "8 // (n - 3) > 0"', "32"),   # 8 // 0 at n=3
    ('"ceil_div(n, 32)"', "n", '"n > 0"', '"m * 32"'),          # the block depends on m
    ('"ceil_div(n, 32)"', "n", '"n > 40"', "32"),               # no shape is allowed
])
def test_the_plan_at_all_shapes_at_once_is_the_plan_shape_by_shape(tmp_path, monkeypatch, grid,
                                                                   length, assume, block):
    import verifier.shape_plan as shape_plan
    spec = load_spec(_grid_spec(tmp_path, grid, length, assume, block))

    def outcome():
        try:
            return plan(spec, {})
        except Exception as e:              # the same error, with the same message
            return type(e), str(e)

    at_once = outcome()
    monkeypatch.setattr(shape_plan, "_plan_at_once", lambda *a: None)   # the loop alone
    assert at_once == outcome()


def _spec(tmp_path, ref_ptx: str, cand_ptx: str, block: str = "[32, 1, 1]",
          n_range=(1, 64), extra: str = "") -> Path:
    (tmp_path / "ref.ptx").write_text(ref_ptx)
    (tmp_path / "cand.ptx").write_text(cand_ptx)
    f = tmp_path / "pair.toml"
    f.write_text(f"""
name = "t/pair"
mode = "bitexact"
expect = "equivalent"
{extra}
[reference]
ptx = "ref.ptx"
kernel = "k"
grid = ["ceil_div(n, 32)", 1, 1]
block = {block}

[candidate]
ptx = "cand.ptx"
kernel = "k"
grid = ["ceil_div(n, 32)", 1, 1]
block = {block}

[[param]]
name = "out"
buffer = "u32"
length = "n"
access = "out"

[[param]]
name = "n"
scalar = "s32"
range = [{n_range[0]}, {n_range[1]}]
""")
    return f


HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p_out, .param .u32 p_n)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p_out];
    ld.param.u32 %r1, [p_n];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
"""
GUARD = "    setp.ge.s32 %p1, %r5, {bound};\n    @%p1 bra DONE;\n"
STORE = """    mul.wide.s32 %rd2, %r5, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], {value};
DONE:
    ret;
}}
"""


def test_a_store_past_the_symbolic_length_is_a_replayed_fault(tmp_path):
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    cand = HEAD + GUARD.format(bound="32") + STORE.format(value="%r5")   # ignores n
    v = verify(load_spec(_spec(tmp_path, ref, cand)), timeout_s=30)
    assert v.kind == NOT_EQUIVALENT
    assert "the candidate faults" in v.reasons[0]
    n = v.counterexample.scalars["n"]
    assert 1 <= n < 32            # a shape where thread n writes out[n], past the buffer


def test_the_same_kernel_is_proved_for_every_shape(tmp_path):
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    v = verify(load_spec(_spec(tmp_path, ref, ref)), timeout_s=30)
    assert v.kind == EQUIVALENT and v.assignments == 64
    assert "one symbolic maximal launch" in v.coverage


def test_a_race_that_needs_two_ctas_is_found_at_a_shape_that_has_them(tmp_path):
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    # every thread of CTA 1 also writes its CTA id to out[thread]: CTA 0 wrote it too,
    # unordered (with another value)
    racy = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r2")
    racy = racy.replace("    mul.wide.s32 %rd2, %r5, 4;",
                       "    setp.eq.s32 %p2, %r2, 1;\n    @%p2 mov.u32 %r5, %r4;\n"
                       "    mul.wide.s32 %rd2, %r5, 4;")
    v = verify(load_spec(_spec(tmp_path, ref, racy)), timeout_s=30)
    assert v.kind == NOT_EQUIVALENT
    assert "data race" in v.reasons[0]
    assert v.counterexample.scalars["n"] > 32          # CTA 1 exists only there


def test_enumeration_and_symbolic_shapes_agree(tmp_path):
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    cand = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r1")
    spec = load_spec(_spec(tmp_path, ref, cand, n_range=(1, 6)))
    for mode in ("symbolic", "enumerate"):
        v = verify(spec, timeout_s=30, shapes=mode)
        assert v.kind == NOT_EQUIVALENT, mode
        cex = v.counterexample
        assert any(r != c for _, _, r, c in cex.differences)


def test_symbolic_mode_names_what_it_cannot_do(tmp_path):
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    spec = load_spec(_spec(tmp_path, ref, ref, n_range=(1, 6)).parent / "pair.toml")
    v = verify(spec, fixed={"n": 3}, shapes="symbolic")
    assert v.kind == INCONCLUSIVE and "no scalar shapes the launch" in v.reasons[0]


def test_float_abstraction_is_a_generalization():
    a, b, n = z3.BitVec("a", 32), z3.BitVec("b", 32), z3.BitVec("n", 32)
    f32 = z3.Float32()
    s = z3.fpToIEEEBV(z3.fpAdd(z3.RNE(), z3.fpBVToFP(a, f32), z3.fpBVToFP(b, f32)))
    fa = FloatAbstraction()
    x, y = fa(z3.If(n > 3, s, a)), fa(z3.If(n >= 4, s, z3.If(n > 9, s, a)))
    assert fa.count == 1 and not any(z3.is_fp(t) for t in (x, y))
    solver = z3.Solver()
    solver.add(x != y)
    assert solver.check() == z3.unsat
    # different float terms stay different constants: no false proof
    t = z3.fpToIEEEBV(z3.fpMul(z3.RNE(), z3.fpBVToFP(a, f32), z3.fpBVToFP(b, f32)))
    solver = z3.Solver()
    solver.add(fa(s) != fa(t))
    assert solver.check() == z3.sat


def test_commutative_float_operands_build_one_term():
    d = SymbolicDomain(1)
    a, b, c = z3.BitVec("a", 32), z3.BitVec("b", 32), z3.BitVec("c", 32)
    assert d.fadd("f32", "rn", [a], [b])[0].eq(d.fadd("f32", "rn", [b], [a])[0])
    assert d.fmul("f32", "rz", [a], [b])[0].eq(d.fmul("f32", "rz", [b], [a])[0])
    assert d.ffma("f32", "rn", [a], [b], [c])[0].eq(d.ffma("f32", "rn", [b], [a], [c])[0])
    # but not the addend of an fma, nor a subtraction
    assert not d.ffma("f32", "rn", [a], [b], [c])[0].eq(d.ffma("f32", "rn", [c], [b], [a])[0])
    assert not d.fsub("f32", "rn", [a], [b])[0].eq(d.fsub("f32", "rn", [b], [a])[0])


class _PlainForm:
    """A weak access's form (no strength qualifiers: `memory_model.strength`)."""

    opcode = "st"
    flags: frozenset = frozenset()

    def has(self, flag: str) -> bool:
        return False


class _Ctx:
    """The few executor fields the race log reads: `lanes` lanes of one CTA, epoch 0, warp
    interval 0."""

    def __init__(self, lanes: int = 2):
        import numpy as np
        self.global_tid = np.arange(lanes)
        self.cta_of_lane = np.zeros(lanes, dtype=np.int64)
        self.cta_epoch = np.array([0])
        self.cta_barriers = [[]]
        self.warp_epoch = np.zeros(lanes, dtype=np.int64)     # (no bar.warp.sync run)
        self.ins = type("I", (), {"loc": "k.ptx:7:5"})()
        self.form = _PlainForm()

    def thread_name(self, lane):
        return f"thread {lane}"


def test_same_value_writes_race_unless_allowed_and_one_execution_made_them():
    from semantics.machine.symbolic_races import SymbolicRaceLog
    x = _Ctx()
    strict = SymbolicRaceLog(32)
    strict.access(x, "shared", [0, 0], 4, [0, 1], "w", [True, True], [7, 7])
    (pair,) = strict.pairs()                         # a race, whatever the values
    assert pair.cond is True and pair.kind == "race"
    one = SymbolicRaceLog(32, benign_writes=True)    # allow = ["benign-write-races"]
    one.access(x, "shared", [0, 0], 4, [0, 1], "w", [True, True], [7, 7])
    assert one.pairs() == []                         # lanes of one store, same value
    two = SymbolicRaceLog(32, benign_writes=True)
    two.access(x, "shared", [0], 4, [0], "w", [True], [7])
    two.access(x, "shared", [0], 4, [1], "w", [True], [7])   # the same store, run again
    (pair,) = two.pairs()
    assert pair.cond is True and "write by thread" in pair.what
    cond = z3.Bool("c")
    three = SymbolicRaceLog(32, benign_writes=True)
    three.access(x, "shared", [0, 0], 4, [0, 1], "w", [cond, True], [7, 8])
    (pair,) = three.pairs()
    assert pair.cond.eq(cond)                        # a race only where lane 0 writes


def test_accesses_of_other_sizes_race_where_their_bytes_meet():
    from semantics.machine.symbolic_races import SymbolicRaceLog
    x = _Ctx(6)
    log = SymbolicRaceLog(32)
    # lane 0 stores byte 6, lane 1 reads the word at 4..7, lane 2 stores byte 8 (apart)
    log.access(x, "shared", [6], 1, [0], "w", [True], [1])
    log.access(x, "shared", [4], 4, [1], "r", [True])
    log.access(x, "shared", [8], 1, [2], "w", [True], [1])
    (pair,) = log.pairs()
    assert pair.cond is True and "write by thread 0" in pair.what and \
        "read by thread 1" in pair.what
    # halves side by side never meet, though a word read joins them in one group
    apart = SymbolicRaceLog(32)
    apart.access(x, "shared", [4], 2, [0], "w", [True], [1])
    apart.access(x, "shared", [6], 2, [1], "w", [True], [2])
    apart.access(x, "shared", [4], 4, [2], "r", [True])
    (pair,) = apart.pairs()                          # no write-write pair
    assert "and read by thread 2" in pair.what


# -- exact shortcuts of the symbolic run (settled masks, unobserved merges) ---------------------

def test_mentions_from_collects_what_is_reachable():
    from semantics.ir.cfg import build_cfg
    from semantics.ir.operands import Reg
    from semantics.machine.reads_ahead import mentions_from
    from semantics.ptx.parser import parse_ptx
    fn = parse_ptx(HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")).functions["k"]
    cfg = build_cfg(fn)
    ahead = mentions_from(cfg, fn.instructions)
    names = [{r.name for r in regs} for regs in ahead]
    assert {"%r1", "%r5", "%p1", "%rd3"} <= names[0]          # the entry reaches everything
    assert names[-1] == set()                                  # DONE: ret mentions nothing
    assert "%rd3" in names[1] and "%r1" not in names[1]       # the store block, not the guard
    assert all(isinstance(r, Reg) for regs in ahead for r in regs)


def test_an_atomic_result_no_instruction_reads_is_dead():
    from semantics.machine.reads_ahead import dead_destinations
    from semantics.ptx.parser import parse_ptx
    body = ("    atom.global.add.u32 %r6, [%rd3], 1;\n"       # %r6 is never read
            "    atom.global.add.u32 %r7, [%rd3], 1;\n"       # %r7 is stored below
            "    st.global.u32 [%rd3], %r7;\n")
    fn = parse_ptx(HEAD + GUARD.format(bound="%r1") + body.replace("%rd3", "%rd1") +
                   STORE.format(value="%r5")).functions["k"]
    dead = dead_destinations(fn.instructions)
    ops = [i for i, ins in enumerate(fn.instructions) if getattr(ins, "opcode", "") == "atom"]
    assert ops[0] in dead and ops[1] not in dead
    assert not any(i in dead for i, ins in enumerate(fn.instructions)
                   if getattr(ins, "opcode", "") != "atom")


def test_mentions_from_refuses_sass():
    # SASS reads register pairs (R2 names R2:R3) implicitly: every merge is kept
    from semantics.ir.types import TYPES
    from semantics.machine.reads_ahead import mentions_from
    from semantics.sass.machine import prepare_sass
    from semantics.sass.parser import parse_sass_file
    sass = parse_sass_file(K / "vector_add/vector_add.sm_90.sass")
    k = prepare_sass(sass, "vector_add", [TYPES["u64"]] * 3 + [TYPES["s32"]])
    assert mentions_from(k.cfg, k.instrs) is None


def _branchy(value_then: str, after: str = "") -> str:
    """r6 = 7; if (tid < n / 2) r6 = value_then; (after); if (tid < n) out[tid] = r6"""
    return HEAD.replace(".reg .b32 %r<8>;", ".reg .b32 %r<12>;") + f"""
    mov.u32 %r6, 7;
    shr.u32 %r7, %r1, 1;
    setp.ge.s32 %p2, %r5, %r7;
    @%p2 bra JOIN;
    mov.u32 %r6, {value_then};
JOIN:
{after}    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
""" + STORE.format(value="%r6")


def test_a_merge_that_waiting_lanes_read_is_kept(tmp_path):
    # Lanes with tid >= n/2 skip the `then` path and read r6 == 7 after the join: dropping
    # the merge would wrongly give them `tid` and prove these two kernels equal.
    ref = _branchy("%r5")
    cand = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    v = verify(load_spec(_spec(tmp_path, ref, cand)), timeout_s=30)
    assert v.kind == NOT_EQUIVALENT
    assert "one symbolic maximal launch" in v.coverage
    assert any(r == 7 for _, _, r, _ in v.counterexample.differences)


def test_a_merge_read_again_in_a_loop_is_kept(tmp_path):
    # r6 += 2 under the loop's mask; lanes leave after min(tid, n/2) trips, some at a symbolic
    # trip, and read their own r6 after the loop: their merge must stay.
    loop = HEAD.replace(".reg .b32 %r<8>;", ".reg .b32 %r<12>;") + """
    mov.u32 %r6, 0;
    mov.u32 %r8, 0;
    shr.u32 %r7, %r1, 1;
LOOP:
    setp.ge.u32 %p2, %r8, %r5;
    @%p2 bra OUT;
    setp.ge.u32 %p3, %r8, %r7;
    @%p3 bra OUT;
    add.u32 %r6, %r6, 2;
    add.u32 %r8, %r8, 1;
    bra.uni LOOP;
OUT:
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
""" + STORE.format(value="%r6")
    direct = HEAD.replace(".reg .b32 %r<8>;", ".reg .b32 %r<12>;") + \
        GUARD.format(bound="%r1") + """    shr.u32 %r7, %r1, 1;
    min.u32 %r9, %r5, %r7;
    add.u32 %r6, %r9, %r9;
""" + STORE.format(value="%r6")
    spec = load_spec(_spec(tmp_path, loop, direct, n_range=(1, 12)))
    assert verify(spec, timeout_s=30).kind == EQUIVALENT
    wrong = direct.replace("add.u32 %r6, %r9, %r9;", "add.u32 %r6, %r5, %r5;")
    spec = load_spec(_spec(tmp_path, loop, wrong, n_range=(1, 12)))
    assert verify(spec, timeout_s=30).kind == NOT_EQUIVALENT


def test_settle_decides_lane_conditions_over_the_allowed_shapes():
    from verifier.feasibility import Feasibility
    sp = plan(load_spec(K / "vector_add/vec4.toml"), {})
    n = z3.BitVec("n", 32)
    feas = Feasibility(sp, {"n": n}, [])
    always, never, some = n >= 1, n > 2048, n > 7
    got = feas.settle([always, never, some, True, False])
    assert got[0] is True and got[1] is False and got[2] is some and got[3:] == [True, False]


def test_specialize_splits_by_the_shape_selections_of_both_terms():
    from verifier.feasibility import Feasibility
    sp = plan(load_spec(K / "vector_add/vec4.toml"), {})
    n, x, y = z3.BitVec("n", 32), z3.BitVec("x", 32), z3.BitVec("y", 32)
    feas = Feasibility(sp, {"n": n}, [])
    small, odd = z3.ULT(n, 8), n & 1 == 1
    # equal where n < 8 (both y), different elsewhere unless n is odd
    a = z3.If(small, y, z3.If(odd, x + y, x))
    b = z3.If(small, y, y + x)
    split = feas.specialize(a, b, True)
    assert len(split) == 1                   # (n >= 8, n even): x against y + x
    cond, sa, sb = split[0]
    assert z3.simplify(sa).eq(x) and z3.simplify(sb).eq(z3.simplify(y + x))
    assert z3.is_and(cond) and {str(c) for c in cond.children()} == \
        {str(z3.Not(small)), str(z3.Not(odd))}
    # the memo across calls: a term sharing `a`'s selections lists them again
    assert feas.specialize(a, a + 0, True) == []
    assert feas.specialize(x, y, True) is None           # no selection on the shape at all
    # a selection on data is not split (its branches are still walked)
    data = z3.If(x == 0, z3.If(small, x, y), y)
    assert len(feas.specialize(data, y, True)) == 1


def test_combinations_are_numpys_unique_columns():
    from verifier.feasibility import _combinations
    rng = np.random.default_rng(0)
    for k, n in [(1, 1), (3, 100), (7, 5), (20, 300), (2, 0)]:
        table = rng.random((k, n)) < 0.5
        assert np.array_equal(_combinations(table), np.unique(table, axis=1).T)


def _one_element_wrong(ref: str, index: int, value: int) -> str:
    """`ref` (which stores out[tid] = tid) but with out[index] = value."""
    cand = ref.replace("    mul.wide.s32 %rd2, %r5, 4;",
                       f"    mov.u32 %r6, %r5;\n    setp.eq.s32 %p2, %r5, {index};\n"
                       f"    @%p2 mov.u32 %r6, {value};\n    mul.wide.s32 %rd2, %r5, 4;")
    return cand.replace("st.global.u32 [%rd3], %r5;", "st.global.u32 [%rd3], %r6;")


def test_random_testing_runs_before_outputs_are_split_by_shape(tmp_path):
    # every element but out[5] is the same term at every shape: comparing shape by shape
    # first would decide 63 elements before the one random inputs show at once
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    cand = _one_element_wrong(ref, 5, 7)
    # the same guard spelled differently: other terms, the same selection at every shape
    cand = cand.replace("setp.ge.s32 %p1, %r5, %r1;\n    @%p1 bra DONE;",
                        "setp.lt.s32 %p1, %r5, %r1;\n    @!%p1 bra DONE;")
    assert "@!%p1" in cand
    v = verify(load_spec(_spec(tmp_path, ref, cand)), timeout_s=30)
    assert v.kind == NOT_EQUIVALENT and "one symbolic maximal launch" in v.coverage
    assert [d[1] for d in v.counterexample.differences] == [5]
    names = [s.name for s in v.stages]
    assert "random testing" in names and "outputs by shape" not in names
    assert not v.obligations                          # no solver was needed


def test_a_float_difference_costs_a_few_queries_not_one_per_element():
    # testing off: the solvers must find fma != mul+add; the abstracted per-element queries
    # are asked lazily, so the first real difference ends the search
    spec = load_spec(K / "saxpy/fma_bitexact.toml")
    v = verify(spec, fixed={"n": 64}, trials=0, solvers=("z3",), timeout_s=60)
    assert v.kind == NOT_EQUIVALENT
    assert len(v.obligations) <= 3, [o.name for o in v.obligations]


# -- enumerated shapes in several processes (--jobs) ---------------------------------------------

def test_parallel_enumeration_gives_the_sequential_verdict(tmp_path):
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    spec = load_spec(_spec(tmp_path, ref, ref, n_range=(1, 6)))
    one = verify(spec, shapes="enumerate", timeout_s=30)
    two = verify(spec, shapes="enumerate", timeout_s=30, jobs=2)
    assert one.kind == two.kind == EQUIVALENT
    assert one.assignments == two.assignments == 6
    assert "2 processes" in two.coverage
    assert [s.detail for s in one.stages] == [s.detail for s in two.stages]   # shape order


def test_parallel_enumeration_reports_the_first_failing_shape(tmp_path):
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r5")
    cand = _one_element_wrong(ref, 3, 0)     # differs only from n = 4 on
    spec = load_spec(_spec(tmp_path, ref, cand, n_range=(1, 6)))
    one = verify(spec, shapes="enumerate", timeout_s=30)
    two = verify(spec, shapes="enumerate", timeout_s=30, jobs=3)
    assert one.kind == two.kind == NOT_EQUIVALENT
    assert one.counterexample.scalars == two.counterexample.scalars == {"n": 4}
    assert one.assignments == two.assignments == 4
    assert one.counterexample.differences == two.counterexample.differences


def test_parallel_workers_can_run_the_solver_portfolio():
    # testing off: each shape's difference must come from the solvers, which the portfolio
    # runs in processes of their own, forked from the worker
    from dataclasses import replace
    spec = load_spec(K / "saxpy/fma_bitexact.toml")
    params = tuple(replace(p, range=(1, 3)) if p.name == "n" else p for p in spec.params)
    spec = replace(spec, params=params)
    v = verify(spec, shapes="enumerate", trials=0, jobs=2, timeout_s=60)
    assert v.kind == NOT_EQUIVALENT and v.obligations
    assert v.counterexample.scalars["n"] == 1


def test_shfl_from_a_lane_that_may_not_take_part_reads_an_open_value(tmp_path):
    # thread n-1 reads thread n, which exists (n <= 64) but skipped the shfl: PTX leaves the
    # value read unspecified, so the candidate's output there is anything, and the solver's
    # choice of it (named in the counterexample) is an execution the emulator replays
    ref = HEAD + GUARD.format(bound="%r1") + "    add.u32 %r6, %r5, 1;\n" + \
        STORE.format(value="%r6")
    cand = HEAD + GUARD.format(bound="%r1") + \
        "    shfl.sync.down.b32 %r6, %r5, 1, 31, -1;\n" + STORE.format(value="%r6")
    spec = load_spec(_spec(tmp_path, ref, cand))
    for shapes, trials in (("symbolic", 0), ("enumerate", 0), ("symbolic", 8)):
        v = verify(spec, shapes=shapes, timeout_s=30, trials=trials, max_shapes=64)
        assert v.kind == NOT_EQUIVALENT, (shapes, trials, v.reasons)
        assert_replays(spec, v.counterexample)

def test_vote_counts_only_lanes_that_take_part_at_each_shape(tmp_path):
    # vote.any(tid == 31) over the threads still running: true in CTA 0 only when n > 31
    cand = HEAD + GUARD.format(bound="%r1") + """    setp.eq.s32 %p2, %r5, 31;
    vote.sync.any.pred %p3, %p2, -1;
    selp.u32 %r6, 1, 0, %p3;
""" + STORE.format(value="%r6")
    ref = HEAD + GUARD.format(bound="%r1") + """    setp.gt.s32 %p2, %r1, 31;
    setp.lt.s32 %p3, %r5, 32;
    and.pred %p2, %p2, %p3;
    selp.u32 %r6, 1, 0, %p2;
""" + STORE.format(value="%r6")
    v = verify(load_spec(_spec(tmp_path, ref, cand)), shapes="symbolic", timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons


def test_random_testing_reports_a_difference_read_from_an_absent_lane(tmp_path):
    # thread n-1 shuffles from thread n, which skipped the shfl (and the mov before it): the
    # value it reads is open, the emulator's (zero) is one the GPU may give, and the
    # counterexample says it is such a value
    from verifier.counterexample import tested_difference
    from verifier.emulate import choices_of
    from verifier.run import Run
    ref = HEAD + GUARD.format(bound="%r1") + "    add.u32 %r6, %r5, 1;\n" + \
        STORE.format(value="%r6")
    cand = HEAD + GUARD.format(bound="%r1") + \
        "    mov.u32 %r7, %r5;\n    shfl.sync.down.b32 %r6, %r7, 1, 31, -1;\n" + \
        STORE.format(value="%r6")
    spec = load_spec(_spec(tmp_path, ref, cand))
    v = tested_difference(Run(spec, 30, 64, choices=choices_of(spec)), {"n": 31}, 0,
                          trials=4)
    assert v is not None and "does not take part" in v.counterexample.note
    fine = HEAD + GUARD.format(bound="%r1") + "    add.u32 %r6, %r5, 1;\n" + \
        STORE.format(value="%r6")
    spec = load_spec(_spec(tmp_path, ref, fine))
    assert tested_difference(Run(spec, 30, 64), {"n": 31}, 0, trials=4) is None


def test_every_conflicting_pair_at_one_byte_is_kept():
    """Many conflicting pairs at one byte: the race condition is their whole disjunction
    (an earlier cap of 64 pairs per byte could drop the only satisfiable one)."""
    import numpy as np
    from semantics.machine.symbolic_races import SymbolicRaceLog
    x = _Ctx()
    lanes = 101
    x.global_tid = np.arange(lanes)
    x.cta_of_lane = np.zeros(lanes, dtype=int)
    x.warp_epoch = np.zeros(lanes, dtype=np.int64)
    conds = [z3.Bool(f"c{i}") for i in range(lanes - 1)]
    log = SymbolicRaceLog(128)
    log.access(x, "shared", [0] * (lanes - 1), 4, list(range(lanes - 1)), "w", conds,
               list(range(lanes - 1)))
    log.access(x, "shared", [0], 4, [lanes - 1], "r", [True])
    reads = [p for p in log.pairs() if " and read by" in p.what]
    assert len(reads) == 1
    s = z3.Solver()
    s.add(reads[0].cond, *[z3.Not(c) for c in conds[:-1]])
    assert s.check() == z3.sat                      # only the last writer races the read


SHARED_ROTATE = HEAD + """    .shared .align 4 .b32 sh[32];
    mov.u64 %rd4, sh;
    mul.wide.u32 %rd5, %r4, 4;
    add.s64 %rd6, %rd4, %rd5;
    st.shared.u32 [%rd6], %r2;
    bar.sync 0;
    add.s32 %r6, %r4, %r1;
    and.b32 %r6, %r6, 31;
    mul.wide.u32 %rd5, %r6, 4;
    add.s64 %rd6, %rd4, %rd5;
    ld.shared.u32 %r7, [%rd6];
""" + GUARD.format(bound="%r1") + STORE.format(value="%r7")


def test_a_symbolic_shared_address_reads_the_lanes_own_cta(tmp_path):
    """Each CTA fills its shared memory with its CTA index and reads it back at a slot that
    depends on n (a symbolic address): every lane must see its own CTA's copy."""
    ref = HEAD + GUARD.format(bound="%r1") + STORE.format(value="%r2")
    v = verify(load_spec(_spec(tmp_path, ref, SHARED_ROTATE)), timeout_s=30, shapes="symbolic")
    assert v.kind == EQUIVALENT, v.reasons
    assert "one symbolic maximal launch" in v.coverage


BARRIER_LOOP = Path(__file__).resolve().parents[1] / "data" / "barrier_loop"


def test_a_barrier_every_thread_reaches_under_one_symbolic_mask_is_no_divergence():
    v = verify(load_spec(BARRIER_LOOP / "own_word.toml"), shapes="symbolic", timeout_s=30)
    assert v.kind == EQUIVALENT, v.reasons
    assert "one symbolic maximal launch" in v.coverage


def test_a_barrier_that_may_not_run_separates_nothing():
    # At reps == 0 the loop's barrier does not run, so the mirrored read races with the
    # write; counting the barrier as a new interval at every shape proves this pair
    # (checked by mutation), since its outputs are equal.
    v = verify(load_spec(BARRIER_LOOP / "mirror_word.toml"), shapes="symbolic", timeout_s=30)
    assert v.kind == NOT_EQUIVALENT, v.reasons
    assert "data race" in v.reasons[0]
    assert v.counterexample.scalars["reps"] == 0 and v.counterexample.note


def test_a_whole_claim_check_leaves_no_reference_cycle_holding_terms():
    """A cycle through the launch's memos kept every term of one check alive until Python's
    next full collection; z3 then slowed down several-fold for whatever the process checked
    next (the test suite, `keq prove` over a manifest)."""
    import gc
    spec = load_spec(K / "vector_add/vec4.toml")
    gc.collect()
    assert verify(spec, timeout_s=60).kind == spec.expect
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        terms = [o for o in gc.garbage if isinstance(o, z3.AstRef)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert terms == []
