// BUG: privatized histogram without the __syncthreads() between zeroing the shared bins and
// counting into them. Another warp's atomicAdd can land on a bin before its owner zeroes it
// (a data race; the increment is lost).
constexpr int BINS = 256;

extern "C" __global__ void histogram_shared_noinit_sync(const unsigned char* __restrict__ data, unsigned int* bins,
                                                        int n)
{
    __shared__ unsigned int hist[BINS];
    hist[threadIdx.x] = 0;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i]], 1u);
    __syncthreads();
    unsigned int count = hist[threadIdx.x];
    if (count != 0)
        atomicAdd(&bins[threadIdx.x], count);
}
