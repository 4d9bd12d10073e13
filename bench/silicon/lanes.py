"""Matrices <-> per-lane registers, by keq's fragment layouts (semantics/ops/mma_layout.py).

A's element i of lane L (g = L >> 2, t = L % 4) is A[a_place(g, t, i)], packed low element
first into registers of `reg_bits`; B likewise; C's and D's element i sits at row
g + 8 (i >= 2), column 2t + (i & 1), f16 accumulators two to a 32-bit register.
"""

from __future__ import annotations

import numpy as np

from bench.silicon.forms import ACC_BITS, Form


def _places(place, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols), each (32, count): where lane L's element i lies."""
    rc = np.array([[place(lane >> 2, lane % 4, i) for i in range(count)] for lane in range(32)])
    return rc[..., 0], rc[..., 1]


def _acc_place(g: int, t: int, i: int) -> tuple[int, int]:
    return g + 8 * (i >= 2), 2 * t + (i & 1)


def _pack(elems: np.ndarray, elem_bits: int, reg_bits: int) -> np.ndarray:
    """(n, 32, count) elements -> (n, 32, registers) words, low element first."""
    per = reg_bits // elem_bits
    n, lanes, count = elems.shape
    e = elems.reshape(n, lanes, count // per, per).astype(np.uint64)
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(elem_bits))
    words = np.bitwise_or.reduce(e << shifts, axis=-1)
    return words.astype(np.uint64 if reg_bits == 64 else np.uint32)


def _unpack(words: np.ndarray, elem_bits: int, reg_bits: int) -> np.ndarray:
    per = reg_bits // elem_bits
    w = words.astype(np.uint64)[..., None]
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(elem_bits)
    mask = np.uint64((1 << elem_bits) - 1) if elem_bits < 64 else np.uint64(2**64 - 1)
    e = (w >> shifts) & mask
    return e.reshape(words.shape[0], words.shape[1], -1)


def pack(form: Form, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
    """The kernel's pa, pb, pc arrays, shape (n, 32, registers), from A, B, C matrices."""
    lay = form.layout
    out = []
    for mat, place, count in ((a, lay.a_place, lay.m * lay.k // 32),
                              (b, lay.b_place, lay.k * lay.n // 32)):
        rows, cols = _places(place, count)
        out.append(_pack(mat[:, rows, cols], lay.elem_bits, lay.reg_bits))
    rows, cols = _places(_acc_place, lay.c_count)
    out.append(_pack(c[:, rows, cols], ACC_BITS[form.c], form.word_bits))
    return out


def unpack_d(form: Form, words: np.ndarray) -> np.ndarray:
    """D (n, M, N) bits from the kernel's pd array (n, 32, registers)."""
    lay = form.layout
    elems = _unpack(words.reshape(-1, 32, form.counts["d"]), ACC_BITS[form.d], form.word_bits)
    rows, cols = _places(_acc_place, lay.c_count)
    d = np.zeros((words.shape[0] if words.ndim == 3 else elems.shape[0], lay.m, lay.n),
                 np.uint64)
    d[:, rows, cols] = elems
    return d


def d_words(form: Form, count: int) -> np.ndarray:
    """A zeroed pd array for `count` instances."""
    return np.zeros((count, 32, form.counts["d"]),
                    np.uint64 if form.word_bits == 64 else np.uint32)


__all__ = ["d_words", "pack", "unpack_d"]
