// BUG: no barrier between staging the table and reading it: a thread may read an entry
// another warp has not written yet (race).
extern "C" __global__ void lut_shared_nosync(const unsigned char* idx, const unsigned int* table,
                                            unsigned int* out, int n)
{
    __shared__ unsigned int s[256];
    s[threadIdx.x] = table[threadIdx.x];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = s[idx[i]];
}
