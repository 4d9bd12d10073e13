// Block reduction: every warp reduces its 32 values with __shfl_down_sync, lane 0 of each
// warp writes the warp's partial to shared memory, and warp 0 reduces the 8 partials.
constexpr int BLOCK = 256;
constexpr int WARPS = BLOCK / 32;
constexpr unsigned FULL_MASK = 0xffffffffu;

template <typename T>
__device__ __forceinline__ T warp_sum(T v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

template <typename T>
__device__ __forceinline__ void reduce_warp_shfl(const T* in, T* out, int n, T* partial)
{
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    T v = warp_sum((i < n) ? in[i] : T(0));
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum((lane < WARPS) ? partial[lane] : T(0));
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}

extern "C" __global__ void reduce_warp_shfl_i32(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int partial[WARPS];
    reduce_warp_shfl(in, out, n, partial);
}

extern "C" __global__ void reduce_warp_shfl_f32(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float partial[WARPS];
    reduce_warp_shfl(in, out, n, partial);
}
