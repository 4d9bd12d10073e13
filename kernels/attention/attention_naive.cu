// Reference single-head attention, the direct form: one thread per query row i of an
// n x D problem (D = 4), out_i = sum_j p_ij v_j / sum_j p_ij with p_ij = exp(s_ij - m_i),
// s_ij = (q_i . k_j) / sqrt(D) and m_i = max_j s_ij. Three passes over the keys, the scores
// recomputed in each (no scratch buffer).
#include <float.h>

constexpr int D = 4;
constexpr int BLOCK = 32;
constexpr float SCALE = 0.5f;            // 1 / sqrt(D)

__device__ __forceinline__ float score(const float* qi, const float* kj)
{
    float s = 0.0f;
    for (int d = 0; d < D; ++d)
        s += qi[d] * kj[d];
    return s * SCALE;
}

extern "C" __global__ void attention_naive(const float* q, const float* k, const float* v,
                                           float* out, int n)
{
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n)
        return;
    const float* qi = q + i * D;

    float m = -FLT_MAX;
    for (int j = 0; j < n; ++j)
        m = fmaxf(m, score(qi, k + j * D));

    float l = 0.0f;
    float acc[D] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < n; ++j) {
        const float p = expf(score(qi, k + j * D) - m);
        l += p;
        for (int d = 0; d < D; ++d)
            acc[d] += p * v[j * D + d];
    }
    for (int d = 0; d < D; ++d)
        out[i * D + d] = acc[d] / l;
}
