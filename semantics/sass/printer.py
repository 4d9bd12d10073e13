"""`SassModule` -> nvdisasm-style listing text.

The output is what `parse_sass` reads back to an equal module (`parse(print(m)) == m`): the
`.target`, the metadata keq keeps (register counts, kernel parameters and their constant
bank, static shared memory) as minimal `.nv.info*` / `.nv.shared.*` sections, and every text
section with its function symbols, labels and instructions at their offsets. Attributes keq
does not read (frame size, exit offsets, ...) are not reproduced.
"""

from __future__ import annotations

from semantics.ir.nodes import Label
from semantics.sass.nodes import SassFunction, SassInstruction, SassModule


def _attr(name: str, fmt: int, ident: int, payload: list[str]) -> list[str]:
    size = sum({"byte": 1, "short": 2, "word": 4}[p.split("\t")[0].strip(".")] for p in payload)
    return [f"\t//----- nvinfo : {name}", f"\t.byte\t{fmt:#04x}, {ident:#04x}",
            f"\t.short\t{size:#06x}", *(f"\t{p}" for p in payload)]


def _section_header(name: str, flags: str) -> list[str]:
    return ["", f"//--------------------- {name:<26} --------------------------",
            f"\t.section\t{name},{flags}"]


def _info(f: SassFunction) -> list[str]:
    out = _section_header(f".nv.info.{f.name}", '"",@"SHT_CUDA_INFO"')
    for p in reversed(f.params):                   # nvdisasm lists the last parameter first
        out += _attr("EIATTR_KPARAM_INFO", 0x04, 0x17,
                     [".word\t0x00000000", f".short\t{p.ordinal:#06x}",
                      f".short\t{p.offset:#06x}", f".word\t{p.flags:#010x}"])
    if f.param_cbank is not None:
        c = f.param_cbank
        out += _attr("EIATTR_PARAM_CBANK", 0x04, 0x0A,
                     [f".word\tindex@(.nv.constant{c.bank}.{f.name})", f".short\t{c.base:#06x}",
                      f".short\t{c.size:#06x}"])
    return out


def _text(fns: list[SassFunction]) -> list[str]:
    out = _section_header(fns[0].section, '"ax",@progbits')
    for f in fns:
        out.append(f"\t.type\t{f.name},@function")
        if f.kind == "entry":
            out.append(f'\t.other\t{f.name},@"STO_CUDA_ENTRY STV_DEFAULT"')
        out.append(f"{f.name}:")
        for s in f.body:
            if isinstance(s, SassInstruction):
                out.append(f"        /*{s.offset:04x}*/                   {s}")
            elif isinstance(s, Label):
                out.append(f"{s.name}:")
    return out


def print_sass(m: SassModule) -> str:
    out = [f"\t.target\t{m.arch}"]
    counted = [f for f in m.functions if f.regcount is not None]
    if counted:
        out += _section_header(".nv.info", '"",@"SHT_CUDA_INFO"')
        for f in counted:
            out += _attr("EIATTR_REGCOUNT", 0x04, 0x2F,
                         [f".word\tindex@({f.name})", f".word\t{f.regcount:#010x}"])
    for f in m.functions:
        if f.params or f.param_cbank is not None:
            out += _info(f)
    k = 0
    fns = list(m.functions)
    while k < len(fns):                             # functions of one section, in order
        j = k
        while j < len(fns) and fns[j].section == fns[k].section:
            j += 1
        out += _text(fns[k:j])
        k = j
    for f in m.functions:
        if f.shared_bytes is not None:
            out += _section_header(f".nv.shared.{f.name}", '"aw",@nobits')
            out.append(f"\t.zero\t\t{f.shared_bytes}")
    return "\n".join(out) + "\n"
