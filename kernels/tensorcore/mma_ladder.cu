// The rest of the tensor-core GEMM ladder (specs ladder_*.toml, tests/golden/test_mma_ladder.py),
// each rung checked against gemm_direct of mma_gemm.cu: C (M x N) = A (M x K, f16, row-major) *
// B (stored as N rows of K), k16 steps of mma.m16n8k16 per 16x8 tile of C.
//   rung 1  a 3-stage cp.async pipeline: cp.async.wait_group 1 over three shared buffers (the
//           CUTLASS multistage main loop: wait, barrier, refill the stage read last, compute);
//   rung 2  the same with an XOR-swizzled shared layout: the 16-byte chunk index XORed with its
//           128-byte row (CuTe's Swizzle<3,4,3> on byte offsets), so that the eight row
//           addresses of each ldmatrix phase fall in eight distinct bank groups;
//   rung 3  register blocking: one warp computes two 16x8 tiles (16x16), reusing A's fragments
//           (B's two tiles read by one ldmatrix.x4);
//   rung 4  f16 accumulators (mma ... .f16.f16.f16.f16) against gemm_direct_f16, below;
//   rung 5  split-k: two warps each sum half of K, warp 1's partial tile added by warp 0.
// Planted bugs: B read with ldmatrix .trans; a swizzle that aliases rows; no cp.async wait; the
// odd last k step dropped; two A registers swapped in the mma; f16 accumulators for f32.
// Needs -std=c++20 (a struct as a template parameter): kernels/build.py's EXTRA_FLAGS.
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

__device__ __forceinline__ void mma16816_f16(unsigned* d, unsigned a0, unsigned a1, unsigned a2,
                                             unsigned a3, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, "
                 "{%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The f16-accumulator reference: gemm_direct's fragments, C (M x N) in f16.
extern "C" __global__ void gemm_direct_f16(const half* A, const half* B, half* C, int M, int N,
                                           int K) {
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    const half* a = A + blockIdx.y * 16 * K;
    const half* b = B + blockIdx.x * 8 * K;
    unsigned d[2] = {0, 0};
    for (int k = 0; k < K; k += 16) {
        mma16816_f16(d, pack(a[g * K + k + 2 * t], a[g * K + k + 2 * t + 1]),
                     pack(a[(g + 8) * K + k + 2 * t], a[(g + 8) * K + k + 2 * t + 1]),
                     pack(a[g * K + k + 2 * t + 8], a[g * K + k + 2 * t + 9]),
                     pack(a[(g + 8) * K + k + 2 * t + 8], a[(g + 8) * K + k + 2 * t + 9]),
                     pack(b[g * K + k + 2 * t], b[g * K + k + 2 * t + 1]),
                     pack(b[g * K + k + 2 * t + 8], b[g * K + k + 2 * t + 9]));
    }
    half* c = C + blockIdx.y * 16 * N + blockIdx.x * 8;
    *(unsigned*)&c[g * N + 2 * t] = d[0];
    *(unsigned*)&c[(g + 8) * N + 2 * t] = d[1];
}

// Where the 16-byte chunk `ch` (0 or 1) of row `r` of a tile with 32-byte rows lives, in halves.
enum Swizzle { PLAIN, XOR, ALIAS };
template <int SWZ>
__device__ __forceinline__ int tile_at(int r, int ch) {
    int c = r * 2 + ch;  // the chunk's index; c / 8 is its 128-byte row
    if (SWZ == XOR) c ^= (c >> 3) & 7;
    // the bug: the chunk-of-its-row (not of its 128-byte row) XORed with r / 2, so the four
    // rows of a 128-byte row share two chunks
    if (SWZ == ALIAS) c = (c & ~7) | ((ch ^ (r >> 1)) & 7);
    return c * 8;
}

struct Cfg {
    int stages;     // shared buffers; cp.async.wait_group stages - 2
    int swz;        // Swizzle
    int nt;         // 16x8 tiles of C per warp, side by side in n
    bool wait;      // false: no cp.async.wait_group (a race)
    bool trans_b;   // true: B read with ldmatrix .trans (transposed)
    bool swap_a;    // true: a1 and a2 swapped in the mma
    bool drop_tail; // true: k steps counted in pairs, the odd last one dropped
};

// The CUTLASS-style multistage main loop over one warp's 16 x (8 nt) tile of C.
template <Cfg G, typename Acc>
__device__ void mainloop(const half* A, const half* B, Acc* d, int N, int K) {
    __shared__ __align__(128) half sa[G.stages][16 * 16];
    __shared__ __align__(128) half sb[G.stages][8 * G.nt * 16];
    int lane = threadIdx.x;
    const half* a = A + blockIdx.y * 16 * K;
    const half* b = B + blockIdx.x * 8 * G.nt * K;
    int steps = G.drop_tail ? K / 32 * 2 : K / 16;
    // one 16-byte chunk per lane for A (16 rows of 32 bytes), 16 nt chunks for B
    auto load = [&](int stage, int k) {
        int r = lane / 2, ch = lane % 2;
        __pipeline_memcpy_async(&sa[stage][tile_at<G.swz>(r, ch)], &a[r * K + k + ch * 8], 16);
        if (lane < 16 * G.nt)
            __pipeline_memcpy_async(&sb[stage][tile_at<G.swz>(r, ch)], &b[r * K + k + ch * 8],
                                    16);
    };
    for (int s = 0; s < G.stages - 1; s++) {
        if (s < steps) load(s, s * 16);
        __pipeline_commit();
    }
    for (int i = 0; i < steps; i++) {
        if (G.wait) __pipeline_wait_prior(G.stages - 2);
        __syncwarp();
        // refill the stage read by the previous step
        int next = i + G.stages - 1;
        if (next < steps) load(next % G.stages, next * 16);
        __pipeline_commit();
        int s = i % G.stages;
        unsigned a0, a1, a2, a3, b[4];
        unsigned pa = (unsigned)__cvta_generic_to_shared(
            &sa[s][tile_at<G.swz>(lane % 16, lane / 16)]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
        if (G.nt == 1) {
            unsigned pb = (unsigned)__cvta_generic_to_shared(
                &sb[s][tile_at<G.swz>(lane % 8, (lane / 8) % 2)]);
            if (G.trans_b)
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                             : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
            else
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                             : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
        } else {
            // matrices: tile 0 k 0..7, tile 0 k 8..15, tile 1 k 0..7, tile 1 k 8..15
            unsigned pb = (unsigned)__cvta_generic_to_shared(
                &sb[s][tile_at<G.swz>((lane / 16) * 8 + lane % 8, (lane / 8) % 2)]);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3]) : "r"(pb));
        }
        for (int j = 0; j < G.nt; j++) {
            if (G.swap_a) d[j].mma(a0, a2, a1, a3, b[2 * j], b[2 * j + 1]);
            else d[j].mma(a0, a1, a2, a3, b[2 * j], b[2 * j + 1]);
        }
    }
}

struct F32Acc {
    float x[4] = {0, 0, 0, 0};
    __device__ void mma(unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                        unsigned b1) { mma16816(x, a0, a1, a2, a3, b0, b1); }
};
struct F16Acc {
    unsigned x[2] = {0, 0};
    __device__ void mma(unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                        unsigned b1) { mma16816_f16(x, a0, a1, a2, a3, b0, b1); }
};

template <Cfg G>
__device__ void gemm_ladder(const half* A, const half* B, float* C, int N, int K) {
    F32Acc d[G.nt];
    mainloop<G>(A, B, d, N, K);
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    for (int j = 0; j < G.nt; j++) {
        float* c = C + blockIdx.y * 16 * N + (blockIdx.x * G.nt + j) * 8;
        c[g * N + 2 * t] = d[j].x[0]; c[g * N + 2 * t + 1] = d[j].x[1];
        c[(g + 8) * N + 2 * t] = d[j].x[2]; c[(g + 8) * N + 2 * t + 1] = d[j].x[3];
    }
}

constexpr Cfg PIPE3{3, PLAIN, 1, true, false, false, false};

#define GEMM(name, ...)                                                                         \
    extern "C" __global__ void name(const half* A, const half* B, float* C, int M, int N,     \
                                    int K) {                                                    \
        gemm_ladder<Cfg{__VA_ARGS__}>(A, B, C, N, K);                                           \
    }

GEMM(gemm_pipe3, 3, PLAIN, 1, true, false, false, false)
GEMM(gemm_swizzled, 3, XOR, 1, true, false, false, false)
GEMM(gemm_blocked, 3, XOR, 2, true, false, false, false)
// planted bugs
GEMM(gemm_bug_trans_b, 3, PLAIN, 1, true, true, false, false)
GEMM(gemm_bug_swizzle_alias, 3, ALIAS, 1, true, false, false, false)
GEMM(gemm_bug_no_wait, 3, PLAIN, 1, false, false, false, false)
GEMM(gemm_bug_k_tail, 3, PLAIN, 1, true, false, false, true)
GEMM(gemm_bug_a_order, 3, PLAIN, 1, true, false, true, false)

// rung 4: the 3-stage pipeline with f16 accumulators, C in f16
extern "C" __global__ void gemm_pipe3_f16(const half* A, const half* B, half* C, int M, int N,
                                          int K) {
    F16Acc d[1];
    mainloop<PIPE3>(A, B, d, N, K);
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    half* c = C + blockIdx.y * 16 * N + blockIdx.x * 8;
    *(unsigned*)&c[g * N + 2 * t] = d[0].x[0];
    *(unsigned*)&c[(g + 8) * N + 2 * t] = d[0].x[1];
}

// bug f: f16 accumulators where f32 was meant, widened to the f32 C
extern "C" __global__ void gemm_bug_f16_acc(const half* A, const half* B, float* C, int M,
                                            int N, int K) {
    F16Acc d[1];
    mainloop<PIPE3>(A, B, d, N, K);
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    float* c = C + blockIdx.y * 16 * N + blockIdx.x * 8;
    half2 lo = *(half2*)&d[0].x[0], hi = *(half2*)&d[0].x[1];
    c[g * N + 2 * t] = __low2float(lo); c[g * N + 2 * t + 1] = __high2float(lo);
    c[(g + 8) * N + 2 * t] = __low2float(hi); c[(g + 8) * N + 2 * t + 1] = __high2float(hi);
}

// rung 5: split-k. Two warps per 16x8 tile; warp w sums the k16 steps of its half of K
// (K a multiple of 32) from fragments in global memory; warp 1 leaves its partial tile in
// shared memory and warp 0 adds it to its own.
extern "C" __global__ void gemm_split_k(const half* A, const half* B, float* C, int M, int N,
                                        int K) {
    __shared__ float part[32][4];
    int lane = threadIdx.x % 32, w = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const half* a = A + blockIdx.y * 16 * K;
    const half* b = B + blockIdx.x * 8 * K;
    float d[4] = {0, 0, 0, 0};
    for (int k = w * (K / 2); k < (w + 1) * (K / 2); k += 16) {
        mma16816(d, pack(a[g * K + k + 2 * t], a[g * K + k + 2 * t + 1]),
                 pack(a[(g + 8) * K + k + 2 * t], a[(g + 8) * K + k + 2 * t + 1]),
                 pack(a[g * K + k + 2 * t + 8], a[g * K + k + 2 * t + 9]),
                 pack(a[(g + 8) * K + k + 2 * t + 8], a[(g + 8) * K + k + 2 * t + 9]),
                 pack(b[g * K + k + 2 * t], b[g * K + k + 2 * t + 1]),
                 pack(b[g * K + k + 2 * t + 8], b[g * K + k + 2 * t + 9]));
    }
    if (w == 1)
        for (int i = 0; i < 4; i++) part[lane][i] = d[i];
    __syncthreads();
    if (w == 0) {
        for (int i = 0; i < 4; i++) d[i] += part[lane][i];
        float* c = C + blockIdx.y * 16 * N + blockIdx.x * 8;
        c[g * N + 2 * t] = d[0]; c[g * N + 2 * t + 1] = d[1];
        c[(g + 8) * N + 2 * t] = d[2]; c[(g + 8) * N + 2 * t + 1] = d[3];
    }
}
