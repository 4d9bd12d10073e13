"""keq's solver layer: canonical SMT-LIB2 obligations and a z3/bitwuzla/cvc5 portfolio.

    ob = Obligation(phi, "out[3] differs")     # phi must be UNSAT for the claim to hold
    ob.text, ob.sha256, ob.portable            # canonical SMT-LIB2, its hash, z3-only or not
    r = solve(ob, timeout_s=30)                # race z3, a sparse-input search, bitwuzla,
                                               # cvc5 in processes
    r.answer                                   # sat | unsat | unknown | timeout | error
    r.model                                    # for sat: {constant name: int}

unknown / timeout / error never mean unsat; two solvers that give different definitive answers
raise `SolverDisagreement`.
"""

from verifier.solvers.backends import (BACKENDS, BitwuzlaBackend, Cvc5Backend, Result,
                                       SparseBackend, Z3Backend, available_backends,
                                       get_backend)
from verifier.solvers.portfolio import (DEFAULT_SOLVERS, Budget, Cache, InternalSolverError,
                                        SolveResult, SolverDisagreement, dump, solve,
                                        validate_model)
from verifier.solvers.smtlib import (Decl, Obligation, Translation, canonical_whitespace,
                                     to_smtlib2, translate)

__all__ = [
    "BACKENDS", "BitwuzlaBackend", "Budget", "Cache", "Cvc5Backend", "DEFAULT_SOLVERS", "Decl",
    "InternalSolverError", "Obligation", "Result", "SolveResult", "SolverDisagreement",
    "SparseBackend",
    "Translation", "Z3Backend", "available_backends", "canonical_whitespace", "dump",
    "get_backend", "solve", "to_smtlib2", "translate", "validate_model",
]
