// Work-efficient (Blelloch) scan of each 256-element segment: up-sweep, clear the root,
// down-sweep gives the exclusive scan; adding each thread's own element makes it inclusive.
constexpr int BLOCK = 256;

extern "C" __global__ void scan_blelloch(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    int x = (i < n) ? in[i] : 0;
    s[tid] = x;
    // up-sweep (reduce)
    for (int d = 1; d < BLOCK; d <<= 1) {
        __syncthreads();
        int idx = (tid + 1) * 2 * d - 1;
        if (idx < BLOCK)
            s[idx] += s[idx - d];
    }
    // down-sweep
    if (tid == 0)
        s[BLOCK - 1] = 0;
    for (int d = BLOCK / 2; d > 0; d >>= 1) {
        __syncthreads();
        int idx = (tid + 1) * 2 * d - 1;
        if (idx < BLOCK) {
            int t = s[idx - d];
            s[idx - d] = s[idx];
            s[idx] += t;
        }
    }
    __syncthreads();
    if (i < n)
        out[i] = s[tid] + x;   // exclusive -> inclusive
}
