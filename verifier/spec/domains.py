"""Reading what values a spec param may take: a scalar's `range` or `values`, and a buffer's
element `range` (a mixin of the loader, `verifier.spec.loading`, which supplies `doc`, `err`
and `expr`)."""

from __future__ import annotations

from verifier.spec.model import ParamSpec, float_bits, float_value, int_bounds, is_float_type


def toml_type_name(v) -> str:
    """How an error names a TOML value's type."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return type(v).__name__


class ParamDomains:
    def element_range(self, p: ParamSpec, path: tuple, scalars: dict):
        """A buffer's `range = [lo, hi]`: every element's inclusive range, each end an integer
        or an expression over the integer scalars (None when not given)."""
        t = self.doc["param"][path[1]]
        if "range" not in t:
            return None
        r, rpath = t["range"], path + ("range",)
        if not isinstance(r, list) or len(r) != 2:
            raise self.err(f"range of {p.name!r} must be [lo, hi], two integers or "
                           f"expressions", rpath)
        if p.is_float:
            raise self.err(f"range of {p.name!r}: element ranges are for integer buffers "
                           f"({p.name!r} holds {p.type})", rpath)
        if p.access not in ("in", "inout", "scratch"):
            # (a scratch buffer's launch contents are inputs too: a semaphore the host zeroes)
            raise self.err(f"range of {p.name!r}: an element range constrains inputs, and "
                           f"{p.name!r} is {p.access!r}", rpath)
        return tuple(self.expr(x, rpath + (j,), scalars=scalars, what="range")
                     for j, x in enumerate(r))

    def scalar_domain(self, t: dict, path: tuple, typ: str, name: str):
        """(range, values) of a scalar param, each None when not given. A float scalar's
        numbers are stored as Python floats (they are rounded to the type where used)."""
        what = f"param {name!r}"
        rng, vals = None, None
        num = (int, float) if is_float_type(typ) else int
        numname = "numbers" if is_float_type(typ) else "integers"
        conv = float if is_float_type(typ) else int
        if "range" in t and "values" in t:
            raise self.err(f"{what} has both 'range' and 'values'; give one",
                           path + ("values",), prefer="key")
        if "range" in t:
            r = t["range"]
            if (not isinstance(r, list) or len(r) != 2
                    or any(isinstance(x, bool) or not isinstance(x, num) for x in r)):
                raise self.err(f"range of {name!r} must be [lo, hi], two {numname}",
                               path + ("range",))
            for j, x in enumerate(r):
                self._in_type(x, typ, path + ("range", j), name)
            if r[0] > r[1]:
                raise self.err(f"range of {name!r} is empty: {r[0]} > {r[1]}",
                               path + ("range",))
            rng = (conv(r[0]), conv(r[1]))
        if "values" in t:
            v = t["values"]
            if not isinstance(v, list) or not v:
                raise self.err(f"values of {name!r} must be a non-empty list",
                               path + ("values",))
            for j, x in enumerate(v):
                if isinstance(x, bool) or not isinstance(x, num):
                    raise self.err(f"values of {name!r} must be {numname}, found "
                                   f"{toml_type_name(x)}", path + ("values", j))
                self._in_type(x, typ, path + ("values", j), name)
            # (floats: one entry per bit pattern, so -0.0 and 0.0 are two values, and two
            # spellings of one value are one)
            seen: dict = {}
            for x in v:
                seen.setdefault(float_bits(typ, x) if is_float_type(typ) else x, conv(x))
            vals = tuple(seen.values())
        return rng, vals

    def _in_type(self, x, typ: str, path: tuple, name: str) -> None:
        if is_float_type(typ):
            # A float claim covers finite values only: NaN has many bit patterns and compares
            # false (a NaN bound is an empty range), and certificates hold JSON numbers.
            if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
                raise self.err(f"{x} is not a finite number ({name!r} is {typ}; give finite "
                               f"bounds and values)", path)
            big = float_value(typ, float_bits(typ, x))
            if big in (float("inf"), float("-inf")):
                top = float_value(typ, float_bits(typ, float("inf")) - 1)
                raise self.err(f"{x} is outside the {typ} range of {name!r} (it rounds to "
                               f"{big}; the largest finite {typ} is {top!r})", path)
            return
        lo, hi = int_bounds(typ)
        if not lo <= x <= hi:
            raise self.err(f"{x} is outside the {typ} range [{lo}, {hi}] of {name!r}", path)
