"""verifier.solvers: canonical SMT-LIB2 text, the fp.to_ieee_bv rewriting, backends, portfolio.

bitwuzla and cvc5 are optional (the `solvers` extra): tests that need one skip with a reason.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
import z3

from verifier.solvers import (BACKENDS, Budget, Cache, Obligation, Result, SolverDisagreement,
                              get_backend, solve, to_smtlib2, translate, validate_model)
from verifier.solvers import dump as dump_obligation
from verifier.solvers.backends import Backend
from verifier.solvers.canonical import canonical

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = [n for n in ("bitwuzla", "cvc5")]


def _available(name):
    ok, why = BACKENDS[name].available()
    return ok, why


def needs(name):
    ok, why = _available(name)
    return pytest.mark.skipif(not ok, reason=why or f"{name} unavailable")


PORTABLE_SOLVERS = [pytest.param(n, marks=needs(n)) for n in OPTIONAL]
ALL_SOLVERS = [pytest.param("z3")] + PORTABLE_SOLVERS


# -- obligations, built the way semantics/domains/symbolic.py builds terms ---------------------
FMT = {"f16": (5, 11), "f32": (8, 24)}


def bv(name, w=32):
    return z3.BitVec(name, w)


def fp(fmt, b):
    return z3.fpBVToFP(b, z3.FPSort(*FMT[fmt]))


def ieee(t):
    return z3.fpToIEEEBV(t)


def canon(fmt, b):
    """keq's NaN canonicalization around a result (semantics/ops/common.py)."""
    w = sum(FMT[fmt])
    return z3.If(z3.fpIsNaN(fp(fmt, b)), z3.BitVecVal((1 << (w - 1)) - 1, w), b)


def fma_vs_mul_add(fmt="f32"):
    w = sum(FMT[fmt])
    x, y, z_ = bv("x", w), bv("y", w), bv("z", w)
    rne = z3.RNE()
    a = ieee(z3.fpFMA(rne, fp(fmt, x), fp(fmt, y), fp(fmt, z_)))
    b = ieee(z3.fpAdd(rne, z3.fpMul(rne, fp(fmt, x), fp(fmt, y)), fp(fmt, z_)))
    return canon(fmt, a) != canon(fmt, b)


def add_zero(sign, fmt="f16"):
    """x + (+-0) == x for every non-NaN x; holds for -0, fails for +0 (x = -0)."""
    w = sum(FMT[fmt])
    x = bv("x", w)
    s = z3.FPSort(*FMT[fmt])
    zero = z3.fpMinusZero(s) if sign < 0 else z3.fpPlusZero(s)
    return z3.And(z3.Not(z3.fpIsNaN(fp(fmt, x))),
                  ieee(z3.fpAdd(z3.RNE(), fp(fmt, x), zero)) != x)


def mul_commutes(fmt="f16"):
    w = sum(FMT[fmt])
    a, b = bv("a", w), bv("b", w)
    return (ieee(z3.fpMul(z3.RNE(), fp(fmt, a), fp(fmt, b)))
            != ieee(z3.fpMul(z3.RNE(), fp(fmt, b), fp(fmt, a))))


def add_assoc(fmt="f16"):
    w = sum(FMT[fmt])
    a, b, c = bv("a", w), bv("b", w), bv("c", w)
    rne = z3.RNE()
    l = ieee(z3.fpAdd(rne, fp(fmt, bv_of(z3.fpAdd(rne, fp(fmt, a), fp(fmt, b)))), fp(fmt, c)))
    r = ieee(z3.fpAdd(rne, fp(fmt, a), fp(fmt, bv_of(z3.fpAdd(rne, fp(fmt, b), fp(fmt, c))))))
    return canon(fmt, l) != canon(fmt, r)


def bv_of(t):
    return ieee(t)   # nested fp.to_ieee_bv, as chained instructions produce


def nan_bits_shared(fmt="f16"):
    """Under z3, fp.to_ieee_bv gives one bit pattern for every NaN: unsat."""
    w = sum(FMT[fmt])
    a = bv("a", w)
    t1 = z3.fpAdd(z3.RNE(), fp(fmt, a), fp(fmt, a))
    t2 = z3.fpMul(z3.RNE(), fp(fmt, a), fp(fmt, a))
    return z3.And(z3.fpIsNaN(fp(fmt, a)), ieee(t1) != ieee(t2))


def nan_bits_are_nan(fmt="f16"):
    """...and that pattern is a NaN pattern: unsat."""
    w = sum(FMT[fmt])
    a = bv("a", w)
    return z3.And(z3.fpIsNaN(fp(fmt, a)),
                  z3.Not(z3.fpIsNaN(fp(fmt, ieee(z3.fpAdd(z3.RNE(), fp(fmt, a), fp(fmt, a)))))))


def roundtrip_not_identity(fmt="f16"):
    """to_ieee_bv(to_fp(x)) != x: sat (a NaN with another payload)."""
    w = sum(FMT[fmt])
    x = bv("x", w)
    return ieee(fp(fmt, x)) != x


def roundtrip_identity_non_nan(fmt="f16"):
    w = sum(FMT[fmt])
    x = bv("x", w)
    return z3.And(z3.Not(z3.fpIsNaN(fp(fmt, x))), ieee(fp(fmt, x)) != x)


def bv_add_commutes():
    x, y = bv("x"), bv("y")
    return x + y != y + x


def bv_shl_is_mul():
    x = bv("x")
    return (x << 1) != x * 2


def bv_increment_grows():
    x = bv("x")
    return z3.Not(z3.UGT(x + 1, x))          # sat: x = 0xffffffff


def bv_ashr_is_sdiv():
    x = bv("x")
    return (x >> 1) != x / 2                 # sat: negative odd x


def uf_congruence():
    f = z3.Function("ex2.approx.f32", z3.BitVecSort(32), z3.BitVecSort(32))
    x = bv("x")
    return f(x) != f(x + 0)


def uf_free():
    f = z3.Function("ex2.approx.f32", z3.BitVecSort(32), z3.BitVecSort(32))
    x, y = bv("x"), bv("y")
    return z3.And(f(x) != f(y), z3.ULT(x, 4), z3.ULT(y, 4))


def uf_over_fp():
    """An approximation applied to a rounded result: f(a*b) == f(b*a), unsat."""
    f = z3.Function("ex2.approx.f16", z3.BitVecSort(16), z3.BitVecSort(16))
    a, b = bv("a", 16), bv("b", 16)
    return (f(ieee(z3.fpMul(z3.RNE(), fp("f16", a), fp("f16", b))))
            != f(ieee(z3.fpMul(z3.RNE(), fp("f16", b), fp("f16", a)))))


CASES = {
    "bv_add_commutes": (bv_add_commutes, "unsat"),
    "bv_shl_is_mul": (bv_shl_is_mul, "unsat"),
    "bv_increment_grows": (bv_increment_grows, "sat"),
    "bv_ashr_is_sdiv": (bv_ashr_is_sdiv, "sat"),
    "uf_congruence": (uf_congruence, "unsat"),
    "uf_free": (uf_free, "sat"),
    "uf_over_fp": (uf_over_fp, "unsat"),
    "fma_vs_mul_add_f16": (lambda: fma_vs_mul_add("f16"), "sat"),
    "add_minus_zero": (lambda: add_zero(-1), "unsat"),
    "add_plus_zero": (lambda: add_zero(+1), "sat"),
    "mul_commutes": (mul_commutes, "unsat"),
    "add_assoc_f16": (add_assoc, "sat"),
    "nan_bits_shared": (nan_bits_shared, "unsat"),
    "nan_bits_are_nan": (nan_bits_are_nan, "unsat"),
    "roundtrip_not_identity": (roundtrip_not_identity, "sat"),
    "roundtrip_identity_non_nan": (roundtrip_identity_non_nan, "unsat"),
}


# -- canonical text ------------------------------------------------------------------------------
def test_portable_text_has_no_to_ieee_bv_and_a_standard_logic():
    ob = Obligation(fma_vs_mul_add(), "fma")
    assert ob.portable
    assert "to_ieee_bv" not in ob.text
    assert ob.text.startswith("(set-logic QF_BVFP)\n")
    assert ob.text.endswith("(check-sat)\n")
    # One NaN-bits constant for the sort, one constant per distinct to_ieee_bv site.
    assert ob.text.count("(declare-fun keq!aux!nan!8!24 () (_ BitVec 32))") == 1
    assert "keq!aux!ieee!0" in ob.text and "keq!aux!ieee!1" in ob.text \
        and "keq!aux!ieee!2" not in ob.text
    # The obligation's own declarations are the ones the caller wrote.
    assert [d.name for d in ob.decls] == ["x", "y", "z"]
    assert all(d.width == 32 for d in ob.decls)


@pytest.mark.parametrize("phi, logic", [
    (bv_add_commutes(), "QF_BV"),
    (uf_congruence(), "QF_UFBV"),
    (mul_commutes(), "QF_BVFP"),
    (uf_over_fp(), "QF_UFBVFP"),
])
def test_logic_is_chosen_from_the_term(phi, logic):
    assert translate(phi).logic == logic
    assert to_smtlib2(phi).startswith(f"(set-logic {logic})\n")


def test_declarations_are_sorted_whatever_the_creation_order():
    y = bv("y")
    x = bv("x")
    t1 = to_smtlib2(y + x != x)
    decls = [ln for ln in t1.splitlines() if ln.startswith("(declare-fun")]
    assert decls == ["(declare-fun x () (_ BitVec 32))", "(declare-fun y () (_ BitVec 32))"]


def test_the_name_is_not_part_of_the_hash():
    assert Obligation(bv_shl_is_mul(), "a").sha256 == Obligation(bv_shl_is_mul(), "b").sha256
    assert Obligation(bv_shl_is_mul()).sha256 != Obligation(bv_add_commutes()).sha256


def test_text_is_one_line_per_command_with_single_spaces():
    text = Obligation(add_assoc(), "assoc").text
    for line in text.splitlines():
        assert "  " not in line and "( " not in line and " )" not in line


_STABILITY_SCRIPT = r"""
import hashlib, sys, z3
sys.path.insert(0, {root!r})
from tests.unit.test_solvers import CASES
from verifier.solvers import Obligation
# Perturb z3's AST ids: build unrelated terms first, in a different order than the parent.
junk = [z3.BitVec(f"junk{{i}}", 8) * i for i in range(500)]
for name in reversed(sorted(CASES)):
    print(name, Obligation(CASES[name][0]()).sha256)
"""


def test_canonical_text_is_stable_across_processes():
    here = {name: Obligation(mk()).sha256 for name, (mk, _) in CASES.items()}
    again = {name: Obligation(mk()).sha256 for name, (mk, _) in CASES.items()}
    assert here == again
    out = subprocess.run([sys.executable, "-c", _STABILITY_SCRIPT.format(root=str(ROOT))],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    there = dict(line.split() for line in out.splitlines())
    assert there == here


def test_z3_only_obligation_keeps_z3_text():
    i = z3.Int("i")
    ob = Obligation(z3.And(i > 3, i < 5, i != 4))
    assert not ob.portable and "Int" in ob.translation.reason
    assert ob.text.startswith("(set-logic ALL)")


def test_reserved_prefix_is_rejected():
    with pytest.raises(ValueError, match="reserved"):
        Obligation(bv("keq!aux!x") == 1).text


# -- the fp.to_ieee_bv rewriting ------------------------------------------------------------------
def test_z3_semantics_the_rewriting_mirrors():
    """The rewriting encodes what the installed z3 means by fp.to_ieee_bv(NaN): one NaN
    pattern per sort, unspecified (each NaN pattern possible), shared by every site."""
    a = bv("a", 16)
    nan = z3.fpIsNaN(fp("f16", a))
    bits = ieee(fp("f16", a))
    for value, expected in [(0x7C01, z3.sat), (0xFFFF, z3.sat), (0x0000, z3.unsat),
                            (0x7C00, z3.unsat)]:
        s = z3.Solver()
        s.add(nan, bits == value)
        assert s.check() == expected, hex(value)
    s = z3.Solver()
    s.add(nan_bits_shared())
    assert s.check() == z3.unsat


@pytest.mark.parametrize("case", sorted(CASES))
def test_portable_text_is_equisatisfiable_under_z3(case):
    """z3 on the original term and z3 on the rewritten text give the same answer."""
    mk, expected = CASES[case]
    ob = Obligation(mk(), case)
    assert ob.portable
    native = get_backend("z3").check(ob, 60)
    portable = get_backend("z3").check(ob.text, 60)
    assert native.answer == expected
    assert portable.answer == expected


# -- backends -------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", PORTABLE_SOLVERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_solvers_agree(solver, case):
    mk, expected = CASES[case]
    ob = Obligation(mk(), case)
    backend = get_backend(solver)
    r = backend.check(ob, 60)
    if backend.supports(ob):
        # e.g. cvc5 on f16 without --fp-exp: an error, never an answer; the portfolio skips it.
        assert solver == "cvc5" and (5, 11) in ob.translation.fp_sorts
        assert r.answer == "error", r
        return
    assert r.answer == expected, r
    assert r.solver == solver and r.version and r.version != "not installed"
    if expected == "sat":
        assert set(r.model) == {d.name for d in ob.decls if not d.domain}
        assert validate_model(ob, r.model) == "sat"
    else:
        assert r.model is None


@pytest.mark.parametrize("solver", PORTABLE_SOLVERS)
def test_portable_text_parses(solver):
    ob = Obligation(add_assoc("f32"), "assoc")
    r = get_backend(solver).check(ob.text, 60)
    assert r.answer == "sat", r


@pytest.mark.parametrize("solver", PORTABLE_SOLVERS)
def test_raw_z3_text_is_rejected_by_portable_solvers(solver):
    """Why the rewriting exists: z3's own text (fp.to_ieee_bv) is an error, not an answer."""
    ob = Obligation(mul_commutes(), "mul")
    assert "fp.to_ieee_bv" in ob.z3_text
    r = get_backend(solver).check(ob.z3_text, 10)
    assert r.answer == "error"


def test_z3_model_has_the_declared_constants():
    ob = Obligation(bv_ashr_is_sdiv(), "ashr")
    r = get_backend("z3").check(ob, 30)
    assert r.answer == "sat"
    x = r.model["x"]
    assert x >= 1 << 31 and x & 1      # negative and odd
    assert validate_model(ob, r.model) == "sat"
    assert validate_model(ob, {"x": 4}) == "unsat"


def hard():
    """Factor a 62-bit semiprime: no solver does this in a fraction of a second."""
    x, y = z3.BitVec("x", 64), z3.BitVec("y", 64)
    n = 2147483647 * 2147483629
    return z3.And(x * y == n, z3.UGT(x, 1), z3.UGT(y, 1), z3.ULT(x, 1 << 32),
                  z3.ULT(y, 1 << 32), z3.ULE(x, y), x != 2147483629)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_timeout_is_timeout_not_unsat(solver):
    r = get_backend(solver).check(Obligation(hard(), "hard"), 0.3)
    assert r.answer == "timeout", r
    assert r.seconds < 10


# -- portfolio ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["race", "all"])
def test_portfolio_fma_counterexample(mode):
    ob = Obligation(fma_vs_mul_add("f32"), "fma")
    r = solve(ob, timeout_s=60, mode=mode)
    assert r.answer == "sat" and r.definitive
    assert set(r.model) == {"x", "y", "z"}
    assert r.detail == "model validated by z3"
    assert r.sha256 == hashlib.sha256(ob.text.encode()).hexdigest()
    if mode == "all":
        ran = {x.solver for x in r.results} | {s for s, _ in r.skipped}
        assert ran == {"z3", "sparse", "bitwuzla", "cvc5"}
        # (no input buffer here: the sparse search has nothing to fix)
        assert ("sparse", "no input buffer has more than 3 elements in the obligation") in \
            r.skipped or not _available("sparse")[0]
        assert all(x.answer == "sat" for x in r.results)


def test_portfolio_unsat_and_z3_only():
    assert solve(Obligation(mul_commutes()), timeout_s=60).answer == "unsat"
    i = z3.Int("i")
    r = solve(Obligation(z3.And(i > 3, i < 5, i != 4)), timeout_s=30, mode="all")
    assert r.answer == "unsat" and r.solver == "z3"
    assert [x.solver for x in r.results] == ["z3"]
    assert {s for s, _ in r.skipped} == {"sparse", "bitwuzla", "cvc5"}


def test_portfolio_timeout_is_not_unsat():
    r = solve(Obligation(hard(), "hard"), timeout_s=0.5, mode="all")
    assert r.answer == "timeout" and not r.definitive and r.model is None


def test_budget_exhausted_gives_timeout():
    b = Budget(0.0)
    r = solve(Obligation(bv_add_commutes()), timeout_s=10, budget=b)
    assert r.answer == "timeout" and r.results == ()


def test_cache_hit_returns_the_same_answer(tmp_path):
    cache = Cache(tmp_path / "cache")
    ob = Obligation(bv_increment_grows(), "inc")
    first = solve(ob, timeout_s=30, cache=cache)
    assert first.answer == "sat" and not first.cached
    second = solve(Obligation(bv_increment_grows(), "other name"), timeout_s=30, cache=cache)
    assert second.cached and second.answer == "sat" and second.model == first.model
    assert second.solver == first.solver
    on_disk = Cache(tmp_path / "cache")          # a new process would see the same
    third = solve(ob, timeout_s=30, cache=on_disk)
    assert third.cached and third.answer == "sat" and third.model == first.model
    assert (tmp_path / "cache" / f"{canonical(ob).sha256}.json").exists()


def test_cache_does_not_store_timeouts(tmp_path):
    cache = Cache(tmp_path)
    ob = Obligation(hard(), "hard")
    solve(ob, solvers=("z3",), timeout_s=0.3, cache=cache)
    assert cache.get(canonical(ob).sha256) is None


def test_dump_writes_sha_named_text(tmp_path):
    ob = Obligation(add_assoc(), "assoc")
    path = dump_obligation(ob, tmp_path)
    assert path.name == f"{ob.sha256}.smt2"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == ob.sha256
    solve(ob, solvers=("z3",), timeout_s=30, dump_dir=tmp_path / "d")
    assert (tmp_path / "d" / f"{ob.sha256}.smt2").read_text() == ob.text


# -- internal errors: fake backends (forked workers inherit the patched registry) -------------------
class _Liar(Backend):
    name = "liar"

    @classmethod
    def available(cls):
        return True, ""

    @property
    def version(self):
        return "0"

    def _check(self, problem, timeout_s, t0):
        return self._result("unsat", None, t0)


class _BadModel(_Liar):
    name = "badmodel"

    def _check(self, problem, timeout_s, t0):
        return self._result("sat", {"x": 4}, t0)


class _Stuck(_Liar):
    name = "stuck"

    def _check(self, problem, timeout_s, t0):
        time.sleep(3600)              # ignores its time limit


@pytest.fixture
def fakes(monkeypatch):
    monkeypatch.setitem(BACKENDS, "liar", _Liar)
    monkeypatch.setitem(BACKENDS, "badmodel", _BadModel)
    monkeypatch.setitem(BACKENDS, "stuck", _Stuck)


def test_disagreement_raises(fakes):
    with pytest.raises(SolverDisagreement, match="disagree"):
        solve(Obligation(bv_increment_grows(), "inc"), solvers=("z3", "liar"), timeout_s=30,
              mode="all")


def test_sat_with_a_wrong_model_raises(fakes):
    with pytest.raises(SolverDisagreement, match="refutes"):
        solve(Obligation(bv_ashr_is_sdiv(), "ashr"), solvers=("badmodel",), timeout_s=30)


def test_stuck_solver_is_killed_and_reported_as_timeout(fakes):
    t0 = time.monotonic()
    r = solve(Obligation(bv_add_commutes()), solvers=("stuck",), timeout_s=0.5)
    assert r.answer == "timeout"
    assert [x.answer for x in r.results] == ["timeout"]
    assert time.monotonic() - t0 < 10


def test_race_ignores_a_stuck_solver(fakes):
    r = solve(Obligation(bv_add_commutes()), solvers=("stuck", "z3"), timeout_s=30)
    assert r.answer == "unsat" and r.solver == "z3"


def test_result_rejects_unknown_answers():
    with pytest.raises(ValueError):
        Result("maybe", None, 0.0, "z3", "x")


def test_jobs_limit_queues_the_next_solver(fakes):
    """With one job, z3 starts only after the stuck solver was killed at its time limit."""
    r = solve(Obligation(bv_add_commutes()), solvers=("stuck", "z3"), timeout_s=0.5, jobs=1)
    assert r.answer == "unsat" and r.solver == "z3"
    assert [x.answer for x in r.results] == ["timeout", "unsat"]


# -- bitwuzla configurations (bench/obligations.py times them) ---------------------------------
@needs("bitwuzla")
def test_a_bitwuzla_configuration_sets_its_options_and_nothing_else():
    import bitwuzla as bz
    from verifier.solvers.backends import BitwuzlaBackend

    class Unflattened(BitwuzlaBackend):
        name, OPTIONS, FP_OPTIONS = "unflat", {"PP_FLATTEN_AND": False}, {}

    default, unflat = get_backend("bitwuzla").options(5), Unflattened().options(5)
    assert default.get(bz.Option.PP_FLATTEN_AND) is True
    assert unflat.get(bz.Option.PP_FLATTEN_AND) is False
    for option in bz.Option.__members__.values():
        if option != bz.Option.PP_FLATTEN_AND:
            assert unflat.get(option) == default.get(option), option
    assert Unflattened().check(Obligation(mul_commutes(), "mul"), 30).answer == "unsat"
    assert Unflattened.engine == get_backend("sparse").engine == "bitwuzla"


@needs("bitwuzla")
def test_bitwuzla_decides_floating_point_without_its_abstraction_module(monkeypatch):
    import bitwuzla as bz
    from verifier.solvers.backends import BitwuzlaBackend
    member = get_backend("bitwuzla")
    assert member.options(5, floating=True).get(bz.Option.ABSTRACTION) is False
    assert member.options(5, floating=False).get(bz.Option.ABSTRACTION) is True
    seen, options = [], BitwuzlaBackend.options
    monkeypatch.setattr(BitwuzlaBackend, "options",
                        lambda self, t, floating=False: seen.append(floating) or
                        options(self, t, floating))
    fp, bv = Obligation(fma_vs_mul_add("f32")), Obligation(bv_add_commutes())
    assert member.check(fp, 30).answer == "sat"
    assert member.check(bv, 30).answer == "unsat"
    # a stored text (keq check) is read the same way as the obligation it came from
    assert member.check(fp.text, 30).answer == "sat"
    assert member.check(bv.text, 30).answer == "unsat"
    assert seen == [True, False, True, False]


# -- the search among sparse inputs -----------------------------------------------------------
def _sums(n: int, order_b):
    """`out != out'` for two f32 sums of `in[0..n)`, in order and in `order_b`'s order."""
    xs = [fp("f32", bv(f"in[{i}]")) for i in range(n)]
    a = xs[0]
    for x in xs[1:]:
        a = z3.fpAdd(z3.RNE(), a, x)
    b = xs[order_b[0]]
    for i in order_b[1:]:
        b = z3.fpAdd(z3.RNE(), b, xs[i])
    return ieee(a) != ieee(b)


@needs("sparse")
def test_the_sparse_search_finds_a_reordered_sum_with_few_nonzero_elements():
    n = 16
    ob = Obligation(_sums(n, list(range(n - 1, -1, -1))), "reversed sum")
    backend = get_backend("sparse")
    assert backend.supports(ob) == ""
    assert [d.name for d in backend.fixed(ob)] == [f"in[{i}]" for i in range(3, n)]
    r = backend.check(ob, 30)
    assert r.answer == "sat" and r.solver == "sparse"
    assert all(r.model[f"in[{i}]"] == 0 for i in range(3, n))
    assert validate_model(ob, r.model) == "sat"
    # through the portfolio: the model is validated like any other
    r = solve(ob, solvers=("sparse",), timeout_s=30)
    assert r.answer == "sat" and r.detail == "model validated by z3"


@needs("sparse")
def test_the_sparse_search_never_proves_anything():
    # the same sum both ways: unsat, which a search in a corner of the inputs cannot show
    n = 8
    ob = Obligation(_sums(n, list(range(n))), "the same sum")
    r = get_backend("sparse").check(ob, 30)
    assert r.answer == "unknown" and "past the first 3" in r.detail
    r = solve(ob, solvers=("sparse",), timeout_s=30)
    assert r.answer == "unknown" and not r.definitive
    # a difference that needs a nonzero element past the corner: not found there, found by
    # the others
    x = [fp("f32", bv(f"in[{i}]")) for i in range(6)]
    total = x[0]
    for y in x[1:5]:
        total = z3.fpAdd(z3.RNE(), total, y)
    one = z3.FPVal(1.0, z3.Float32())
    far = Obligation(z3.And(z3.fpGT(x[5], one), z3.fpLT(total, one)), "in[5] > 1")
    assert get_backend("sparse").check(far, 30).answer == "unknown"
    assert solve(far, solvers=("sparse", "z3"), timeout_s=30).answer == "sat"


def test_the_sparse_search_takes_only_floating_point_obligations_with_buffers():
    backend = get_backend("sparse")
    ints = Obligation(z3.Or([bv(f"in[{i}]") == 7 for i in range(8)]), "ints")
    assert "no floating point" in backend.supports(ints)
    assert "no input buffer has more than 3" in backend.supports(Obligation(fma_vs_mul_add("f32")))
    # nothing takes it: undecided, never an error
    r = solve(ints, solvers=("sparse",), timeout_s=5)
    assert r.answer == "unknown" and "no solver takes this obligation" in r.detail


# -- one question up to renaming (`verifier.solvers.canonical`) -------------------------------

def _element(i: int, bug: bool = False):
    """Element i of `(x + x) + x == 3 * x` over f32 bits (with `bug`: `== 2 * x`)."""
    x = z3.fpBVToFP(z3.BitVec(f"x[{i}]", 32), z3.Float32())
    rm = z3.RNE()
    lhs = z3.fpAdd(rm, z3.fpAdd(rm, x, x), x)
    rhs = z3.fpMul(rm, z3.FPVal(2.0 if bug else 3.0, z3.Float32()), x)
    return z3.And(z3.Not(z3.fpIsNaN(x)), z3.fpToIEEEBV(lhs) != z3.fpToIEEEBV(rhs))


def test_renamed_obligations_share_a_canonical_form_and_others_do_not():
    a, b = canonical(Obligation(_element(0))), canonical(Obligation(_element(7)))
    assert a.sha256 == b.sha256 and a.names == ("x[0]",) and b.names == ("x[7]",)
    assert canonical(Obligation(_element(0, bug=True))).sha256 != a.sha256
    # the order of first use, not the names, decides: swapping roles is another question
    x, y = z3.BitVecs("x y", 8)
    one = canonical(Obligation(z3.And(z3.ULT(x, y), x == 3)))
    two = canonical(Obligation(z3.And(z3.ULT(y, x), y == 3)))
    three = canonical(Obligation(z3.And(z3.ULT(x, y), y == 3)))
    assert one.sha256 == two.sha256 != three.sha256


def test_a_renamed_obligation_is_solved_once_and_its_model_renamed_back():
    cache = Cache()
    first = solve(Obligation(_element(0, bug=True), "x[0] differs"), timeout_s=60, cache=cache)
    assert first.answer == "sat" and not first.cached
    again = solve(Obligation(_element(5, bug=True), "x[5] differs"), timeout_s=60, cache=cache)
    assert again.cached and again.answer == "sat"
    assert set(again.model) == {"x[5]"} and again.model["x[5]"] == first.model["x[0]"]
    assert validate_model(Obligation(_element(5, bug=True)), again.model) == "sat"
    proved = [solve(Obligation(_element(i)), timeout_s=60, cache=cache) for i in range(3)]
    assert [p.answer for p in proved] == ["unsat"] * 3
    assert [p.cached for p in proved] == [False, True, True]


def test_an_elementwise_pair_asks_the_solvers_one_question_not_one_per_element():
    # tests/data/renamed/triple.toml: 300 elements, each `(x + x) + x == 3 * x` for its x[i]
    from verifier.api import load_pair, verify
    spec = Path(__file__).resolve().parents[1] / "data" / "renamed" / "triple.toml"
    v = verify(load_pair(spec), trials=0)
    assert v.kind == "equivalent", v.reasons
    # per element the query itself (unsat), after the first one's query with its floats
    # abstracted (sat: that cannot refute). The terms of a few elements come out of z3's
    # simplifier with their arguments in another order (z3 orders them by term id): a few
    # canonical forms, not 300.
    elements = [o for o in v.obligations if o.name.startswith("y[") and "abstracted" not in
                o.name]
    assert len(elements) == 300 and all(o.answer == "unsat" for o in elements)
    assert sum(not o.cached for o in elements) <= 30
