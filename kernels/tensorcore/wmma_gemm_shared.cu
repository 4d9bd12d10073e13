// wmma_gemm with its A and B tiles staged in shared memory: the 32 threads of the warp copy
// a 16x16 tile of each (8 halves per thread) per k step, then the fragments are loaded from
// shared memory (leading dimension 16, plus 8 halves of padding against bank conflicts). The
// same values reach the same mma in the same k order: equal to wmma_gemm bit for bit.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

constexpr int LD = 16 + 8;

extern "C" __global__ void wmma_gemm_shared(const half* A, const half* B, float* C, int M, int N, int K)
{
    __shared__ __align__(32) half sa[16 * LD];
    __shared__ __align__(32) half sb[16 * LD];
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    const half* a_tile = A + blockIdx.y * 16 * K;
    const half* b_tile = B + blockIdx.x * 16 * K;
    int lane = threadIdx.x, row = lane / 2, col = (lane % 2) * 8;
    for (int k = 0; k < K; k += 16) {
        for (int j = 0; j < 8; j++) {
            sa[row * LD + col + j] = a_tile[row * K + k + col + j];
            sb[row * LD + col + j] = b_tile[row * K + k + col + j];
        }
        __syncwarp();
        wmma::load_matrix_sync(a, sa, LD);
        wmma::load_matrix_sync(b, sb, LD);
        wmma::mma_sync(acc, a, b, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(C + blockIdx.y * 16 * N + blockIdx.x * 16, acc, N, wmma::mem_row_major);
}
