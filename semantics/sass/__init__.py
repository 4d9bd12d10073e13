"""SASS front end: nvdisasm / `cuobjdump -sass` listings (and cubins, through nvdisasm) ->
`SassModule`; a printer that round-trips; the control-flow graph with BSSY/BSYNC
reconvergence points; instruction semantics over the PTX Domain (`semantics.sass.ops`) and
a kernel adapter for the SIMT executor (`semantics.sass.machine.prepare_sass`). See
docs/sass.md."""

from semantics.sass.cfg import Reconvergence, SassCfg, build_sass_cfg
from semantics.sass.disasm import DisassemblerError, find_nvdisasm, parse_cubin
from semantics.sass.lexer import SassSyntaxError
from semantics.sass.nodes import KParam, ParamCbank, SassFunction, SassInstruction, SassModule
from semantics.sass.parser import parse_sass, parse_sass_file
from semantics.sass.printer import print_sass


def is_supported(form: object) -> bool:
    """Whether a SASS form (opcode + modifiers) has semantics (`semantics.sass.ops`)."""
    from semantics.sass.ops import is_supported as supported   # late: ops import this package
    return supported(form)  # type: ignore[arg-type]


__all__ = [
    "DisassemblerError", "KParam", "ParamCbank", "Reconvergence", "SassCfg", "SassFunction",
    "SassInstruction", "SassModule", "SassSyntaxError", "build_sass_cfg", "find_nvdisasm",
    "is_supported", "parse_cubin", "parse_sass", "parse_sass_file", "print_sass",
]
