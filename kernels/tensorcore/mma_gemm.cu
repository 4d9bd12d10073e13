// A tensor-core GEMM ladder: C (M x N, f32) = A (M x K, f16, row-major) * B (stored as N rows
// of K: column-major K x N), one warp per 16x8 tile of C, k16 steps of mma.m16n8k16.
// gemm_direct reads each fragment straight from global memory; gemm_pipelined stages A and B
// tiles in shared memory with a 2-stage cp.async pipeline and reads the fragments with
// ldmatrix. The same values reach the same mma in the same k order: equal by congruence,
// whatever the tensor core computes. The rest of the ladder is mma_ladder.cu.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

__device__ __forceinline__ unsigned pack(half lo, half hi) {
    return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);
}

__device__ __forceinline__ void mma16816(float* d, unsigned a0, unsigned a1, unsigned a2,
                                         unsigned a3, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

extern "C" __global__ void gemm_direct(const half* A, const half* B, float* C, int M, int N,
                                       int K) {
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    const half* a = A + blockIdx.y * 16 * K;
    const half* b = B + blockIdx.x * 8 * K;
    float d[4] = {0, 0, 0, 0};
    for (int k = 0; k < K; k += 16) {
        mma16816(d, pack(a[g * K + k + 2 * t], a[g * K + k + 2 * t + 1]),
                 pack(a[(g + 8) * K + k + 2 * t], a[(g + 8) * K + k + 2 * t + 1]),
                 pack(a[g * K + k + 2 * t + 8], a[g * K + k + 2 * t + 9]),
                 pack(a[(g + 8) * K + k + 2 * t + 8], a[(g + 8) * K + k + 2 * t + 9]),
                 pack(b[g * K + k + 2 * t], b[g * K + k + 2 * t + 1]),
                 pack(b[g * K + k + 2 * t + 8], b[g * K + k + 2 * t + 9]));
    }
    float* c = C + blockIdx.y * 16 * N + blockIdx.x * 8;
    c[g * N + 2 * t] = d[0]; c[g * N + 2 * t + 1] = d[1];
    c[(g + 8) * N + 2 * t] = d[2]; c[(g + 8) * N + 2 * t + 1] = d[3];
}

// WAIT: groups left pending when a stage is read (1: the stage read has landed).
template <int WAIT>
__device__ void gemm_pipelined(const half* A, const half* B, float* C, int M, int N, int K) {
    __shared__ __align__(16) half sa[2][16 * 16];
    __shared__ __align__(16) half sb[2][8 * 16];
    int lane = threadIdx.x;
    const half* a = A + blockIdx.y * 16 * K;
    const half* b = B + blockIdx.x * 8 * K;
    // one 16-byte chunk per lane for A (16 rows of 32 bytes), lanes 0..15 for B (8 rows)
    auto load = [&](int stage, int k) {
        __pipeline_memcpy_async(&sa[stage][(lane / 2) * 16 + (lane % 2) * 8],
                                &a[(lane / 2) * K + k + (lane % 2) * 8], 16);
        if (lane < 16)
            __pipeline_memcpy_async(&sb[stage][(lane / 2) * 16 + (lane % 2) * 8],
                                    &b[(lane / 2) * K + k + (lane % 2) * 8], 16);
        __pipeline_commit();
    };
    float d[4] = {0, 0, 0, 0};
    load(0, 0);
    for (int k = 0, s = 0; k < K; k += 16, s ^= 1) {
        if (k + 16 < K) load(s ^ 1, k + 16); else __pipeline_commit();
        __pipeline_wait_prior(WAIT);
        __syncwarp();
        unsigned a0, a1, a2, a3, b0, b1;
        unsigned pa = (unsigned)__cvta_generic_to_shared(
            &sa[s][(lane % 16) * 16 + (lane / 16) * 8]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
        unsigned pb = (unsigned)__cvta_generic_to_shared(
            &sb[s][(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                     : "=r"(b0), "=r"(b1) : "r"(pb));
        mma16816(d, a0, a1, a2, a3, b0, b1);
        __syncwarp();
    }
    int g = lane / 4, t = lane % 4;
    float* c = C + blockIdx.y * 16 * N + blockIdx.x * 8;
    c[g * N + 2 * t] = d[0]; c[g * N + 2 * t + 1] = d[1];
    c[(g + 8) * N + 2 * t] = d[2]; c[(g + 8) * N + 2 * t + 1] = d[3];
}

extern "C" __global__ void gemm_pipelined_ok(const half* A, const half* B, float* C, int M,
                                             int N, int K) {
    gemm_pipelined<1>(A, B, C, M, N, K);
}

// Reads a stage whose copy may still be in flight: a race.
extern "C" __global__ void gemm_pipelined_early(const half* A, const half* B, float* C, int M,
                                                int N, int K) {
    gemm_pipelined<2>(A, B, C, M, N, K);
}
