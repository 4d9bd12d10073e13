"""Bad PTX gives a PtxSyntaxError at the right line and column with a useful message, and the
CLI prints it as `file:line:col: error: ...`, the line and a caret, exit code 3, no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from semantics.errors import LocatedError, PtxSyntaxError
from semantics.ptx import parse_ptx
from verifier.cli import main

HEADER = ".version 8.5\n.target sm_90\n.address_size 64\n"          # lines 1-3


def kernel(body: str) -> str:
    """A kernel whose body starts on line 8."""
    return (HEADER + ".visible .entry k(.param .u64 a)\n{\n"          # lines 4-5
            "\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n"              # lines 6-7
            + body + "\n}\n")


# (name, text, line, col, message regex)
CASES = [
    ("unknown opcode", kernel("\tfoo.u32 %r1, %r2;"), 8, 2, r"unknown instruction 'foo'"),
    ("unknown opcode after a guard", kernel("\t@%p1 frob %r1;"), 8, 7,
     r"unknown instruction 'frob'"),
    ("unknown modifier", kernel("\tadd.zz.u32 %r1, %r2, %r3;"), 8, 2,
     r"unknown modifier '\.zz' for 'add'"),
    ("unknown modifier on ld", kernel("\tld.global.foo.u32 %r1, [a];"), 8, 2,
     r"unknown modifier '\.foo' for 'ld'"),
    ("empty modifier", kernel("\tadd..u32 %r1, %r2, %r3;"), 8, 2, r"empty modifier"),
    ("two types where one is allowed", kernel("\tadd.u32.u32 %r1, %r2, %r3;"), 8, 2,
     r"'add\.u32\.u32' has 2 type modifier\(s\); 'add' takes 1"),
    ("missing type", kernel("\tadd %r1, %r2, %r3;"), 8, 2,
     r"'add' has 0 type modifier\(s\); 'add' takes 1"),
    ("cvt with one type", kernel("\tcvt.u32 %r1, %r2;"), 8, 2,
     r"'cvt\.u32' has 1 type modifier\(s\); 'cvt' takes 2"),
    ("undeclared register", kernel("\tadd.u32 %r1, %r2, %r9;"), 8, 20,
     r"undeclared register '%r9'"),
    ("undeclared register name", kernel("\tadd.u32 %r1, %r2, %q;"), 8, 20,
     r"undeclared register '%q'"),
    ("undeclared guard", kernel("\t@%p7 bra L;\nL:"), 8, 3, r"undeclared register '%p7'"),
    ("undefined label", kernel("\tmov.u32 %r1, 0;\n\tbra $L_nowhere;"), 9, 6,
     r"undefined symbol '\$L_nowhere'"),
    ("undefined symbol", kernel("\tld.param.u64 %r1, [nosuch];"), 8, 21,
     r"undefined symbol 'nosuch'"),
    ("missing ';' before the next line", kernel("\tadd.u32 %r1, %r2, %r3\n\tret;"), 8, 23,
     r"expected ';' at the end of the instruction"),
    ("missing ';' before '}'", HEADER + ".visible .entry k()\n{\n\tret\n}\n", 6, 5,
     r"expected ';' at the end of the instruction"),
    ("junk after an operand", kernel("\tadd.u32 %r1, %r2 %r3;"), 8, 19,
     r"expected ',' or ';' after an operand, found '%r3'"),
    ("unterminated body", HEADER + ".visible .entry k()\n{\n\tret;\n", 6, 6,
     r"unterminated function body: expected '\}' to close the '\{' at line 5"),
    ("unterminated scoped block", HEADER + ".visible .entry k()\n{\n\t{\n\tret;\n}\n", 8, 2,
     r"unterminated function body"),
    ("bad hex number", kernel("\tadd.u32 %r1, %r2, 0x;"), 8, 20, r"bad number '0x'"),
    ("bad decimal number", kernel("\tadd.u32 %r1, %r2, 12ab;"), 8, 20, r"bad number '12ab'"),
    ("bad binary number", kernel("\tadd.u32 %r1, %r2, 0b102;"), 8, 20, r"bad number '0b102'"),
    ("bad octal number", kernel("\tadd.u32 %r1, %r2, 08;"), 8, 20, r"bad number '08'"),
    ("digit separators are not PTX", kernel("\tadd.u32 %r1, %r2, 1_000;"), 8, 20,
     r"bad number '1_000'"),
    ("short float bits", kernel("\tmov.f32 %r1, 0f3F80000;"), 8, 15, r"bad number '0f3F80000'"),
    ("bad float bits", kernel("\tmov.f32 %r1, 0f3F80000G;"), 8, 15,
     r"bad number '0f3F80000G'"),
    ("bad address offset", kernel("\tld.param.u32 %r1, [a+0x];"), 8, 23,
     r"expected an address offset \(an integer\), found '0x'"),
    ("duplicate label", kernel("L1:\n\tret;\nL1:\n\tret;"), 10, 1, r"label 'L1' defined twice"),
    ("register declared twice", kernel("\t.reg .b32 %x;\n\t.reg .b32 %x;"), 9, 12,
     r"register '%x' declared twice in this scope"),
    ("missing .version", ".target sm_90\n.address_size 64\n", 1, 1,
     r"a PTX module must begin with \.version"),
    ("missing .version after comments", "// hello\n\n  .target sm_90\n", 3, 3,
     r"a PTX module must begin with \.version"),
    ("empty file", "", 1, 1, r"empty PTX module: expected \.version"),
    ("missing .target", ".version 8.5\n", 1, 1, r"missing \.target directive"),
    ("bad version", ".version 8\n.target sm_90\n", 1, 10, r"expected a version such as 8\.5"),
    ("bad address size", ".version 8.5\n.target sm_90\n.address_size 48\n", 3, 15,
     r"address size must be 32 or 64"),
    ("unknown top-level directive", HEADER + ".bogus 1;\n", 4, 1,
     r"expected a directive \(\.entry, \.func, \.global, \.\.\.\), found '\.bogus'"),
    ("bad alignment", HEADER + ".global .align 3 .b8 x[4];\n", 4, 16,
     r"alignment must be a power of two"),
    ("variable without a type", HEADER + ".global .align 4 x;\n", 4, 18,
     r"expected a type in the \.global declaration"),
    ("unknown special register component", kernel("\tmov.u32 %r1, %tid.w2;"), 8, 15,
     r"unknown component '\.w2' of %tid"),
    ("guard on a non-register", kernel("\t@%tid.x bra L;\nL:"), 8, 3,
     r"a guard must be a predicate register"),
    ("operand that is not one", kernel("\tadd.u32 %r1, %r2, ;;"), 8, 20,
     r"expected an operand, found ';'"),
    ("missing param list close", HEADER + ".visible .entry k(.param .u64 a\n{\n\tret;\n}\n", 5, 1,
     r"expected ',' between parameters, found '\{'"),
    ("unterminated string", HEADER + '.file 1 "abc\n', 4, 9, r"unterminated string"),
    ("unterminated pragma string", kernel('\t.pragma "nounroll;'), 8, 10, r"unterminated string"),
    ("file name not quoted", HEADER + ".file 1 abc.cu\n", 4, 9,
     r"expected a quoted file name, found 'abc\.cu'"),
]


@pytest.mark.parametrize("name,text,line,col,message", CASES, ids=[c[0] for c in CASES])
def test_located_error(name, text, line, col, message):
    with pytest.raises(PtxSyntaxError, match=message) as info:
        parse_ptx(text, "bad.ptx")
    e = info.value
    assert isinstance(e, LocatedError)
    assert (e.loc.file, e.loc.line, e.loc.col) == ("bad.ptx", line, col), e.render()
    # The rendered form: `file:line:col: error: msg`, the source line, a caret under the column.
    rendered = e.render().split("\n")
    assert rendered[0] == f"bad.ptx:{line}:{col}: error: {e.message}"
    source_line = text.split("\n")[line - 1]
    assert rendered[1] == source_line.expandtabs(1)
    assert rendered[2] == " " * (col - 1) + "^"
    assert str(e) == rendered[0]


def test_block_comments_keep_line_numbers_in_errors():
    text = HEADER + "/* one\n two\n three */ .visible .entry k()\n{\n\tfoo;\n}\n"
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(text, "c.ptx")
    assert (info.value.loc.line, info.value.loc.col) == (8, 2)


def test_column_of_a_later_token_on_a_line_with_comments_and_tabs():
    text = kernel("\t/* c */ add.u32\t%r1, %r2,  %r9; // trailing")
    with pytest.raises(PtxSyntaxError, match="undeclared register '%r9'") as info:
        parse_ptx(text, "t.ptx")
    assert (info.value.loc.line, info.value.loc.col) == (8, 29)


# -- the CLI -------------------------------------------------------------------------------------

BAD = kernel("\tmov.u32 %r1, 0;\n\tfoo.u32 %r1, %r2;")


def test_cli_reports_a_located_error(tmp_path, capsys):
    path = tmp_path / "bad.ptx"
    path.write_text(BAD)
    code = main(["parse", str(path)])
    out, err = capsys.readouterr()
    assert code == 3
    assert out == ""
    lines = err.rstrip("\n").split("\n")
    assert lines == [f"{path}:9:2: error: unknown instruction 'foo'",
                     " foo.u32 %r1, %r2;",
                     " ^"]


def test_cli_json_mode_reports_errors_the_same_way(tmp_path, capsys):
    path = tmp_path / "bad.ptx"
    path.write_text(BAD)
    assert main(["parse", "--json", str(path)]) == 3
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"{path}:9:2: error: unknown instruction 'foo'\n")


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from verifier.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=60)


def test_cli_subprocess_exit_code_and_no_traceback(tmp_path):
    path = tmp_path / "bad.ptx"
    path.write_text(kernel("\tadd.u32 %r1, %r2, %r9;"))
    r = _run_cli("parse", str(path))
    assert r.returncode == 3
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    assert r.stderr.split("\n")[:3] == [
        f"{path}:8:20: error: undeclared register '%r9'",
        " add.u32 %r1, %r2, %r9;",
        "                   ^"]


@pytest.mark.parametrize("content,expect", [
    (b"\xff\xfe not utf-8", "not a UTF-8 text file"),
    (b"", "empty PTX module"),
    (b".version 8.5\n.target sm_90\n.entry k() {\n", "unterminated function body"),
])
def test_cli_bad_files_exit_3_without_traceback(tmp_path, content, expect):
    path = tmp_path / "x.ptx"
    path.write_bytes(content)
    r = _run_cli("parse", str(path))
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr
    assert f"{path}:" in r.stderr and expect in r.stderr


def test_cli_missing_file_and_usage_errors_exit_3(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "none.ptx")]) == 3
    err = capsys.readouterr().err
    assert "none.ptx" in err and "error" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as info:
        main(["parse"])                                   # FILE missing: a usage error
    assert info.value.code == 3
    with pytest.raises(SystemExit) as info:
        main(["nosuchcommand"])
    assert info.value.code == 3


def test_located_errors_survive_pickling():
    """A forked worker's error reaches the parent whole (it was a BrokenProcessPool)."""
    import pickle
    from semantics.errors import SourceLoc, UnsupportedError
    from semantics.machine.termination import Unscheduled
    for cls in (UnsupportedError, Unscheduled):
        e = pickle.loads(pickle.dumps(cls("what", SourceLoc("k.ptx", 3, 4), "  ld x;")))
        assert type(e) is cls and e.message == "what" and (e.loc.line, e.loc.col) == (3, 4)
        assert e.render().endswith("^")
