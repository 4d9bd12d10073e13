// Serial split-k (the CUTLASS scheme): the S CTAs of a tile (gridDim.z) each sum a slice of K,
// then add it to C in turn. A per-tile semaphore (zeroed by the host) says whose turn it is:
// thread 0 waits for status z with an acquire load, the CTA adds its slice after a barrier,
// and thread 0 stores z + 1 with release after another.
#include <cuda/atomic>

extern "C" __global__ void serial(const int* A, const int* B, int* C, int* flags, int M, int N,
                                  int K)
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
    cuda::atomic_ref<int, cuda::thread_scope_device> turn(flags[blockIdx.y * gridDim.x + blockIdx.x]);
    if (first)
        while (turn.load(cuda::memory_order_acquire) != z) {
        }
    __syncthreads();
    if (inside)
        C[row * N + col] = (z == 0 ? 0 : C[row * N + col]) + sum;
    __syncthreads();
    if (first)
        turn.store(z + 1, cuda::memory_order_release);
}
