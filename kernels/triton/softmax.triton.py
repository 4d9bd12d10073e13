"""Triton row softmax, the twin of kernels/softmax/softmax_three_pass.cu.

One program per row of a row-major rows x cols matrix; the whole row is held in registers,
so cols must be <= BLOCK. Launch `rows` programs of 32 * num_warps threads.
`rows` is not used in the body; it is there so that both kernels take the same arguments.
Compiled by kernels/build.py with the settings in KEQ_BUILD.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(in_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(in_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * cols + offs, num / den, mask=mask)


KEQ_BUILD = {
    "kernel": "softmax_kernel",
    "signature": {"in_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "cols": "i32", "BLOCK": "constexpr"},
    "constexprs": {"BLOCK": 256},
    "num_warps": 4,
}
