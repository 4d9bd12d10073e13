// Atomics whose outcome depends on the order in which contending threads take effect.
// PTX ISA (9.7.13.5 atom): the order of atomic operations on one address by different
// threads is not specified; each returned old value and the final value after exch/cas
// depend on that order. One block of up to 64 threads.

// A reference that reserves n slots with one atomic and hands them out in thread order.
extern "C" __global__ void reserve_block(unsigned* counter, unsigned* out, int n)
{
    __shared__ unsigned base;
    if (threadIdx.x == 0)
        base = atomicAdd(counter, (unsigned)n);
    __syncthreads();
    int i = threadIdx.x;
    if (i < n)
        out[i] = base + i;
}

// One atomic per thread: each thread's slot is the order in which its atomic took effect.
extern "C" __global__ void reserve_each(unsigned* counter, unsigned* out, int n)
{
    int i = threadIdx.x;
    if (i < n)
        out[i] = atomicAdd(counter, 1u);
}

// Adding zero returns the same old value in every order: equivalent to a plain read.
extern "C" __global__ void peek_plain(unsigned* counter, unsigned* out, int n)
{
    int i = threadIdx.x;
    if (i < n)
        out[i] = counter[0];
}

extern "C" __global__ void peek_atomic(unsigned* counter, unsigned* out, int n)
{
    int i = threadIdx.x;
    if (i < n)
        out[i] = atomicAdd(counter, 0u);
}

// The last thread's index, written by the last thread.
extern "C" __global__ void last_plain(unsigned* last, int n)
{
    int i = threadIdx.x;
    if (i == n - 1)
        last[0] = i;
}

// Every thread exchanges its index in: the final value is whichever exchange came last.
extern "C" __global__ void last_exch(unsigned* last, int n)
{
    int i = threadIdx.x;
    if (i < n)
        atomicExch(last, (unsigned)i);
}

// Thread 0 claims a free slot.
extern "C" __global__ void claim_first(unsigned* owner, int n)
{
    if (threadIdx.x == 0 && n > 0 && owner[0] == 0xFFFFFFFFu)
        owner[0] = 0;
}

// Every thread tries to claim it: whichever CAS comes first wins.
extern "C" __global__ void claim_cas(unsigned* owner, int n)
{
    int i = threadIdx.x;
    if (i < n)
        atomicCAS(owner, 0xFFFFFFFFu, (unsigned)i);
}

// Integer sums commute: a block sum by one atomic per thread equals a sequential sum.
extern "C" __global__ void sum_sequential_i32(const int* x, int* sum, int n)
{
    if (threadIdx.x == 0) {
        int s = 0;
        for (int i = 0; i < n; ++i)
            s += x[i];
        sum[0] += s;
    }
}

extern "C" __global__ void sum_atomic_i32(const int* x, int* sum, int n)
{
    int i = threadIdx.x;
    if (i < n)
        atomicAdd(sum, x[i]);
}

// Float sums do not: a sum by one float atomic per thread depends on the order.
extern "C" __global__ void sum_sequential_f32(const float* x, float* sum, int n)
{
    if (threadIdx.x == 0) {
        float s = sum[0];
        for (int i = 0; i < n; ++i)
            s += x[i];
        sum[0] = s;
    }
}

// The same float atomics, in thread order: one thread adds every element.
extern "C" __global__ void sum_atomic_in_order_f32(const float* x, float* sum, int n)
{
    if (threadIdx.x == 0)
        for (int i = 0; i < n; ++i)
            atomicAdd(sum, x[i]);
}

extern "C" __global__ void sum_atomic_f32(const float* x, float* sum, int n)
{
    int i = threadIdx.x;
    if (i < n)
        atomicAdd(sum, x[i]);
}

// A plain store and atomics to one word with no barrier between them: a data race.
extern "C" __global__ void count_plain_reset(unsigned* c, int n)
{
    int i = threadIdx.x;
    if (i == 0)
        c[0] = 0;
    if (i < n)
        atomicAdd(c, 1u);
}

extern "C" __global__ void count_reset(unsigned* c, int n)
{
    if (threadIdx.x == 0)
        c[0] = (unsigned)n;
}
