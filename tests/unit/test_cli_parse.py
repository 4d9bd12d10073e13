"""`keq parse FILE.ptx [--json]`: the summary of each function.

Which instructions have semantics changes as `semantics/ops` grows, so the unsupported list is
checked against `semantics.ops.is_supported` (listed iff unsupported, with its count and first
location), and by name for forms that stay unsupported (textures, tensor cores).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from semantics.ops import is_supported
from semantics.ptx import parse_ptx
from verifier.cli import main

KERNEL = """\
.version 8.5
.target sm_90
.address_size 64

.shared .align 4 .b8 tile[1024];
.shared .align 4 .b8 unused[64];
.extern .shared .align 16 .b8 dsmem[];

.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [twice_param_0];
	shl.b32 %r2, %r1, 1;
	st.param.b32 [func_retval0+0], %r2;
	ret;
}

.extern .func declared_only(.param .b32 p);

.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1,
	.param .align 8 .b8 k_param_2[16]
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<20>;
	.reg .f32 	%f<8>;
	.reg .b64 	%rd<10>;
	.shared .align 4 .f32 red[32];

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	setp.ge.u32 	%p1, %r2, %r1;
	@%p1 bra 	$L__BB0_2;

	mov.u32 	%r3, tile;
	mov.u32 	%r4, dsmem;
	tex.a2d.v4.f32.f32 	{%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6, %f5, %f6}];
	tex.a2d.v4.f32.f32 	{%f1, %f2, %f3, %f4}, [%rd1, {%f6, %f5, %f6, %f5}];
	mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e4m3.f16 {%r1, %r2}, {%r5, %r6}, {%r9}, {%r1, %r2};
	st.shared.f32 	[red], %f1;

$L__BB0_2:
	bar.sync 	0;
	ret;
}
"""
TEX_LINE = 41
MMA_LINE = 43

JSON_KEYS = {"file", "version", "target", "address_size", "functions"}
FUNCTION_KEYS = {"name", "kind", "params", "registers", "shared_bytes", "dynamic_shared",
                 "instructions", "blocks", "unsupported"}
BLOCK_KEYS = {"index", "labels", "instructions", "succs", "ipdom"}
UNSUPPORTED_KEYS = {"form", "count", "first"}


@pytest.fixture
def ptx(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL)
    return path


def expected_unsupported(path, function: str) -> dict[str, tuple[int, str]]:
    """form name -> (count, first location) of the function's instructions without semantics."""
    f = parse_ptx(KERNEL, str(path)).functions[function]
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for ins in f.instructions:
        if not is_supported(ins.form):
            counts[ins.form.name] += 1
            first.setdefault(ins.form.name, str(ins.loc))
    return {name: (counts[name], first[name]) for name in counts}


def run_json(path, capsys) -> dict:
    assert main(["parse", "--json", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return json.loads(out)


def test_kernel_lines_are_where_the_test_says():
    lines = KERNEL.split("\n")
    assert lines[TEX_LINE - 1].lstrip().startswith("tex.a2d")
    assert lines[MMA_LINE - 1].lstrip().startswith("mma.sync")


def test_json_has_the_documented_keys(ptx, capsys):
    doc = run_json(ptx, capsys)
    assert set(doc) == JSON_KEYS
    assert doc["file"] == str(ptx)
    assert (doc["version"], doc["target"], doc["address_size"]) == ("8.5", ["sm_90"], 64)
    # Functions with a body, in module order; the declaration-only one is not listed.
    assert [(f["name"], f["kind"]) for f in doc["functions"]] == [("twice", "func"),
                                                                   ("k", "entry")]
    for f in doc["functions"]:
        assert set(f) == FUNCTION_KEYS
        for b in f["blocks"]:
            assert set(b) == BLOCK_KEYS
        for u in f["unsupported"]:
            assert set(u) == UNSUPPORTED_KEYS


def test_json_kernel_summary(ptx, capsys):
    k = run_json(ptx, capsys)["functions"][1]
    assert k["params"] == [{"name": "k_param_0", "type": "u64"},
                           {"name": "k_param_1", "type": "u32"},
                           {"name": "k_param_2", "type": "b8", "bytes": 16}]
    assert k["registers"] == {"pred": 3, "b32": 20, "f32": 8, "b64": 10}
    # red[32] .f32 (128) + tile (1024, referenced); `unused` is not referenced by k.
    assert k["shared_bytes"] == 1152
    assert k["dynamic_shared"] is True
    assert k["instructions"] == 13
    assert k["blocks"] == [
        {"index": 0, "labels": [], "instructions": 5, "succs": [2, 1], "ipdom": 2},
        {"index": 1, "labels": [], "instructions": 6, "succs": [2], "ipdom": 2},
        {"index": 2, "labels": ["$L__BB0_2"], "instructions": 2, "succs": ["exit"],
         "ipdom": "exit"},
    ]


def test_json_func_summary(ptx, capsys):
    f = run_json(ptx, capsys)["functions"][0]
    assert f["params"] == [{"name": "twice_param_0", "type": "b32"}]
    assert f["registers"] == {"b32": 3}
    assert (f["shared_bytes"], f["dynamic_shared"]) == (0, False)
    assert f["instructions"] == 4
    assert f["blocks"] == [{"index": 0, "labels": [], "instructions": 4, "succs": ["exit"],
                            "ipdom": "exit"}]


def test_json_unsupported_list_matches_the_semantics_registry(ptx, capsys):
    doc = run_json(ptx, capsys)
    for f in doc["functions"]:
        listed = {u["form"]: (u["count"], u["first"]) for u in f["unsupported"]}
        assert len(listed) == len(f["unsupported"])           # one entry per form
        assert listed == expected_unsupported(ptx, f["name"])


def test_texture_and_tensor_core_instructions_are_listed_unsupported(ptx, capsys):
    k = run_json(ptx, capsys)["functions"][1]
    listed = {u["form"]: u for u in k["unsupported"]}
    assert listed["tex.a2d.v4.f32.f32"] == {"form": "tex.a2d.v4.f32.f32", "count": 2,
                                           "first": f"{ptx}:{TEX_LINE}:2"}
    mma = "mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e4m3.f16"   # (fp8 k16: none yet)
    assert listed[mma] == {"form": mma, "count": 1, "first": f"{ptx}:{MMA_LINE}:2"}
    # Listed in order of first appearance.
    firsts = [int(u["first"].split(":")[-2]) for u in k["unsupported"]]
    assert firsts == sorted(firsts)


def test_text_output(ptx, capsys):
    assert main(["parse", str(ptx)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.split("\n")
    assert lines[0] == f"{ptx}: PTX 8.5, target sm_90, 64-bit addresses, 2 function(s)"
    k = lines[lines.index("entry k"):]
    assert k[1] == "  params       (k_param_0: .u64, k_param_1: .u32, k_param_2: .b8[16])"
    assert k[2] == "  registers    3 .pred, 20 .b32, 8 .f32, 10 .b64"
    assert k[3] == "  shared       1152 bytes + dynamic"
    assert k[4] == "  instructions 13 in 3 basic block(s)"
    assert k[5] == "    bb0: 5 instr -> 2, 1  (reconverge at 2)"
    assert k[6] == "    bb1: 6 instr -> 2  (reconverge at 2)"
    assert k[7] == "    bb2 $L__BB0_2: 2 instr -> exit  (reconverge at exit)"
    unsupported = expected_unsupported(ptx, "k")
    total = sum(c for c, _ in unsupported.values())
    assert k[8] == f"  unsupported  {total} instruction(s) without semantics:"
    rows = k[9:9 + len(unsupported)]
    for row, (form, (count, first)) in zip(rows, unsupported.items()):
        assert row.split() == [form, f"x{count}", "first", "at", first]
    assert any(r.split()[0] == "tex.a2d.v4.f32.f32" and f":{TEX_LINE}:2" in r for r in rows)

    f = lines[lines.index("func twice"):lines.index("entry k")]
    assert f[1] == "  params       (twice_param_0: .b32)"
    assert f[2] == "  registers    3 .b32"
    assert f[3] == "  shared       0 bytes"
    assert f[4] == "  instructions 4 in 1 basic block(s)"


def test_text_output_when_everything_has_semantics_or_nothing_does(tmp_path, capsys):
    path = tmp_path / "tiny.ptx"
    path.write_text(".version 8.5\n.target sm_90\n.address_size 64\n"
                    ".visible .entry tiny()\n{\n\tret;\n}\n")
    assert main(["parse", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  params       ()" in out and "  registers    none" in out
    if is_supported(parse_ptx(path.read_text()).functions["tiny"].instructions[0].form):
        assert "  unsupported  none: every instruction has semantics" in out
    else:
        assert f"    ret{' ' * 33}x1    first at {path}:6:2" in out


def test_parse_of_a_directory_or_missing_file_is_bad_input(tmp_path, capsys):
    assert main(["parse", str(tmp_path)]) == 3
    assert main(["parse", str(tmp_path / "missing.ptx")]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count(": error: ") == 2
