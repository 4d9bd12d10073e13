// PLANTED BUG (kernels/softmax/cross_entropy_no_max.toml): cross_entropy_fused.cu with the
// log-sum-exp missing its max, loss[row] = log(d) - logits[row][target[row]]: d is the sum
// of exp(x - m), so the loss is short by m, the row's max (a real difference whenever m != 0).
#include <float.h>

constexpr int BLOCK = 128;

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
        float lse = __logf(red_d[0]);    // BUG: + red_m[0] dropped
        loss[blockIdx.x] = lse - x[target[blockIdx.x]];
    }
}

extern "C" __global__ void cross_entropy_fused_no_max(const float* __restrict__ logits,
                                               const int* __restrict__ target,
                                               float* __restrict__ loss, int rows, int cols)
{
    cross_entropy_row(logits, target, loss, cols);
}
