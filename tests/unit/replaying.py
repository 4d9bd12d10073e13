"""Shared by unit tests: a counterexample must reproduce on the emulator (both kernels re-run
on its inputs, with the choices it names for what the PTX ISA leaves open, leave exactly the
outputs it reports)."""

from __future__ import annotations

import numpy as np

from verifier.emulate import run_side


def assert_replays(spec, cex) -> None:
    for role, want in (("reference", cex.reference), ("candidate", cex.candidate)):
        final, _ = run_side(spec.side(role), {k: (x.copy() if isinstance(x, np.ndarray) else x)
                                              for k, x in cex.inputs.items()}, cex.scalars,
                              shared_fill=cex.shared_fill or None, choices=cex.choices,
                              tag=role)
        for name, arr in want.items():
            assert np.array_equal(final[name].view(np.uint8), arr.view(np.uint8))
