"""Reading a pair spec: `load_spec(path)` / `loads_spec(text)` parse the TOML and check every
key against the format (see the package docstring), building the `model` dataclasses; anything
not accepted is a located `SpecError`."""

from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from semantics.errors import KeqError, SourceLoc
from verifier.spec.domains import ParamDomains, toml_type_name as _tname
from verifier.spec.errors import SpecError
from verifier.spec.expressions import FUNCTIONS, KEYWORDS, Expr, ExprError, Node, parse_expr
from verifier.spec.model import (ACCESS, ARCHS, CLAIM_NAMES, EXPECTS, MODES, TYPES, PairSpec,
                                 ParamSpec, Side, int_bounds, type_bits)
from verifier.spec.toml_locations import SpecFile, key_text
from verifier.spec.views import load_view, resolve_view

TOP_KEYS = ("name", "description", "mode", "expect", "assume", "allow", "target_assumptions",
            "arch", "reference", "candidate", "param")
SIDE_KEYS = ("ptx", "sass", "cubin", "kernel", "grid", "block", "args", "dynamic_shared",
             "then")
THEN_KEYS = ("ptx", "kernel", "grid", "block", "args", "dynamic_shared", "programmatic")
BUFFER_KEYS = ("name", "buffer", "length", "access", "range")
SCALAR_KEYS = ("name", "scalar", "range", "values")


def load_spec(path: str | Path) -> PairSpec:
    """Read and check a pair spec; raise `SpecError` (located) on anything wrong."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise KeqError(f"{p}: cannot read the spec: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(f"not a UTF-8 text file ({e.reason})", SourceLoc(str(p), 1, 1)) from None
    return loads_spec(text, p)


_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def loads_spec(text: str, path: str | Path = "<spec>") -> PairSpec:
    p = Path(path)
    ctx = SpecFile(p, text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _TOML_AT.search(msg)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        msg = _TOML_AT.sub("", msg).strip()
        raise SpecError(f"invalid TOML: {msg}", SourceLoc(str(p), line, col),
                        ctx.line_text(line)) from None
    return _Loader(ctx, doc).spec()


class _Loader(ParamDomains):
    def __init__(self, ctx: SpecFile, doc: dict) -> None:
        self.ctx = ctx
        self.doc = doc
        self.base = ctx.path.parent

    def err(self, message: str, path: tuple, prefer: str = "value", offset: int = 0):
        return self.ctx.error(message, path, prefer, offset)

    def keys(self, table: dict, path: tuple, allowed: tuple, what: str) -> None:
        for k in table:
            if k not in allowed:
                raise self.err(f"unknown key {k!r} in {what} (allowed: {', '.join(allowed)})",
                               path + (k,), prefer="key")

    def need(self, table: dict, key: str, path: tuple, what: str, typ: type | tuple,
             tname: str) -> Any:
        if key not in table:
            raise self.err(f"missing key {key!r} in {what}", path, prefer="key")
        return self.typed(table[key], path + (key,), typ, tname, key)

    def typed(self, v, path: tuple, typ, tname: str, key: str) -> Any:
        if isinstance(v, bool) and bool not in (typ if isinstance(typ, tuple) else (typ,)):
            ok = False
        else:
            ok = isinstance(v, typ)
        if not ok:
            raise self.err(f"{key_text(path)} must be {tname}, found {_tname(v)}", path)
        return v

    def choice(self, table: dict, key: str, path: tuple, what: str, allowed: tuple) -> str:
        v = self.need(table, key, path, what, str, "a string")
        if v not in allowed:
            raise self.err(f"{key} {v!r} is not one of: {', '.join(allowed)}", path + (key,))
        return v

    def expr(self, v, path: tuple, *, predicate: bool = False, scalars: dict | None = None,
             what: str = "expression") -> Expr:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise self.err(f"{key_text(path)} must be an integer or an expression string, "
                           f"found {_tname(v)}", path)
        loc = self.ctx.loc(path)
        line_text = self.ctx.line_text(loc.line)
        # offset of the expression text inside the line: after the opening quote
        quote = 1 if isinstance(v, str) else 0
        try:
            e = parse_expr(v, predicate=predicate)
        except ExprError as ex:
            raise self.err(f"bad {what} {v!r}: {ex.message}", path,
                           offset=quote + ex.offset) from None
        e = Expr(e.text, e.node, loc, line_text)
        if scalars is not None:
            self._check_names(e.node, v, path, quote, scalars, what)
        return e

    def _check_names(self, n: Node, text, path, quote, scalars: dict, what: str) -> None:
        if n.kind == "name":
            p = scalars.get(n.value)
            if p is None:
                kind = self.all_params.get(n.value)
                if kind is None:
                    msg = (f"{what} {text!r} names {n.value!r}, which is not a param "
                           f"(scalars: {', '.join(scalars) or 'none'})")
                elif kind.get("buffer") is not None:
                    msg = f"{what} {text!r} names {n.value!r}, a buffer, not a scalar"
                else:
                    msg = (f"{what} {text!r} names {n.value!r}, a {kind.get('scalar')} scalar; "
                           f"expressions range over integer scalars")
                raise self.err(msg, path, offset=quote + n.offset)
        for a in n.args:
            self._check_names(a, text, path, quote, scalars, what)

    def spec(self) -> PairSpec:
        d = self.doc
        self.keys(d, (), TOP_KEYS, "the spec")
        name = self.need(d, "name", (), "the spec", str, "a string")
        if not name.strip():
            raise self.err("name must not be empty", ("name",))
        description = ""
        if "description" in d:
            description = self.typed(d["description"], ("description",), str, "a string",
                                     "description")
        mode = self.choice(d, "mode", (), "the spec", MODES)
        expect = self.choice(d, "expect", (), "the spec", EXPECTS)
        for side in ("reference", "candidate"):
            self.need(d, side, (), "the spec", dict, f"a table [{side}]")
        params = self.params()
        int_scalars = {p.name: p for p in params if p.is_scalar and not p.is_float}
        buffers = {p.name: p for p in params if p.is_buffer}
        # lengths are checked once all params are known
        params = tuple(
            ParamSpec(p.name, p.kind, p.type,
                      self.expr(self.doc["param"][i]["length"], ("param", i, "length"),
                                scalars=int_scalars, what="length")
                      if p.is_buffer else None, p.access, p.range, p.values,
                      self.element_range(p, ("param", i), int_scalars) if p.is_buffer else None)
            for i, p in ((self.order.index(p.name), p) for p in params))
        buffers = {p.name: p for p in params if p.is_buffer}
        self.views = {name: resolve_view(self, kind, t, ("param", i), name, buffers,
                                         int_scalars)
                      for name, (i, kind, t) in self.raw_views.items()}
        assume: list[Expr] = []
        if "assume" in d:
            a = d["assume"]
            if isinstance(a, str):
                a = [a]
                paths = [("assume",)]
            else:
                self.typed(a, ("assume",), list, "a list of predicate strings", "assume")
                paths = [("assume", i) for i in range(len(a))]
            for v, pth in zip(a, paths):
                if not isinstance(v, str):
                    raise self.err(f"{key_text(pth)} must be a predicate string, found "
                                   f"{_tname(v)}", pth)
                assume.append(self.expr(v, pth, predicate=True, scalars=int_scalars,
                                        what="assumption"))
        allow, targets = self.names("allow"), self.names("target_assumptions")
        self.assume = tuple(assume)
        ref = self.side("reference", params, int_scalars)
        cand = self.side("candidate", params, int_scalars)
        launches = ref.launches + cand.launches
        if any(s.args is not None for s in launches):
            used = {n for s in launches for n in s.arg_names} | \
                {v.name for s in launches for _, v in s.views}
            for i, p in enumerate(params):
                if p.name not in used:
                    raise self.err(f"param {p.name!r} is passed to neither kernel (add it to "
                                   f"an `args` list or remove it)", ("param", i, "name"))
        arch = self.choice(self.doc, "arch", (), "arch", ARCHS) if "arch" in self.doc else ""
        return PairSpec(self.ctx.path, name, mode, expect, tuple(assume), description, ref,
                        cand, params, allow, targets, arch, tuple(self.views.values()))

    def names(self, key: str) -> tuple[str, ...]:
        """`allow` / `target_assumptions`: a list of names from `CLAIM_NAMES[key]`."""
        if key not in self.doc:
            return ()
        allowed = CLAIM_NAMES[key]
        v = self.typed(self.doc[key], (key,), list, "a list of name strings", key)
        for j, x in enumerate(v):
            if not isinstance(x, str) or x not in allowed:
                what = repr(x) if isinstance(x, str) else _tname(x)
                raise self.err(f"{key} names {what}, which is not one keq knows (allowed: "
                               + "; ".join(f"{n}: {d}" for n, d in allowed.items()) + ")",
                               (key, j))
        return tuple(dict.fromkeys(v))

    def params(self) -> list[ParamSpec]:
        d = self.doc
        if "param" not in d:
            raise self.err("missing [[param]] entries (one per kernel parameter)", (),
                           prefer="key")
        plist = d["param"]
        if not isinstance(plist, list) or not all(isinstance(x, dict) for x in plist):
            raise self.err("param must be an array of tables ([[param]])", ("param",))
        if not plist:
            raise self.err("no [[param]] entries", ("param",))
        self.all_params = {}
        self.order: list[str] = []          # every param name, texture and surface included
        self.raw_views: dict[str, tuple] = {}
        out = []
        for i, t in enumerate(plist):
            path = ("param", i)
            what = f"param[{i}]"
            name = self.need(t, "name", path, what, str, "a string")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", name):
                raise self.err(f"param name {name!r} is not an identifier", path + ("name",))
            if name in KEYWORDS or name in FUNCTIONS:
                raise self.err(f"param name {name!r} is reserved", path + ("name",))
            if name in self.all_params:
                raise self.err(f"duplicate param name {name!r}", path + ("name",))
            self.all_params[name] = t
            self.order.append(name)
            what = f"param {name!r}"
            if "texture" in t or "surface" in t:
                kind, t = load_view(self, t, path, name)
                self.raw_views[name] = (i, kind, t)
                continue
            has_b, has_s = "buffer" in t, "scalar" in t
            if has_b == has_s:
                raise self.err(f"{what} needs exactly one of 'buffer' (element type) or "
                               f"'scalar' (type)", path + (("scalar",) if has_b else ()),
                               prefer="key")
            if has_b:
                self.keys(t, path, BUFFER_KEYS, f"buffer param {name!r}")
                typ = self.need(t, "buffer", path, what, str, "a type name string")
                if typ not in TYPES:
                    raise self.err(f"unknown buffer type {typ!r} (types: {', '.join(TYPES)})",
                                   path + ("buffer",))
                if "length" not in t:
                    raise self.err(f"missing key 'length' in buffer {what}", path, prefer="key")
                access = self.choice(t, "access", path, f"buffer {what}", ACCESS)
                out.append(ParamSpec(name, "buffer", typ, None, access))
            else:
                self.keys(t, path, SCALAR_KEYS, f"scalar param {name!r}")
                typ = self.need(t, "scalar", path, what, str, "a type name string")
                if typ not in TYPES:
                    raise self.err(f"unknown scalar type {typ!r} (types: {', '.join(TYPES)})",
                                   path + ("scalar",))
                rng, vals = self.scalar_domain(t, path, typ, name)
                out.append(ParamSpec(name, "scalar", typ, None, None, rng, vals))
        return out

    def side(self, role: str, params: tuple[ParamSpec, ...], int_scalars: dict) -> Side:
        t = self.doc[role]
        self.keys(t, (role,), SIDE_KEYS, f"[{role}]")
        if "ptx" not in t and ("sass" in t or "cubin" in t):
            if "then" in t:
                raise self.err(f"[{role}] given as SASS has one launch (`then` is for PTX "
                               f"sides)", (role, "then"))
            return self.sass_side(role, params, int_scalars)
        first = self.one_launch(role, t, (role,), f"[{role}]", params, int_scalars)
        if "then" not in t:
            return first
        later = self.typed(t["then"], (role, "then"), list, "an array of tables "
                           f"[[{role}.then]]", "then")
        then = []
        for j, u in enumerate(later):
            path, what = (role, "then", j), f"[[{role}.then]] {j + 1}"
            if not isinstance(u, dict):
                raise self.err(f"{what} must be a table, found {_tname(u)}", path)
            self.keys(u, path, THEN_KEYS, what)
            if "ptx" not in u:
                u = dict(u, ptx=t["ptx"])        # (the side's PTX file by default)
            prog = self.typed(u.get("programmatic", False), path + ("programmatic",), bool,
                              "true or false", "programmatic")
            then.append(replace(self.one_launch(role, u, path, what, params, int_scalars),
                                programmatic=prog))
        return replace(first, then=tuple(then))

    def one_launch(self, role: str, t: dict, path: tuple, what: str,
                   params: tuple[ParamSpec, ...], int_scalars: dict) -> Side:
        """One PTX launch of side `role`, from the table `t` at `path`."""
        ptx_name = self.need(t, "ptx", path, what, str, "a path string")
        kernel, dims, args, arg_names, dyn = self.launch_keys(role, params, int_scalars,
                                                              t, path, what)
        names = list(self.order)
        arg_names, views = self.view_slots(role, args, arg_names)
        sass = None
        if "sass" in t:
            s = self.typed(t["sass"], path + ("sass",), str, "a path string", "sass")
            sass = self.base / s
            if not sass.is_file():
                raise self.err(f"sass file {s!r} does not exist (looked for {sass})",
                               path + ("sass",))
        ptx = self.base / ptx_name
        if not ptx.is_file():
            raise self.err(f"ptx file {ptx_name!r} does not exist (looked for {ptx})",
                           path + ("ptx",))
        from semantics.ptx import parse_ptx_file   # a located PtxSyntaxError propagates
        module = parse_ptx_file(ptx)
        fn = module.functions.get(kernel)
        if fn is None or fn.kind != "entry":
            entries = ", ".join(module.entries) or "none"
            raise self.err(f"{ptx_name} has no kernel (.entry) named {kernel!r} "
                           f"(kernels: {entries})", path + ("kernel",))
        kparams = fn.params
        if len(kparams) != len(arg_names):
            if args is None:
                raise self.err(f".entry {kernel} has {len(kparams)} parameter(s), the spec "
                               f"declares {len(arg_names)} [[param]]; list this kernel's "
                               f"params in order with `args` if they differ",
                               path + ("kernel",))
            raise self.err(f".entry {kernel} has {len(kparams)} parameter(s), args lists "
                           f"{len(arg_names)}", path + ("args",))
        byname = {p.name: p for p in params}
        for j, (n, kp) in enumerate(zip(arg_names, kparams)):
            sp = byname[n]
            bits = (kp.size_bytes or 0) * 8
            want = 64 if sp.is_buffer else type_bits(sp.type)
            if bits != want:
                what_p = "a buffer (a 64-bit address)" if sp.is_buffer else \
                    f"a {sp.type} scalar ({want} bits)"
                where = path + ("args", j) if args is not None else ("param", names.index(n), "name")
                raise self.err(f"param {n!r} is {what_p} but .entry {kernel} parameter "
                               f"{j} ({kp.name}) is .{kp.type.name} ({bits} bits)", where)
        self.launch_bounds(role, kernel, fn.directives, dims["block"], int_scalars)
        return Side(role, ptx, kernel, dims["grid"], dims["block"], args, sass, dyn,
                    tuple(arg_names), module, read_only=_inputs(params), views=views)

    def view_slots(self, role: str, args, arg_names) -> tuple[list[str], tuple]:
        """A side's arguments with each texture or surface param replaced by the buffer it
        is over (what the launch allocates), and the (index, `ViewSpec`) of those slots."""
        out, views = [], []
        for j, n in enumerate(arg_names):
            v = self.views.get(n)
            if v is None:
                out.append(n)
                continue
            if v.buffer in arg_names:
                where = (role, "args", j) if args is not None else \
                    ("param", self.order.index(n), "name")
                raise self.err(f"[{role}] is passed both {v.kind} {n!r} and its buffer "
                               f"{v.buffer!r}; keq models a kernel that reads a buffer "
                               f"through one of them", where)
            out.append(v.buffer)
            views.append((j, v))
        return out, tuple(views)

    def launch_bounds(self, role: str, kernel: str, directives, block: tuple[Expr, ...],
                      int_scalars: dict) -> None:
        """A kernel declared `.reqntid` launched with another block shape, or `.maxntid`
        launched with more threads per block than the product of its extents, does not launch
        on a GPU (PTX ISA 11.4.2-3: .maxntid bounds the total number of threads, not each
        dimension; .reqntid fixes every dimension, the ones not given being 1): an error
        about the spec. Checked at every block shape `block_shapes` lists."""
        bounds = [d for d in directives if d.name in ("maxntid", "reqntid") and d.values]
        if not bounds:
            return
        for env, shape in self.block_shapes(block, int_scalars):
            threads = shape[0] * shape[1] * shape[2]
            at = (" at " + ", ".join(f"{k}={v}" for k, v in env.items())) if env else ""
            for d in bounds:
                want = tuple(d.values) + (1,) * (3 - len(d.values))
                declared = f"the {role} kernel {kernel} is declared .{d.name} " \
                           f"{', '.join(map(str, d.values))}"
                if d.name == "maxntid" and threads > want[0] * want[1] * want[2]:
                    raise self.err(f"{declared} but the spec launches it with {threads} "
                                   f"threads per block{at}", (role, "block"), prefer="key")
                if d.name == "reqntid" and shape != want:
                    raise self.err(f"{declared} but the spec launches it with block "
                                   f"{', '.join(map(str, shape))} ({threads} threads per "
                                   f"block){at}", (role, "block"), prefer="key")

    # Block shapes that depend on scalars are checked at every combination of those scalars'
    # allowed values (under the `assume`s about them alone) up to this many; past it, at the
    # combinations of each scalar's least and greatest value only.
    BLOCK_SHAPES = 4096

    def block_shapes(self, block: tuple[Expr, ...], int_scalars: dict):
        """(scalar values, (x, y, z)) for the block shapes the spec can launch (see
        `BLOCK_SHAPES`); shapes where an entry is not a positive integer (a division by zero)
        are left to the launch, which reports them."""
        names = sorted(set().union(*(e.names for e in block)))
        axes = [self._axis(int_scalars[n]) for n in names]
        total = 1
        for a in axes:          # (len() of a range past 2**63 values raises: count it here)
            total *= a[-1] - a[0] + 1 if isinstance(a, range) else len(a)
        if total > self.BLOCK_SHAPES:
            axes = [sorted({a[0], a[-1]}) for a in axes]
        alone = [a for a in self.assume if a.names <= set(names)]
        for combo in itertools.product(*axes):
            env = dict(zip(names, combo))
            try:
                if not all(a.eval(env) for a in alone):
                    continue
                dims = [e.eval(env) for e in block]
            except KeqError:
                continue
            if all(isinstance(v, int) and v >= 1 for v in dims):
                yield env, tuple(dims + [1] * (3 - len(dims)))

    @staticmethod
    def _axis(p: ParamSpec):
        """An integer scalar's allowed values (a range object, never a list, when large)."""
        if p.values is not None:
            return sorted(p.values)
        lo, hi = p.range if p.range is not None else int_bounds(p.type)
        return range(lo, hi + 1)

    def launch_keys(self, role: str, params, int_scalars: dict, t: dict | None = None,
                    path: tuple | None = None, what: str | None = None):
        """kernel, grid, block, args, arg_names, dynamic_shared of a launch (any ISA): the
        side's table, or `t` at `path` (a `then` launch)."""
        t = self.doc[role] if t is None else t
        path = (role,) if path is None else path
        what = f"[{role}]" if what is None else what
        kernel = self.need(t, "kernel", path, what, str, "a string")
        dims = {}
        for key in ("grid", "block"):
            v = self.need(t, key, path, what, (list, int, str),
                          "a list of 1 to 3 ints or expressions")
            if not isinstance(v, list):
                v = [v]
                epaths = [path + (key,)]
            else:
                epaths = [path + (key, j) for j in range(len(v))]
            if not 1 <= len(v) <= 3:
                raise self.err(f"{what} {key} must have 1 to 3 entries, found {len(v)}",
                               path + (key,))
            dims[key] = tuple(self.expr(x, pth, scalars=int_scalars, what=key)
                              for x, pth in zip(v, epaths))
        args = None
        names = list(self.order)
        if "args" in t:
            a = self.typed(t["args"], path + ("args",), list, "a list of param names", "args")
            seen = set()
            for j, x in enumerate(a):
                if not isinstance(x, str):
                    raise self.err(f"args entries must be param names, found {_tname(x)}",
                                   path + ("args", j))
                if x not in names:
                    raise self.err(f"args names {x!r}, which is not a param "
                                   f"(params: {', '.join(names)})", path + ("args", j))
                if x in seen:
                    raise self.err(f"args names {x!r} twice", path + ("args", j))
                seen.add(x)
            args = tuple(a)
        dyn = 0
        if "dynamic_shared" in t:
            dyn = self.typed(t["dynamic_shared"], path + ("dynamic_shared",), int,
                             "an integer (bytes)", "dynamic_shared")
            if dyn < 0:
                raise self.err("dynamic_shared must be >= 0 bytes", path + ("dynamic_shared",))
        return kernel, dims, args, (args if args is not None else tuple(names)), dyn

    def sass_side(self, role: str, params: tuple[ParamSpec, ...], int_scalars: dict) -> Side:
        """A side given as SASS: `sass = "k.sm_90.sass"` (an nvdisasm listing) or
        `cubin = "k.sm_90.cubin"` (disassembled with nvdisasm), instead of `ptx`."""
        t = self.doc[role]
        path = (role,)
        if "sass" in t and "cubin" in t:
            raise self.err(f"[{role}] names both sass and cubin; give one", path + ("cubin",))
        key = "sass" if "sass" in t else "cubin"
        name = self.typed(t[key], path + (key,), str, "a path string", key)
        kernel, dims, args, arg_names, dyn = self.launch_keys(role, params, int_scalars)
        for n in arg_names:
            if n in self.views:
                raise self.err(f"[{role}] is a SASS side passed {self.views[n].kind} {n!r}: "
                               f"keq models textures and surfaces in PTX only", path + (key,))
        file = self.base / name
        if not file.is_file():
            raise self.err(f"{key} file {name!r} does not exist (looked for {file})",
                           path + (key,))
        from semantics.sass import parse_cubin, parse_sass_file   # located errors propagate
        module = parse_sass_file(file) if key == "sass" else parse_cubin(file)
        fn = module.entries.get(kernel)
        if fn is None:
            entries = ", ".join(module.entries) or "none"
            raise self.err(f"{name} has no kernel named {kernel!r} (kernels: {entries})",
                           path + ("kernel",))
        if len(fn.params) != len(arg_names):
            where = path + ("args",) if args is not None else path + ("kernel",)
            raise self.err(f"kernel {kernel} in {name} has {len(fn.params)} parameter(s), the "
                           f"spec passes {len(arg_names)}", where)
        byname = {p.name: p for p in params}
        for j, (n, kp) in enumerate(zip(arg_names, fn.params)):
            sp = byname[n]
            want = 8 if sp.is_buffer else type_bits(sp.type) // 8
            if kp.size != want:
                where = path + ("args", j) if args is not None else \
                    ("param", [p.name for p in params].index(n), "name")
                raise self.err(f"param {n!r} takes {want} bytes but parameter {j} of {kernel} "
                               f"in {name} is {kp.size} bytes", where)
        return Side(role, file, kernel, dims["grid"], dims["block"], args,
                    file if key == "sass" else None, dyn, tuple(arg_names), module, isa=key,
                    param_types=tuple("u64" if byname[n].is_buffer else byname[n].type
                                      for n in arg_names), read_only=_inputs(params))


def _inputs(params) -> frozenset[str]:
    return frozenset(p.name for p in params if p.is_buffer and p.access == "in")
