"""SASS listing parser: nvdisasm / `cuobjdump -sass` text -> `SassModule`.

The listing is read line by line. A line is blank, a comment, a directive (`.section`,
`.type`, `.byte`, ...), a label (`name:`), a `cuobjdump` header (`code for sm_90`,
`Function : k`), or an instruction behind its `/*offset*/`. Every line must be one of these:
anything else is a located `SassSyntaxError`, so no instruction is ever skipped. Encoding
comments (`/* 0x000fe20000000800 */`) are dropped; they repeat what the text says.

Functions: in nvdisasm's listing a function starts at its symbol's label in a `.text.*`
section (declared by `.type name,@function`; `STO_CUDA_ENTRY` marks a kernel); a section can
hold a kernel and the subroutines it CALLs. Branch targets are labels (`` `(.L_x_0) ``) or,
from cuobjdump, raw offsets; both are resolved to section offsets when the section ends.
Parameters come from the `.nv.info.<kernel>` sections (see `semantics.sass.nvinfo`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from semantics.errors import SourceLoc
from semantics.ir.nodes import Label
from semantics.sass import nvinfo
from semantics.sass.instr import parse_instruction
from semantics.sass.lexer import SassSyntaxError
from semantics.sass.nodes import SassFunction, SassInstruction, SassModule, SassStmt
from semantics.sass.operands import SassTarget

_OFFSET = re.compile(r"\s*/\*([0-9A-Fa-f]{1,8})\*/")
_TRAILING_COMMENT = re.compile(r"\s*/\*[^*]*\*/\s*$")
_LABEL = re.compile(r"([.$A-Za-z_][\w.$]*):$")
_DIRECTIVE = re.compile(r"\.([A-Za-z_]\w*)(?=\s|$)")
_NVINFO = re.compile(r"//-+ nvinfo : (\w+)\s*$")
_CODE_FOR = re.compile(r"code for (sm_[0-9]+[a-z]?)$")
_FUNCTION = re.compile(r"Function : ([.$A-Za-z_][\w.$]*)$")
_ARCH = re.compile(r"sm_[0-9]+[a-z]?$")
_SYMBOL = re.compile(r"[.$A-Za-z_][\w.$]*$")
_DATA_WIDTH = {"byte": 1, "short": 2, "word": 4, "dword": 8}
_IGNORED = frozenset(("align", "sectionflags", "sectioninfo", "sectionentsize", "tkinfo",
                      "elftype", "headerflags", "size", "global", "weak"))
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"$')
_DATA_ITEM = re.compile(r"(0[xX][0-9A-Fa-f]+|[0-9]+)$|(index@)?\(\s*([^()]*?)\s*\)$|"
                        r"[.$A-Za-z_][\w.$@]*$")
_INSTR_BYTES = 16        # every instruction of sm_70 and later is 16 bytes


@dataclass
class _Fn:
    name: str
    section: str
    loc: SourceLoc
    body: list[SassStmt] = field(default_factory=list)


class _Listing:
    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self.lines = text.split("\n")
        self.n = 0                                  # 1-based number of the current line
        self.arch: str | None = None
        self.source = "nvdisasm"
        self.section = ""
        self.functions: list[_Fn] = []
        self.fn: _Fn | None = None
        self.kinds: dict[str, str] = {}             # symbol -> @function / @object
        self.entries: set[str] = set()
        # the current text section: its functions, labels and where the last instruction was
        self.sec_fns: list[_Fn] = []
        self.sec_labels: dict[str, int | None] = {}
        self.sec_label_loc: dict[str, SourceLoc] = {}
        self.pending: list[str] = []                # labels waiting for the next instruction
        self.last_offset: int | None = None
        self.instr_offsets: set[int] = set()
        # metadata: attributes per .nv.info section, shared bytes per kernel
        self.attrs: dict[str, list[nvinfo.Attr]] = {}
        self.attr: nvinfo.Attr | None = None
        self.shared: dict[str, int] = {}

    def error(self, message: str, col: int = 1) -> SassSyntaxError:
        return SassSyntaxError(message, SourceLoc(self.path, self.n, max(col, 1)),
                               self.lines[self.n - 1])

    # -- lines ---------------------------------------------------------------------------
    def parse(self) -> SassModule:
        for self.n, raw in enumerate(self.lines, 1):
            self.line(raw)
        self.n = max(len(self.lines), 1)
        self.end_section()
        if self.arch is None:
            self.n = 1
            raise self.error("not a SASS listing: no '.target sm_XX' (or 'code for sm_XX') line")
        regs = nvinfo.regcounts(self.attrs.get(".nv.info", []))
        out = []
        for f in self.functions:
            attrs = self.attrs.get(f".nv.info.{f.name}", [])
            kind = "entry" if f.name in self.entries or self.source == "cuobjdump" else "func"
            out.append(SassFunction(f.name, kind, f.section, tuple(f.body),
                                    nvinfo.kparams(attrs), nvinfo.param_cbank(attrs),
                                    regs.get(f.name), self.shared.get(f.name), f.loc))
        return SassModule(self.arch, tuple(out), self.source, self.path)

    def line(self, raw: str) -> None:
        offset = None
        m = _OFFSET.match(raw)
        pos = 0
        if m:
            offset = int(m.group(1), 16)
            pos = m.end()
        body = raw[pos:]
        while True:                                  # trailing /* 0x... */ encodings
            c = _TRAILING_COMMENT.search(body)
            if not c:
                break
            body = body[:c.start()]
        if "/*" in body or "*/" in body:
            raise self.error("unexpected comment", pos + body.find("/*" if "/*" in body else "*/") + 1)
        stripped = body.strip()
        col = pos + len(body) - len(body.lstrip()) + 1
        if not stripped:
            return
        if stripped.startswith("//"):
            n = _NVINFO.match(stripped)
            if n and self.section.startswith(".nv.info"):
                self.attr = nvinfo.Attr(n.group(1), SourceLoc(self.path, self.n, col),
                                        self.lines[self.n - 1])
                self.attrs.setdefault(self.section, []).append(self.attr)
            return
        if "//" in stripped and '"' not in stripped:
            cut = body.index("//")
            body = body[:cut]
            stripped = body.strip()
        if offset is not None and not stripped.startswith("."):
            self.instruction(stripped, col, offset)
        elif stripped.startswith(".") and _DIRECTIVE.match(stripped):
            self.directive(stripped, col, offset)
        elif _LABEL.match(stripped):
            self.label(stripped[:-1], col)
        elif _CODE_FOR.match(stripped):
            self.set_arch(_CODE_FOR.match(stripped).group(1), col)
            self.source = "cuobjdump"
        elif _FUNCTION.match(stripped):
            self.source = "cuobjdump"
            self.end_section()
            name = _FUNCTION.match(stripped).group(1)
            self.section = f".text.{name}"
            self.start_function(name, col)
        elif re.fullmatch(r"\.{3,}", stripped) and self.source == "cuobjdump":
            self.end_section()
            self.section = ""
        else:
            raise self.error("expected an instruction, a label or a directive", col)

    def set_arch(self, arch: str, col: int) -> None:
        if not _ARCH.match(arch):
            raise self.error(f"expected an architecture such as sm_90, found '{arch}'", col)
        if self.arch is not None and self.arch != arch:
            raise self.error(f"a second architecture '{arch}' (the listing is {self.arch}): "
                             "disassemble one architecture at a time", col)
        self.arch = arch

    # -- directives ----------------------------------------------------------------------
    def directive(self, text: str, col: int, offset: int | None) -> None:
        name = _DIRECTIVE.match(text).group(1)
        args = text[len(name) + 1:].strip()
        acol = col + text.find(args) if args else col + len(text)
        if name in _DATA_WIDTH or name in ("string", "zero"):
            self.data(name, args, acol)
            return
        if offset is not None:
            raise self.error(f"'.{name}' after an offset: expected data or an instruction", col)
        if name == "target":
            self.set_arch(args, acol)
        elif name == "section":
            sec = args.split(",")[0].strip()
            if not _SYMBOL.match(sec):
                raise self.error(f"expected a section name, found '{sec}'", acol)
            self.end_section()
            self.section = sec
            self.attr = None
        elif name in ("type", "other"):
            sym, _, what = args.partition(",")
            if not _SYMBOL.match(sym.strip()) or not what.strip().startswith("@"):
                raise self.error(f"expected 'symbol,@attribute' after .{name}", acol)
            if name == "type":
                self.kinds[sym.strip()] = what.strip()
            elif "STO_CUDA_ENTRY" in what:
                self.entries.add(sym.strip())
        elif name in _IGNORED:
            if name in ("global", "weak") and not _SYMBOL.match(args):
                raise self.error(f"expected a symbol after .{name}", acol)
        else:
            raise self.error(f"unknown directive '.{name}'", col)

    def data(self, kind: str, args: str, col: int) -> None:
        if self.section.startswith(".text."):
            raise self.error("data in a text section: keq reads instructions only", col)
        out = bytearray()
        symbols: list[str] = []
        if kind == "string":
            if not _STRING.match(args):
                raise self.error("expected a quoted string", col)
            out += args[1:-1].encode("utf-8", "replace") + b"\0"
        elif kind == "zero":
            if not re.fullmatch(r"[0-9]+", args):
                raise self.error("expected a byte count after .zero", col)
            count = int(args)
            if self.section.startswith(".nv.shared.") and not self.section.startswith(
                    ".nv.shared.reserved"):
                self.shared[self.section[len(".nv.shared."):]] = count
            out += bytes(min(count, 64))
        else:
            width = _DATA_WIDTH[kind]
            if not args:
                raise self.error(f"expected values after .{kind}", col)
            for item in args.split(","):
                item = item.strip()
                m = _DATA_ITEM.match(item)
                if not m:
                    raise self.error(f"bad .{kind} value '{item}'", col)
                if m.group(1) is not None:
                    v = int(m.group(1), 0) if m.group(1)[:2].lower() == "0x" else int(m.group(1))
                    if v >= 1 << (8 * width):
                        raise self.error(f"value '{item}' does not fit a .{kind}", col)
                    out += v.to_bytes(width, "little")
                else:
                    if m.group(2):
                        symbols.append(m.group(3))
                    out += bytes(width)
        if self.attr is not None and self.section.startswith(".nv.info"):
            self.attr.data += out
            self.attr.symbols += symbols

    # -- code ----------------------------------------------------------------------------
    def label(self, name: str, col: int) -> None:
        text = self.section.startswith(".text.")
        if not text or name == self.section:
            return                                   # data labels, the section symbol
        if name in self.sec_labels:
            raise self.error(f"label '{name}' defined twice", col)
        is_fn = self.kinds.get(name) == "@function" or name == self.section[len(".text."):]
        if is_fn:
            self.start_function(name, col)
        elif self.fn is None:
            raise self.error(f"label '{name}' before the function's symbol", col)
        else:
            self.fn.body.append(Label(name, SourceLoc(self.path, self.n, col)))
        self.sec_labels[name] = None
        self.sec_label_loc[name] = SourceLoc(self.path, self.n, col)
        self.pending.append(name)

    def start_function(self, name: str, col: int) -> None:
        if any(f.name == name for f in self.functions):
            raise self.error(f"function '{name}' defined twice", col)
        self.fn = _Fn(name, self.section, SourceLoc(self.path, self.n, col))
        self.functions.append(self.fn)
        self.sec_fns.append(self.fn)

    def instruction(self, text: str, col: int, offset: int) -> None:
        if self.fn is None or not self.section.startswith(".text."):
            raise self.error("an instruction outside a function", col)
        if self.last_offset is not None and offset <= self.last_offset:
            raise self.error(f"offset {offset:#06x} does not follow {self.last_offset:#06x}", 1)
        ins = parse_instruction(text, col, offset, self.path, self.n, self.lines[self.n - 1])
        self.fn.body.append(ins)
        self.last_offset = offset
        self.instr_offsets.add(offset)
        for name in self.pending:
            self.sec_labels[name] = offset
        self.pending.clear()

    def end_section(self) -> None:
        """Resolve the branch targets of the text section that ends here."""
        end = 0 if self.last_offset is None else self.last_offset + _INSTR_BYTES
        for name in self.pending:
            self.sec_labels[name] = end
        for fn in self.sec_fns:
            for k, s in enumerate(fn.body):
                if isinstance(s, SassInstruction) and any(
                        isinstance(o, SassTarget) for o in s.operands):
                    fn.body[k] = self._resolve(s)
        self.sec_fns, self.sec_labels, self.pending = [], {}, []
        self.sec_label_loc = {}
        self.last_offset, self.instr_offsets, self.fn = None, set(), None

    def _resolve(self, s: SassInstruction) -> SassInstruction:
        ops = list(s.operands)
        for j, o in enumerate(ops):
            if not isinstance(o, SassTarget):
                continue
            if o.label is not None:
                at = self.sec_labels.get(o.label)
                if at is None:
                    raise SassSyntaxError(f"undefined label '{o.label}'", s.loc,
                                          self.lines[s.loc.line - 1])
                ops[j] = SassTarget(o.label, at)
            elif o.offset not in self.instr_offsets and not (
                    s.opcode == "RET" and o.offset == 0):
                raise SassSyntaxError(f"target {o.offset:#x} is not an instruction offset",
                                      s.loc, self.lines[s.loc.line - 1])
        return replace(s, operands=tuple(ops))


def parse_sass(text: str, path: str = "<sass>") -> SassModule:
    """Parse an nvdisasm or `cuobjdump -sass` listing; raises `SassSyntaxError` (located)."""
    return _Listing(text, path).parse()


def parse_sass_file(path: str | Path) -> SassModule:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise SassSyntaxError(f"not a UTF-8 text file ({e.reason})",
                              SourceLoc(str(p), 1, 1)) from None
    return parse_sass(text, str(p))
