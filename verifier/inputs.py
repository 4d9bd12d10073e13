"""Kernel inputs by param name: `--set NAME=VALUE` items and `.npz` files.

Shared by `keq run` (which reads them) and `keq fuzz` (which writes reproducers in the same
format). The `.npz` format: one array per spec param, by name; scalars as 0-d arrays, buffers
as 1-d arrays of the param's dtype (bf16: uint16 bit patterns). Keys that start with
``reference:`` or ``candidate:`` hold a side's recorded outputs (written by `keq fuzz`): they
are not inputs and readers ignore them; any other unknown key is an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from semantics.errors import KeqError
from verifier.spec import PairSpec, ParamSpec, int_bounds, scalar_value

OUTPUT_PREFIXES = ("reference:", "candidate:")


class InputError(KeqError):
    """Bad content in a user-given input (an .npz file or a --set)."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where

    def render(self) -> str:
        return f"{self.where}: error: {self}" if self.where else f"error: {self}"


def parse_set(spec: PairSpec, item: str) -> tuple[str, Any]:
    """`NAME=VALUE` for a scalar param -> (name, value as keq passes it)."""
    if "=" not in item:
        raise InputError(f"--set {item!r}: expected NAME=VALUE")
    name, text = (s.strip() for s in item.split("=", 1))
    try:
        p = spec.param(name)
    except KeyError:
        names = ", ".join(q.name for q in spec.scalars) or "none"
        raise InputError(f"--set {name}: no param named {name!r} (scalars: {names})") from None
    if p.is_buffer:
        raise InputError(f"--set {name}: {name!r} is a buffer; give buffers with --inputs")
    try:
        if p.is_float:
            value: Any = float(text)
        else:
            value = int(text, 0)
    except ValueError:
        kind = "a number" if p.is_float else "an integer"
        raise InputError(f"--set {name}={text}: not {kind}") from None
    check_scalar(p, value, f"--set {name}={text}")
    return name, scalar_value(p, value)


def check_scalar(p: ParamSpec, value, what: str, where: str | None = None) -> None:
    if not p.allows(value):
        if not p.is_float:
            lo, hi = int_bounds(p.type)
            if not lo <= int(value) <= hi:
                raise InputError(f"{what}: {value} is outside the {p.type} range [{lo}, {hi}]",
                                 where)
        raise InputError(f"{what}: {value} is out of the spec's range for {p.name!r} "
                         f"({p.describe_domain()})", where)


def load_npz(spec: PairSpec, path: str) -> dict[str, np.ndarray]:
    """The input arrays of an .npz by param name (recorded outputs are skipped)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files if not k.startswith(OUTPUT_PREFIXES)}
    except OSError:
        raise
    except (ValueError, EOFError) as e:
        raise InputError(f"not a readable .npz file ({e})", path) from None
    names = [p.name for p in spec.params]
    for k in data:
        if k not in names:
            raise InputError(f"key {k!r} is not a param of {spec.name} "
                             f"(params: {', '.join(names)})", path)
    return data


def npz_scalars(spec: PairSpec, data: dict, path: str) -> dict[str, Any]:
    out = {}
    for p in spec.scalars:
        if p.name not in data:
            continue
        a = data[p.name]
        if a.size != 1:
            raise InputError(f"scalar {p.name!r} must be a 0-d (or 1-element) array, found "
                             f"shape {a.shape}", path)
        ok = a.dtype.kind in "iuf" if p.is_float else a.dtype.kind in "iu"
        if not ok:
            raise InputError(f"scalar {p.name!r} is {p.type}, the array has dtype {a.dtype}",
                             path)
        v = a.reshape(()).item()
        check_scalar(p, v, f"scalar {p.name!r}", path)
        out[p.name] = scalar_value(p, v)
    return out


def npz_buffers(spec: PairSpec, data: dict, scalars: dict, path: str,
                given: dict) -> dict[str, np.ndarray]:
    out = {}
    for p in spec.buffers:
        if p.name not in data:
            continue
        a = data[p.name]
        if a.dtype != p.dtype:
            raise InputError(f"buffer {p.name!r} is {p.type} (numpy {p.dtype}), the array has "
                             f"dtype {a.dtype}", path)
        n = p.length_of(scalars)
        if a.ndim != 1 or a.size != n:
            env = ", ".join(f"{k}={scalars[k]}" for k in sorted(p.length.names))
            raise InputError(f"buffer {p.name!r} must have {n} element(s) (length "
                             f"{p.length.text!r}{' at ' + env if env else ''}), the array has "
                             f"shape {a.shape}" + drawn_hint(p.length.names, given), path)
        out[p.name] = np.ascontiguousarray(a).copy()
    return out


def drawn_hint(names, given: dict) -> str:
    drawn = sorted(set(names) - set(given))
    if not drawn:
        return ""
    return (f"; {', '.join(drawn)} {'was' if len(drawn) == 1 else 'were'} drawn from the seed: "
            f"give {'it' if len(drawn) == 1 else 'them'} in the .npz or with --set")


def npz_arrays(spec: PairSpec, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Every param's value as the array `save_npz` writes (scalars as 0-d arrays)."""
    out = {}
    for p in spec.params:
        v = values[p.name]
        out[p.name] = np.asarray(v, dtype=p.dtype) if p.is_scalar else np.asarray(v)
    return out


def save_npz(path: str | Path, spec: PairSpec, values: Mapping[str, Any],
             outputs: Mapping[str, Mapping[str, np.ndarray]] | None = None) -> None:
    """Write `values` (every param by name) and, optionally, each side's outputs under
    ``ROLE:NAME`` keys (ignored by `load_npz`)."""
    arrays = npz_arrays(spec, values)
    for role, bufs in (outputs or {}).items():
        assert role + ":" in OUTPUT_PREFIXES, role
        for name, a in bufs.items():
            arrays[f"{role}:{name}"] = np.asarray(a)
    np.savez(str(path), **arrays)      # like numpy: ".npz" is appended when missing
