// Row sums of a neighbour-rotated tile, the reference reading global memory directly and
// the candidates staging each 256-int tile in shared memory with cp.async (the Ampere
// pipeline idiom: __pipeline_memcpy_async / commit / wait_prior, double-buffered). One
// block per row, 64 threads, STAGES tiles per row; thread t sums, per tile, the 4 ints of
// its right neighbour's chunk: tile[(4t + 4 + j) % 256].
#include <cuda_pipeline.h>

#define STAGES 4

extern "C" __global__ void rows_direct(const int* a, int* out, int rows) {
    if (blockIdx.x >= rows) return;      // (the launch has exactly `rows` blocks)
    int t = threadIdx.x;
    const int* row = a + blockIdx.x * 256 * STAGES;
    int acc = 0;
    for (int s = 0; s < STAGES; ++s)
        for (int j = 0; j < 4; ++j)
            acc += row[s * 256 + (4 * t + 4 + j) % 256];
    out[blockIdx.x * 64 + t] = acc;
}

// WAIT: the groups left pending at the wait (1: the stage about to be read has landed);
// SYNC_AFTER: the barrier before a buffer is refilled.
template <int WAIT, bool SYNC_AFTER>
__device__ void rows_pipelined(const int* a, int* out, int rows) {
    __shared__ __align__(16) int tile[2][256];
    if (blockIdx.x >= rows) return;      // (the launch has exactly `rows` blocks)
    int t = threadIdx.x;
    const int* row = a + blockIdx.x * 256 * STAGES;
    __pipeline_memcpy_async(&tile[0][4 * t], &row[4 * t], 16);
    __pipeline_commit();
    int acc = 0;
    for (int s = 0; s < STAGES; ++s) {
        if (s + 1 < STAGES)
            __pipeline_memcpy_async(&tile[(s + 1) % 2][4 * t], &row[(s + 1) * 256 + 4 * t], 16);
        __pipeline_commit();
        __pipeline_wait_prior(WAIT);
        __syncthreads();
        for (int j = 0; j < 4; ++j)
            acc += tile[s % 2][(4 * t + 4 + j) % 256];
        if (SYNC_AFTER)
            __syncthreads();
    }
    out[blockIdx.x * 64 + t] = acc;
}

extern "C" __global__ void rows_pipelined_ok(const int* a, int* out, int rows) {
    rows_pipelined<1, true>(a, out, rows);
}

// Reads a stage before it has landed: the wait leaves two groups pending.
extern "C" __global__ void rows_pipelined_early(const int* a, int* out, int rows) {
    rows_pipelined<2, true>(a, out, rows);
}

// Refills a buffer while other threads may still read it: no barrier after the reads.
extern "C" __global__ void rows_pipelined_nosync(const int* a, int* out, int rows) {
    rows_pipelined<1, false>(a, out, rows);
}
