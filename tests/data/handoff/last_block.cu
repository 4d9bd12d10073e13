// The last-block handoff (the CUDA Programming Guide's __threadfence example): each block
// writes its partial sum, fences, takes a ticket with atomicInc; the block that draws the last
// ticket fences and sums the partials. Reference: block sums added atomically. A planted bug:
// no fence between the partial sum and the ticket (a data race).
extern "C" __global__ void sum_atomic(const int* x, int* partial, unsigned* count, int* out, int n)
{
    __shared__ int s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * 128 + t;
    s[t] = i < n ? x[i] : 0;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, s[0]);
}

extern "C" __global__ void sum_last_block(const int* x, int* partial, unsigned* count, int* out, int n)
{
    __shared__ int s[128];
    __shared__ bool amLast;
    int t = threadIdx.x;
    int i = blockIdx.x * 128 + t;
    s[t] = i < n ? x[i] : 0;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned ticket = atomicInc(count, gridDim.x - 1);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast && t == 0) {
        __threadfence();
        int total = 0;
        for (int b = 0; b < gridDim.x; b++) total += partial[b];
        out[0] = total;
    }
}

// A planted bug: no fence between the partial sum and the ticket.
extern "C" __global__ void sum_last_block_nofence(const int* x, int* partial, unsigned* count, int* out, int n)
{
    __shared__ int s[128];
    __shared__ bool amLast;
    int t = threadIdx.x;
    int i = blockIdx.x * 128 + t;
    s[t] = i < n ? x[i] : 0;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        unsigned ticket = atomicInc(count, gridDim.x - 1);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast && t == 0) {
        __threadfence();
        int total = 0;
        for (int b = 0; b < gridDim.x; b++) total += partial[b];
        out[0] = total;
    }
}
