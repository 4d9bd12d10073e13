// BUG: Hillis-Steele scan in a single shared buffer. In each step thread tid reads
// s[tid - offset] while thread tid - offset updates it in place: a data race (the result
// depends on warp scheduling).
constexpr int BLOCK = 256;

extern "C" __global__ void scan_hillis_steele_1buf(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    s[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < BLOCK; offset <<= 1) {
        if (tid >= offset)
            s[tid] += s[tid - offset];
        __syncthreads();
    }
    if (i < n)
        out[i] = s[tid];
}
