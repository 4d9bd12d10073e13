"""One SASS instruction line -> `SassInstruction` (targets not yet resolved to offsets).

Grammar (what nvdisasm and cuobjdump print):

    instruction := [ '@' ['!'] PRED ] OPCODE{.MOD} [ operand { ',' operand } ] ';'
    operand     := ['-'] ['~' | '!'] ( '|' primary '|' | primary ) {'.' SUFFIX}
    primary     := REG{.MOD} | SR_NAME | 0xHEX | DECIMAL | INF | QNAN | `(LABEL)
                 | c[0xB][addr] | [addr] | desc[UR][addr] | KEYWORD
    addr        := term { ('+' | '-') term },  term := REG{.MOD} | UREG | ['-'] 0xHEX

RET's target follows its register without a comma (`RET.REL.NODEC R20 `(k)`).
"""

from __future__ import annotations

import re
from typing import NoReturn

from semantics.errors import SourceLoc
from semantics.ir.nodes import Form, Guard
from semantics.ir.operands import IntImm, SpecialReg, Sym
from semantics.sass import registry
from semantics.sass.lexer import SassSyntaxError, tokenize_instruction
from semantics.sass.nodes import SassInstruction
from semantics.sass.operands import (
    NAMED_REGS, ConstBank, FloatLit, Operand, SassAddr, SassReg, SassTarget, Src,
)

_REG = re.compile(r"(UR|R|UP|P|B)([0-9]+)$")
_REGLIKE = re.compile(r"(UR|R|UP|P|B)[0-9]")
_OPCODE = re.compile(r"[A-Z][A-Z0-9_]*$")
_MOD = re.compile(r"[A-Za-z0-9_]+$")
_FLOAT_WORDS = frozenset(("INF", "QNAN", "NAN", "SNAN"))
_DESC_WORDS = frozenset(("desc", "gdesc"))
_HEX = re.compile(r"0[xX][0-9A-Fa-f]+$")
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?$")
_GEOMETRY = re.compile(r"[123]D")           # TEX/TLD4/SULD geometry operands
_HALVES = re.compile(r"H[01]_H[01]")        # a 16-bit half selector (HADD2, HFMA2)
_MAX_INDEX = 255
_FORMS: dict[str, Form] = {}


class _InstrParser:
    """Recursive descent over the tokens of one line."""

    def __init__(self, text: str, col: int, path: str, line_no: int, line_text: str) -> None:
        self.toks = tokenize_instruction(text, col)
        self.i = 0
        self.path = path
        self.line_no = line_no
        self.line_text = line_text
        self.end_col = col + len(text.rstrip())

    # -- helpers -------------------------------------------------------------------------
    def error(self, message: str, i: int | None = None) -> NoReturn:
        i = self.i if i is None else i
        col = self.toks[i][1] if i < len(self.toks) else self.end_col
        raise SassSyntaxError(message, SourceLoc(self.path, self.line_no, col), self.line_text)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.toks[j][0] if j < len(self.toks) else ""

    def next(self, what: str) -> str:
        if self.i >= len(self.toks):
            self.error(f"expected {what}, found the end of the line")
        tok = self.toks[self.i][0]
        self.i += 1
        return tok

    def accept(self, tok: str) -> bool:
        if self.peek() == tok and self.i < len(self.toks):
            self.i += 1
            return True
        return False

    def expect(self, tok: str, what: str = "") -> None:
        if not self.accept(tok):
            got = self.peek() or "the end of the line"
            self.error(f"expected '{tok}'{' ' + what if what else ''}, found '{got}'")

    def integer(self, what: str) -> int:
        neg = self.accept("-")
        tok = self.peek()
        if not _HEX.match(tok):
            self.error(f"expected {what} (a hex integer), found '{tok or 'the end of the line'}'")
        self.i += 1
        return -int(tok, 16) if neg else int(tok, 16)

    # -- instruction ---------------------------------------------------------------------
    def instruction(self, offset: int, loc: SourceLoc) -> SassInstruction:
        guard = None
        if self.accept("@"):
            neg = self.accept("!")
            at = self.i
            reg = self.register_word(self.next("a predicate register"), at)
            if not isinstance(reg, SassReg) or not reg.is_predicate:
                self.error("a guard must be a predicate register (P0..P6, PT, UP0..UP6, UPT)", at)
            guard = Guard(reg, neg)  # type: ignore[arg-type]
        at = self.i
        word = self.next("an instruction")
        form = _FORMS.get(word) or self.form(word, at)
        operands: list[Operand] = []
        if not self.accept(";"):
            while True:
                operands.append(self.operand())
                if self.accept(","):
                    continue
                tok = self.peek()
                if tok == ";":
                    break
                if tok.startswith("`") or (form.opcode == "RET" and tok):
                    continue                  # RET R20 `(k): no comma before the target
                if not tok:
                    self.error("expected ';' at the end of the instruction")
                self.error(f"expected ',' or ';' after an operand, found '{tok}'")
            self.expect(";")
        if self.i < len(self.toks):
            self.error(f"unexpected '{self.peek()}' after the end of the instruction")
        if form.opcode in registry.TARGET_OPCODES and operands \
                and isinstance(operands[-1], IntImm):
            operands[-1] = SassTarget(None, operands[-1].value)   # cuobjdump: a raw address
        return SassInstruction(form, tuple(operands), guard, None, loc, offset)

    def form(self, word: str, at: int) -> Form:
        opcode, *mods = word.split(".")
        if not _OPCODE.match(opcode):
            self.error(f"expected an instruction, found '{word}'", at)
        if not registry.is_opcode(opcode):
            self.error(f"unknown SASS opcode '{opcode}'", at)
        for m in mods:
            if not _MOD.match(m):
                self.error(f"bad modifier '.{m}' in '{word}'", at)
        form = Form(opcode, tuple(mods))
        if len(_FORMS) < 1 << 14:
            _FORMS[word] = form
        return form

    # -- operands ------------------------------------------------------------------------
    def operand(self) -> Operand:
        at = self.i
        neg = self.accept("-")
        tok = self.peek()
        if neg and (tok[:1].isdigit() or tok in _FLOAT_WORDS):
            return self.number(neg=True)
        if tok == "+" and self.peek(1) in _FLOAT_WORDS:
            self.i += 2
            return FloatLit("+" + self.toks[self.i - 1][0])
        invert = self.accept("~") or self.accept("!")
        if invert and self.peek() in ("~", "!"):
            self.error("double inversion")
        absolute = self.accept("|")
        inner_at = self.i
        op = self.primary()
        if absolute:
            self.expect("|", "to close the absolute value")
        mods: list[str] = []
        reuse = False
        if isinstance(op, Src):                   # R1.reuse, R1.H1: suffixes of the word
            mods, reuse, op = list(op.mods), op.reuse, op.operand
        while self.peek().startswith(".") and absolute:
            for m in self.next("a suffix")[1:].split("."):
                if m == "reuse":
                    reuse = True
                else:
                    mods.append(m)
        if (neg or invert or absolute) and not isinstance(op, (SassReg, SpecialReg, ConstBank)):
            self.error("'-', '~', '!' and '|..|' apply to registers and constants only", at)
        if invert and isinstance(op, SassReg) and op.is_predicate != (self.toks[at + neg][0] == "!"):
            self.error("'!' negates predicates, '~' inverts registers", at)
        if not isinstance(op, (SassReg, SpecialReg, ConstBank)) and (mods or reuse):
            self.error("only registers take suffixes", inner_at)
        if neg or invert or absolute or mods or reuse:
            return Src(op, neg, absolute, invert, tuple(mods), reuse)
        return op

    def primary(self) -> Operand:
        at = self.i
        tok = self.next("an operand")
        c = tok[0]
        if c == "`":
            if not (tok.startswith("`(") and tok.endswith(")") and len(tok) > 3):
                self.error(f"bad code address '{tok}'", at)
            return SassTarget(tok[2:-1])
        if c.isdigit():
            if _GEOMETRY.fullmatch(tok):         # a texture's geometry (`TLD4 ..., 2D`)
                return Sym(tok)
            self.i -= 1
            return self.number(neg=False)
        if c == "[":
            return self.address("]", at)
        if tok == "c" and self.peek() == "[":
            self.i += 1
            bank = self.integer("a constant bank")
            self.expect("]")
            self.expect("[")
            addr = self.address("]", self.i - 1)
            if addr.reg is not None and addr.ureg is not None:
                self.error("a constant-bank address takes one register", at)
            if addr.reg_mods:
                self.error("a constant-bank register takes no suffix", at)
            if bank < 0:
                self.error("a constant bank is not negative", at)
            return ConstBank(bank, addr.offset, addr.reg or addr.ureg)
        if tok in _DESC_WORDS and self.peek() == "[":
            self.i += 1
            dat = self.i
            desc = self.register_word(self.next("a uniform register"), dat)
            if not isinstance(desc, SassReg) or desc.kind not in ("UR", "URZ"):
                self.error("a memory descriptor is a uniform register", dat)
            self.expect("]")
            self.expect("[", "to open the address")
            addr = self.address("]", self.i - 1)
            return SassAddr(addr.reg, addr.reg_mods, addr.ureg, addr.offset, desc)
        if c.isalpha() or c in "_$":
            if tok in _FLOAT_WORDS:
                return FloatLit(tok)
            return self.register_word(tok, at)
        self.error(f"expected an operand, found '{tok}'", at)

    def number(self, neg: bool) -> Operand:
        at = self.i
        tok = self.next("a number")
        if _HEX.match(tok):
            return IntImm(-int(tok, 16) if neg else int(tok, 16))
        if tok in _FLOAT_WORDS or _DECIMAL.match(tok):
            return FloatLit(("-" if neg else "") + tok)
        self.error(f"bad number '{tok}'", at)

    def register_word(self, tok: str, at: int) -> Operand:
        """A register with its suffixes (`R2.64`, `R1.reuse`), a special register, or a
        keyword operand (nvdisasm's `SB0`, `2D`, `gsb0`, ...)."""
        name, *suffixes = tok.split(".")
        m = _REG.match(name)
        if m:
            index = int(m.group(2))
            if index > _MAX_INDEX or (len(m.group(2)) > 1 and m.group(2)[0] == "0"):
                self.error(f"bad register number '{name}'", at)
            reg: Operand = SassReg(m.group(1), index)
        elif name in NAMED_REGS and name != "SRZ":
            reg = SassReg(name)
        elif name.startswith("SR_") or name == "SRZ":
            return SpecialReg(tok)
        elif _REGLIKE.match(name) or not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            self.error(f"bad register '{tok}'", at)
        else:
            if suffixes:
                self.error(f"unexpected suffix in '{tok}'", at)
            return Sym(name)
        if not suffixes:
            return reg
        mods = tuple(s for s in suffixes if s != "reuse")
        # (nvdisasm writes the reuse flag last, or before a half selector: R0.reuse.H0_H0)
        if "" in suffixes or suffixes.count("reuse") > 1 or (
                "reuse" in suffixes and suffixes[-1] != "reuse"
                and not _HALVES.fullmatch(suffixes[-1])):
            self.error(f"bad register suffix in '{tok}'", at)
        return Src(reg, mods=mods, reuse="reuse" in suffixes)

    def address(self, close: str, at: int) -> SassAddr:
        """The inside of `[...]`, after the '['."""
        reg = ureg = None
        reg_mods: tuple[str, ...] = ()
        offset: int | None = None
        first = True
        while True:
            if not first and not (self.peek() in ("+", "-")):
                break
            if not first and self.peek() == "+":
                self.i += 1
            first = False
            t_at = self.i
            tok = self.peek()
            if tok == "-" or tok[:1].isdigit():
                if offset is not None:
                    self.error("an address takes one immediate offset", t_at)
                offset = self.integer("an address offset")
                continue
            if tok == close or not tok:
                self.error(f"expected an address term, found '{tok or 'the end of the line'}'")
            self.i += 1
            op = self.register_word(tok, t_at)
            mods: tuple[str, ...] = ()
            if isinstance(op, Src):
                if op.reuse:
                    self.error("an address register takes no .reuse", t_at)
                op, mods = op.operand, op.mods
            if not isinstance(op, SassReg) or op.is_predicate or op.kind in ("B", "PR", "UPR"):
                self.error(f"expected an address register, found '{tok}'", t_at)
            if op.is_uniform and not mods:
                if ureg is not None:
                    self.error("an address takes one uniform register", t_at)
                ureg = op
            else:
                if reg is not None:
                    self.error("an address takes one base register", t_at)
                reg, reg_mods = op, mods
        self.expect(close, "to close the address")
        return SassAddr(reg, reg_mods, ureg, offset or 0)


def parse_instruction(text: str, col: int, offset: int, path: str, line_no: int,
                      line_text: str) -> SassInstruction:
    """Parse the instruction `text`, which starts at 1-based column `col` of line `line_no`."""
    p = _InstrParser(text, col, path, line_no, line_text)
    return p.instruction(offset, SourceLoc(path, line_no, col))
