// Fused cross-entropy: one block of 128 threads per row of logits. Each thread keeps an
// online (max m, sum d of exp(x - m)) over its strided columns; the 128 pairs are merged in
// a shared-memory tree, rescaling by exp(m1 - mm); then thread 0 writes
//     loss[row] = log(d) + m - logits[row][target[row]]
// which is -log_softmax(logits[row])[target[row]] without materializing log-probabilities.
// Two logarithms: `cross_entropy_fused` uses __logf (lg2.approx times ln 2, what
// -use_fast_math gives), `cross_entropy_fused_logf` the IEEE logf of libdevice.
#include <float.h>

constexpr int BLOCK = 128;

template <bool IEEE_LOG>
__device__ __forceinline__ void cross_entropy_row(const float* __restrict__ logits,
                                                  const int* __restrict__ target,
                                                  float* __restrict__ loss, int cols)
{
    __shared__ float red_m[BLOCK];
    __shared__ float red_d[BLOCK];
    int tid = threadIdx.x;
    const float* x = logits + blockIdx.x * cols;

    float m = -FLT_MAX;     // (not -inf: exp(m - m_new) never sees inf - inf)
    float d = 0.0f;
    for (int c = tid; c < cols; c += BLOCK) {
        float v = x[c];
        float m_new = fmaxf(m, v);
        d = d * expf(m - m_new) + expf(v - m_new);
        m = m_new;
    }
    red_m[tid] = m;
    red_d[tid] = d;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {
            float m1 = red_m[tid], d1 = red_d[tid];
            float m2 = red_m[tid + s], d2 = red_d[tid + s];
            float mm = fmaxf(m1, m2);
            red_d[tid] = d1 * expf(m1 - mm) + d2 * expf(m2 - mm);
            red_m[tid] = mm;
        }
        __syncthreads();
    }
    if (tid == 0) {
        float lse = (IEEE_LOG ? logf(red_d[0]) : __logf(red_d[0])) + red_m[0];
        loss[blockIdx.x] = lse - x[target[blockIdx.x]];
    }
}

extern "C" __global__ void cross_entropy_fused(const float* __restrict__ logits,
                                               const int* __restrict__ target,
                                               float* __restrict__ loss, int rows, int cols)
{
    cross_entropy_row<false>(logits, target, loss, cols);
}

extern "C" __global__ void cross_entropy_fused_logf(const float* __restrict__ logits,
                                                    const int* __restrict__ target,
                                                    float* __restrict__ loss, int rows, int cols)
{
    cross_entropy_row<true>(logits, target, loss, cols);
}
