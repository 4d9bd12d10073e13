"""The SASS opcode registry: every opcode keq reads, by family.

Opcodes of sm_80 (Ampere) and sm_90 (Hopper) as listed in CUDA's binary-utilities
documentation, plus the ones the committed corpus uses (see `CORPUS`). An opcode not listed is
a located error ("unknown SASS opcode"): a typo or an architecture keq does not read must not
parse into an instruction that later stages would have to guess about. Modifiers are not
checked per opcode here: SASS has many, nvdisasm prints only valid ones, and the semantics
refuse any form (opcode + modifiers) they do not cover, by name.
"""

from __future__ import annotations

FAMILIES: dict[str, frozenset[str]] = {name: frozenset(ops.split()) for name, ops in {
    "float": """FADD FADD32I FCHK FCMP FFMA FFMA32I FMNMX FMUL FMUL32I FSEL FSET FSETP FSWZADD
                MUFU HADD2 HADD2_32I HFMA2 HFMA2_32I HMNMX2 HMUL2 HMUL2_32I HSET2 HSETP2 DADD
                DFMA DMUL DSETP FRND""",
    "tensor": """HMMA IMMA BMMA DMMA HGMMA IGMMA QGMMA BGMMA WARPGROUP WARPGROUPSET LDSM STSM
                 MOVM""",
    "integer": """BMSK BREV FLO IABS IADD IADD3 IADD32I IDP IDP4A IMAD IMAD32I IMNMX IMUL
                  IMUL32I ISCADD ISCADD32I ISETP LEA LOP LOP3 LOP32I POPC SHF SHL SHR SGXT
                  VABSDIFF VABSDIFF4 VIADD VIADDMNMX VIMNMX VIMNMX3 VHMNMX""",
    "convert": "F2F F2I I2F I2I F2FP I2FP F2IP I2IP",
    "move": "MOV MOV32I PRMT SEL SHFL",
    "predicate": "PLOP3 PSETP P2R R2P",
    "memory": """LD LDC LDG LDL LDS LDGSTS LDGDEPBAR ST STG STL STS ATOM ATOMS ATOMG RED REDG
                 REDUX MATCH QSPC CCTL CCTLL CCTLT ERRBAR MEMBAR FENCE SULD SUST SUATOM SURED
                 SUQUERY TEX TLD TLD4 TMML TXD TXQ UBLKCP UBLKRED UBLKPF UTMALDG UTMASTG
                 UTMAPF UTMACCTL UTMACMDFLUSH UTMAREDG SYNCS ARRIVES""",
    "uniform": """R2UR S2UR UBMSK UBREV UCLEA UF2FP UFLO UIADD3 UIMAD UISETP ULDC ULEA ULOP
                  ULOP3 ULOP32I UMOV UP2UR UPLOP3 UPOPC UPRMT UPSETP UR2UP USEL USGXT USHF
                  USHL USHR VOTEU UIMNMX UVIADD USETMAXREG UCGABAR_ARV UCGABAR_WAIT""",
    "control": """ACQBULK BMOV BPT BRA BREAK BRX BRXU BSSY BSYNC CALL CGAERRBAR ELECT
                  ENDCOLLECTIVE EXIT JMP JMX JMXU KILL NANOSLEEP PREEXIT RET RPCMOV RTT
                  WARPSYNC YIELD""",
    "misc": """B2R BAR CS2R DEPBAR GETLMEMBASE LEPC NOP PMTRIG R2B S2R SETCTAID SETLMEMBASE
               VOTE""",
}.items()}

OPCODES: frozenset[str] = frozenset().union(*FAMILIES.values())

# Opcodes whose last operand is a code address: a label/symbol in nvdisasm's listing, a raw
# offset in cuobjdump's.
# (BRX/JMX jump to a register, BREAK names a barrier, BPT takes a trap code: none of those.)
TARGET_OPCODES = frozenset(("BRA", "JMP", "CALL", "BSSY", "RET"))
# Instructions after which control does not fall through (unless guarded).
TERMINATORS = frozenset(("EXIT", "RET", "KILL"))
# Indirect jumps: the CFG cannot follow them; keq refuses them by name.
INDIRECT = frozenset(("BRX", "BRXU", "JMX", "JMXU"))

def family_of(opcode: str) -> str | None:
    for name, ops in FAMILIES.items():
        if opcode in ops:
            return name
    return None


def is_opcode(opcode: str) -> bool:
    return opcode in OPCODES
