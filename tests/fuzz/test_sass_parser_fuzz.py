"""Hypothesis properties of the SASS front end.

(a) a mutated committed listing (kernels/*/*.sass, nvdisasm 13.2) or a mutated cuobjdump
    listing either parses or raises a `SassSyntaxError` located inside the text (line within
    the file, column within the line, the line itself echoed, a caret): any other exception
    (IndexError, ValueError, KeyError, ...) is a bug;
(b) whenever a mutation parses, parse(print(m)) == m, and every function's CFG builds or is
    refused with a located error;
(c) the same for arbitrary text and for soups of SASS tokens.

Mutations work on the instruction-bearing part of small listings (a window of lines around
the text section) so that most examples reach the instruction parser.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semantics.errors import KeqError, LocatedError
from semantics.sass import SassSyntaxError, build_sass_cfg, parse_sass, print_sass

REPO = Path(__file__).resolve().parents[2]

CUOBJDUMP = """
	code for sm_90
	.target	sm_90

		Function : k
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;              /* 0x00000a00ff017b82 */
                                                                       /* 0x000fe20000000800 */
        /*0010*/                   BSSY B0, 0x50 ;                     /* 0x0000019000007945 */
                                                                       /* 0x000fe20003800000 */
        /*0020*/               @P0 BRA 0x40 ;                          /* 0x0000000000340947 */
                                                                       /* 0x000fea0003800000 */
        /*0030*/                   LDG.E R3, desc[UR4][R2.64+0x10] ;   /* 0x0000000402037981 */
                                                                       /* 0x000ee2000c1e1900 */
        /*0040*/                   BSYNC B0 ;                          /* 0x0000000000007941 */
                                                                       /* 0x000fea0003800000 */
        /*0050*/                   EXIT ;                              /* 0x000000000000794d */
                                                                       /* 0x000fea0003800000 */
        /*0060*/                   BRA 0x60;                           /* 0xfffffffc00fc7947 */
                                                                       /* 0x000fc0000383ffff */
		..........
"""


def _seeds() -> list[str]:
    seeds = [CUOBJDUMP]
    for path in sorted((REPO / "kernels").rglob("*.sass")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= 700:
            seeds.append(text)
    return seeds


SEEDS = _seeds()
_TOKEN = re.compile(r"\s+|[\w.$]+|.", re.S)
PUNCTUATION = list("[](),;:|+-~!@`.`/*\"") + ["/*", "*/", "//", "\n", "\t", " ", "0x", "R",
                                              "UR", "P", "PT", ".reuse", ".64", "c[0x0]"]


@st.composite
def mutated_sass(draw) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["tok_del", "tok_dup", "tok_swap", "chr_del", "chr_dup",
                                     "punct", "line_del", "line_dup", "truncate"]))
        lines = text.split("\n")
        if kind.startswith("line"):
            if len(lines) < 2:
                continue
            i = draw(st.integers(0, len(lines) - 1))
            if kind == "line_del":
                del lines[i]
            else:
                lines.insert(i, lines[i])
            text = "\n".join(lines)
            continue
        if kind == "truncate":
            text = text[:draw(st.integers(0, len(text)))]
            continue
        # edit one line, chosen among the instruction lines most of the time
        code = [k for k, ln in enumerate(lines) if re.match(r"\s+/\*[0-9a-f]{4}\*/\s+[@A-Z]", ln)]
        pool = code if code and draw(st.booleans()) else range(len(lines))
        k = draw(st.sampled_from(list(pool)))
        line = lines[k]
        if kind.startswith("tok"):
            toks = _TOKEN.findall(line)
            if len(toks) < 2:
                continue
            i = draw(st.integers(0, len(toks) - 1))
            if kind == "tok_del":
                del toks[i]
            elif kind == "tok_dup":
                toks.insert(i, toks[i])
            else:
                j = draw(st.integers(0, len(toks) - 1))
                toks[i], toks[j] = toks[j], toks[i]
            line = "".join(toks)
        elif kind in ("chr_del", "chr_dup"):
            if not line:
                continue
            i = draw(st.integers(0, len(line) - 1))
            line = line[:i] + (line[i] if kind == "chr_dup" else "") + line[i:] if \
                kind == "chr_dup" else line[:i] + line[i + 1:]
        else:
            i = draw(st.integers(0, len(line)))
            line = line[:i] + draw(st.sampled_from(PUNCTUATION)) + line[i:]
        lines[k] = line
        text = "\n".join(lines)
    return text


def check_parse(text: str):
    """Parse `text`; a failure must be a SassSyntaxError located inside it."""
    try:
        return parse_sass(text, "fuzz.sass")
    except SassSyntaxError as e:
        assert isinstance(e, LocatedError)
        lines = text.split("\n")
        assert e.loc.file == "fuzz.sass"
        assert 1 <= e.loc.line <= len(lines), (e.loc, len(lines))
        line = lines[e.loc.line - 1]
        assert 1 <= e.loc.col <= len(line) + 1, (e.loc, line)
        assert e.line_text == line
        rendered = e.render()
        assert rendered.startswith(f"fuzz.sass:{e.loc.line}:{e.loc.col}: error: ")
        assert rendered.endswith("^")
        return None


def check_round_trip(m) -> None:
    printed = print_sass(m)
    assert parse_sass(printed, "printed.sass") == m, printed
    for f in m.functions:
        try:
            cfg = build_sass_cfg(f)
        except KeqError as e:                    # e.g. a branch out of the function
            assert isinstance(e, LocatedError)
            continue
        assert len(cfg.ipdom) == len(cfg.blocks) == len(cfg.cfg.preds)


FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_seeds_parse_and_round_trip():
    assert len(SEEDS) > 20
    for text in SEEDS:
        check_round_trip(parse_sass(text, "seed.sass"))


@FUZZ
@given(mutated_sass())
def test_mutated_sass_parses_or_raises_a_located_error(text):
    m = check_parse(text)
    if m is not None:
        check_round_trip(m)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_random_text_parses_or_raises_a_located_error(text):
    m = check_parse(text)
    if m is not None:
        check_round_trip(m)


_HEAD = "\t.target\tsm_90\n\t.section\t.text.k,\"ax\",@progbits\n\t.type\tk,@function\nk:\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(
    ["@", "!", "P0", "PT", "UP0", "IMAD", "IMAD.WIDE", "BRA", "BSSY", "BSYNC", "RET.REL",
     "EXIT", "LDG.E", "R1", "R2.64", "R3.reuse", "UR4", "RZ", "URZ", "B0", "-", "~", "|",
     ",", ";", "[", "]", "+", "c", "desc", "0x10", "-0x8", "1.5", "+INF", "QNAN", "`(k)",
     "`(.L_x_0)", ".reuse", "SR_TID.X", "SB0", "0x", "R9999", " "]), max_size=12),
    max_size=8))
def test_token_soup_instructions_parse_or_raise_a_located_error(rows):
    body = "".join(f"        /*{16 * i:04x}*/                   {' '.join(r)}\n"
                   for i, r in enumerate(rows))
    text = _HEAD + body + ".L_x_0:\n"
    m = check_parse(text)
    if m is not None:
        check_round_trip(m)
