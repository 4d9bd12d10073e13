"""SASS sides in pair specs (`sass = ...` / `cubin = ...` instead of `ptx`), with located
errors; `keq verify` on a PTX-vs-SASS pair; `keq tv` (with --sass, and with ptxas when
installed); `prepare_sass` refusing an unsupported instruction by name and location."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from semantics.errors import LocatedError, UnsupportedError
from semantics.sass import find_nvdisasm, parse_sass_file
from semantics.sass.machine import prepare_sass
from verifier.cli.main import main
from verifier.cli.tv_cmd import find_ptxas
from verifier.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
VADD = REPO / "kernels/vector_add"

SPEC = '''\
name = "tv/vadd"
mode = "bitexact"
expect = "equivalent"

[reference]
{ref}
kernel = "vector_add"
grid = ["ceil_div(n, 256)", 1, 1]
block = [256, 1, 1]

[candidate]
{side}
kernel = "{kernel}"
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
scalar = "{ntype}"
range = [1, 4096]
'''


@pytest.fixture
def spec_file(tmp_path):
    for f in ("vector_add.ptx", "vector_add.sm_90.sass", "vector_add.sm_80.cubin"):
        shutil.copy(VADD / f, tmp_path / f)

    def write(side: str, kernel: str = "vector_add", ntype: str = "s32",
              ref: str = 'ptx = "vector_add.ptx"') -> Path:
        p = tmp_path / "tv.toml"
        p.write_text(SPEC.format(side=side, kernel=kernel, ntype=ntype, ref=ref))
        return p
    return write


def test_sass_side_loads(spec_file):
    spec = load_spec(spec_file('sass = "vector_add.sm_90.sass"'))
    c = spec.candidate
    assert c.isa == "sass" and c.module.arch == "sm_90" and c.kernel == "vector_add"
    assert c.param_types == ("u64", "u64", "u64", "s32")
    assert spec.reference.isa == "ptx"


@pytest.mark.skipif(find_nvdisasm() is None, reason="nvdisasm not installed")
def test_cubin_side_loads(spec_file):
    spec = load_spec(spec_file('cubin = "vector_add.sm_80.cubin"'))
    assert spec.candidate.isa == "cubin" and spec.candidate.module.arch == "sm_80"


def _err(path: Path) -> LocatedError:
    with pytest.raises(LocatedError) as e:
        load_spec(path)
    return e.value


def test_sass_and_cubin_together_is_an_error(spec_file):
    e = _err(spec_file('sass = "vector_add.sm_90.sass"\ncubin = "vector_add.sm_80.cubin"'))
    assert "names both sass and cubin" in e.message
    assert (e.loc.line, e.loc.col) == (13, 9)          # the cubin value


def test_missing_sass_file(spec_file):
    e = _err(spec_file('sass = "nope.sm_90.sass"'))
    assert "sass file 'nope.sm_90.sass' does not exist" in e.message and e.loc.line == 12


def test_unknown_kernel_in_sass(spec_file):
    e = _err(spec_file('sass = "vector_add.sm_90.sass"', kernel="vadd"))
    assert "has no kernel named 'vadd' (kernels: vector_add)" in e.message
    assert e.loc.line == 13


def test_param_size_mismatch(spec_file):
    e = _err(spec_file('sass = "vector_add.sm_90.sass"', ntype="s64",
                       ref='sass = "vector_add.sm_90.sass"'))
    assert "param 'n' takes 8 bytes but parameter 3 of vector_add" in e.message
    assert e.loc.line == 36                            # the [[param]] table of n


def test_keq_verify_ptx_against_sass(spec_file, capsys):
    path = spec_file('sass = "vector_add.sm_90.sass"')
    # ptxas swaps the add's operands: the NaN an f32 add returns is the PTX ISA's to leave
    # open and sm_90's to make canonical, the target assumption the claim must name
    assert main(["verify", str(path), "--set", "n=12", "--json"]) == 2
    assert "NaN" in json.loads(capsys.readouterr().out)["reasons"][0]
    path.write_text(path.read_text().replace(
        'expect = "equivalent"\n', 'expect = "equivalent"\ntarget_assumptions = '
        '["f32-nan-canonical"]\n'))
    assert main(["verify", str(path), "--set", "n=12", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "equivalent"


def test_keq_run_sass_side(spec_file, capsys):
    path = spec_file('sass = "vector_add.sm_90.sass"')
    assert main(["run", str(path), "--side", "candidate", "--set", "n=5", "--seed", "1"]) == 0


def test_keq_tv_with_a_listing(capsys):
    code = main(["tv", str(VADD / "vector_add.ptx"), "--sass",
                 str(VADD / "vector_add.sm_80.sass"), "--set", "p3=20", "--block", "32",
                 "--length", "64", "--json"])
    reports = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(r["kernel"], r["arch"], r["verdict"]) for r in reports] == \
        [("vector_add", "sm_80", "equivalent")]


def test_keq_tv_bad_set(capsys):
    code = main(["tv", str(VADD / "vector_add.ptx"), "--sass",
                 str(VADD / "vector_add.sm_80.sass"), "--set", "p9=20"])
    assert code == 3
    assert "p9" in capsys.readouterr().err


@pytest.mark.skipif(find_ptxas() is None or find_nvdisasm() is None,
                    reason="ptxas/nvdisasm not installed")
def test_keq_tv_compiles_with_ptxas(capsys):
    code = main(["tv", str(VADD / "vector_add.ptx"), "--arch", "sm_80", "--set", "p3=20",
                 "--block", "32", "--length", "64", "--json"])
    reports = json.loads(capsys.readouterr().out)
    assert code == 0 and reports[0]["verdict"] == "equivalent" and reports[0]["arch"] == "sm_80"


def test_unsupported_instruction_is_refused_by_name(tmp_path):
    text = (VADD / "vector_add.sm_90.sass").read_text()
    bad = tmp_path / "bad.sm_90.sass"
    bad.write_text(text.replace("FADD R9, R4, R3 ;", "FMUL.D2 R9, R4, R3 ;"))
    with pytest.raises(UnsupportedError) as e:
        prepare_sass(parse_sass_file(bad), "vector_add")
    assert "'FMUL.D2' has no semantics" in e.value.message
    assert e.value.loc.file.endswith("bad.sm_90.sass") and e.value.loc.line > 200
