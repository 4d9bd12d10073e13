// Online row softmax in the base-2 domain (planted bug: a wrong ex2 prescale). In the block
// merge, the first partial sum's rescale factor is exp2f(m1 - mm), without the * log2(e)
// that every other exponent has: where the partner's max is larger, d1 is scaled by
// 2^(m1 - mm) instead of e^(m1 - mm). A row of two columns shows it.
#include <float.h>

constexpr int BLOCK = 128;
constexpr float LOG2E = 1.4426950408889634f;

extern "C" __global__ void softmax_online_ex2_prescale(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float red_m[BLOCK];
    __shared__ float red_d[BLOCK];
    int tid = threadIdx.x;
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;

    float m = -FLT_MAX;
    float d = 0.0f;
    for (int c = tid; c < cols; c += BLOCK) {
        float v = x[c];
        float m_new = fmaxf(m, v);
        d = d * exp2f((m - m_new) * LOG2E) + exp2f((v - m_new) * LOG2E);
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
            red_d[tid] = d1 * exp2f(m1 - mm) + d2 * exp2f((m2 - mm) * LOG2E);  // bug: no * LOG2E
            red_m[tid] = mm;
        }
        __syncthreads();
    }
    m = red_m[0];
    d = red_d[0];

    for (int c = tid; c < cols; c += BLOCK)
        y[c] = exp2f((x[c] - m) * LOG2E) / d;
}
