// Block reduction: shared-memory tree with sequential addressing down to 64 values,
// then the first warp finishes with __shfl_down_sync (no barriers in the last steps).
// The pairing is the same as reduce_sequential, step for step.
constexpr int BLOCK = 256;
constexpr unsigned FULL_MASK = 0xffffffffu;

template <typename T>
__device__ __forceinline__ void reduce_tree_shfl(const T* in, T* out, int n, T* sdata)
{
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();
#pragma unroll
    for (unsigned int s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        T v = sdata[tid] + sdata[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(FULL_MASK, v, offset);
        if (tid == 0)
            out[blockIdx.x] = v;
    }
}

extern "C" __global__ void reduce_tree_shfl_i32(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int sdata[BLOCK];
    reduce_tree_shfl(in, out, n, sdata);
}

extern "C" __global__ void reduce_tree_shfl_f32(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float sdata[BLOCK];
    reduce_tree_shfl(in, out, n, sdata);
}
