// BUG: sequential-addressing block reduction with the __syncthreads() inside the tree loop
// left out. Thread tid reads sdata[tid + s] while thread tid + s may still be writing it in
// the previous step: a shared-memory data race across warps.
constexpr int BLOCK = 256;

extern "C" __global__ void reduce_sequential_nosync_i32(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}
