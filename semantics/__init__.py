"""keq.semantics: what a GPU kernel *means*.

The machine model is usable on its own: PTX front end (`semantics.ptx`), typed IR
(`semantics.ir`), instruction semantics written once over a Domain (`semantics.ops`), and the
domains that interpret them (`semantics.domains`). This package never imports `verifier`.
"""

__version__ = "0.1.0"
