// Planted layout dependence: the epilogue scales each register of the fragment by its own
// factor (acc.x[i] *= alpha * (i + 1)). Which element of C register i holds is not given
// by the PTX ISA, so what this kernel computes differs from GPU to GPU: keq says so.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm_ragged(const half* A, const half* B, float* C, int M, int N, int K, float alpha)
{
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
    for (int i = 0; i < acc.num_elements; i++)
        acc.x[i] *= alpha * (i + 1);
    wmma::store_matrix_sync(C + blockIdx.y * 16 * N + blockIdx.x * 16, acc, N, wmma::mem_row_major);
}
