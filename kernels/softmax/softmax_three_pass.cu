// Reference row softmax: one block of 128 threads per row of a row-major rows x cols matrix.
// Pass 1: row max. Pass 2: sum of exp(x - max). Pass 3: out = exp(x - max) / sum.
// Block-wide max/sum go through a shared-memory tree.
#include <math_constants.h>

constexpr int BLOCK = 128;

__device__ __forceinline__ float block_max(float v, float* red)
{
    int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();   // red is reused by the next reduction
    return r;
}

__device__ __forceinline__ float block_sum(float v, float* red)
{
    int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            red[tid] += red[tid + s];
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void softmax_three_pass(const float* in, float* out, int rows, int cols)
{
    __shared__ float red[BLOCK];
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;

    float m = -CUDART_INF_F;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        m = fmaxf(m, x[c]);
    m = block_max(m, red);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        s += expf(x[c] - m);
    s = block_sum(s, red);

    for (int c = threadIdx.x; c < cols; c += BLOCK)
        y[c] = expf(x[c] - m) / s;
}
