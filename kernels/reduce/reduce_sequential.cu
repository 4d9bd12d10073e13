// Block reduction with sequential addressing: the active threads stay contiguous
// (no divergence inside a warp until s < 32, no bank conflicts).
constexpr int BLOCK = 256;

template <typename T>
__device__ __forceinline__ void reduce_sequential(const T* in, T* out, int n, T* sdata)
{
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void reduce_sequential_i32(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int sdata[BLOCK];
    reduce_sequential(in, out, n, sdata);
}

extern "C" __global__ void reduce_sequential_f32(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float sdata[BLOCK];
    reduce_sequential(in, out, n, sdata);
}
