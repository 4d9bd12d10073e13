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

// Counting into shared bins nobody zeroed, read before and after: the difference is the
// count whatever the bins held at launch. The counts happen only behind a test random inputs
// never pass, so only the symbolic run can show them (an atomic at a data-dependent address
// into never-written memory must keep the launch value it adds to).
extern "C" __global__ void count_nothing(const int* x, const int* y, int* out)
{
    out[threadIdx.x] = 0;
}

extern "C" __global__ void count_magic_unzeroed(const int* x, const int* y, int* out)
{
    __shared__ int s[32];
    int t = threadIdx.x;
    int before = s[t];
    __syncthreads();
    if (x[t] == MAGIC)
        atomicAdd(&s[y[t] & 31], 1);
    __syncthreads();
    out[t] = s[t] - before;
}
