"""The claim a spec states is the claim keq checks: float scalars' `values`/`range` (loaded,
rounded, constrained in the solvers, respected by every draw and replay), launch-bound
directives against the spec's block shapes, the `allow` / `target_assumptions` keys, and
the CLI's exit code for a bug in keq (4, one line, never a verdict's code)."""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import z3

from semantics.errors import LocatedError
from verifier.claim import assignments, claim_text, symbolic_inputs
from verifier.cli.main import main
from verifier.counterexample import concrete_inputs, from_bits, model_inputs, scalar_domain
from verifier.spec import (PairSpec, ParamSpec, draw_scalars, first_allowed, float_bits, float_value,
                           load_spec, loads_spec, scalar_value)

REPO = Path(__file__).resolve().parents[2]
K = REPO / "kernels"
ADV = REPO / "tests" / "data" / "adversarial"
SAXPY = K / "saxpy"

# saxpy (a * x + y rounded twice) against its fma form (rounded once); `{a}` is the scalar
# param's table body. Paths are absolute, so the spec may live anywhere.
SAXPY_SPEC = f'''\
name = "t/saxpy"
mode = "bitexact"
expect = "not-equivalent"
{{top}}
[reference]
ptx = "{SAXPY / 'saxpy.ptx'}"
kernel = "saxpy"
grid = ["ceil_div(n, 256)", 1, 1]
block = [256, 1, 1]

[candidate]
ptx = "{SAXPY / 'saxpy_fma.ptx'}"
kernel = "saxpy_fma"
grid = ["ceil_div(n, 256)", 1, 1]
block = [256, 1, 1]

[[param]]
name = "n"
scalar = "s32"
range = [1, 512]

[[param]]
name = "a"
{{a}}

[[param]]
name = "x"
buffer = "f32"
length = "n"
access = "in"

[[param]]
name = "y"
buffer = "f32"
length = "n"
access = "inout"
'''


def saxpy(a: str, top: str = "") -> str:
    return SAXPY_SPEC.format(a=a, top=top)


def spec_of(a: str, top: str = "", path: str = "t.toml") -> PairSpec:
    return loads_spec(saxpy(a, top), path)


def located(text: str, path: str = "t.toml") -> LocatedError:
    with pytest.raises(LocatedError) as ei:
        loads_spec(text, path)
    return ei.value


def spec_with_a(typ: str, range_=None, values=None) -> PairSpec:
    """The saxpy spec with its scalar `a` of another float type (saxpy's PTX takes an f32, so
    such a spec does not load: for what does not run a kernel), its numbers as the loader
    stores them (floats)."""
    s = spec_of('scalar = "f32"')
    a = ParamSpec("a", "scalar", typ, None, None,
                  tuple(map(float, range_)) if range_ else None,
                  tuple(map(float, values)) if values else None)
    return replace(s, params=tuple(a if p.name == "a" else p for p in s.params))


def line_of(text: str, needle: str, nth: int = 1) -> int:
    lines = [i + 1 for i, ln in enumerate(text.splitlines()) if needle in ln]
    return lines[nth - 1]


# ------------------------------------------------------------------ rounding to a float type

_NP = {"f16": (np.float16, np.uint16), "f32": (np.float32, np.uint32),
       "f64": (np.float64, np.uint64)}


@pytest.mark.parametrize("typ", sorted(_NP))
def test_float_bits_rounds_to_nearest_even_like_numpy(typ):
    dt, ut = _NP[typ]
    rng = np.random.default_rng(7)
    xs = rng.standard_normal(3000) * np.exp(rng.uniform(-110, 110, 3000))
    xs = [float(x) for x in xs] + [0.0, -0.0, 65504.0, 65520.0, 2.0**-24, 2.0**-25,
                                   3 * 2.0**-26, 2.0**-150, 1.5 * 2.0**-149, 3.4028235e38,
                                   math.inf, -math.inf]
    with np.errstate(all="ignore"):
        for x in xs:
            want = int(np.array([x]).astype(dt).view(ut)[0])
            assert float_bits(typ, x) == want, (typ, x)
            back = float(np.array([want], dtype=ut).view(dt)[0])
            got = float_value(typ, want)
            assert got == back and math.copysign(1, got) == math.copysign(1, back)


def test_float_bits_bf16_is_exact_round_to_nearest_even():
    assert float_bits("bf16", 1.0) == 0x3F80
    assert float_bits("bf16", 1 / 3) == 0x3EAB
    assert float_bits("bf16", -0.0) == 0x8000
    # ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8: up
    assert float_bits("bf16", 1 + 2.0**-8) == 0x3F80
    assert float_bits("bf16", 1 + 3 * 2.0**-8) == 0x3F82
    # just above the tie, in f64 only (a round trip through f32 would make it a tie)
    assert float_bits("bf16", 1 + 2.0**-8 + 2.0**-40) == 0x3F81
    assert float_bits("f32", 16777217) == 0x4B800000      # an int, exactly: a tie, to even
    assert float_value("bf16", 0x3F81) == 1 + 2.0**-7


# ------------------------------------------------------------------ loading float scalars

def test_float_values_are_stored_by_bit_pattern_and_minus_zero_is_its_own_value():
    s = spec_of('scalar = "f32"\nvalues = [1, 1.0, -0.0, 0.0, 0.1]')
    a = s.param("a")
    assert a.values == (1.0, -0.0, 0.0, 0.1)
    assert all(isinstance(v, float) for v in a.values)
    assert a.value_bits() == (0x3F800000, 0x80000000, 0, 0x3DCCCCCD)
    assert s.param("a").allows(np.float32(0.0)) and s.param("a").allows(np.float32(-0.0))
    only_plus = spec_of('scalar = "f32"\nvalues = [0.0]').param("a")
    assert not only_plus.allows(np.float32(-0.0)) and only_plus.allows(np.float32(0.0))


def test_float_range_accepts_ints_and_compares_as_floats():
    a = spec_of('scalar = "f32"\nrange = [0, 1]').param("a")
    assert a.range == (0.0, 1.0)
    assert a.allows(np.float32(-0.0)) and a.allows(np.float32(1.0))
    assert not a.allows(np.float32(np.nextafter(np.float32(1), np.float32(2))))
    assert not a.allows(np.float32("nan"))
    # the ends are rounded to the type: f32(0.1) > 0.1 is still in [0.1, 0.2]
    b = spec_of('scalar = "f32"\nrange = [0.1, 0.2]').param("a")
    assert b.allows(np.float32(0.1)) and b.allows(np.float32(0.2))
    assert b.float_bounds() == (float(np.float32(0.1)), float(np.float32(0.2)))


def test_bf16_scalars_are_passed_as_bit_patterns():
    a = spec_with_a("bf16", values=[1.5]).param("a")
    v = scalar_value(a, 1.5)
    assert isinstance(v, np.uint16) and int(v) == 0x3FC0
    assert a.allows(v) and a.allows(0x3FC0) and not a.allows(0x3F80)
    assert first_allowed(a) == 0x3FC0


@pytest.mark.parametrize("body, needle, key", [
    ('scalar = "f32"\nvalues = [nan]', "not a finite number", "values"),
    ('scalar = "f32"\nrange = [0.0, inf]', "not a finite number", "range"),
    ('scalar = "f32"\nrange = [nan, 1.0]', "not a finite number", "range"),
    ('scalar = "f32"\nvalues = [1e39]', "outside the f32 range", "values"),
    ('scalar = "f16"\nrange = [0, 70000]', "outside the f16 range", "range"),
    ('scalar = "f32"\nrange = [2.0, 1.0]', "is empty", "range"),
    ('scalar = "f32"\nvalues = ["1.0"]', "must be numbers", "values"),
])
def test_bad_float_domains_are_located(body, needle, key):
    text = saxpy(body)
    e = located(text)
    # (the second `range =` is a's: n has the first)
    assert needle in e.message
    assert e.loc.line == line_of(text, f"{key} =", 2 if key == "range" else 1)


@pytest.mark.parametrize("where, old, new", [
    ("grid", 'grid = ["ceil_div(n, 256)", 1, 1]', 'grid = ["ceil_div(n, 256)", "a", 1]'),
    ("block", "block = [256, 1, 1]", 'block = ["a", 1, 1]'),
    ("length", 'length = "n"', 'length = "a"'),
    ("assume", 'expect = "not-equivalent"', 'expect = "not-equivalent"\nassume = ["a > 0"]'),
])
def test_a_float_scalar_in_a_launch_expression_is_a_located_error(where, old, new):
    text = saxpy('scalar = "f32"\nrange = [0.5, 2.0]').replace(old, new, 1)
    e = located(text)
    assert "names 'a', a f32 scalar; expressions range over integer scalars" in e.message
    assert e.loc.line == line_of(text, new.splitlines()[-1][:12])


def test_domain_is_for_integer_scalars_only():
    s = spec_of('scalar = "f32"\nrange = [1.0, 1.0]')
    assert scalar_domain(s.param("a")) is None
    assert scalar_domain(s.param("n")) == list(range(1, 513))
    envs, why = assignments(s, {}, 1024)
    assert why == "" and len(envs) == 512 and all("a" not in e for e in envs)


# ------------------------------------------------------------------ the solvers' constraints

DOMAINS = [("f32", None, [1.0, -0.0, 2.5]), ("f32", [0.0, 1.0], None),
           ("f32", [-2.0, -0.5], None), ("f32", [0.1, 0.2], None),
           ("f16", None, [0.0, 65504]), ("f16", [-0.0, 0.0], None),
           ("bf16", [0.1, 3], None), ("bf16", None, [1.5, -0.0]), ("f64", [0.5, 2.0], None)]


def _probes(bits: int, p) -> list[int]:
    rng = np.random.default_rng(3)
    out = [int(x) for x in rng.integers(0, 1 << bits, 400, dtype=np.uint64)]
    top = 1 << (bits - 1)
    for v in list(p.value_bits()) + ([float_bits(p.type, x) for x in p.range] if p.range else []):
        out += [v, v + 1, v - 1, v ^ top]
    exp = {16: 0x7C00 if p.type == "f16" else 0x7F80, 32: 0x7F800000, 64: 0x7FF << 52}[bits]
    return out + [0, top, exp, exp | 1, exp | top, (1 << bits) - 1]


@pytest.mark.parametrize("body", DOMAINS, ids=str)
def test_the_solvers_constraint_is_the_claim_allows(body):
    """At every probed bit pattern (random, the ends and their neighbours, +-0, inf, NaN),
    the constraint the obligations carry holds exactly when `ParamSpec.allows` says the
    value is in the claim: the solvers and every replay read the claim alike."""
    s = spec_with_a(*body)
    p = s.param("a")
    _, constraints, variables = symbolic_inputs(s, {"n": 1})
    v = variables["a"][2]
    bits = v.size()
    assert constraints
    for raw in _probes(bits, p):
        raw &= (1 << bits) - 1
        held = z3.simplify(z3.substitute(z3.And(constraints), (v, z3.BitVecVal(raw, bits))))
        assert z3.is_true(held) == p.allows(from_bits(p, raw)), (body, hex(raw))


def test_in_mode_real_a_float_scalar_is_a_real_bounded_by_the_claim():
    from verifier.claim import real_scalar_constraints
    r = z3.Real("a")
    for body, inside, outside in [(("f32", None, [1.5, 0.1]), [1.5, float(np.float32(0.1))],
                                   [0.1, 1.0]),
                                  (("f32", [0.1, 2.0], None), [float(np.float32(0.1)), 2.0],
                                   [0.1, 2.0000001, -1.0])]:
        cs = real_scalar_constraints(spec_with_a(*body), {"a": r})
        assert cs
        for x, want in [(x, True) for x in inside] + [(x, False) for x in outside]:
            n, d = x.as_integer_ratio()
            held = z3.simplify(z3.substitute(z3.And(cs), (r, z3.RealVal(n) / z3.RealVal(d))))
            assert z3.is_true(held) == want, (body, x)


@pytest.mark.parametrize("body", DOMAINS, ids=str)
def test_every_draw_and_replay_value_is_allowed(body):
    s = spec_with_a(*body)
    p = s.param("a")
    ctx = SimpleNamespace(spec=s)
    drawn = [draw_scalars(s, np.random.default_rng(i))["a"] for i in range(200)]
    assert all(p.allows(x) for x in drawn)
    if p.range is not None:
        # both ends are drawn (as the claim includes them)
        lo, hi = (float_bits(p.type, x) for x in p.range)
        got = {p.bits_of(x) for x in drawn}
        assert lo in got and hi in got
    scalars, _ = concrete_inputs(ctx, {"n": 4}, 0)
    assert p.allows(scalars["a"])
    scalars, _ = concrete_inputs(ctx, {"n": 4}, 0, random_scalars=True)
    assert p.allows(scalars["a"])


def test_a_model_that_does_not_mention_a_scalar_replays_an_allowed_value():
    s = spec_of('scalar = "f32"\nvalues = [1.5]')
    _, _, variables = symbolic_inputs(s, {"n": 2})
    scalars, inputs = model_inputs(SimpleNamespace(spec=s), {"n": 2}, lambda v: 0, variables,
                                   0)
    assert scalars["a"] == np.float32(1.5) and inputs["a"] == np.float32(1.5)


def test_from_bits_keeps_the_exact_bits_of_a_float_scalar():
    p = spec_of('scalar = "f32"').param("a")
    v = from_bits(p, 0x7F800001)                  # a signalling NaN
    assert isinstance(v, np.float32)
    assert int(np.array([v]).view(np.uint32)[0]) == 0x7F800001


def test_fuzz_strategies_draw_within_float_ranges_whose_ends_are_not_representable():
    from hypothesis import HealthCheck, given, settings
    from verifier.fuzz.strategies import launch_values
    for body in [("f32", [0.1, 0.2], None), ("bf16", [1.0, 1e10], None),
                 ("f16", [0.1, 0.3], None), ("f32", None, [-0.0, 0.5])]:
        s = spec_with_a(*body)
        seen = []

        @settings(max_examples=40, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(launch_values(s))
        def check(values):
            seen.append(values["a"])
            assert s.param("a").allows(values["a"]), (body, values["a"])
        check()
        assert seen


# ------------------------------------------------------------------ verify, end to end

def _verify_json(tmp_path, a: str, *extra: str, capsys) -> tuple[int, dict]:
    path = tmp_path / "pair.toml"
    path.write_text(saxpy(a))
    rc = main(["verify", str(path), "--json", "-j", "1", *extra])
    return rc, json.loads(capsys.readouterr().out)


def test_the_wide_float_range_spec_is_refuted_inside_its_range(capsys):
    rc = main(["verify", str(ADV / "scalar_float_range_wide.toml"), "--json", "-j", "1"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["verdict"] == "not-equivalent"
    assert 0.5 <= out["counterexample"]["scalars"]["a"] <= 2.0


@pytest.mark.parametrize("a, check", [
    ('scalar = "f32"\nvalues = [1.5]', lambda x: x == 1.5),
    ('scalar = "f32"\nrange = [0.5, 2.0]', lambda x: 0.5 <= x <= 2.0),
])
def test_a_solver_counterexample_lies_inside_the_float_claim(tmp_path, capsys, a, check):
    # (no testing: the solver's model is the counterexample)
    rc, out = _verify_json(tmp_path, a, "--trials", "0", "--set", "n=1", capsys=capsys)
    assert rc == 1, out
    assert check(out["counterexample"]["scalars"]["a"]), out["counterexample"]


# ------------------------------------------------------------------ launch-bound directives

@pytest.mark.parametrize("spec, directive, detail", [
    ("launch_maxntid.toml", ".maxntid 128, 1, 1", "256 threads per block"),
    ("launch_reqntid.toml", ".reqntid 128, 1, 1", "block 256, 1, 1"),
])
def test_a_block_the_kernel_cannot_launch_with_is_an_error_about_the_spec(spec, directive,
                                                                           detail, capsys):
    assert main(["verify", str(ADV / spec)]) == 3
    err = capsys.readouterr().err
    text = (ADV / spec).read_text()
    line = line_of(text, "block =", 2)              # the candidate's
    assert f"{spec}:{line}:1: error: the candidate kernel copy_max128 is declared " \
           f"{directive} but the spec launches it with {detail}" in err
    assert "Traceback" not in err


def test_the_maxntid_message_is_the_documented_one():
    with pytest.raises(LocatedError) as ei:
        load_spec(ADV / "launch_maxntid.toml")
    assert ei.value.message == ("the candidate kernel copy_max128 is declared .maxntid 128, 1, "
                                "1 but the spec launches it with 256 threads per block")


@pytest.mark.parametrize("spec", sorted((K / "triton").glob("*.toml")))
def test_kernels_launched_as_their_reqntid_says_still_load(spec):
    s = load_spec(spec)
    fn = s.candidate.module.functions[s.candidate.kernel]
    assert any(d.name == "reqntid" for d in fn.directives)


def _launch_spec(tmp_path, directive: str, block: str, scalar: str, assume: str = "") -> str:
    """launch_reqntid.toml with the candidate declared `directive`, launched with `block`
    (which may name the scalar n), n's domain `scalar`, and `assume` when given."""
    src = (ADV / "launch_reqntid.ptx").read_text()
    (tmp_path / "k.ptx").write_text(src.replace(".reqntid 128, 1, 1", directive))
    shutil.copy(ADV / "launch.ptx", tmp_path / "launch.ptx")
    text = (ADV / "launch_reqntid.toml").read_text().replace("launch_reqntid.ptx", "k.ptx")
    text = text.replace('block = [256, 1, 1]\n\n[[param]]', f"block = {block}\n\n[[param]]")
    text = text.replace('scalar = "s32"\nrange = [1, 256]', scalar)
    if assume:
        text = text.replace('expect = "bad-spec"',
                            f'expect = "bad-spec"\nassume = ["{assume}"]')
    (tmp_path / "pair.toml").write_text(text)
    return str(tmp_path / "pair.toml")


@pytest.mark.parametrize("directive, block, scalar, error", [
    # .maxntid bounds the product of the extents, not each one (PTX ISA 11.4.2)
    (".maxntid 128, 1, 1", "[64, 2, 1]", 'scalar = "s32"\nvalues = [1]', None),
    (".maxntid 128, 1, 1", '["n", 1, 1]', 'scalar = "s32"\nvalues = [64, 128]', None),
    (".maxntid 128, 1, 1", '["n", 1, 1]', 'scalar = "s32"\nvalues = [64, 256, 128]',
     "with 256 threads per block at n=256"),
    # a large range: its least and greatest values are checked
    (".maxntid 128, 1, 1", '["n", 1, 1]', 'scalar = "s32"\nrange = [1, 100000]',
     "with 100000 threads per block at n=100000"),
    # .reqntid fixes every dimension (those not given are 1)
    (".reqntid 128", "[128, 1, 1]", 'scalar = "s32"\nvalues = [1]', None),
    (".reqntid 128", "[64, 2, 1]", 'scalar = "s32"\nvalues = [1]', "with block 64, 2, 1"),
    (".reqntid 128", '["n"]', 'scalar = "s32"\nrange = [1, 128]', "with block 1, 1, 1"),
])
def test_block_shapes_over_scalars_are_checked_against_the_directives(
        tmp_path, directive, block, scalar, error):
    path = _launch_spec(tmp_path, directive, block, scalar)
    if error is None:
        load_spec(path)
        return
    with pytest.raises(LocatedError) as ei:
        load_spec(path)
    assert f"is declared {directive}" in ei.value.message and error in ei.value.message
    assert ei.value.loc.line == line_of(Path(path).read_text(), "block =", 2)


def test_only_block_shapes_the_assumptions_allow_are_checked(tmp_path):
    path = _launch_spec(tmp_path, ".reqntid 128", '["n"]', 'scalar = "s32"\nrange = [1, 128]',
                        assume="n == 128")
    load_spec(path)
    path = _launch_spec(tmp_path, ".reqntid 128", '["n"]', 'scalar = "s32"\nrange = [1, 128]',
                        assume="n >= 127")
    with pytest.raises(LocatedError, match="with block 127, 1, 1 .* at n=127"):
        load_spec(path)


# ------------------------------------------------------------------ allow, target_assumptions

def test_allow_and_target_assumptions_are_loaded_and_printed_in_the_claim():
    s = load_spec(ADV / "memory_equal_value_race_allowed.toml")
    assert s.allow == ("benign-write-races",) and s.target_assumptions == ()
    assert claim_text(s, {}).endswith("every input; allowing benign-write-races")
    t = load_spec(ADV / "scalar_float_values.toml")
    assert t.target_assumptions == ("f32-nan-canonical",) and t.allow == ()
    assert claim_text(t, {}).endswith(
        "every input; assuming f32-nan-canonical (every f32 NaN result is 0x7FFFFFFF)")
    both = spec_of('scalar = "f32"', top='allow = ["benign-write-races"]\n'
                   'target_assumptions = ["f16-nan-canonical", "f32-nan-canonical"]')
    assert claim_text(both, {}).endswith(
        "; allowing benign-write-races; assuming f16-nan-canonical (every f16/bf16 NaN result "
        "is 0x7FFF), f32-nan-canonical (every f32 NaN result is 0x7FFFFFFF)")
    assert "allowing" not in claim_text(spec_of('scalar = "f32"'), {})


@pytest.mark.parametrize("top, needle", [
    ('allow = ["races"]', "allow names 'races', which is not one keq knows (allowed: "
                          "benign-write-races: "),
    ('target_assumptions = ["f64-nan-canonical"]',
     "not one keq knows (allowed: f32-nan-canonical: every f32 NaN result is 0x7FFFFFFF; "
     "f16-nan-canonical: "),
    ('allow = "benign-write-races"', "allow must be a list of name strings"),
    ('target_assumptions = [1]', "target_assumptions names an integer"),
])
def test_unknown_names_are_located_errors_listing_the_known_ones(top, needle):
    text = saxpy('scalar = "f32"', top=top)
    e = located(text)
    assert needle in e.message and e.loc.line == line_of(text, top.split(" ")[0] + " =")


def test_a_pair_spec_built_without_the_new_fields_has_none():
    s = spec_of('scalar = "f32"')
    old = PairSpec(s.path, s.name, s.mode, s.expect, s.assume, s.description, s.reference,
                   s.candidate, s.params)
    assert old.allow == () and old.target_assumptions == ()


def test_json_output_and_certificates_carry_both_lists(tmp_path):
    from verifier.certs import format as fmt
    from verifier.report import verdict_json
    from verifier.verdict import EQUIVALENT, Verdict
    s = load_spec(ADV / "nan_commuted_add_f32_canonical.toml")
    v = Verdict(EQUIVALENT, claim_text(s, {}))
    out = verdict_json(v, {}, s)
    assert out["allow"] == [] and out["target_assumptions"] == ["f32-nan-canonical"]
    assert "f32-nan-canonical" in out["claim"]
    cert = fmt.build(spec=s, spec_path=s.path, root=REPO, spec_hash="0" * 64,
                     ptx_hashes={"reference": "1" * 64, "candidate": "2" * 64},
                     semantics_hash="3" * 64, claim_text=v.claim,
                     opts=fmt.ClaimOptions(fixed={}), verdict=v, obligation_files={},
                     fuzz=None)
    assert cert["claim"]["allow"] == [] and \
        cert["claim"]["target_assumptions"] == ["f32-nan-canonical"]
    assert fmt.schema_errors(cert) == []


# ------------------------------------------------------------------ exit codes

INTERNAL = re.compile(r"^keq: internal error \(a bug in keq; please report it\): ValueError: "
                      r"boom here \(at tests/unit/test_spec_soundness\.py:\d+ in boom\)$")


def boom(*args, **kwargs):
    raise ValueError("boom\nhere")


def test_a_crash_exits_4_with_one_line_and_no_traceback(monkeypatch, capsys):
    from verifier.cli import parse_cmd
    monkeypatch.delenv("KEQ_DEBUG", raising=False)
    monkeypatch.setattr(parse_cmd, "parse_ptx_file", boom)
    assert main(["parse", str(K / "vector_add/vector_add.ptx")]) == 4
    err = capsys.readouterr().err
    assert INTERNAL.match(err.strip()) and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_keq_debug_prints_the_traceback_too(monkeypatch, capsys):
    from verifier.cli import parse_cmd
    monkeypatch.setenv("KEQ_DEBUG", "1")
    monkeypatch.setattr(parse_cmd, "parse_ptx_file", boom)
    assert main(["parse", str(K / "vector_add/vector_add.ptx")]) == 4
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert INTERNAL.match(err.strip().splitlines()[-1])


def test_keq_contradicting_itself_exits_4(monkeypatch, capsys):
    from verifier.cli import parse_cmd
    from verifier.verdict import InternalError

    def contradiction(*args, **kwargs):
        raise InternalError("a solver model did not reproduce on the emulator (keq bug)")
    monkeypatch.setattr(parse_cmd, "parse_ptx_file", contradiction)
    assert main(["parse", str(K / "vector_add/vector_add.ptx")]) == 4
    err = capsys.readouterr().err
    assert err.startswith("keq: internal error (a bug in keq; please report it): "
                          "InternalError: a solver model did not reproduce")


def test_an_interrupt_keeps_its_own_exit_code(monkeypatch, capsys):
    from verifier.cli import parse_cmd

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(parse_cmd, "parse_ptx_file", interrupt)
    assert main(["parse", str(K / "vector_add/vector_add.ptx")]) == 130


def test_a_bad_spec_still_exits_3(tmp_path, capsys):
    path = tmp_path / "pair.toml"
    path.write_text(saxpy('scalar = "f32"\nvalues = [nan]'))
    assert main(["verify", str(path)]) == 3
    err = capsys.readouterr().err
    assert f"{path}:" in err and "not a finite number" in err and "internal" not in err


@pytest.mark.parametrize("argv", [["--help"], ["verify", "--help"]])
def test_help_documents_exit_code_4(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    out = " ".join(capsys.readouterr().out.split())
    assert "4 internal error" in out


# ------------------------------------------------------------------ names

def test_keq_names_are_ordinary_constants_and_only_auxiliaries_are_reserved():
    from verifier.solvers import Obligation
    from verifier.solvers.smtlib import AUX_PREFIX
    a = z3.BitVec("keq!indexed!A!4", 32)
    u = z3.BitVec("keq!u!candidate/reg/%r5!3", 32)
    assert {d.name for d in Obligation(a + u == 1).decls} == {"keq!indexed!A!4",
                                                            "keq!u!candidate/reg/%r5!3"}
    with pytest.raises(ValueError, match="reserved"):
        Obligation(z3.BitVec(AUX_PREFIX + "x", 8) == 1).text


@pytest.mark.parametrize("solver", ["z3", "bitwuzla", "cvc5"])
def test_models_name_every_declared_constant_but_the_auxiliaries(solver):
    from verifier.solvers import Obligation
    from verifier.solvers.backends import BACKENDS
    from verifier.solvers.smtlib import AUX_PREFIX
    backend = BACKENDS[solver]()
    ok, why = backend.available()
    if not ok:
        pytest.skip(why)
    user = z3.BitVec("A[4]", 32)
    mine = z3.BitVec("keq!u!candidate/reg/%r5!3", 32)
    flag = z3.Bool("keq!u!p")
    f = z3.fpBVToFP(user, z3.Float32())
    # (fp.to_ieee_bv: the portable text declares auxiliaries, which the model leaves out)
    phi = z3.And(z3.fpToIEEEBV(z3.fpAdd(z3.RNE(), f, f)) == mine, flag, user == 0x3F800000)
    ob = Obligation(phi)
    assert AUX_PREFIX in ob.text
    r = backend.check(ob, 60)
    assert r.answer == "sat", r.detail
    assert set(r.model) == {"A[4]", "keq!u!candidate/reg/%r5!3", "keq!u!p"}
    assert r.model["keq!u!candidate/reg/%r5!3"] == 0x40000000 and r.model["keq!u!p"] is True


def test_assumes_about_one_scalar_narrow_the_count_before_enumeration(tmp_path):
    # issue 32: ranges [32, 64] with M, N, K % 32 == 0 allow 8 shapes; keq used to count
    # 33^3 = 35,937 and refuse to enumerate them
    from pathlib import Path
    from verifier.spec import load_spec
    text = (Path(__file__).resolve().parents[2] / "kernels" / "matmul" /
            "tiled_bitexact_k16.toml").read_text()
    text = text.replace('assume = ["K % 16 == 0"]',
                        'assume = ["K % 32 == 0", "M % 32 == 0", "N % 32 == 0", "M <= N + 32"]')
    text = text.replace("range = [1, 32]", "range = [32, 64]")
    p = tmp_path / "s.toml"
    p.write_text(text.replace('ptx = "', f'ptx = "{Path(__file__).resolve().parents[2]}'
                                         f'/kernels/matmul/'))
    envs, why = assignments(load_spec(p), {}, 16)
    assert why == "" and len(envs) == 8
    assert {(e["M"], e["N"], e["K"]) for e in envs} == {
        (m, n, k) for m in (32, 64) for n in (32, 64) for k in (32, 64)}
