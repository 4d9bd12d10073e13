"""The tensor-core silicon check (bench/silicon_tensor_cores.py): every floating-point
`mma.sync` form keq models, run by keq's emulator and, on a GPU, by the tensor cores, bit for
bit, and each GPU result checked against keq's bound (verifier/mma_bounds.py).

forms.py: the forms and their generated kernels; inputs.py: the random and adversarial input
sets; lanes.py: matrices <-> per-lane registers (keq's layouts); check.py: the emulator's
side; gpu.py: pycuda's side (lazy); report.py: the printed summary and the markdown table.
"""
