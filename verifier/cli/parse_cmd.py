"""`keq parse FILE.ptx [--json]`: what keq reads in a PTX file, kernel by kernel."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass

from semantics.ir import build_cfg
from semantics.ir.nodes import Function, Module, Variable
from semantics.ir.operands import Addr, Sym
from semantics.ops import is_supported
from semantics.ptx import parse_ptx_file


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "parse", help="parse a PTX file and summarize its kernels",
        description="Parse a PTX file and list each kernel: parameters, registers, shared "
                    "memory, instructions, basic blocks, and the instructions keq parses but "
                    "gives no semantics yet (refused by name by every later stage).")
    p.add_argument("file", metavar="FILE.ptx",
                   help="a PTX file, a SASS listing (.sass: nvdisasm or cuobjdump -sass "
                        "output) or a .cubin (disassembled with nvdisasm)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=run)


@dataclass(frozen=True)
class UnsupportedUse:
    form: str
    count: int
    first: str


@dataclass(frozen=True)
class KernelSummary:
    name: str
    kind: str
    params: list[dict]
    registers: dict[str, int]
    shared_bytes: int
    dynamic_shared: bool
    instructions: int
    blocks: list[dict]
    unsupported: list[UnsupportedUse]


def _shared_memory(m: Module, f: Function) -> tuple[int, bool]:
    """Static shared bytes this function declares or references, and whether it uses dynamic
    (extern, unsized) shared memory."""
    used: set[str] = set()
    for ins in f.instructions:
        for op in ins.operands:
            base = op.base if isinstance(op, Addr) else op
            if isinstance(base, Sym):
                used.add(base.name)
    total, dynamic = 0, False
    candidates: list[Variable] = list(f.local_vars)
    candidates += [v for n, v in m.variables.items() if n in used]
    for v in candidates:
        if v.space != "shared":
            continue
        size = v.size_bytes
        if size is None:
            dynamic = True
        else:
            total += size
    return total, dynamic


def summarize(m: Module) -> list[KernelSummary]:
    out = []
    for f in m.functions.values():
        cfg = build_cfg(f)
        shared, dynamic = _shared_memory(m, f)
        unsupported: dict[str, list] = {}
        for ins in f.instructions:
            if not is_supported(ins.form):
                entry = unsupported.setdefault(ins.form.name, [0, str(ins.loc)])
                entry[0] += 1
        out.append(KernelSummary(
            name=f.name, kind=f.kind,
            params=[{"name": p.name, "type": p.type.name,
                     **({"bytes": p.size_bytes} if p.dims else {})} for p in f.params],
            registers=f.register_count(),
            shared_bytes=shared, dynamic_shared=dynamic,
            instructions=len(f.instructions),
            blocks=[{"index": b.index, "labels": list(b.labels),
                     "instructions": b.end - b.start,
                     "succs": ["exit" if s == -1 else s for s in b.succs],
                     "ipdom": ("exit" if cfg.ipdom[b.index] == -1 else cfg.ipdom[b.index])}
                    for b in cfg.blocks],
            unsupported=[UnsupportedUse(k, v[0], v[1]) for k, v in unsupported.items()],
        ))
    return out


def _print_text(path: str, m: Module, kernels: list[KernelSummary]) -> None:
    print(f"{path}: PTX {m.version}, target {', '.join(m.target)}, "
          f"{m.address_size}-bit addresses, {len(kernels)} function(s)")
    for k in kernels:
        print(f"\n{k.kind} {k.name}")
        params = ", ".join(f"{p['name']}: .{p['type']}" + (f"[{p['bytes']}]" if "bytes" in p else "")
                           for p in k.params)
        print(f"  params       ({params})")
        regs = ", ".join(f"{n} .{t}" for t, n in k.registers.items()) or "none"
        print(f"  registers    {regs}")
        dyn = " + dynamic" if k.dynamic_shared else ""
        print(f"  shared       {k.shared_bytes} bytes{dyn}")
        print(f"  instructions {k.instructions} in {len(k.blocks)} basic block(s)")
        for b in k.blocks:
            label = f" {','.join(b['labels'])}" if b["labels"] else ""
            succs = ", ".join(map(str, b["succs"]))
            print(f"    bb{b['index']}{label}: {b['instructions']} instr -> {succs}"
                  f"  (reconverge at {b['ipdom']})")
        if k.unsupported:
            n = sum(u.count for u in k.unsupported)
            print(f"  unsupported  {n} instruction(s) without semantics:")
            for u in k.unsupported:
                print(f"    {u.form:<36} x{u.count:<4} first at {u.first}")
        else:
            print("  unsupported  none: every instruction has semantics")


def _run_sass(args: argparse.Namespace) -> int:
    """`.sass` / `.cubin`: the SASS front end (semantics.sass)."""
    from semantics import sass
    from semantics.sass.summary import format_sass, summarize_sass
    m = (sass.parse_cubin(args.file) if args.file.endswith(".cubin")
         else sass.parse_sass_file(args.file))
    kernels = summarize_sass(m, sass.is_supported)
    if args.json:
        print(json.dumps({"file": args.file, "isa": "sass", "arch": m.arch, "source": m.source,
                          "functions": kernels}, indent=2))
    else:
        print(format_sass(args.file, m, kernels))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.file.endswith((".sass", ".cubin")):
        return _run_sass(args)
    m = parse_ptx_file(args.file)
    kernels = summarize(m)
    if args.json:
        print(json.dumps({"file": args.file, "version": m.version, "target": list(m.target),
                          "address_size": m.address_size,
                          "functions": [asdict(k) for k in kernels]}, indent=2))
    else:
        _print_text(args.file, m, kernels)
    return 0
