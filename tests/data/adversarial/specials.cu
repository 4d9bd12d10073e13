// Special registers the PTX ISA calls volatile or leaves unspecified (10. Special Registers):
// %warpid and %smid give where a thread runs at the moment of the read and may change during
// the run (preemption); %nwarpid and %nsmid are maxima of the machine, not of the launch;
// %clock counts cycles. None of them is a function of the thread's indices.

__device__ __forceinline__ unsigned warpid() { unsigned r; asm volatile("mov.u32 %0, %%warpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned nwarpid() { unsigned r; asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned nsmid() { unsigned r; asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r)); return r; }

// The warp index computed from %tid: what the ISA says to use.
extern "C" __global__ void warp_from_tid(unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = threadIdx.x / 32;
}

// %warpid read as if it were threadIdx.x / 32.
extern "C" __global__ void warp_from_warpid(unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = warpid();
}

// The number of warps of the block, computed, and %nwarpid read as if it were that.
extern "C" __global__ void warps_from_ntid(unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (blockDim.x + 31) / 32;
}

extern "C" __global__ void warps_from_nwarpid(unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = nwarpid();
}

// What the ISA guarantees holds: %smid < %nsmid (and %warpid < %nwarpid) at every read.
extern "C" __global__ void copy(const unsigned* x, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[i];
}

extern "C" __global__ void copy_checked_ids(const unsigned* x, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned ok = (smid() < nsmid()) & (warpid() < nwarpid());
    if (i < n)
        out[i] = ok ? x[i] : 0u;
}

// One read of %smid is one value: x + s - s is x.
extern "C" __global__ void copy_smid_once(const unsigned* x, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned s = smid();
    if (i < n)
        out[i] = x[i] + s - s;
}

// Two reads of %smid may differ (the thread may be moved between them).
extern "C" __global__ void copy_smid_twice(const unsigned* x, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned s = smid();
    unsigned t = smid();
    if (i < n)
        out[i] = x[i] + s - t;
}

// clock() twice: the difference is the time between the reads, not zero.
extern "C" __global__ void copy_clock_delta(const unsigned* x, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = (unsigned)clock();
    unsigned b = (unsigned)clock();
    if (i < n)
        out[i] = x[i] + (b - a);
}
