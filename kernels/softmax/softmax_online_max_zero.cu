// Online row softmax (planted bug: the running max starts at 0): one pass over the row keeps a running max m and a running sum d of
// exp(x - m), rescaling d whenever m grows; the (m, d) pairs of the 128 threads are merged
// with the same rescaling in a shared-memory tree; a second pass writes exp(x - m) / d.
// PLANTED BUG: m starts at 0 instead of -FLT_MAX. Softmax is shift-invariant over the reals,
// so the result is the same real function (mode real cannot see it), but a row whose
// values are all far below 0 has every expf(x - 0) underflow: the sum is 0 and the
// outputs 0 / 0 = NaN. Refuted in bitexact mode against softmax_online.
#include <float.h>

constexpr int BLOCK = 128;

extern "C" __global__ void softmax_online_max_zero(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float red_m[BLOCK];
    __shared__ float red_d[BLOCK];
    int tid = threadIdx.x;
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;

    float m = 0.0f;  // bug: should be -FLT_MAX
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
    m = red_m[0];
    d = red_d[0];

    for (int c = tid; c < cols; c += BLOCK)
        y[c] = expf(x[c] - m) / d;
}
