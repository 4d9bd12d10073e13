// BUG: warp-shuffle block reduction whose shuffle loop starts at offset warpSize instead of
// warpSize / 2. __shfl_down_sync by 32 reads past the warp, so every lane gets its own value
// back and doubles it: each warp level multiplies the block sum by 2.
constexpr int BLOCK = 256;
constexpr int WARPS = BLOCK / 32;
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ int warp_sum(int v)
{
    for (int offset = warpSize; offset > 0; offset >>= 1)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

extern "C" __global__ void reduce_warp_shfl_badoffset_i32(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int partial[WARPS];
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int v = warp_sum((i < n) ? in[i] : 0);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum((lane < WARPS) ? partial[lane] : 0);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}
