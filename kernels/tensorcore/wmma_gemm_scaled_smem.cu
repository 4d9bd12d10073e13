// wmma_gemm_scaled's reference: the accumulator is stored to shared memory first and each
// thread scales elements it reads back, so no code depends on the fragment layout.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm_scaled_smem(const half* A, const half* B, float* C, int M, int N, int K, float alpha)
{
    __shared__ __align__(32) float tile[16 * 16];
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    const half* a_tile = A + blockIdx.y * 16 * K;
    const half* b_tile = B + blockIdx.x * 16 * K;
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, a_tile + k, K);
        wmma::load_matrix_sync(b, b_tile + k, K);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(tile, acc, 16, wmma::mem_row_major);
    __syncwarp();
    float* c = C + blockIdx.y * 16 * N + blockIdx.x * 16;
    for (int i = threadIdx.x; i < 16 * 16; i += 32)
        c[(i / 16) * N + i % 16] = alpha * tile[i];
}
