// Planted bug: wmma_gemm with B's fragment declared row_major although B is stored as N rows
// of K (column-major): the tile is read transposed, so C gets A * B^T of each 16x16 block.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm_b_row(const half* A, const half* B, float* C, int M, int N, int K)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    const half* a_tile = A + blockIdx.y * 16 * K;
    const half* b_tile = B + blockIdx.x * 16 * K;
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, a_tile + k, K);
        wmma::load_matrix_sync(b, b_tile + k, K);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + blockIdx.y * 16 * N + blockIdx.x * 16, acc, N, wmma::mem_row_major);
}
