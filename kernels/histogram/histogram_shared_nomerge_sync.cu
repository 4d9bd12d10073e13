// BUG: privatized histogram without the __syncthreads() between counting and the merge.
// A thread can read its bin while other warps are still incrementing it (a data race;
// late increments never reach the global bins).
constexpr int BINS = 256;

extern "C" __global__ void histogram_shared_nomerge_sync(const unsigned char* __restrict__ data, unsigned int* bins,
                                                         int n)
{
    __shared__ unsigned int hist[BINS];
    hist[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i]], 1u);
    unsigned int count = hist[threadIdx.x];
    if (count != 0)
        atomicAdd(&bins[threadIdx.x], count);
}
