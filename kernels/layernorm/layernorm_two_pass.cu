// Reference layer normalization: one block of 64 threads per row of a row-major rows x cols
// matrix. Pass 1: the row mean. Pass 2: the mean of squared deviations (biased variance).
// Then out = (x - mean) * rsqrt(var + eps) * gamma + beta. Block sums: warp shuffles, then
// the two warps' partial sums through shared memory.

constexpr int BLOCK = 64;
constexpr int WARPS = BLOCK / 32;

__device__ __forceinline__ float block_sum(float v, float* red)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < WARPS; ++w)
        total += red[w];
    __syncthreads();   // red is reused by the next sum
    return total;
}

extern "C" __global__ void layernorm_two_pass(const float* in, const float* gamma,
                                              const float* beta, float* out, int rows,
                                              int cols, float eps)
{
    __shared__ float red[WARPS];
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        s += x[c];
    const float mean = block_sum(s, red) / cols;

    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        float d = x[c] - mean;
        q += d * d;
    }
    const float var = block_sum(q, red) / cols;
    const float rstd = rsqrtf(var + eps);

    for (int c = threadIdx.x; c < cols; c += BLOCK)
        y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}
