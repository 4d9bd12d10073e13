// C = A B (int32; A is M x K, B is K x N, row-major): one 16x16 CTA per tile of C sums the whole
// K range. The launch has S CTAs per tile (gridDim.z, the split-k pairs' grid, passed as S for
// the spec); only the first computes. The reference of the split-k pairs.
extern "C" __global__ void gemm_direct(const int* A, const int* B, int* C, int* flags, int M,
                                       int N, int K, int S)
{
    int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (blockIdx.z != 0 || row >= M || col >= N)
        return;
    int sum = 0;
    for (int k = 0; k < K; ++k)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
}
