"""`semantics.machine.printf_format` against C: the argument buffer as nvcc packs it (read
back from nvcc's own PTX), and the rendered text against glibc's snprintf (ctypes)."""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import struct
from pathlib import Path

import pytest

from semantics.machine.printf_format import parse_format, render

LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
PTX = Path(__file__).resolve().parents[1] / "data" / "printf" / "printf.ptx"


def _c(fmt: str, *args) -> str:
    buf = ctypes.create_string_buffer(512)
    LIBC.snprintf(buf, 512, fmt.encode(), *args)
    return buf.value.decode("latin-1")


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


INTS = [0, 1, -1, 42, -42, 2**31 - 1, -2**31, 255, 65535, 123456789]
INT_FORMATS = ["%d", "%i", "%u", "%x", "%X", "%o", "%5d", "%-5d|", "%05d", "%+d", "% d",
               "%#x", "%#o", "%.3d", "%hd", "%hhd", "%hu", "%hhx", "%c"]


@pytest.mark.parametrize("fmt", INT_FORMATS)
def test_ints_render_as_glibc_prints_them(fmt):
    f = parse_format(fmt)
    assert f.unsupported is None and f.reads() == ((0, 4),)
    for v in INTS:
        if fmt == "%c" and not 32 <= v & 0xFF < 127:
            continue
        assert render(f, {0: v & 0xFFFFFFFF}) == _c(fmt, ctypes.c_int(v)), (fmt, v)


@pytest.mark.parametrize("fmt", ["%ld", "%lld", "%lu", "%llx", "%zu", "%lX"])
def test_long_ints_read_eight_bytes(fmt):
    f = parse_format(fmt)
    assert f.reads() == ((0, 8),)
    for v in [0, -1, 2**40 + 7, -2**63, 2**63 - 1]:
        assert render(f, {0: v & (2**64 - 1)}) == _c(fmt, ctypes.c_longlong(v)), (fmt, v)


FLOATS = [0.0, -0.0, 1.5, -2.25, 1e-9, 3.14159265358979, 1e300, -1e-300, 123456.789,
          float("inf"), float("-inf"), float("nan"), -float("nan"), 5e-324]


@pytest.mark.parametrize("fmt", ["%f", "%.2f", "%10.3f", "%-10.1f|", "%e", "%.3E", "%g",
                                 "%G", "%+f", "%08.2f", "%F", "%.0f", "%#g"])
def test_doubles_render_as_glibc_prints_them(fmt):
    f = parse_format(fmt)
    assert f.reads() == ((0, 8),)
    for x in FLOATS:
        assert render(f, {0: _bits(x)}) == _c(fmt, ctypes.c_double(x)), (fmt, x)


def test_star_width_and_precision_read_their_ints_first():
    f = parse_format("%*.*f|%d")
    assert f.reads() == ((0, 4), (4, 4), (8, 8), (16, 4))
    got = render(f, {0: 9, 4: 2, 8: _bits(3.14159), 16: 7})
    assert got == _c("%*.*f|%d", ctypes.c_int(9), ctypes.c_int(2), ctypes.c_double(3.14159),
                     ctypes.c_int(7))
    # a negative width left-justifies, a negative precision is none
    got = render(f, {0: (-9) & 0xFFFFFFFF, 4: (-1) & 0xFFFFFFFF, 8: _bits(2.5), 16: 1})
    assert got == _c("%*.*f|%d", ctypes.c_int(-9), ctypes.c_int(-1), ctypes.c_double(2.5),
                     ctypes.c_int(1))


def test_arguments_are_packed_at_their_natural_alignment():
    assert parse_format("%d %f %d %lld %c %e").reads() == \
        ((0, 4), (8, 8), (16, 4), (24, 8), (32, 4), (40, 8))
    assert parse_format("100%% sure: %d%%").reads() == ((0, 4),)
    assert render(parse_format("100%% sure: %d%%"), {0: 7}) == "100% sure: 7%"


def test_the_layout_matches_the_stores_nvcc_emits():
    # `big` stores (i, a[i]) as a v2.u32 at 0 and the half as an f64 at 8: what %d %d %f read
    body = PTX.read_text().split(".entry big(")[1].split(".entry")[0]
    stores = re.findall(r"st\.local\.(v2\.u32|f64|u32)\s+\[%rd\d+(?:\+(\d+))?\]", body)
    offsets = {(kind, int(off or 0)) for kind, off in stores}
    assert offsets == {("v2.u32", 0), ("f64", 8)}
    assert parse_format("a[%d] = %d (half %f)\n").reads() == ((0, 4), (4, 4), (8, 8))


@pytest.mark.parametrize("fmt,why", [("%s", "'%s'"), ("%p", "'%p'"), ("%n", "'%n'"),
                                     ("%lc", "wide character"),
                                     ("%q", "not a conversion"), ("50%", "not a conversion")])
def test_what_keq_does_not_compare_is_named(fmt, why):
    assert why in parse_format(fmt).unsupported
