"""Kernel inputs by param name: `--set NAME=VALUE` items and `.npz` files.

Shared by `keq run` (which reads them) and `keq fuzz` (which writes reproducers in the same
format). The `.npz` format: one array per spec param, by name; scalars as 0-d arrays, buffers
as 1-d arrays of the param's dtype (bf16: uint16 bit patterns). Keys that start with
``reference:`` or ``candidate:`` hold a side's recorded outputs (written by `keq fuzz`): they
are not inputs and readers ignore them. The key ``__keq_choices__``, when present (written by
`keq verify --save-counterexample` and `keq fuzz`), is a 0-d string array holding JSON: how the
run that showed the difference resolved what the PTX ISA leaves open (`semantics.choices`),

    {"version": 1, "fill": "zero", "schedule": "lane",
     "values": {"candidate/k/%r5!t3": 7, ...}, "shared_fill": null}

(`values`: a solver model's explicit values by constant name; `shared_fill`: the byte every
CTA's shared memory held at launch, or null; `layout`, present when not "packed": where
buffers and shared variables lay, `Choices.layout`), read back by `load_choices` so that `keq run
--inputs` replays the same execution; the target assumptions come from the spec. Any other
unknown key is an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from semantics.choices import Choices
from semantics.errors import KeqError
from verifier.spec import PairSpec, ParamSpec, int_bounds, scalar_value

OUTPUT_PREFIXES = ("reference:", "candidate:")
CHOICES_KEY = "__keq_choices__"
CHOICES_VERSION = 1


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
            data = {k: z[k] for k in z.files
                    if not k.startswith(OUTPUT_PREFIXES) and k != CHOICES_KEY}
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
        bounds = p.element_bounds(scalars)
        if bounds is not None and a.size:
            bad = np.flatnonzero((a < bounds[0]) | (a > bounds[1]))
            if bad.size:
                i = int(bad[0])
                raise InputError(f"{p.name}[{i}] = {a[i]} is outside the spec's element range "
                                 f"[{bounds[0]}, {bounds[1]}] ({p.element_text()})", path)
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


@dataclass(frozen=True)
class SavedChoices:
    """The choices an .npz carries (`CHOICES_KEY`): fill and schedule policies, a model's
    explicit values by constant name, and the byte shared memory held (None: the fill's)."""

    fill: str = "zero"
    schedule: str = "lane"
    values: Mapping[str, int] = field(default_factory=dict)
    shared_fill: int | None = None
    layout: str = "packed"           # (`Choices.layout`; written only when not packed)

    @classmethod
    def of(cls, choices: Choices | None, shared_fill: int | None = None) -> "SavedChoices":
        c = choices if choices is not None else Choices()
        return cls(c.fill, c.schedule, dict(c.values),
                   shared_fill if shared_fill else None, c.layout)

    @property
    def is_default(self) -> bool:
        return (self.fill == "zero" and self.schedule == "lane" and not self.values
                and self.shared_fill is None and self.layout == "packed")

    def choices(self, base: Choices) -> Choices:
        """These choices with `base`'s target assumptions (the spec's)."""
        return Choices(self.fill, self.schedule, dict(self.values), base.target, self.layout)

    def to_json(self) -> str:
        d = {"version": CHOICES_VERSION, "fill": self.fill, "schedule": self.schedule,
             "values": {k: int(v) for k, v in sorted(self.values.items())},
             "shared_fill": self.shared_fill}
        if self.layout != "packed":
            d["layout"] = self.layout
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, where: str | None = None) -> "SavedChoices":
        def bad(why: str) -> InputError:
            return InputError(f"{CHOICES_KEY}: {why}", where)
        try:
            d = json.loads(text)
        except ValueError as e:
            raise bad(f"not JSON ({e})") from None
        if not isinstance(d, dict):
            raise bad("expected a JSON object")
        if d.get("version", CHOICES_VERSION) != CHOICES_VERSION:
            raise bad(f"version {d.get('version')!r} is not one this keq reads "
                      f"({CHOICES_VERSION})")
        unknown = sorted(set(d) - {"version", "fill", "schedule", "values", "shared_fill",
                                   "layout"})
        if unknown:
            raise bad(f"unknown field(s) {', '.join(map(repr, unknown))}")
        fill, schedule = d.get("fill", "zero"), d.get("schedule", "lane")
        if not isinstance(fill, str) or not isinstance(schedule, str):
            raise bad("fill and schedule must be strings")
        layout = d.get("layout", "packed")
        try:
            Choices(fill, schedule, layout=layout)
        except (ValueError, TypeError) as e:
            raise bad(str(e)) from None
        values = d.get("values") or {}
        if not isinstance(values, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                for k, v in values.items()):
            raise bad("values must map constant names to integers")
        sf = d.get("shared_fill")
        if sf is not None and (not isinstance(sf, int) or isinstance(sf, bool)
                               or not 0 <= sf <= 255):
            raise bad(f"shared_fill {sf!r} is not a byte (0..255) or null")
        return cls(fill, schedule, dict(values), sf, layout)


def load_choices(path: str) -> SavedChoices | None:
    """The choices an .npz carries (`CHOICES_KEY`), or None when it carries none."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if CHOICES_KEY not in z.files:
                return None
            a = z[CHOICES_KEY]
    except OSError:
        raise
    except (ValueError, EOFError) as e:
        raise InputError(f"not a readable .npz file ({e})", path) from None
    if a.dtype.kind != "U" or a.size != 1:
        raise InputError(f"{CHOICES_KEY} must be a 0-d string array, found dtype {a.dtype} "
                         f"shape {a.shape}", path)
    return SavedChoices.from_json(str(a.reshape(())), path)


def save_npz(path: str | Path, spec: PairSpec, values: Mapping[str, Any],
             outputs: Mapping[str, Mapping[str, np.ndarray]] | None = None,
             choices: SavedChoices | None = None) -> None:
    """Write `values` (every param by name) and, optionally, each side's outputs under
    ``ROLE:NAME`` keys (ignored by `load_npz`) and the choices of the run that produced
    them (`CHOICES_KEY`, read by `load_choices`; written whenever given, defaults too, so
    that a replay knows they were the defaults)."""
    arrays = npz_arrays(spec, values)
    for role, bufs in (outputs or {}).items():
        assert role + ":" in OUTPUT_PREFIXES, role
        for name, a in bufs.items():
            arrays[f"{role}:{name}"] = np.asarray(a)
    if choices is not None:
        arrays[CHOICES_KEY] = np.array(choices.to_json())
    np.savez(str(path), **arrays)      # like numpy: ".npz" is appended when missing
