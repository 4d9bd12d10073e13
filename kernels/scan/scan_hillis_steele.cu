// Reference: inclusive prefix sum of each 256-element segment (one segment per block),
// Hillis-Steele with two shared buffers (read one, write the other, swap each step).
constexpr int BLOCK = 256;

extern "C" __global__ void scan_hillis_steele(const int* in, int* out, int n)
{
    __shared__ int buf[2][BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    int pout = 0, pin = 1;
    buf[pout][tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < BLOCK; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset)
            buf[pout][tid] = buf[pin][tid] + buf[pin][tid - offset];
        else
            buf[pout][tid] = buf[pin][tid];
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[pout][tid];
}
