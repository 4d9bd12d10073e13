// The SIMT reference of the tensor-core GEMMs: C (M x N, f32) = A (M x K, f16, row-major) *
// B (stored as N rows of K), one thread per element of C, the halves converted exactly to
// f32 and summed in k order. Launched as 16x16 threads per 16x16 tile.
#include <cuda_fp16.h>

extern "C" __global__ void gemm_simt_f16(const half* A, const half* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += __half2float(A[row * K + k]) * __half2float(B[col * K + k]);
    C[row * N + col] = acc;
}
