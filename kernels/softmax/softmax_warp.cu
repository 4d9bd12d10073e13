// Warp-per-row softmax: one warp of 32 threads per row (grid = rows), each lane keeps an
// online (max, sum) pair over its strided elements, the pairs are merged across the warp
// with xor shuffles (each merge rescales both sums to the larger max), and every lane ends
// with the row's pair. No shared memory and no barrier. m starts at -FLT_MAX (not -inf) so
// that exp(m - m_new) never sees inf - inf.
#include <float.h>

extern "C" __global__ void softmax_warp(const float* __restrict__ in, float* __restrict__ out,
                                        int rows, int cols)
{
    const int lane = threadIdx.x;
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;

    float m = -FLT_MAX;
    float d = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float v = x[c];
        const float m_new = fmaxf(m, v);
        d = d * expf(m - m_new) + expf(v - m_new);
        m = m_new;
    }
    for (int off = 16; off > 0; off >>= 1) {
        const float m_o = __shfl_xor_sync(0xffffffffu, m, off);
        const float d_o = __shfl_xor_sync(0xffffffffu, d, off);
        const float mm = fmaxf(m, m_o);
        d = d * expf(m - mm) + d_o * expf(m_o - mm);
        m = mm;
    }
    for (int c = lane; c < cols; c += 32)
        y[c] = expf(x[c] - m) / d;
}
