// __syncthreads_count/and/or (bar.red.popc/and/or) against the same counts taken with a
// shared-memory atomic; and a candidate with and/or swapped.
extern "C" __global__ void count_by_atomic(const int* x, int* out, int n)
{
    __shared__ int count;
    int t = threadIdx.x;
    if (t == 0)
        count = 0;
    __syncthreads();
    if (t < n && x[t] > 0)
        atomicAdd(&count, 1);
    __syncthreads();
    int c = count;
    int all = c == (int)blockDim.x, any = c > 0;
    if (t < n)
        out[t] = c * 4 + all * 2 + any;
}

extern "C" __global__ void count_by_bar_red(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int p = t < n && x[t] > 0;
    int c = __syncthreads_count(p);
    int all = __syncthreads_and(p);
    int any = __syncthreads_or(p);
    __nanosleep(100);
    if (t < n)
        out[t] = c * 4 + all * 2 + any;
}

extern "C" __global__ void count_by_bar_red_swapped(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    int p = t < n && x[t] > 0;
    int c = __syncthreads_count(p);
    int all = __syncthreads_or(p);
    int any = __syncthreads_and(p);
    if (t < n)
        out[t] = c * 4 + all * 2 + any;
}
