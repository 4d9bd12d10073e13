"""What `keq parse FILE.sass|FILE.cubin` shows: per function its parameters with their
constant-bank slots, registers, shared memory, basic blocks, BSSY/BSYNC reconvergence points
and the instructions without semantics (all of them, until SASS semantics exist), in the
same shape as the PTX summary so scripts read both."""

from __future__ import annotations

from semantics.sass.cfg import build_sass_cfg
from semantics.sass.nodes import SassModule


def summarize_sass(m: SassModule, supported=lambda form: False) -> list[dict]:
    out = []
    for f in m.functions:
        sc = build_sass_cfg(f)
        unsupported: dict[str, list] = {}
        for ins in f.instructions:
            if not supported(ins.form):
                entry = unsupported.setdefault(ins.form.name, [0, str(ins.loc)])
                entry[0] += 1
        params = []
        for p in f.params:
            at = f.cbank_offset(p)
            bank = f.param_cbank.bank if f.param_cbank else 0
            params.append({"name": f"param_{p.ordinal}", "ordinal": p.ordinal,
                           "offset": p.offset, "bytes": p.size,
                           "cbank": None if at is None else f"c[{bank:#x}][{at:#x}]"})
        out.append({
            "name": f.name, "kind": f.kind, "section": f.section, "params": params,
            "param_cbank": None if f.param_cbank is None else {
                "bank": f.param_cbank.bank, "base": f.param_cbank.base,
                "bytes": f.param_cbank.size},
            "registers": f.regcount, "shared_bytes": f.shared_bytes,
            "instructions": len(f.instructions),
            "blocks": [{"index": b.index, "labels": list(b.labels),
                        "offset": f.instructions[b.start].offset,
                        "instructions": b.end - b.start,
                        "succs": ["exit" if s == -1 else s for s in b.succs],
                        "ipdom": "exit" if sc.ipdom[b.index] == -1 else sc.ipdom[b.index]}
                       for b in sc.blocks],
            "reconvergence": [{"bssy": f.instructions[r.bssy].offset, "barrier": r.barrier,
                               "target": r.target, "block": r.block,
                               "bsync": [f.instructions[j].offset for j in r.bsyncs]}
                              for r in sc.reconvergence],
            "unsupported": [{"form": k, "count": v[0], "first": v[1]}
                            for k, v in unsupported.items()],
        })
    return out


def format_sass(path: str, m: SassModule, kernels: list[dict]) -> str:
    lines = [f"{path}: SASS {m.arch} ({m.source} listing), {len(kernels)} function(s)"]
    for k in kernels:
        lines.append(f"\n{k['kind']} {k['name']}")
        params = ", ".join(f"{p['name']}: {p['bytes']} bytes at {p['cbank'] or '?'}"
                           for p in k["params"])
        if k["param_cbank"] is None and not k["params"]:
            params = "unknown: the listing has no .nv.info (cuobjdump); read the cubin"
        lines.append(f"  params       ({params})")
        regs = k["registers"]
        lines.append(f"  registers    {'unknown' if regs is None else regs}")
        lines.append(f"  shared       {k['shared_bytes'] or 0} bytes")
        lines.append(f"  instructions {k['instructions']} in {len(k['blocks'])} basic block(s)")
        for b in k["blocks"]:
            label = f" {','.join(b['labels'])}" if b["labels"] else ""
            succs = ", ".join(map(str, b["succs"]))
            lines.append(f"    bb{b['index']}{label} @{b['offset']:#06x}: {b['instructions']} "
                         f"instr -> {succs}  (reconverge at {b['ipdom']})")
        for r in k["reconvergence"]:
            syncs = ", ".join(f"{o:#06x}" for o in r["bsync"]) or "none"
            lines.append(f"  reconverge   BSSY {r['barrier']} at {r['bssy']:#06x} -> "
                         f"{r['target']:#06x} (bb{r['block']}), BSYNC at {syncs}")
        if k["unsupported"]:
            n = sum(u["count"] for u in k["unsupported"])
            lines.append(f"  unsupported  {n} instruction(s) without semantics:")
            for u in k["unsupported"]:
                lines.append(f"    {u['form']:<36} x{u['count']:<4} first at {u['first']}")
        else:
            lines.append("  unsupported  none: every instruction has semantics")
    return "\n".join(lines)
