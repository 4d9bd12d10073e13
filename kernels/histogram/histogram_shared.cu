// Privatized histogram: each block counts into a shared-memory copy of the 256 bins, then
// merges its non-zero counts into the global bins with one atomic per bin.
// Launch with exactly 256 threads per block (one thread per bin).
constexpr int BINS = 256;

extern "C" __global__ void histogram_shared(const unsigned char* __restrict__ data, unsigned int* bins, int n)
{
    __shared__ unsigned int hist[BINS];
    hist[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i]], 1u);
    __syncthreads();
    unsigned int count = hist[threadIdx.x];
    if (count != 0)
        atomicAdd(&bins[threadIdx.x], count);
}
