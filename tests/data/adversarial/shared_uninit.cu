// A shared tile half written: the read of the unwritten half sits behind a test on the
// input that random inputs never pass. The reference does what zeros there would give.
#define MAGIC 0x1234567

extern "C" __global__ void select_magic_zero(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = (x[t] == MAGIC) ? 0 : x[t];
}

extern "C" __global__ void select_magic_unwritten(const int* x, int* out, int n)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = x[t];                // only s[0..31] is written
    __syncthreads();
    if (t < n)
        out[t] = (x[t] == MAGIC) ? s[t + 32] : x[t];
}
