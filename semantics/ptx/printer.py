"""IR -> PTX text. `parse_ptx(print_module(m)) == m` for every module the parser produces."""

from __future__ import annotations

from semantics.ir.nodes import (
    DebugLoc, FileDirective, Function, Instruction, Label, Module, Pragma, RegDecl, ScopeBegin,
    ScopeEnd, Section, Variable,
)


def _variable(v: Variable, *, in_params: bool = False) -> str:
    parts: list[str] = []
    if v.linkage:
        parts.append(f".{v.linkage}")
    parts.append(f".{v.space}")
    if v.align is not None and not v.ptr_attrs:
        parts.append(f".align {v.align}")
    if v.vec != 1:
        parts.append(f".v{v.vec}")
    parts.append(f".{v.type.name}")
    for a in v.ptr_attrs:
        parts.append(f".{a}")
    if v.align is not None and v.ptr_attrs:
        parts.append(f".align {v.align}")
    name = v.name + "".join("[]" if d is None else f"[{d}]" for d in v.dims)
    parts.append(name)
    text = " ".join(parts)
    if v.init is not None:
        text += f" = {v.init}"
    return text


def _reg_decl(d: RegDecl) -> str:
    vec = f".v{d.vec} " if d.vec != 1 else ""
    count = f"<{d.count}>" if d.count is not None else ""
    return f".reg {vec}.{d.type.name} {d.name}{count};"


def print_function(f: Function) -> str:
    out: list[str] = []
    head = f".{f.linkage} " if f.linkage else ""
    head += f".{f.kind} "
    if f.returns:
        head += "(" + ", ".join(_variable(p) for p in f.returns) + ") "
    head += f.name
    if f.params or f.kind == "entry":
        head += "(\n" + ",\n".join("\t" + _variable(p) for p in f.params) + "\n)"
    out.append(head)
    for d in f.directives:
        vals = ", ".join(map(str, d.values))
        out.append(f".{d.name} {vals}".rstrip())
    if f.body is None:
        out[-1] += ";"
        return "\n".join(out)
    out.append("{")
    debug: DebugLoc | None = None
    for s in f.body:
        if isinstance(s, Instruction):
            if s.debug != debug and s.debug is not None:
                out.append(f"\t{s.debug}")
            elif s.debug is None and debug is not None:
                # The parser never clears a .loc once set, so this cannot come from it; keep
                # the printer total anyway.
                pass
            debug = s.debug
            out.append(f"\t{s}")
        elif isinstance(s, Label):
            out.append(f"{s.name}:")
        elif isinstance(s, RegDecl):
            out.append(f"\t{_reg_decl(s)}")
        elif isinstance(s, Variable):
            out.append(f"\t{_variable(s)};")
        elif isinstance(s, ScopeBegin):
            out.append("\t{")
        elif isinstance(s, ScopeEnd):
            out.append("\t}")
        elif isinstance(s, Pragma):
            if s.text.startswith('"'):
                out.append(f"\t.pragma {s.text};")
            else:
                name, _, rest = s.text.partition(": ")
                out.append(f"{name}: {rest};")
    out.append("}")
    return "\n".join(out)


def print_module(m: Module) -> str:
    out = [f".version {m.version}", f".target {', '.join(m.target)}",
           f".address_size {m.address_size}", ""]
    for item in m.items:
        if isinstance(item, Function):
            out.append(print_function(item))
            out.append("")
        elif isinstance(item, Variable):
            out.append(_variable(item) + ";")
        elif isinstance(item, FileDirective):
            extra = f", {item.extra}" if item.extra else ""
            out.append(f'.file\t{item.index} "{item.path}"{extra}')
        elif isinstance(item, Section):
            out.append(f".section {item.name}\n{{\n{item.text}\n}}")
        elif isinstance(item, Pragma):
            out.append(f".pragma {item.text};")
    return "\n".join(out) + "\n"
