// Memory-access rules: .nc loads of memory the kernel writes (PTX ISA 9.7.9.8 ld.global.nc:
// "the data must be read-only for the lifetime of the kernel"), stores into a buffer the
// spec declares read-only, and plain stores of one value by two threads (a data race in the
// PTX memory model whatever the values).

// Shift left by one inside one block: every read comes before the barrier, every write
// after it.
extern "C" __global__ void shift_left(int* b, int n)
{
    int t = threadIdx.x;
    int v = (t + 1 < n) ? b[t + 1] : 0;
    __syncthreads();
    if (t < n)
        b[t] = v;
}

// The same through the non-coherent path: the kernel writes b, so ld.global.nc of it is
// undefined.
extern "C" __global__ void shift_left_ldg(int* b, int n)
{
    int t = threadIdx.x;
    int v = (t + 1 < n) ? __ldg(&b[t + 1]) : 0;
    __syncthreads();
    if (t < n)
        b[t] = v;
}

extern "C" __global__ void copy(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = x[t];
}

// Also scribbles into its input.
extern "C" __global__ void copy_and_scribble(int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n) {
        out[t] = x[t];
        x[t] = 0;
    }
}

extern "C" __global__ void set_flag(int* flag, int n)
{
    if (threadIdx.x == 0 && n > 0)
        flag[0] = 1;
}

// Two threads store the same value with nothing ordering them: still a data race.
extern "C" __global__ void set_flag_twice(int* flag, int n)
{
    if (threadIdx.x < 2 && n > 0)
        flag[0] = 1;
}

// Warp 1 reads a flag that warp 0 sets, nothing ordering the two: volatile accesses are
// morally strong (no data race), so the read returns the old value or the new one,
// whichever the schedule gives.
extern "C" __global__ void peek_flag(int* out, int n)
{
    __shared__ volatile int flag;
    int t = threadIdx.x;
    if (t == 0)
        flag = 0;
    __syncthreads();
    if (t == 0)
        flag = 1;
    else if (t == 32 && n > 0)
        out[0] = flag;
}

extern "C" __global__ void write_one(int* out, int n)
{
    if (threadIdx.x == 32 && n > 0)
        out[0] = 1;
}
