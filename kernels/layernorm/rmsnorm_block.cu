// Reference RMS normalization: one block of 64 threads per row of a row-major rows x cols
// matrix; the sum of squares through warp shuffles and the two warps' partial sums in shared
// memory; out = x * rsqrt(sum(x^2) / cols + eps) * weight.

constexpr int BLOCK = 64;
constexpr int WARPS = BLOCK / 32;

extern "C" __global__ void rmsnorm_block(const float* in, const float* weight, float* out,
                                         int rows, int cols, float eps)
{
    __shared__ float red[WARPS];
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;

    float ss = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        ss += x[c] * x[c];
    for (int off = 16; off > 0; off >>= 1)
        ss += __shfl_xor_sync(0xffffffffu, ss, off);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x / 32] = ss;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < WARPS; ++w)
        total += red[w];

    const float rstd = rsqrtf(total / cols + eps);
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        y[c] = x[c] * rstd * weight[c];
}
