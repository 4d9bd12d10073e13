"""Typed intermediate representation shared by the PTX (and later SASS) front ends.

All IR nodes are frozen dataclasses. Source locations are excluded from equality so that
``parse(print(parse(x))) == parse(x)`` holds although printing moves lines around.
"""

from semantics.ir.types import PtxType, TYPES, type_named
from semantics.ir.operands import (
    Addr, BracketList, FloatImm, IntImm, Neg, Operand, OperandList, Pair, Reg, Sink, SpecialReg,
    Sym, Vec,
)
from semantics.ir.nodes import (
    DebugLoc, FileDirective, Form, Function, Guard, Instruction, Label, Module, Param,
    PerfDirective, Pragma, RegDecl, ScopeBegin, ScopeEnd, Section, Stmt, Variable,
)
from semantics.ir.cfg import BasicBlock, Cfg, build_cfg

__all__ = [
    "PtxType", "TYPES", "type_named",
    "Addr", "BracketList", "FloatImm", "IntImm", "Neg", "Operand", "OperandList", "Pair", "Reg",
    "Sink", "SpecialReg", "Sym", "Vec",
    "DebugLoc", "FileDirective", "Form", "Function", "Guard", "Instruction", "Label", "Module",
    "Param", "PerfDirective", "Pragma", "RegDecl", "ScopeBegin", "ScopeEnd", "Section", "Stmt",
    "Variable",
    "BasicBlock", "Cfg", "build_cfg",
]
