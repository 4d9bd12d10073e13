// Reference block reduction: interleaved addressing in shared memory.
// Each block of 256 threads sums its 256 elements (0 past n) into out[blockIdx.x].
constexpr int BLOCK = 256;

template <typename T>
__device__ __forceinline__ void reduce_interleaved(const T* in, T* out, int n, T* sdata)
{
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void reduce_interleaved_i32(const int* in, int* out, int n)
{
    __shared__ int sdata[BLOCK];
    reduce_interleaved(in, out, n, sdata);
}

extern "C" __global__ void reduce_interleaved_f32(const float* in, float* out, int n)
{
    __shared__ float sdata[BLOCK];
    reduce_interleaved(in, out, n, sdata);
}
