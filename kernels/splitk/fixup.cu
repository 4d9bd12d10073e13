// Split-k with a fix-up (the stream-K scheme): CTAs 1..S-1 of a tile write their K slice's
// partial tile to a workspace and arrive on the tile's counter (an atomic add with release);
// CTA 0 sums its own slice, waits until S - 1 have arrived (acquire), and adds the partials.
#include <cuda/atomic>

extern "C" __global__ void fixup(const int* A, const int* B, int* C, int* flags, int* work,
                                 int M, int N, int K)
{
    int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    int z = blockIdx.z, S = gridDim.z;
    int per = (K + S - 1) / S, k0 = z * per, k1 = min(K, k0 + per);
    bool inside = row < M && col < N;
    int sum = 0;
    if (inside)
        for (int k = k0; k < k1; ++k)
            sum += A[row * K + k] * B[k * N + col];
    bool first = threadIdx.x == 0 && threadIdx.y == 0;
    cuda::atomic_ref<int, cuda::thread_scope_device> arrived(flags[blockIdx.y * gridDim.x + blockIdx.x]);
    if (z > 0) {
        if (inside)
            work[(z - 1) * M * N + row * N + col] = sum;
        __syncthreads();
        if (first)
            arrived.fetch_add(1, cuda::memory_order_release);
        return;
    }
    if (first)
        while (arrived.load(cuda::memory_order_acquire) != S - 1) {
        }
    __syncthreads();
    if (inside) {
        for (int s = 1; s < S; ++s)
            sum += work[(s - 1) * M * N + row * N + col];
        C[row * N + col] = sum;
    }
}
