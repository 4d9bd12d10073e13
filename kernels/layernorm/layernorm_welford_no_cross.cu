// Planted bug: layernorm_welford.cu whose merge adds the two halves' M2 but forgets Chan's
// correction d^2 * n_a * n_b / n, the spread between the two halves' means. Each thread's own
// updates are right, but a row of two or more elements comes out wrong wherever two merged
// parts' means differ.

constexpr int BLOCK = 64;
constexpr int WARPS = BLOCK / 32;

struct Welford {
    float n, mean, m2;
};

__device__ __forceinline__ Welford merge(Welford a, Welford b)
{
    const float n = a.n + b.n;
    if (n == 0.0f)
        return a;
    const float d = b.mean - a.mean;
    const float wb = b.n / n;
    Welford r;
    r.n = n;
    r.mean = a.mean + d * wb;
    r.m2 = a.m2 + b.m2;   // BUG: the merge drops the d^2 n_a n_b / n term
    return r;
}

extern "C" __global__ void layernorm_welford_no_cross(const float* in, const float* gamma,
                                             const float* beta, float* out, int rows,
                                             int cols, float eps)
{
    __shared__ Welford part[WARPS];
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;

    Welford w = {0.0f, 0.0f, 0.0f};
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        w.n += 1.0f;
        const float d = x[c] - w.mean;
        w.mean += d / w.n;
        w.m2 += d * (x[c] - w.mean);
    }
    for (int off = 16; off > 0; off >>= 1) {
        Welford o;
        o.n = __shfl_xor_sync(0xffffffffu, w.n, off);
        o.mean = __shfl_xor_sync(0xffffffffu, w.mean, off);
        o.m2 = __shfl_xor_sync(0xffffffffu, w.m2, off);
        w = merge(w, o);
    }
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x / 32] = w;
    __syncthreads();
    Welford t = part[0];
    for (int k = 1; k < WARPS; ++k)
        t = merge(t, part[k]);

    const float rstd = rsqrtf(t.m2 / cols + eps);
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        y[c] = (x[c] - t.mean) * rstd * gamma[c] + beta[c];
}
