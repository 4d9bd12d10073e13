// Reference cross-entropy, unfused: log-softmax of each row into a full buffer of
// log-probabilities, then a gather of the target's, negated.
//   log_softmax_nll: one block of 128 threads per row; pass 1 the row max m, pass 2 the sum
//                    s of exp(x - m), pass 3 logp = x - m - log(s) for every column; after a
//                    barrier thread 0 writes loss[row] = -logp[row][target[row]].
// (One kernel, not a log-softmax launch and a gather launch: keq's machinery that splits a
// data-dependent address by value runs one kernel per side; two launches are Inconclusive.)
// The `_logf` forms use libdevice's IEEE logf, the others __logf (lg2.approx times ln 2).
#include <math_constants.h>

constexpr int BLOCK = 128;

__device__ __forceinline__ float block_reduce(float v, float* red, bool is_max)
{
    int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            red[tid] = is_max ? fmaxf(red[tid], red[tid + s]) : red[tid] + red[tid + s];
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();   // red is reused by the next reduction
    return r;
}

template <bool IEEE_LOG>
__device__ __forceinline__ void log_softmax_row(const float* in, float* logp, int cols)
{
    __shared__ float red[BLOCK];
    const float* x = in + blockIdx.x * cols;
    float* y = logp + blockIdx.x * cols;

    float m = -CUDART_INF_F;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        m = fmaxf(m, x[c]);
    m = block_reduce(m, red, true);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        s += expf(x[c] - m);
    s = block_reduce(s, red, false);

    float log_s = IEEE_LOG ? logf(s) : __logf(s);
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        y[c] = x[c] - m - log_s;
}

template <bool IEEE_LOG>
__device__ __forceinline__ void log_softmax_nll_row(const float* in, const int* target,
                                                    float* logp, float* loss, int cols)
{
    log_softmax_row<IEEE_LOG>(in, logp, cols);
    __syncthreads();   // (orders the block's global writes of logp before the gather)
    if (threadIdx.x == 0)
        loss[blockIdx.x] = -logp[blockIdx.x * cols + target[blockIdx.x]];
}

extern "C" __global__ void log_softmax_nll(const float* in, const int* target, float* logp,
                                           float* loss, int rows, int cols)
{
    log_softmax_nll_row<false>(in, target, logp, loss, cols);
}

extern "C" __global__ void log_softmax_nll_logf(const float* in, const int* target, float* logp,
                                                float* loss, int rows, int cols)
{
    log_softmax_nll_row<true>(in, target, logp, loss, cols);
}
