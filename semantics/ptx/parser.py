"""PTX parser: text -> `semantics.ir.Module`.

Recursive descent over the token stream of `semantics.ptx.lexer`. Every error is a
`PtxSyntaxError` located at the offending token (file:line:col, the line, a caret). The parser
resolves names as it goes: registers against the `.reg` declarations of enclosing scopes,
everything else as symbols, checked against the function's labels and variables at its end and
against the module's functions and variables once the module is read.

Speed (bench/parse.py): resolved operands are cached per token, forms per opcode word, and
the common operand shapes are read inline in `instruction()`; `operand()` is the general path.
"""

from __future__ import annotations

import gc
import re
import struct
from pathlib import Path
from typing import NoReturn

from semantics.errors import PtxSyntaxError, SourceLoc
from semantics.ir.nodes import (
    DebugLoc, FileDirective, Form, Function, Guard, Instruction, Label, Module, Param,
    PerfDirective, Pragma, RegDecl, ScopeBegin, ScopeEnd, Section, Stmt, Variable,
)
from semantics.ir.operands import (
    Addr, BracketList, FloatImm, IntImm, Neg, Operand, OperandList, Pair, Reg, Sink, SpecialReg,
    Sym, Vec,
)
from semantics.ir.types import TYPES, PtxType
from semantics.ptx import registry
from semantics.ptx.lexer import Tokens, tokenize

_SPECIAL_BASES = frozenset("""
    %tid %ntid %ctaid %nctaid %laneid %warpid %nwarpid %smid %nsmid %gridid %lanemask_eq
    %lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt %clock %clock_hi %clock64 %globaltimer
    %globaltimer_lo %globaltimer_hi %dynamic_smem_size %total_smem_size %aggr_smem_size
    %cluster_ctaid %cluster_nctaid %cluster_ctarank %cluster_nctarank %clusterid %nclusterid
    %is_explicit_cluster %current_graph_exec %reserved_smem_offset_begin
    %reserved_smem_offset_end %reserved_smem_offset_cap %reserved_smem_offset_0
    %reserved_smem_offset_1
""".split())
_SPECIAL_INDEXED = re.compile(r"%(envreg|pm)[0-9]+(_64)?$")
_VECTOR_COMPONENTS = frozenset("xyzw")
_REG_RANGE_NAME = re.compile(r"^(.*?)([0-9]+)$")
_IDENT = re.compile(r"^[A-Za-z_$%][\w$]*$")
_DEC_FLOAT = re.compile(r"[0-9]+(?:\.[0-9]*(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)$")
_HEX_FLOAT = re.compile(r"0[fF][0-9A-Fa-f]{8}$|0[dD][0-9A-Fa-f]{16}$")
_LINKAGES = frozenset((".visible", ".extern", ".weak", ".common"))
_VAR_SPACES = frozenset((".global", ".shared", ".const", ".local", ".param", ".tex"))
_ADDR_BASES = (Reg, Sym, SpecialReg)
_MAX_OPERAND_DEPTH = 4
# word (opcode with modifiers) -> its Form: forms are immutable and depend on the word alone.
_FORM_CACHE: dict[str, Form] = {}
_FORM_CACHE_MAX = 1 << 16
_PERF = frozenset((".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg",
                   ".noreturn", ".pragma", ".explicitcluster", ".reqnctapercluster",
                   ".maxclusterrank", ".blocksareclusters"))


class _Scope:
    """The registers one `{ }` scope declares. `regs` maps every name to its Reg, ranges
    `%r<N>` included, except ranges over _MATERIALIZE names, which are matched by pattern."""

    __slots__ = ("sid", "names", "ranges", "regs", "big")

    def __init__(self, sid: int) -> None:
        self.sid = sid
        self.names: set[str] = set()            # plain names, for duplicate checks
        self.ranges: set[str] = set()           # range prefixes, for duplicate checks
        self.regs: dict[str, Reg] = {}
        self.big: dict[str, int] = {}           # prefix -> count, for huge ranges


_MATERIALIZE = 1 << 14


class _Parser:
    def __init__(self, toks: Tokens) -> None:
        self.t = toks
        self.n = len(toks.text)
        # Sentinels past the end: the hot paths index a few tokens ahead without bounds checks;
        # every end-of-file test still uses self.n.
        self.text = toks.text + [""] * 6
        self.lines = toks.line
        self.i = 0
        # token -> operand: every register name in scope (inner scopes shadowing outer ones),
        # plus the symbols, special registers and numbers seen since a scope last closed.
        # Almost every operand is found here.
        self.ops: dict[str, Operand] = {}
        # per-function state
        self.scopes: list[_Scope] = []
        self.next_scope = 0
        self.debug: DebugLoc | None = None
        self.syms_used: list[tuple[str, int]] = []
        # (name, token index) of symbols no function declares: checked against the module's
        # functions and variables once the whole module is read (forward references are legal).
        self.pending_syms: list[tuple[str, int]] = []

    # -- token helpers -------------------------------------------------------------------
    def loc(self, i: int | None = None) -> SourceLoc:
        i = self.i if i is None else i
        return SourceLoc(self.t.path, self.t.line_no(i), self.t.col(i))

    def error(self, message: str, i: int | None = None) -> NoReturn:
        i = self.i if i is None else i
        raise PtxSyntaxError(message, self.loc(i), self.t.line_text(i))

    def missing_semicolon(self, last: int) -> NoReturn:
        """No ';' after the instruction whose last token is `last`. When the next token is on
        a later line (or closes the body), the ';' is missing at the end of `last`: say so
        there, as C compilers do, rather than at the next line."""
        tok = self.peek()
        if tok == "}" or self.i >= self.n or self.lines[self.i] != self.lines[last]:
            loc = SourceLoc(self.t.path, self.t.line_no(last),
                            self.t.col(last) + len(self.text[last]))
            raise PtxSyntaxError("expected ';' at the end of the instruction", loc,
                                 self.t.line_text(last))
        self.error(f"expected ',' or ';' after an operand, found '{tok}'")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < self.n else ""

    def next(self) -> str:
        if self.i >= self.n:
            self.error("unexpected end of file")
        tok = self.text[self.i]
        self.i += 1
        return tok

    def expect(self, tok: str, what: str | None = None) -> None:
        if self.peek() != tok:
            got = self.peek() or "end of file"
            self.error(f"expected '{tok}'{' ' + what if what else ''}, found '{got}'")
        self.i += 1

    def accept(self, tok: str) -> bool:
        if self.i < self.n and self.text[self.i] == tok:
            self.i += 1
            return True
        return False

    def same_line(self, start: int) -> bool:
        return self.i < self.n and self.lines[self.i] == self.lines[start]

    def int_token(self, what: str) -> int:
        neg = self.accept("-")
        tok = self.peek()
        value = _parse_int(tok)
        if value is None:
            self.error(f"expected {what} (an integer), found '{tok or 'end of file'}'")
        self.i += 1
        return -value if neg else value

    def ident(self, what: str) -> str:
        tok = self.peek()
        if not _IDENT.match(tok):
            self.error(f"expected {what}, found '{tok or 'end of file'}'")
        self.i += 1
        return tok

    def string(self, what: str) -> str:
        """A quoted string token, returned with its quotes."""
        tok = self.peek()
        if not tok.startswith('"'):
            self.error(f"expected {what}, found '{tok or 'end of file'}'")
        if len(tok) < 2 or not tok.endswith('"'):
            self.error("unterminated string")
        self.i += 1
        return tok

    def type_token(self) -> PtxType:
        tok = self.peek()
        t = TYPES.get(tok[1:]) if tok.startswith(".") else None
        if t is None:
            self.error(f"expected a type such as .b32 or .f32, found '{tok or 'end of file'}'")
        self.i += 1
        return t

    # -- module --------------------------------------------------------------------------
    def module(self) -> Module:
        version = target = None
        address_size = 64
        items: list = []
        while self.i < self.n:
            tok = self.peek()
            start = self.i
            if version is None and tok != ".version":
                self.error("a PTX module must begin with .version", start)
            if tok == ".version":
                self.i += 1
                v = self.next()
                if not re.match(r"^[0-9]+\.[0-9]+$", v):
                    self.error(f"expected a version such as 8.5, found '{v}'", start + 1)
                version = v
            elif tok == ".target":
                self.i += 1
                tgt = [self.ident("a target such as sm_90")]
                while self.accept(","):
                    tgt.append(self.ident("a target"))
                target = tuple(tgt)
            elif tok == ".address_size":
                self.i += 1
                address_size = self.int_token("an address size")
                if address_size not in (32, 64):
                    self.error("address size must be 32 or 64", start + 1)
            elif tok == ".file":
                items.append(self.file_directive())
            elif tok == ".section":
                items.append(self.section())
            elif tok == ".loc":
                self.loc_directive()
            elif tok == ".pragma":
                items.append(self.pragma())
            else:
                items.append(self.declaration())
        if version is None:
            self.error("empty PTX module: expected .version")
        if target is None:
            self.error("missing .target directive", 0)
        if self.pending_syms:
            declared = {i.name for i in items if isinstance(i, (Function, Variable))}
            for name, at in self.pending_syms:
                if name not in declared:
                    self.error(f"undefined symbol '{name}'", at)
        return Module(version, target, address_size, tuple(items), path=self.t.path)

    def file_directive(self) -> FileDirective:
        start = self.i
        self.i += 1
        index = self.int_token("a file index")
        path = self.string("a quoted file name")
        extra = []
        if self.same_line(start) and self.accept(","):
            while self.same_line(start):
                extra.append(self.next())
        return FileDirective(index, path[1:-1], " ".join(extra))

    def section(self) -> Section:
        self.i += 1
        name = self.next()
        start = self.i
        self.expect("{", "to open the section")
        depth = 1
        while depth:
            tok = self.next()
            depth += tok == "{"
            depth -= tok == "}"
        # Kept verbatim (debug data), one normalized token string.
        return Section(name, " ".join(self.text[start + 1:self.i - 1]))

    def loc_directive(self) -> None:
        start = self.i
        self.i += 1
        f = self.int_token("a file index")
        line = self.int_token("a line number")
        col = self.int_token("a column") if self.same_line(start) else 0
        extra: list[str] = []
        if self.same_line(start) and self.accept(","):
            while self.same_line(start):
                extra.append(self.next())
        self.debug = DebugLoc(f, line, col, " ".join(extra))

    def pragma(self) -> Pragma:
        loc = self.loc()
        self.i += 1
        parts = [self.string("a quoted pragma string")]
        while self.accept(","):
            parts.append(self.string("a quoted pragma string"))
        self.expect(";")
        return Pragma(", ".join(parts), loc)

    def declaration(self):
        start = self.i
        linkage = None
        while self.peek() in _LINKAGES:
            linkage = self.next()[1:]
        tok = self.peek()
        if tok in (".entry", ".func"):
            return self.function(linkage, start)
        if tok in _VAR_SPACES:
            var = self.variable(linkage)
            self.expect(";", "after the variable declaration")
            return var
        self.error(f"expected a directive (.entry, .func, .global, ...), found '{tok}'")

    # -- variables and parameters --------------------------------------------------------
    def variable(self, linkage: str | None) -> Variable:
        loc = self.loc()
        space = self.next()[1:]
        align = None
        vec = 1
        ptr_attrs: list[str] = []
        t: PtxType | None = None
        while True:
            tok = self.peek()
            if tok == ".align":
                self.i += 1
                align = self.int_token("an alignment")
                if align <= 0 or align & (align - 1):
                    self.error("alignment must be a power of two", self.i - 1)
            elif tok in (".v2", ".v4", ".v8"):
                self.i += 1
                vec = int(tok[2:])
            elif tok == ".ptr":
                self.i += 1
                ptr_attrs.append("ptr")
            elif tok in (".global", ".shared", ".const", ".local") and t is not None:
                self.i += 1
                ptr_attrs.append(tok[1:])
            elif tok in (".texref", ".samplerref", ".surfref"):
                self.i += 1
                t = TYPES["b64"]
            elif tok.startswith(".") and tok[1:] in TYPES and t is None:
                t = self.type_token()
            else:
                break
        if t is None:
            self.error(f"expected a type in the .{space} declaration, found '{self.peek()}'")
        name = self.ident("a variable name")
        dims: list[int | None] = []
        while self.accept("["):
            if self.accept("]"):
                dims.append(None)
                continue
            d = self.int_token("an array size")
            if d < 0:
                self.error("array size must not be negative", self.i - 1)
            dims.append(d)
            self.expect("]")
        init = None
        if self.accept("="):
            init = self.initializer()
        return Variable(space, t, name, tuple(dims), align, linkage, init, tuple(ptr_attrs),
                        vec, loc)

    def initializer(self) -> str:
        start = self.i
        depth = 0
        while True:
            tok = self.peek()
            if tok == "":
                self.error("unterminated initializer")
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth < 0:
                    self.error("unbalanced '}' in initializer")
            elif tok == ";" and depth == 0:
                break
            self.i += 1
        if self.i == start:
            self.error("expected an initializer after '='")
        return " ".join(self.text[start:self.i])

    def param_list(self) -> tuple[Param, ...]:
        self.expect("(")
        params: list[Param] = []
        if self.accept(")"):
            return ()
        while True:
            if self.peek() not in (".param", ".reg"):
                self.error(f"expected '.param', found '{self.peek()}'")
            params.append(self.variable(None))
            if self.accept(")"):
                return tuple(params)
            self.expect(",", "between parameters")

    # -- functions -----------------------------------------------------------------------
    def function(self, linkage: str | None, start: int) -> Function:
        loc = self.loc(start)
        kind = self.next()[1:]
        returns: tuple[Param, ...] = ()
        if kind == "func" and self.peek() == "(":
            returns = self.param_list()
        name = self.ident("a function name")
        params = self.param_list() if self.peek() == "(" else ()
        directives: list[PerfDirective] = []
        while self.peek() in _PERF:
            d = self.next()[1:]
            if d == "pragma":
                self.next()
                self.expect(";")
                continue
            vals: list[int] = []
            if _parse_int(self.peek()) is not None:
                vals.append(self.int_token("a value"))
                while self.accept(","):
                    vals.append(self.int_token("a value"))
            directives.append(PerfDirective(d, tuple(vals)))
        if self.accept(";"):
            return Function(name, kind, params, returns, linkage, tuple(directives), None, loc)
        body = self.body(params, returns)
        return Function(name, kind, params, returns, linkage, tuple(directives), body, loc)

    def body(self, params: tuple[Param, ...], returns: tuple[Param, ...]) -> tuple[Stmt, ...]:
        opened = self.i
        self.expect("{", "to open the function body")
        self.scopes = [_Scope(0)]
        self.next_scope = 1
        self.syms_used = []
        self.ops = {}
        self.debug = None
        stmts: list[Stmt] = []
        labels: set[str] = set()
        local_syms: set[str] = {p.name for p in params} | {p.name for p in returns}
        append = stmts.append
        text = self.text
        n = self.n
        instruction = self.instruction
        while True:
            i = self.i
            if i >= n:
                self.error("unterminated function body: expected '}' to close the '{' "
                           f"at line {self.t.line_no(opened)}")
            tok = text[i]
            if tok[0] == ".":
                if tok == ".reg" or tok.startswith(".reg."):
                    stmts.extend(self.reg_decl())
                elif tok in _VAR_SPACES:
                    var = self.variable(None)
                    self.expect(";", "after the variable declaration")
                    local_syms.add(var.name)
                    append(var)
                elif tok == ".loc":
                    self.loc_directive()
                elif tok == ".pragma":
                    append(self.pragma())
                else:
                    append(instruction())         # not an instruction: a located error
            elif tok == "}":
                if len(self.scopes) == 1:
                    self.i = i + 1
                    break
                sid = self.scopes.pop().sid
                self.rebuild_ops()
                append(ScopeEnd(sid, self.loc()))
                self.i = i + 1
            elif tok == "{":
                sid = self.next_scope
                self.next_scope += 1
                append(ScopeBegin(sid, self.loc()))
                self.scopes.append(_Scope(sid))
                self.i = i + 1
            elif text[i + 1] == ":" and _IDENT.match(tok):
                if text[i + 2] == ".callprototype":
                    self.i = i + 2
                    append(self.prototype(tok, i))
                    local_syms.add(tok)
                    continue
                if tok in labels:
                    self.error(f"label '{tok}' defined twice")
                labels.add(tok)
                append(Label(tok, self.loc()))
                self.i = i + 2
            else:
                append(instruction())
        known = labels | local_syms
        for name, at in self.syms_used:
            if name not in known:
                self.pending_syms.append((name, at))
        return tuple(stmts)

    def prototype(self, name: str, at: int) -> Pragma:
        start = self.i
        while self.peek() not in (";", ""):
            self.i += 1
        text = f"{name}: " + " ".join(self.text[start:self.i])
        self.expect(";")
        return Pragma(text, self.loc(at))

    def reg_decl(self) -> list[RegDecl]:
        loc = self.loc()
        # `.reg.b32 f;` (one token: the spelling of cuda_fp16.hpp's inline assembly) is
        # `.reg .b32 f;`
        fused = self.text[self.i][len(".reg"):]
        self.i += 1
        vec = 1
        if fused:
            parts = fused[1:].split(".")
            if len(parts) == 2 and parts[0] in ("v2", "v4", "v8"):
                vec = int(parts.pop(0)[1:])
            t = TYPES.get(parts[0]) if len(parts) == 1 else None
            if t is None:
                self.error(f"expected a type such as .b32 or .f32 after .reg, found "
                           f"'.reg{fused}'", self.i - 1)
        else:
            if self.peek() in (".v2", ".v4", ".v8"):
                vec = int(self.next()[2:])
            t = self.type_token()
        out: list[RegDecl] = []
        scope = self.scopes[-1]
        sid = scope.sid
        new: dict[str, Reg] = {}
        while True:
            at = self.i
            name = self.ident("a register name")
            count = None
            if self.accept("<"):
                count = self.int_token("a register count")
                if count < 0 or count > 1 << 24:
                    self.error("register count out of range", self.i - 1)
                self.expect(">")
                if name in scope.ranges:
                    self.error(f"register range '{name}<>' declared twice in this scope", at)
                scope.ranges.add(name)
                if count <= _MATERIALIZE:
                    for k in range(count):
                        r = f"{name}{k}"
                        new[r] = Reg(r, sid)
                else:
                    scope.big[name] = count
                    # Matched by pattern in resolve(): forget cached names it may shadow.
                    for k in [k for k in self.ops if k.startswith(name)]:
                        del self.ops[k]
            else:
                if name in scope.names:
                    self.error(f"register '{name}' declared twice in this scope", at)
                scope.names.add(name)
                new[name] = Reg(name, sid)
            out.append(RegDecl(t, name, count, vec, sid, loc))
            if not self.accept(","):
                break
        self.expect(";", "after the register declaration")
        scope.regs.update(new)
        self.ops.update(new)          # the new names shadow outer registers and symbols
        return out

    # -- instructions --------------------------------------------------------------------
    def instruction(self) -> Instruction:
        text = self.text
        start = i = self.i
        guard = None
        if text[i] == "@":
            self.i = i + 1
            neg = self.accept("!")
            at = self.i
            tok = self.next()
            reg = self.ops.get(tok) or self.operand_word(tok, at)
            if not isinstance(reg, Reg):
                self.error("a guard must be a predicate register", at)
            guard = Guard(reg, neg)
            i = self.i
        at = i
        if i >= self.n:
            self.error("unexpected end of file", i)
        word = text[i]
        form = _FORM_CACHE.get(word) or self.form(word, at)
        i += 1
        tok = text[i]
        operands: list[Operand] = []
        if tok == "}" or i >= self.n:
            self.i = i
            self.missing_semicolon(at)
        if tok != ";":
            cache = self.ops
            append = operands.append
            while True:
                op = cache.get(tok)
                if op is not None and text[i + 1] != "|":
                    i += 1
                elif tok == "[" and type(base := cache.get(text[i + 1])) in _ADDR_BASES and (
                        text[i + 2] == "]" or text[i + 2] == "+" and text[i + 4] == "]"
                        and (off := _parse_int(text[i + 3])) is not None):
                    # [base] and [base+N], the common addresses
                    if text[i + 2] == "]":
                        op = Addr(base, 0)
                        i += 3
                    else:
                        op = Addr(base, off)
                        i += 5
                else:
                    self.i = i
                    op = self.operand(0)
                    i = self.i
                append(op)
                tok = text[i]
                if tok != ",":
                    break
                i += 1
                tok = text[i]
        if tok != ";":
            self.i = i
            self.missing_semicolon(at if not operands else i - 1)
        self.i = i + 1
        lines = self.lines
        ln = lines[start]
        if start and lines[start - 1] == ln:
            col = self.t.col(start)
        else:                                     # the statement starts its line
            src = self.t.lines[ln]
            col = len(src) - len(src.lstrip()) + 1
        return Instruction(form, tuple(operands), guard, self.debug,
                           SourceLoc(self.t.path, ln + 1, col))

    def form(self, word: str, at: int) -> Form:
        if not word or not (word[0].isalpha()):
            self.error(f"expected an instruction, found '{word}'", at)
        parts = word.split(".")
        opcode = parts[0]
        mods = tuple(parts[1:])
        spec = registry.spec_for(opcode)
        if spec is None:
            self.error(f"unknown instruction '{opcode}'", at)
        types: list[PtxType] = []
        rounding = cmp = boolop = space = None
        vec = 1
        flags: list[str] = []
        allowed = spec.allowed
        for m in mods:
            if not m:
                self.error(f"empty modifier in '{word}'", at)
            t = TYPES.get(m)
            if t is not None:
                types.append(t)
                continue
            if allowed is not None and m not in allowed:
                self.error(f"unknown modifier '.{m}' for '{opcode}'", at)
            if m in registry.ROUNDING and rounding is None:
                rounding = m
            elif m in registry.COMPARISONS and opcode in registry.BOOLOP_OPCODES and cmp is None:
                cmp = m
            elif m in registry.BOOLOPS and opcode in registry.BOOLOP_OPCODES:
                boolop = m
            elif opcode in registry.SPACE_OPCODES and m.split("::")[0] in registry.SPACES \
                    and space is None:
                space = m.split("::")[0]
                if "::" in m:
                    flags.append(m)
            elif m in registry.VECTORS:
                vec = registry.VECTORS[m]
            else:
                flags.append(m)
        if allowed is not None and not (spec.min_types <= len(types) <= spec.max_types):
            want = (str(spec.min_types) if spec.min_types == spec.max_types
                    else f"{spec.min_types} to {spec.max_types}")
            self.error(f"'{word}' has {len(types)} type modifier(s); '{opcode}' takes {want}", at)
        form = Form(opcode, mods, tuple(types), rounding, cmp, boolop, space, vec,
                    frozenset(flags))
        if len(_FORM_CACHE) < _FORM_CACHE_MAX:
            _FORM_CACHE[word] = form
        return form

    def operand(self, depth: int) -> Operand:
        """One operand (the slow path: instruction() handles cached names itself). `depth`
        counts the enclosing braces/brackets/parentheses: PTX nests at most two deep."""
        at = self.i
        tok = self.next()
        c = tok[0]
        if c == "%" or c == "$" or c == "_" or c.isalpha():
            op = self.ops.get(tok) or self.operand_word(tok, at)
            if self.peek() == "|":
                self.i += 1
                at2 = self.i
                tok2 = self.next()
                op = Pair(op, self.ops.get(tok2) or self.operand_word(tok2, at2))
            return op
        if c.isdigit():
            op = self.number(tok, at, False)
            self.ops[tok] = op
            return op
        if tok == "-":
            at2 = self.i
            tok = self.next()
            if not tok[0].isdigit():
                self.error(f"expected a number after '-', found '{tok}'", at2)
            return self.number(tok, at2, True)
        if tok == "!":
            at2 = self.i
            tok = self.next()
            if not (tok[0] in "%$_" or tok[0].isalpha()):
                self.error(f"expected a predicate after '!', found '{tok}'", at2)
            return Neg(self.ops.get(tok) or self.operand_word(tok, at2))
        if tok in "{[(" and depth >= _MAX_OPERAND_DEPTH:
            self.error("operand nested too deeply", at)
        if tok == "{":
            elems: list[Operand] = []
            if not self.accept("}"):
                while True:
                    elems.append(self.operand(depth + 1))
                    if self.accept("}"):
                        break
                    self.expect(",", "between vector elements")
            return Vec(tuple(elems))
        if tok == "[":
            return self.address(depth + 1)
        if tok == "(":
            items: list[Operand] = []
            if not self.accept(")"):
                while True:
                    items.append(self.operand(depth + 1))
                    if self.accept(")"):
                        break
                    self.expect(",", "between list items")
            return OperandList(tuple(items))
        self.error(f"expected an operand, found '{tok}'", at)

    def number(self, tok: str, at: int, neg: bool) -> Operand:
        v = _parse_int(tok)
        if v is not None:
            return IntImm(-v if neg else v)
        if tok[:2] in ("0f", "0F") and _HEX_FLOAT.match(tok):
            bits = int(tok[2:], 16)
            return FloatImm(bits ^ (0x80000000 if neg else 0), 32)
        if tok[:2] in ("0d", "0D") and _HEX_FLOAT.match(tok):
            bits = int(tok[2:], 16)
            return FloatImm(bits ^ (1 << 63 if neg else 0), 64)
        if not _DEC_FLOAT.match(tok):
            self.error(f"bad number '{tok}'", at)
        value = float(tok)
        bits = struct.unpack("<Q", struct.pack("<d", -value if neg else value))[0]
        return FloatImm(bits, 64)

    def address(self, depth: int) -> Operand:
        at = self.i
        items: list[Operand] = []
        base: Reg | Sym | SpecialReg | None = None
        offset = 0
        tok = self.peek()
        if tok and (tok[0] in "%$_" or tok[0].isalpha()):
            self.i += 1
            base = self.operand_word(tok, at)
            if isinstance(base, Pair) or not isinstance(base, (Reg, Sym, SpecialReg)):
                self.error("expected a register or symbol as an address base", at)
            if self.peek() == ",":
                items.append(base)
                while self.accept(","):
                    items.append(self.operand(depth))
                self.expect("]")
                return BracketList(tuple(items))
            if self.accept("+"):
                offset = self.int_token("an address offset")
            elif self.accept("-"):
                offset = -self.int_token("an address offset")
        else:
            offset = self.int_token("an address")
        self.expect("]", "to close the address")
        return Addr(base, offset)

    def operand_word(self, tok: str, at: int) -> Operand:
        """A name operand: `_`, a special register, a declared register, WARP_SZ or a symbol.
        Remembered in the operand cache until the register scopes change."""
        if tok == "_":
            return Sink()
        if tok[0] == "%":
            base, dot, comp = tok.partition(".")
            if base in _SPECIAL_BASES or _SPECIAL_INDEXED.match(base):
                if dot and comp not in _VECTOR_COMPONENTS:
                    self.error(f"unknown component '.{comp}' of {base}", at)
                op: Operand = SpecialReg(tok)
            else:
                reg = self.resolve(base)
                if reg is None:
                    self.error(f"undeclared register '{tok}'", at)
                if dot:
                    self.error(f"vector register components ('{tok}') are not supported", at)
                op = reg
        else:
            if "." in tok or not _IDENT.match(tok):
                self.error(f"expected an operand, found '{tok}'", at)
            reg = self.resolve(tok)
            if reg is not None:
                op = reg
            elif tok == "WARP_SZ":
                # The one predefined constant of PTX (nvcc emits it for `warpSize`); 32 on
                # every target, and usable wherever an integer immediate is. Not cached: the
                # cache's numbers may serve as address offsets, WARP_SZ may not.
                return IntImm(32)
            else:
                self.syms_used.append((tok, at))
                op = Sym(tok)
        self.ops[tok] = op
        return op

    def rebuild_ops(self) -> None:
        """The operand cache after a scope closed: the registers of the open scopes, inner
        ones shadowing outer ones (a huge range, matched by pattern, shadows by prefix)."""
        self.ops = ops = {}
        for scope in self.scopes:
            for prefix in scope.big:
                for k in [k for k in ops if k.startswith(prefix)]:
                    del ops[k]
            ops.update(scope.regs)

    def resolve(self, name: str) -> Reg | None:
        for scope in reversed(self.scopes):
            reg = scope.regs.get(name)
            if reg is not None:
                return reg
            if scope.big:
                m = _REG_RANGE_NAME.match(name)
                if m:
                    count = scope.big.get(m.group(1))
                    digits = m.group(2)
                    if count is not None and int(digits) < count and (
                            digits == "0" or digits[0] != "0"):
                        return Reg(name, scope.sid)
        return None


def _parse_int(tok: str) -> int | None:
    """An integer literal (decimal, 0x hex, 0b binary, 0 octal; optional U suffix), or None."""
    if tok.isdigit() and tok.isascii() and (tok[0] != "0" or len(tok) == 1):
        return int(tok)                                   # the common case
    # int() would also accept 1_000 and non-ASCII digits
    if not tok or not tok.isascii() or not tok[0].isdigit() or "_" in tok:
        return None
    t = tok[:-1] if tok.endswith("U") else tok
    try:
        if t[:2] in ("0x", "0X"):
            return int(t[2:], 16)
        if t[:2] in ("0b", "0B"):
            return int(t[2:], 2)
        if len(t) > 1 and t[0] == "0":
            return int(t[1:], 8)
        return int(t, 10)
    except ValueError:
        return None


def parse_ptx(text: str, path: str = "<ptx>") -> Module:
    """Parse PTX text. Raises `PtxSyntaxError` (located) on anything that is not PTX."""
    # The parser allocates about ten objects per line and makes no reference cycles, so the
    # cyclic collector, triggered by allocation counts, would only rescan the growing token
    # list and IR: a third of the parse time on large files. Pause it (refcounting still
    # frees everything at once) and restore it as it was.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _Parser(tokenize(text, path)).module()
    finally:
        if paused:
            gc.enable()


def parse_ptx_file(path: str | Path) -> Module:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise PtxSyntaxError(f"not a UTF-8 text file ({e.reason})", SourceLoc(str(p), 1, 1)) from None
    return parse_ptx(text, str(p))
