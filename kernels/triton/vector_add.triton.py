"""Triton vector add, the twin of kernels/vector_add/vector_add.cu.

One program adds BLOCK consecutive elements; launch ceil_div(n, BLOCK) programs of
32 * num_warps threads. Compiled by kernels/build.py with the settings in KEQ_BUILD.
"""
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a + b, mask=mask)


KEQ_BUILD = {
    "kernel": "vector_add_kernel",
    "signature": {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
    "constexprs": {"BLOCK": 1024},
    "num_warps": 4,
}
