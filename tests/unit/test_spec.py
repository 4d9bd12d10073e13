"""verifier.spec: pair-spec TOML loading, located errors, expressions, scalar draws, inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from semantics.errors import KeqError, LocatedError
from verifier.spec import (ExprError, draw_scalars, load_spec, make_inputs, parse_expr)

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"
SPECS = sorted(KERNELS.glob("*/*.toml"))

# line numbers below matter: tests locate errors by them
BASE = '''\
name = "t/vadd"
description = "test pair"
mode = "bitexact"
expect = "equivalent"

[reference]
ptx = "vector_add.ptx"
kernel = "vector_add"
grid = ["ceil_div(n, 256)", 1, 1]
block = [256, 1, 1]

[candidate]
ptx = "vector_add.ptx"
kernel = "vector_add"
grid = ["ceil_div(n, 256)", 1, 1]
block = [256, 1, 1]

[[param]]
name = "a"
buffer = "f32"
length = "n"
access = "in"

[[param]]
name = "b"
buffer = "f32"
length = "n"
access = "in"

[[param]]
name = "c"
buffer = "f32"
length = "n"
access = "out"

[[param]]
name = "n"
scalar = "s32"
range = [1, 2048]
'''


@pytest.fixture
def write(tmp_path):
    shutil.copy(KERNELS / "vector_add" / "vector_add.ptx", tmp_path / "vector_add.ptx")

    def _write(text: str) -> Path:
        p = tmp_path / "pair.toml"
        p.write_text(text)
        return p
    return _write


def _err(write, text: str) -> LocatedError:
    path = write(text)
    with pytest.raises(LocatedError) as ei:
        load_spec(path)
    e = ei.value
    assert e.loc.file == str(path)
    return e


def _at(e: LocatedError) -> tuple[int, int]:
    return (e.loc.line, e.loc.col)


# ------------------------------------------------------------------ valid specs

@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.relative_to(KERNELS).as_posix())
def test_corpus_spec_loads(path: Path):
    s = load_spec(path)
    assert s.name.startswith(path.parent.name + "/")
    assert s.mode in ("bitexact", "real")
    for side in (s.reference, s.candidate):
        assert side.ptx.is_file()
        assert len(side.arg_names) == len(side.module.functions[side.kernel].params)
    rng = np.random.default_rng(1)
    sc = draw_scalars(s, rng)
    assert s.check_assumptions(sc)
    for side in (s.reference, s.candidate):
        grid, block = side.launch(sc)
        assert len(grid) == 3 and min(grid) >= 1 and min(block) >= 1


def test_base_spec_loads(write):
    s = load_spec(write(BASE))
    assert s.name == "t/vadd" and s.description == "test pair"
    assert [p.name for p in s.params] == ["a", "b", "c", "n"]
    assert s.reference.ptx == (write(BASE).parent / "vector_add.ptx")
    assert s.reference.launch({"n": 257}) == ((2, 1, 1), (256, 1, 1))
    assert s.param("c").length_of({"n": 9}) == 9
    assert s.param("n").range == (1, 2048)
    assert s.reference.arg_names == ("a", "b", "c", "n")
    assert s.param("a").dtype == np.float32


def test_paths_are_relative_to_the_toml(tmp_path):
    sub = tmp_path / "specs"
    sub.mkdir()
    (sub / "pair.toml").write_text(BASE.replace('"vector_add.ptx"', '"../k/vector_add.ptx"'))
    (tmp_path / "k").mkdir()
    shutil.copy(KERNELS / "vector_add" / "vector_add.ptx", tmp_path / "k" / "vector_add.ptx")
    s = load_spec(sub / "pair.toml")
    assert s.candidate.ptx.resolve() == (tmp_path / "k" / "vector_add.ptx").resolve()


def test_args_maps_params_in_kernel_order():
    s = load_spec(KERNELS / "triton" / "vector_add.toml")
    assert s.candidate.arg_names == ("a", "b", "c", "n", "global_scratch", "profile_scratch")
    assert s.reference.kernel_args({"a": 1, "b": 2, "c": 3, "n": 4, "global_scratch": 5,
                                    "profile_scratch": 6}) == [1, 2, 3, 4]


# ------------------------------------------------------------------ located errors

def test_unknown_top_key(write):
    e = _err(write, BASE.replace('mode = "bitexact"\n', 'mode = "bitexact"\nmood = 1\n'))
    assert "unknown key 'mood'" in e.message
    assert _at(e) == (4, 1)


def test_unknown_side_key_points_at_the_key(write):
    e = _err(write, BASE.replace('block = [256, 1, 1]\n\n[candidate]',
                                 'block = [256, 1, 1]\n  threads = 3\n\n[candidate]'))
    assert "unknown key 'threads' in [reference]" in e.message
    assert _at(e) == (11, 3)


def test_missing_key_points_at_the_table(write):
    e = _err(write, BASE.replace('kernel = "vector_add"\ngrid', 'grid', 1))
    assert "missing key 'kernel' in [reference]" in e.message
    assert _at(e) == (6, 1)


def test_missing_top_key(write):
    e = _err(write, BASE.replace('expect = "equivalent"\n', ''))
    assert "missing key 'expect'" in e.message


def test_wrong_type(write):
    e = _err(write, BASE.replace('mode = "bitexact"', 'mode = 3'))
    assert "mode must be a string, found an integer" in e.message
    assert _at(e) == (3, 8)


def test_mode_expect_access_not_in_set(write):
    e = _err(write, BASE.replace('mode = "bitexact"', 'mode = "exact"'))
    assert "mode 'exact' is not one of: bitexact, real" in e.message and _at(e) == (3, 8)
    e = _err(write, BASE.replace('expect = "equivalent"', 'expect = "same"'))
    assert "expect 'same'" in e.message and _at(e) == (4, 10)
    e = _err(write, BASE.replace('access = "out"', 'access = "write"'))
    assert "access 'write' is not one of: in, out, inout, scratch" in e.message
    assert _at(e) == (34, 10)


def test_unknown_buffer_type(write):
    e = _err(write, BASE.replace('buffer = "f32"\nlength = "n"\naccess = "out"',
                                 'buffer = "f31"\nlength = "n"\naccess = "out"'))
    assert "unknown buffer type 'f31'" in e.message
    assert _at(e) == (32, 10)
    assert "^" in e.render() and 'buffer = "f31"' in e.render()


def test_bad_expression_points_at_the_token(write):
    e = _err(write, BASE.replace('grid = ["ceil_div(n, 256)", 1, 1]\nblock = [256, 1, 1]\n\n[candidate]',
                                 'grid = ["ceil_div(n, 256) +* 2", 1, 1]\nblock = [256, 1, 1]\n\n[candidate]'))
    assert "bad grid" in e.message and "'*'" in e.message
    # value starts at col 9 (the quote); '*' is at offset 18 of the string
    assert _at(e) == (9, 9 + 1 + 18)
    rendered = e.render().splitlines()
    assert rendered[-1].index("^") == rendered[-2].index("*")


def test_slash_is_rejected(write):
    e = _err(write, BASE.replace('length = "n"\naccess = "out"', 'length = "n / 2"\naccess = "out"'))
    assert "use '//'" in e.message and _at(e) == (33, 10 + 1 + 2)


def test_length_names_unknown_param(write):
    e = _err(write, BASE.replace('length = "n"\naccess = "out"', 'length = "2 * m"\naccess = "out"'))
    assert "'m', which is not a param" in e.message
    assert _at(e) == (33, 10 + 1 + 4)


def test_length_names_a_buffer(write):
    e = _err(write, BASE.replace('length = "n"\naccess = "out"', 'length = "a"\naccess = "out"'))
    assert "'a', a buffer, not a scalar" in e.message and _at(e) == (33, 11)


def test_length_names_a_float_scalar(write):
    text = BASE + '\n[[param]]\nname = "alpha"\nscalar = "f32"\n'
    text = text.replace('length = "n"\naccess = "out"', 'length = "alpha"\naccess = "out"')
    text = text.replace("[candidate]", "[candidate]\nargs = [\"a\", \"b\", \"c\", \"n\"]")
    e = _err(write, text)
    assert "a f32 scalar" in e.message


def test_assume_must_be_a_predicate(write):
    e = _err(write, BASE.replace('mode = "bitexact"', 'mode = "bitexact"\nassume = ["n % 4"]'))
    assert "expected a predicate" in e.message and _at(e) == (4, 12)
    e = _err(write, BASE.replace('mode = "bitexact"', 'mode = "bitexact"\nassume = ["n % 4 = 0"]'))
    assert "unexpected '='" in e.message and _at(e) == (4, 11 + 1 + 6)
    e = _err(write, BASE.replace('mode = "bitexact"', 'mode = "bitexact"\nassume = ["n > 1", "k < 3"]'))
    assert "'k', which is not a param" in e.message and _at(e) == (4, 21)


def test_ptx_file_missing(write):
    e = _err(write, BASE.replace('ptx = "vector_add.ptx"\nkernel = "vector_add"\ngrid = ["ceil_div(n, 256)", 1, 1]\nblock = [256, 1, 1]\n\n[[param]]',
                                 'ptx = "nope.ptx"\nkernel = "vector_add"\ngrid = ["ceil_div(n, 256)", 1, 1]\nblock = [256, 1, 1]\n\n[[param]]'))
    assert "ptx file 'nope.ptx' does not exist" in e.message and _at(e) == (13, 7)


def test_kernel_not_in_ptx(write):
    e = _err(write, BASE.replace('kernel = "vector_add"\ngrid', 'kernel = "vector_sub"\ngrid', 1))
    assert "no kernel (.entry) named 'vector_sub'" in e.message and "vector_add" in e.message
    assert _at(e) == (8, 10)


def test_param_count_mismatch(write):
    text = BASE + '\n[[param]]\nname = "extra"\nscalar = "s32"\n'
    e = _err(write, text)
    assert ".entry vector_add has 4 parameter(s), the spec declares 5" in e.message
    assert _at(e) == (8, 10)


def test_scalar_width_mismatch(write):
    e = _err(write, BASE.replace('scalar = "s32"', 'scalar = "s64"'))
    assert "param 'n' is a s64 scalar (64 bits) but .entry vector_add parameter 3" in e.message
    assert _at(e) == (37, 8)


def test_args_errors(write):
    e = _err(write, BASE.replace("[candidate]\n", '[candidate]\nargs = ["a", "b", "x", "n"]\n'))
    assert "args names 'x', which is not a param" in e.message and _at(e) == (13, 19)
    e = _err(write, BASE.replace("[candidate]\n", '[candidate]\nargs = ["a", "b", "c"]\n'))
    assert ".entry vector_add has 4 parameter(s), args lists 3" in e.message
    assert _at(e) == (13, 8)
    e = _err(write, BASE.replace("[candidate]\n", '[candidate]\nargs = ["a", "a", "c", "n"]\n'))
    assert "args names 'a' twice" in e.message


def test_range_errors(write):
    e = _err(write, BASE.replace("range = [1, 2048]", "range = [9, 2]"))
    assert "range of 'n' is empty" in e.message and _at(e) == (39, 9)
    e = _err(write, BASE.replace("range = [1, 2048]", "range = [1, 4294967296]"))
    assert "outside the s32 range" in e.message and _at(e) == (39, 13)
    e = _err(write, BASE.replace("range = [1, 2048]", "range = [1, 2048]\nvalues = [3]"))
    assert "both 'range' and 'values'" in e.message


def test_duplicate_param(write):
    e = _err(write, BASE.replace('name = "b"', 'name = "a"'))
    assert "duplicate param name 'a'" in e.message and _at(e) == (25, 8)


def test_buffer_and_scalar_keys(write):
    e = _err(write, BASE.replace('scalar = "s32"\nrange', 'scalar = "s32"\naccess = "in"\nrange'))
    assert "unknown key 'access' in scalar param 'n'" in e.message and _at(e) == (39, 1)


def test_toml_syntax_error_is_located(write):
    e = _err(write, BASE.replace('mode = "bitexact"', 'mode = "bitexact'))
    assert "invalid TOML" in e.message and e.loc.line == 3


def test_multiline_array_positions(write):
    e = _err(write, BASE.replace('grid = ["ceil_div(n, 256)", 1, 1]\nblock = [256, 1, 1]\n\n[candidate]',
                                 'grid = [\n  "ceil_div(n, 256)",\n  "zz",\n  1,\n]\nblock = [256, 1, 1]\n\n[candidate]'))
    assert "'zz'" in e.message and _at(e) == (11, 4)


def test_launch_dimension_below_one_is_an_error(write):
    s = load_spec(write(BASE.replace('grid = ["ceil_div(n, 256)", 1, 1]', 'grid = ["n - 5", 1, 1]', 1)))
    assert s.reference.launch({"n": 6})[0] == (1, 1, 1)
    with pytest.raises(LocatedError, match=r"grid dimension 'n - 5' is 0 .*at n=5") as ei:
        s.reference.launch({"n": 5})
    assert ei.value.loc.line == 9


# ------------------------------------------------------------------ expressions

@pytest.mark.parametrize("text,env,value", [
    ("ceil_div(n, 256)", {"n": 257}, 2), ("ceil_div(n, 256)", {"n": 256}, 1),
    ("min(a, b) * 2 + max(a, b, 7)", {"a": 3, "b": 5}, 13), ("-(n // 4) % 3", {"n": 9}, 1),
    ("(1 + 2) * 3 - 4 // 2", {}, 7), ("rows * cols", {"rows": 3, "cols": 5}, 15),
    (5, {}, 5),
])
def test_expression_values(text, env, value):
    assert parse_expr(text).eval(env) == value


@pytest.mark.parametrize("text,env,value", [
    ("n % 4 == 0", {"n": 8}, True), ("n % 4 == 0", {"n": 9}, False),
    ("1 <= n <= 8", {"n": 8}, True), ("1 <= n <= 8", {"n": 9}, False),
    ("n > 2 and m != 3 or n == 0", {"n": 0, "m": 3}, True),
    ("not n < 3", {"n": 3}, True), ("n >= 2 and (m < 2 or m > 5)", {"n": 2, "m": 4}, False),
])
def test_predicates(text, env, value):
    e = parse_expr(text, predicate=True)
    assert e.eval(env) is value


@pytest.mark.parametrize("text,offset,msg", [
    ("n +", 3, "end of expression"), ("foo(n)", 0, "unknown function"),
    ("ceil_div(n)", 0, "takes 2 arguments"), ("n ** 2", 3, "expected a number"),
    ("__import__('os')", 11, "unexpected character"), ("n $ 2", 2, "unexpected character"),
    ("(n + 1", 6, "expected ')'"), ("n < 2 + (m > 1)", 9, "a predicate"),
    ("n / 2", 2, "'/' is not allowed"), ("", 0, "empty"),
])
def test_expression_errors(text, offset, msg):
    with pytest.raises(ExprError) as ei:
        parse_expr(text)
    assert msg in ei.value.message
    assert ei.value.offset == offset


def test_division_by_zero_is_reported():
    with pytest.raises(KeqError, match="division by zero"):
        parse_expr("n // m").eval({"n": 1, "m": 0})


# ------------------------------------------------------------------ draws and inputs

def test_draw_scalars_respects_assume_and_is_deterministic():
    s = load_spec(KERNELS / "transpose" / "tiled_nobounds_aligned.toml")
    draws = [draw_scalars(s, np.random.default_rng(i)) for i in range(20)]
    assert all(d["rows"] % 32 == 0 and d["cols"] % 32 == 0 for d in draws)
    assert draw_scalars(s, np.random.default_rng(3)) == draws[3]
    assert draw_scalars(s, np.random.default_rng(0), fixed={"rows": 64})["rows"] == 64


def test_draw_scalars_within_range_and_values(write):
    s = load_spec(write(BASE.replace("range = [1, 2048]", "values = [3, 5, 7]")))
    seen = {draw_scalars(s, np.random.default_rng(i))["n"] for i in range(50)}
    assert seen == {3, 5, 7}
    s = load_spec(write(BASE.replace("range = [1, 2048]", "range = [10, 12]")))
    seen = {draw_scalars(s, np.random.default_rng(i))["n"] for i in range(60)}
    assert seen == {10, 11, 12}


def test_draw_scalars_unsatisfiable_assume(write):
    s = load_spec(write(BASE.replace('mode = "bitexact"', 'mode = "bitexact"\nassume = ["n > 5000"]')))
    with pytest.raises(LocatedError, match="no scalar values satisfying assume") as ei:
        draw_scalars(s, np.random.default_rng(0))
    assert (ei.value.loc.line, ei.value.loc.col) == (4, 11)


def test_make_inputs():
    s = load_spec(KERNELS / "histogram" / "shared.toml")
    sc = {"n": 300}
    v = make_inputs(s, sc, np.random.default_rng(0))
    assert v["n"] == 300
    assert v["data"].dtype == np.uint8 and v["data"].shape == (300,)
    assert v["bins"].dtype == np.uint32 and v["bins"].shape == (256,)
    assert len(np.unique(v["bins"])) > 200      # random over the whole u32 range
    assert np.array_equal(make_inputs(s, sc, np.random.default_rng(0))["data"], v["data"])
    s = load_spec(KERNELS / "vector_add" / "vec4.toml")
    v = make_inputs(s, {"n": 4000}, np.random.default_rng(0))
    assert v["c"].dtype == np.float32 and v["c"].shape == (4000,)
    assert np.isnan(v["a"]).any() or np.isinf(v["a"]).any() or v["a"].view(np.uint32).max() > 2**31
    assert not np.array_equal(v["a"], v["c"])   # out buffers are random too
    s = load_spec(KERNELS / "saxpy" / "fma_real.toml")
    sc = draw_scalars(s, np.random.default_rng(0))
    assert isinstance(sc["a"], np.float32) and isinstance(sc["n"], int)


def test_check_assumptions():
    s = load_spec(KERNELS / "matmul" / "tiled_bitexact_k16.toml")
    assert s.check_assumptions({"M": 1, "N": 1, "K": 16})
    assert not s.check_assumptions({"M": 1, "N": 1, "K": 17})
    assert not s.check_assumptions({"M": 0, "N": 1, "K": 16})   # outside range
