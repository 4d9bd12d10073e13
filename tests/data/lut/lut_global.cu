// Reference: a table lookup indexed by input bytes, straight from global memory.
extern "C" __global__ void lut_global(const unsigned char* idx, const unsigned int* table,
                                     unsigned int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = table[idx[i]];
}
