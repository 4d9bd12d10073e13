"""Comparing what two kernels leave in their out buffers, shape by shape: equal codes, or
terms shown equal by a second look (`compare`); with one symbolic CTA per kernel, codes
alone (`compare_apart`)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from semantics.machine.indexed_buffers import IndexedAccess
from verifier.indexed.cells import Differs, Layout
from verifier.indexed.codes import Codes
from verifier.indexed.real_look import RealReadings
from verifier.indexed.replay import replay_log, replay_logs
from verifier.indexed.second_look import second_look
from verifier.indexed_buffer import IndexedBuffer
from verifier.shape_space import ShapeValues
from verifier.symbolic_cta import CtaMismatch


def compare(values: ShapeValues, buffers: dict[str, IndexedBuffer],
            widths: dict[str, int], initial: dict[str, np.ndarray],
            logs: dict[str, tuple[IndexedAccess, ...]],
            shape_only: Callable[[Any], bool] | None = None,
            real: bool = False,
            jobs: int = 1, per_shape: int = 1,
            replayed: list | None = None,
            reals: RealReadings | None = None) -> tuple[int, Differs | None]:
    """(elements compared, the first shape where the kernels may differ or None). `real`:
    the terms are compared as real numbers where they differ as floats (`SameAt`, in `jobs`
    processes). `per_shape` > 1: the evaluation's points are shapes times CTAs (see
    `replay_log`); an element both kernels write must be written by the same CTA in both,
    else `CtaMismatch`. `replayed`: `replay_logs`' entries, when computed beforehand (and
    listed: `replay_logs(..., keep_errors=True)`). `reals`: in mode real, the float buffers, whose
    pairs may also be shown equal by their real readings (`verifier.indexed.real_look`); it
    receives the assumptions those readings used."""
    compared = 0
    for entry in (replay_logs(values, buffers, widths, initial, logs, per_shape)
                  if replayed is None else replayed):
        if isinstance(entry, BaseException):
            raise entry
        if isinstance(entry, Differs):
            return compared, entry
        name, layout, left, writer, point, writes = entry
        if per_shape > 1:
            # Equal codes are equal values only at one point: a term may mention %ctaid.
            apart = (writer["reference"] >= 0) & (writer["candidate"] >= 0) \
                & (point["reference"] != point["candidate"])
            if apart.any():
                s, e = layout.at(int(np.argmax(apart)))
                raise CtaMismatch(f"element {e} of '{name}' is written by different CTAs of "
                                  f"the two kernels (shape {s} of the plan)")
        differ = left["reference"] != left["candidate"]
        compared += layout.total
        if differ.any():
            at = second_look(values, buffers, shape_only, real, layout, differ, writer,
                             writes, jobs, point["reference"],
                             reals.widths.get(name, 0) if reals else 0,
                             reals.notes if reals else None)
            if at is not None:
                s, e = at
                return compared, Differs(s, f"element {e} of '{name}' is not shown to be the "
                                            f"same term in both kernels")
    return compared, None


def compare_apart(values: dict[str, ShapeValues], buffers: dict[str, dict[str, IndexedBuffer]],
                  widths: dict[str, int], initial: dict[str, np.ndarray],
                  logs: dict[str, tuple[IndexedAccess, ...]],
                  per_shape: dict[str, int]) -> tuple[int, Differs | None]:
    """`compare` for kernels that each run one symbolic CTA of their own grid
    (`verifier.symbolic_cta`: `%ctaid.x/reference` and `%ctaid.x/candidate`), so their
    points are different grids: `values[role]`, `buffers[role]` and `per_shape[role]` are
    each kernel's. Each write log is replayed over its own points and composed into each
    shape's final contents; the two are then compared shape by shape.

    Equal codes are equal values at a shape even when written from different CTAs: a code
    is an input element, an element's initial contents, or a term; a term that mentions one
    kernel's `%ctaid` cannot be the other's (it never sees that variable), so an identical
    term mentions neither and has one value at the shape. Codes that differ are not walked
    (`SameAt` compares two terms at one point, and here a point is one kernel's CTA): that
    shape is handed back (`Differs`), and the caller falls back to the full launch."""
    compared = 0
    for name, init in initial.items():
        # (both kernels' buffers have one length at each shape: the spec's)
        layout = Layout.of(buffers["reference"][name], init.size, per_shape["reference"])
        left = {}
        for role, log in logs.items():
            b = buffers[role][name]
            codes = Codes(values[role], buffers[role])
            left[role], _, _, _, clash = replay_log(codes, values[role].full, b, widths[name],
                                                    init, log, role, layout, per_shape[role])
            if clash is not None:
                return compared, clash
        compared += layout.total
        differ = left["reference"] != left["candidate"]
        if differ.any():
            s, e = layout.at(int(np.argmax(differ)))
            return compared, Differs(s, f"element {e} of '{name}' is not the same term in "
                                        f"both kernels (with one symbolic CTA per kernel, "
                                        f"values that differ are not walked)")
    return compared, None


__all__ = ["compare", "compare_apart"]
