// Planted bug: attention_flash.cu whose tile loop stops before a partial last tile (the
// bound t + BC <= n): keys past the last multiple of BC are never attended to.
#include <float.h>

constexpr int D = 4;
constexpr int BC = 4;                    // key/value rows per tile
constexpr int BLOCK = 32;
constexpr float SCALE = 0.5f;            // 1 / sqrt(D)

extern "C" __global__ void attention_flash_last_tile(const float* q, const float* k, const float* v,
                                           float* out, int n)
{
    __shared__ float ks[BC][D];
    __shared__ float vs[BC][D];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    float qi[D];
    for (int d = 0; d < D; ++d)
        qi[d] = i < n ? q[i * D + d] : 0.0f;

    float m = -FLT_MAX, l = 0.0f;
    float acc[D] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int t = 0; t + BC <= n; t += BC) {   // BUG: a partial last tile is skipped
        const int e = threadIdx.x;           // one element of each tile per thread
        if (e < BC * D) {
            const int j = t + e / D;
            ks[e / D][e % D] = j < n ? k[j * D + e % D] : 0.0f;
            vs[e / D][e % D] = j < n ? v[j * D + e % D] : 0.0f;
        }
        __syncthreads();
        const int rows = min(BC, n - t);
        float s[BC];
        float m_new = m;
        for (int jj = 0; jj < BC; ++jj) {
            if (jj < rows) {
                float dot = 0.0f;
                for (int d = 0; d < D; ++d)
                    dot += qi[d] * ks[jj][d];
                s[jj] = dot * SCALE;
                m_new = fmaxf(m_new, s[jj]);
            }
        }
        const float corr = expf(m - m_new);
        l *= corr;
        for (int d = 0; d < D; ++d)
            acc[d] *= corr;
        for (int jj = 0; jj < BC; ++jj) {
            if (jj < rows) {
                const float p = expf(s[jj] - m_new);
                l += p;
                for (int d = 0; d < D; ++d)
                    acc[d] += p * vs[jj][d];
            }
        }
        m = m_new;
        __syncthreads();                     // the tile is overwritten next
    }
    if (i < n)
        for (int d = 0; d < D; ++d)
            out[i * D + d] = acc[d] / l;
}
