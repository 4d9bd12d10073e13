// Each thread takes its warp neighbour's element (lane + 1 mod 32): straight from global
// memory, or staged through shared memory with __syncwarp() (bar.warp.sync orders a warp's
// accesses: PTX ISA 9.7.13.2), or staged without it (a race).
extern "C" __global__ void rotate_global(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = (i & ~31) | ((i + 1) & 31);
    if (i < n)
        out[i] = j < n ? x[j] : 0;
}

extern "C" __global__ void rotate_shared(const int* x, int* out, int n)
{
    __shared__ int s[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    __syncwarp();
    int j = (i & ~31) | ((i + 1) & 31);
    if (i < n)
        out[i] = j < n ? s[(t & ~31) | ((t + 1) & 31)] : 0;
}

extern "C" __global__ void rotate_shared_nosync(const int* x, int* out, int n)
{
    __shared__ int s[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0;
    int j = (i & ~31) | ((i + 1) & 31);
    if (i < n)
        out[i] = j < n ? s[(t & ~31) | ((t + 1) & 31)] : 0;
}
