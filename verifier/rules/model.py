"""Peephole rewrite rules over PTX instruction sequences, as a TOML file of `[[rule]]`s
(`keq rule FILE`; docs/rules.md):

    [[rule]]
    name = "unsigned division by 3 is a multiply-high by its magic number"
    inputs = { a = "u32" }                  # registers the sequences read: every bit pattern
    outputs = { d = "u32" }                 # compared after both, bit for bit
    temps = { t = "u32" }                   # other registers (optional)
    pre = "setp.ne.u32 %pre, %a, 0;"       # optional: a precondition sets predicate %pre
    assume = ["f32-nan-canonical"]          # optional target assumptions (docs/semantics.md)
    expect = "valid"                        # optional: valid | invalid (a corpus's own check)
    source = "div.u32 %d, %a, 3;"
    target = "mul.hi.u32 %t, %a, -1431655765; shr.u32 %d, %t, 1;"

Registers are written `%name` in the sequences; their types are PTX types (b/s/u 8..64,
f16/f32/f64, pred for temps and `pre` only).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from semantics.errors import KeqError, SourceLoc
from semantics.ir.types import TYPES

RULE_KEYS = ("name", "inputs", "outputs", "temps", "pre", "assume", "expect", "source",
             "target")
EXPECT = ("valid", "invalid")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


class RuleError(KeqError):
    """A rule file that is not a valid rule corpus: located."""

    def __init__(self, message: str, loc: SourceLoc) -> None:
        super().__init__(f"{loc}: error: {message}")
        self.loc = loc


@dataclass(frozen=True)
class Rule:
    name: str
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    temps: tuple[tuple[str, str], ...]
    source: str
    target: str
    pre: str = ""
    assume: tuple[str, ...] = ()
    expect: str = ""
    loc: SourceLoc = SourceLoc("<rules>", 1, 1)


def load_rules(path: str | Path) -> list[Rule]:
    """The rules of the TOML file at `path`; errors carry file:line:col."""
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise KeqError(f"{p}: cannot read the rules: {e}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        raise RuleError(f"invalid TOML: {str(e).split(' (at line')[0]}",
                        SourceLoc(str(p), line, col)) from None
    starts = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip() == "[[rule]]"]
    rules = doc.get("rule")
    if not isinstance(rules, list) or not rules or set(doc) != {"rule"}:
        raise RuleError("a rule file holds [[rule]] tables and nothing else",
                        SourceLoc(str(p), 1, 1))
    out = [_rule(t, SourceLoc(str(p), starts[i] if i < len(starts) else 1, 1))
           for i, t in enumerate(rules)]
    names = [r.name for r in out]
    for r in out:
        if names.count(r.name) > 1:
            raise RuleError(f"two rules are named {r.name!r}", r.loc)
    return out


def _rule(t: dict, loc: SourceLoc) -> Rule:
    def need(key: str, typ: type):
        if key not in t:
            raise RuleError(f"rule needs `{key}`", loc)
        if not isinstance(t[key], typ):
            raise RuleError(f"`{key}` must be a {typ.__name__}", loc)
        return t[key]
    extra = set(t) - set(RULE_KEYS)
    if extra:
        raise RuleError(f"unknown key(s) {', '.join(sorted(extra))} (a rule has "
                        f"{', '.join(RULE_KEYS)})", loc)
    expect = t.get("expect", "")
    if expect and expect not in EXPECT:
        raise RuleError(f"`expect` must be one of {', '.join(EXPECT)}", loc)
    assume = t.get("assume", [])
    if not isinstance(assume, list) or not all(isinstance(a, str) for a in assume):
        raise RuleError("`assume` must be a list of names", loc)
    regs = {k: _regs(t.get(k, {}), k, loc) for k in ("inputs", "outputs", "temps")}
    if not regs["inputs"] or not regs["outputs"]:
        raise RuleError("a rule needs `inputs` and `outputs`", loc)
    seen: dict[str, str] = {}
    for kind, items in regs.items():
        for name, typ in items:
            if name in seen and seen[name] != typ:
                raise RuleError(f"register %{name} has two types", loc)
            seen[name] = typ
            if typ == "pred" and kind != "temps":
                raise RuleError(f"%{name}: a predicate can only be a temp", loc)
    return Rule(need("name", str), regs["inputs"], regs["outputs"], regs["temps"],
                need("source", str), need("target", str), t.get("pre", ""),
                tuple(assume), expect, loc)


def _regs(table, key: str, loc: SourceLoc) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise RuleError(f"`{key}` must be a table of register = type", loc)
    out = []
    for name, typ in table.items():
        if not _NAME.match(name) or name.startswith("keq"):
            raise RuleError(f"`{key}`: {name!r} is not a register name (letters, digits, _; "
                            f"not starting with keq)", loc)
        if not isinstance(typ, str) or typ not in TYPES:
            raise RuleError(f"`{key}`: %{name} has no PTX type {typ!r}", loc)
        out.append((name, typ))
    return tuple(out)


__all__ = ["EXPECT", "Rule", "RuleError", "load_rules"]
