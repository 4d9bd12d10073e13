"""`verifier.projection`: the term walk over the axes its terms mention. The smaller grid
answers as the whole would (each of its points stands for the points lying on it), and a
term that mentions a dropped axis after all is walked over every point."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import z3

import verifier.projection as projection
from semantics.machine.indexed_buffers import IndexedAccess
from verifier.indexed import IndexedBuffer, compare
from verifier.projection import mentions, project
from verifier.shape_space import ShapeSpace, ShapeValues

M, K = z3.BitVec("M", 64), z3.BitVec("K", 64)
AXES = [[1, 2, 3], [4, 5, 6, 7]]


def _values(allowed=lambda m, k: True) -> ShapeValues:
    shapes = [{"M": m, "K": k} for m, k in itertools.product(*AXES) if allowed(m, k)]
    return ShapeValues(ShapeSpace(["M", "K"], AXES, shapes), {"M": 64, "K": 64})


@pytest.mark.parametrize("holes", [False, True])
def test_each_shape_lies_on_the_point_of_its_kept_coordinates(holes):
    values = _values((lambda m, k: (m + k) % 3 != 0) if holes else (lambda m, k: True))
    space = values.space
    smaller, on = space.project([1])                       # K alone
    assert smaller.names == ("K",) and smaller.count == 4 and smaller.index is None
    ks = space.points({"M": 64, "K": 64})["K"]
    assert on.tolist() == [AXES[1].index(int(k)) for k in ks]
    # a term of K alone has, at each shape, its value at the point the shape lies on
    t = K * 3 + 1
    assert np.array_equal(values.full(t), ShapeValues(smaller, {"K": 64}).full(t)[on])
    none, on0 = space.project([])
    assert none.count == 1 and not on0.any()


def test_the_axes_kept_are_those_the_terms_mention():
    values = _values()
    assert mentions(K + 1, "K", 64) and not mentions(K + 1, "M", 64)
    assert not mentions(z3.BitVec("K", 32) + 1, "K", 64)     # (another constant: its sort)
    smaller, on = project(values, [K * 2, z3.If(K == 5, K, K + 1), 7])
    assert smaller.space.names == ("K",) and on.size == values.space.count
    assert project(values, [K + M]) is None                  # every axis: nothing to drop
    assert project(values, [7]) is not None                  # no axis: one point


def _buffers(values):
    elems = [z3.BitVec(f"in[{i}]", 32) for i in range(8)]
    out = [z3.BitVec(f"out[{i}]", 32) for i in range(2)]
    length = np.full(values.space.count, 8, np.uint64)
    ins = IndexedBuffer("in", 4, np.array([e.get_id() for e in elems]),
                        np.full(values.space.count, 32, np.uint64), np.uint64(32))
    o = IndexedBuffer("out", 4, np.array([e.get_id() for e in out]), length, length)
    return {"in": ins, "out": o}, elems


@pytest.mark.parametrize("sampled", [True, False])
def test_a_term_that_mentions_a_dropped_axis_is_walked_over_every_point(sampled, monkeypatch):
    # Element 0 holds x + If(K > 4, y, z) in both kernels, built apart (the walk must show
    # it): the candidate's y is `If(M == 2, y, y)`, which tests M on both branches alike. With `M` dropped as
    # no sampled term mentions it, the walk over K alone cannot evaluate that test: the
    # pair is walked again over every point, and shown there.
    values = _values()
    buffers, (x, y, z, *_) = _buffers(values)
    ref = x + z3.If(z3.UGT(K, 4), y, z)
    tie = z3.If(M == 2, y, y)              # y wherever M is, yet it mentions M
    cand = x + z3.If(z3.UGT(K, 4), tie, z)
    log = {"reference": (IndexedAccess("w", "out", 0, 4, 4, True, ref, 0, "w", None),),
           "candidate": (IndexedAccess("w", "out", 0, 4, 4, True, cand, 0, "w", None),)}
    walked = []
    mine = projection.project

    def project_spy(values, terms):
        out = mine(values, terms)
        walked.append(None if out is None else out[0].space.names)
        return out
    monkeypatch.setattr("verifier.indexed.second_look.project", project_spy)
    if sampled:                  # the sample misses the candidate's term
        monkeypatch.setattr(projection, "SAMPLE", 1)
        monkeypatch.setattr(projection, "mentions",
                            lambda t, name, w: name != "M" and mentions(t, name, w))
    cells, differs = compare(values, buffers, {"out": 32}, {"out": buffers["out"].ids}, log)
    assert differs is None and cells == 2 * values.space.count
    assert walked == ([("K",)] if sampled else [None])
