// Flash-attention-style single-head attention (SIMT): one thread per query row, the keys
// and values streamed through shared memory in tiles of BC rows loaded by the whole block.
// Per tile: the scores, the new running max m', the running sum l and accumulator acc
// rescaled by exp(m - m'), then the tile's exp(s - m') added. out = acc / l at the end.
// m starts at -FLT_MAX (not -inf) so that exp(m - m') never sees inf - inf.
#include <float.h>

constexpr int D = 4;
constexpr int BC = 4;                    // key/value rows per tile
constexpr int BLOCK = 32;
constexpr float SCALE = 0.5f;            // 1 / sqrt(D)

extern "C" __global__ void attention_flash(const float* q, const float* k, const float* v,
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
    for (int t = 0; t < n; t += BC) {
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
