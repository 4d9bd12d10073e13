// Online row softmax in the base-2 domain, as fast kernels write it: exp(x - m) is
// exp2f((x - m) * log2(e)), one ex2 instruction and a multiply. Otherwise softmax_online:
// a running (max, sum) per thread, a shared-memory tree merge, then exp(x - m) / d.
#include <float.h>

constexpr int BLOCK = 128;
constexpr float LOG2E = 1.4426950408889634f;

extern "C" __global__ void softmax_online_ex2(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
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
            red_d[tid] = d1 * exp2f((m1 - mm) * LOG2E) + d2 * exp2f((m2 - mm) * LOG2E);
            red_m[tid] = mm;
        }
        __syncthreads();
    }
    m = red_m[0];
    d = red_d[0];

    for (int c = tid; c < cols; c += BLOCK)
        y[c] = exp2f((x[c] - m) * LOG2E) / d;
}
