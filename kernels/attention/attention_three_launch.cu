// Single-head attention as three launches (D = 4, n x n scores in a scratch buffer):
// S = Q K^T / sqrt(D); each row of S replaced by exp(s - max) and its sum kept; out = P V
// divided by the row's sum (kernels/attention/three_launch.toml). `attn_softmax_normalized`
// is the textbook middle launch that divides P itself (see docs/real-mode.md: mode real does
// not decide that form against flash attention).
#include <float.h>

constexpr int D = 4;
constexpr float SCALE = 0.5f;            // 1 / sqrt(D)

extern "C" __global__ void attn_scores(const float* q, const float* k, float* s, int n)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n * n) {
        int i = e / n, j = e % n;
        float acc = 0.0f;
        for (int d = 0; d < D; ++d)
            acc += q[i * D + d] * k[j * D + d];
        s[e] = acc * SCALE;
    }
}

extern "C" __global__ void attn_softmax(float* s, float* l, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = -FLT_MAX;
        for (int j = 0; j < n; ++j)
            m = fmaxf(m, s[i * n + j]);
        float sum = 0.0f;
        for (int j = 0; j < n; ++j) {
            float p = expf(s[i * n + j] - m);
            s[i * n + j] = p;
            sum += p;
        }
        l[i] = sum;
    }
}

extern "C" __global__ void attn_softmax_normalized(float* s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = -FLT_MAX;
        for (int j = 0; j < n; ++j)
            m = fmaxf(m, s[i * n + j]);
        float l = 0.0f;
        for (int j = 0; j < n; ++j) {
            float p = expf(s[i * n + j] - m);
            s[i * n + j] = p;
            l += p;
        }
        for (int j = 0; j < n; ++j)
            s[i * n + j] = s[i * n + j] / l;
    }
}

extern "C" __global__ void attn_pv(const float* p, const float* l, const float* v, float* out,
                                   int n)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n * D) {
        int i = e / D, d = e % D;
        float acc = 0.0f;
        for (int j = 0; j < n; ++j)
            acc += p[i * n + j] * v[j * D + d];
        out[e] = acc / l[i];
    }
}
