// Candidate: the 256-entry table staged in shared memory first (one entry per thread; launch
// with 256 threads per block), then looked up there.
extern "C" __global__ void lut_shared(const unsigned char* idx, const unsigned int* table,
                                     unsigned int* out, int n)
{
    __shared__ unsigned int s[256];
    s[threadIdx.x] = table[threadIdx.x];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = s[idx[i]];
}
