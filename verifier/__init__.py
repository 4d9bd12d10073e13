"""keq.verifier: what keq does with the meaning of kernels — specs, equivalence checking,
solvers, counterexamples, fuzzing, certificates, the gate, and the `keq` command line."""

from semantics import __version__

__all__ = ["__version__"]
