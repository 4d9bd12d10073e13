"""CFG and immediate post-dominators (the reconvergence points of divergent branches).

Blocks are numbered in layout order; EXIT (-1) is the virtual exit. Each test gives the exact
successors (taken branch first, then fall-through), predecessors and ipdom of every block.
"""

from __future__ import annotations

import pytest

from semantics.errors import PtxSyntaxError
from semantics.ir import build_cfg
from semantics.ir.cfg import EXIT
from semantics.ptx import parse_ptx

X = EXIT

HEADER = """\
.version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<8>;
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<8>;
"""


def cfg_of(body: str):
    m = parse_ptx(HEADER + body + "\n}\n", "cfg.ptx")
    f = m.functions["k"]
    return f, build_cfg(f)


def shape(cfg):
    """Per block: (labels, number of instructions, succs)."""
    return [(b.labels, b.end - b.start, b.succs) for b in cfg.blocks]


def test_straight_line():
    f, cfg = cfg_of("""
	ld.param.u64 %rd1, [k_param_0];
	mov.u32 %r1, %tid.x;
	add.s32 %r2, %r1, 1;
	ret;
""")
    assert shape(cfg) == [((), 4, (X,))]
    assert cfg.ipdom == (X,)
    assert cfg.preds == ((),)
    b = cfg.blocks[0]
    assert (b.start, b.end, b.branch_target, b.fallthrough) == (0, 4, None, None)


def test_falling_off_the_end_flows_to_exit():
    _, cfg = cfg_of("\tmov.u32 %r1, 1;")
    assert shape(cfg) == [((), 1, (X,))]
    assert cfg.ipdom == (X,)
    assert cfg.blocks[0].fallthrough == X


def test_empty_body_has_no_blocks():
    _, cfg = cfg_of("")
    assert cfg.blocks == () and cfg.ipdom == () and cfg.preds == ()


def test_if_then():
    _, cfg = cfg_of("""
	setp.ge.s32 %p1, %r1, %r2;
	@%p1 bra $L_join;
	add.s32 %r3, %r3, 1;
$L_join:
	ret;
""")
    assert shape(cfg) == [((), 2, (2, 1)), ((), 1, (2,)), (("$L_join",), 1, (X,))]
    assert cfg.ipdom == (2, 2, X)
    assert cfg.preds == ((), (0,), (0, 1))
    b0 = cfg.blocks[0]
    assert (b0.branch_target, b0.fallthrough) == (2, 1)
    assert cfg.block_of_label("$L_join") == 2


def test_if_then_else():
    _, cfg = cfg_of("""
	setp.ge.s32 %p1, %r1, %r2;
	@%p1 bra $L_else;
	add.s32 %r3, %r3, 1;
	bra.uni $L_join;
$L_else:
	sub.s32 %r3, %r3, 1;
$L_join:
	st.global.u32 [%rd1], %r3;
	ret;
""")
    assert shape(cfg) == [((), 2, (2, 1)), ((), 2, (3,)), (("$L_else",), 1, (3,)),
                          (("$L_join",), 2, (X,))]
    assert cfg.ipdom == (3, 3, 3, X)
    assert cfg.preds == ((), (0,), (0,), (1, 2))
    b1 = cfg.blocks[1]
    assert (b1.branch_target, b1.fallthrough) == (3, None)     # unconditional: no fall-through


def test_loop_with_the_exit_test_at_the_bottom():
    _, cfg = cfg_of("""
	mov.u32 %r1, 0;
$L_loop:
	add.s32 %r1, %r1, 1;
	setp.lt.s32 %p1, %r1, 10;
	@%p1 bra $L_loop;
	ret;
""")
    assert shape(cfg) == [((), 1, (1,)), (("$L_loop",), 3, (1, 2)), ((), 1, (X,))]
    assert cfg.ipdom == (1, 2, X)
    assert cfg.preds == ((), (0, 1), (1,))


def test_loop_with_the_exit_test_at_the_top():
    _, cfg = cfg_of("""
	mov.u32 %r1, 0;
$L_head:
	setp.ge.s32 %p1, %r1, 10;
	@%p1 bra $L_exit;
	add.s32 %r1, %r1, 1;
	bra.uni $L_head;
$L_exit:
	ret;
""")
    assert shape(cfg) == [((), 1, (1,)), (("$L_head",), 2, (3, 2)), ((), 2, (1,)),
                          (("$L_exit",), 1, (X,))]
    assert cfg.ipdom == (1, 3, 1, X)
    assert cfg.preds == ((), (0, 2), (1,), (1,))


def test_early_exit_with_a_guarded_ret():
    _, cfg = cfg_of("""
	setp.ge.s32 %p1, %r1, %r2;
	@%p1 ret;
	add.s32 %r3, %r3, 1;
	ret;
""")
    # The lanes whose guard is false fall through; the others leave.
    assert shape(cfg) == [((), 2, (X, 1)), ((), 2, (X,))]
    assert cfg.ipdom == (X, X)
    assert cfg.preds == ((), (0,))
    assert cfg.blocks[0].fallthrough == 1


def test_early_exit_by_branching_to_the_final_ret():
    _, cfg = cfg_of("""
	setp.ge.s32 %p1, %r1, %r2;
	@%p1 bra $END;
	add.s32 %r3, %r3, 1;
	setp.eq.s32 %p2, %r3, 0;
	@%p2 bra $END;
	st.global.u32 [%rd1], %r3;
$END:
	ret;
""")
    assert shape(cfg) == [((), 2, (3, 1)), ((), 3, (3, 2)), ((), 1, (3,)), (("$END",), 1, (X,))]
    assert cfg.ipdom == (3, 3, 3, X)
    assert cfg.preds == ((), (0,), (1,), (0, 1, 2))


def test_guarded_ret_then_a_branch():
    _, cfg = cfg_of("""
	@%p1 ret;
	@%p2 bra $L;
	add.s32 %r3, %r3, 1;
$L:
	ret;
""")
    assert shape(cfg) == [((), 1, (X, 1)), ((), 1, (3, 2)), ((), 1, (3,)), (("$L",), 1, (X,))]
    assert cfg.ipdom == (X, 3, 3, X)


def test_nested_divergence_if_inside_a_loop_inside_an_if():
    _, cfg = cfg_of("""
	setp.ge.s32 %p1, %r1, %r2;
	@%p1 bra $L_end;
	mov.u32 %r3, 0;
$L_loop:
	setp.eq.s32 %p2, %r3, %r1;
	@%p2 bra $L_skip;
	add.s32 %r4, %r4, %r3;
$L_skip:
	add.s32 %r3, %r3, 1;
	setp.lt.s32 %p3, %r3, %r2;
	@%p3 bra $L_loop;
	st.global.u32 [%rd1], %r4;
$L_end:
	ret;
""")
    assert shape(cfg) == [
        ((), 2, (6, 1)),                  # B0: outer if
        ((), 1, (2,)),                    # B1: loop preheader
        (("$L_loop",), 2, (4, 3)),        # B2: inner if, in the loop
        ((), 1, (4,)),                    # B3: inner then
        (("$L_skip",), 3, (2, 5)),        # B4: latch
        ((), 1, (6,)),                    # B5: after the loop
        (("$L_end",), 1, (X,)),           # B6: join of the outer if
    ]
    assert cfg.ipdom == (6, 2, 4, 4, 5, 6, X)
    assert cfg.preds == ((), (0,), (1, 4), (2,), (2, 3), (4,), (0, 5))


def test_block_that_cannot_reach_exit_has_no_ipdom():
    _, cfg = cfg_of("""
	setp.ge.s32 %p1, %r1, %r2;
	@%p1 bra $L_spin;
	ret;
$L_spin:
	add.s32 %r3, %r3, 1;
	bra.uni $L_spin;
""")
    assert shape(cfg) == [((), 2, (2, 1)), ((), 1, (X,)), (("$L_spin",), 2, (2,))]
    # Paths that never end do not count against post-dominance: B0 reconverges at B1.
    assert cfg.ipdom == (1, X, None)
    assert cfg.preds == ((), (0,), (0, 2))


def test_function_that_never_exits():
    _, cfg = cfg_of("""
	mov.u32 %r1, 0;
$L:
	add.s32 %r1, %r1, 1;
	bra.uni $L;
""")
    assert shape(cfg) == [((), 1, (1,)), (("$L",), 2, (1,))]
    assert cfg.ipdom == (None, None)


def test_unreachable_code_after_an_unconditional_branch():
    _, cfg = cfg_of("""
	bra.uni $L;
	add.s32 %r1, %r1, 1;
$L:
	ret;
""")
    assert shape(cfg) == [((), 1, (2,)), ((), 1, (2,)), (("$L",), 1, (X,))]
    assert cfg.preds == ((), (), (0, 1))
    assert cfg.ipdom == (2, 2, X)


def test_branch_to_a_label_at_the_end_of_the_body():
    _, cfg = cfg_of("""
	@%p1 bra $L_end;
	add.s32 %r1, %r1, 1;
$L_end:
""")
    assert shape(cfg) == [((), 1, (X, 1)), ((), 1, (X,))]
    assert cfg.blocks[0].branch_target == X
    assert cfg.ipdom == (X, X)


def test_guarded_branch_to_the_next_instruction_has_one_successor():
    _, cfg = cfg_of("""
	@%p1 bra $L;
$L:
	ret;
""")
    assert shape(cfg) == [((), 1, (1,)), (("$L",), 1, (X,))]
    assert cfg.ipdom == (1, X)


def test_several_labels_on_one_block_and_exit_and_trap():
    _, cfg = cfg_of("""
	@%p1 bra $B;
	@%p2 bra $A;
	trap;
$A:
$B:
	exit;
""")
    assert shape(cfg) == [((), 1, (3, 1)), ((), 1, (3, 2)), ((), 1, (X,)),
                          (("$A", "$B"), 1, (X,))]
    assert cfg.block_of_label("$A") == cfg.block_of_label("$B") == 3
    assert cfg.ipdom == (X, X, X, X)
    with pytest.raises(KeyError):
        cfg.block_of_label("$C")


def test_ipdom_is_a_post_dominator_on_the_corpus_shapes():
    """On a larger CFG, check the defining property directly: every path from b to EXIT
    passes ipdom(b), and ipdom(b) is the nearest such block."""
    _, cfg = cfg_of("""
	@%p1 bra $L3;
	@%p2 bra $L2;
$L1:
	add.s32 %r1, %r1, 1;
	@%p3 bra $L1;
$L2:
	@%p4 bra $L4;
$L3:
	add.s32 %r2, %r2, 1;
	@%p5 bra $L2;
$L4:
	ret;
""")
    succs = {b.index: b.succs for b in cfg.blocks}

    def reaches_exit_avoiding(start, avoid):
        seen, stack = set(), [start]
        while stack:
            n = stack.pop()
            if n == X:
                return True
            if n in seen or n == avoid:
                continue
            seen.add(n)
            stack.extend(succs[n])
        return False

    for b in cfg.blocks:
        d = cfg.ipdom[b.index]
        assert d is not None
        if d != X:
            assert not any(reaches_exit_avoiding(s, d) for s in b.succs)
        # Nearest: no strict post-dominator of b lies strictly between b and d; i.e. every
        # other block that post-dominates b also post-dominates d.
        for c in cfg.blocks:
            if c.index in (b.index, d):
                continue
            if not any(reaches_exit_avoiding(s, c.index) for s in b.succs):
                assert d != X and not any(reaches_exit_avoiding(s, c.index) for s in succs[d])


def test_branch_needs_a_label():
    f = parse_ptx(HEADER + "\tbra %r1;\n}\n", "t.ptx").functions["k"]
    with pytest.raises(PtxSyntaxError, match="bra needs a label operand"):
        build_cfg(f)


def test_indirect_branch_is_refused_by_name():
    # (`.branchtargets` tables are not parsed yet; nvcc 13 does not emit brx.idx for switches.)
    f = parse_ptx(HEADER + "\tbrx.idx %r1, $L1;\n$L1:\n\tret;\n}\n", "t.ptx").functions["k"]
    with pytest.raises(PtxSyntaxError, match="indirect branch 'brx.idx' is not supported"):
        build_cfg(f)
