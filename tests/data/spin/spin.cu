// Handoffs through spin waits (semantics/machine/symbolic_spins.py): a thread writes data,
// releases a flag; another spins on the flag, acquires, and reads the data. The reference
// computes each output directly. Planted bugs: a relaxed store (no release), a flag reset
// after it is set (the wait can miss it), a waiter's CTA that reads without the barrier after
// the wait, and a flag that is never initialized.
#include <cuda/atomic>

// Reference: out[t] = 3 x[t], by CTA 1 (the CTA that reads in the handoffs below).
extern "C" __global__ void triple(const int* x, int* part, int* flag, int* out, int n)
{
    int t = threadIdx.x;
    if (blockIdx.x == 1 && t < n)
        out[t] = 3 * x[t];
}

// A split-k style fix-up across CTAs, with cuda::atomic_ref: CTA 0 writes 2 x, releases the
// flag; CTA 1 waits with an acquire load and adds x.
extern "C" __global__ void fixup_acquire(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t < n)
            part[t] = 2 * x[t];
        __syncthreads();
        if (t == 0)
            f.store(1, cuda::memory_order_release);
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) == 0) {
            }
        __syncthreads();
        if (t < n)
            out[t] = part[t] + x[t];
    }
}

// The same with a volatile flag and __threadfence on both sides, as older code writes it.
extern "C" __global__ void fixup_volatile(const int* x, int* part, int* flag, int* out, int n)
{
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t < n)
            part[t] = 2 * x[t];
        __syncthreads();
        if (t == 0) {
            __threadfence();
            *(volatile int*)flag = 1;
        }
    } else {
        if (t == 0) {
            while (*(volatile int*)flag == 0) {
            }
            __threadfence();
        }
        __syncthreads();
        if (t < n)
            out[t] = part[t] + x[t];
    }
}

// With a backoff (nvcc peels the first test off the loop).
extern "C" __global__ void fixup_backoff(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t < n)
            part[t] = 2 * x[t];
        __syncthreads();
        if (t == 0)
            f.store(1, cuda::memory_order_release);
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) < 1)
                __nanosleep(32);
        __syncthreads();
        if (t < n)
            out[t] = part[t] + x[t];
    }
}

// Bug: a relaxed store releases nothing, so the partials race with the reads.
extern "C" __global__ void fixup_relaxed(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t < n)
            part[t] = 2 * x[t];
        __syncthreads();
        if (t == 0)
            f.store(1, cuda::memory_order_relaxed);
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) == 0) {
            }
        __syncthreads();
        if (t < n)
            out[t] = part[t] + x[t];
    }
}

// Bug: the flag is reset for the next use right after it is set; the waiter may never see 1.
extern "C" __global__ void fixup_reset(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t < n)
            part[t] = 2 * x[t];
        __syncthreads();
        if (t == 0) {
            f.store(1, cuda::memory_order_release);
            f.store(0, cuda::memory_order_relaxed);
        }
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) == 0) {
            }
        __syncthreads();
        if (t < n)
            out[t] = part[t] + x[t];
    }
}

// Bug: only thread 0 of the waiting CTA waits; the others read at once.
extern "C" __global__ void fixup_no_barrier(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t < n)
            part[t] = 2 * x[t];
        __syncthreads();
        if (t == 0)
            f.store(1, cuda::memory_order_release);
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) == 0) {
            }
        if (t < n)
            out[t] = part[t] + x[t];
    }
}

// Within a CTA: warp 0's lanes each hand one element to the same lane of warp 1 through a
// volatile shared flag per lane, fenced on both sides. Reference: `triple_one`.
extern "C" __global__ void lanes_handoff(const int* x, int* out, int n)
{
    __shared__ volatile int flag[32];
    __shared__ int data[32];
    int t = threadIdx.x;
    if (t < 32)
        flag[t] = 0;
    __syncthreads();
    if (t < 32) {
        data[t] = 2 * x[t];
        __threadfence_block();
        flag[t] = 1;
    } else {
        int l = t - 32;
        while (flag[l] == 0) {
        }
        __threadfence_block();
        if (l < n)
            out[l] = data[l] + x[l];
    }
}

// Bug: the flags are never initialized: shared memory starts unspecified, so a wait may end
// at once, before the data is written.
extern "C" __global__ void lanes_uninit(const int* x, int* out, int n)
{
    __shared__ volatile int flag[32];
    __shared__ int data[32];
    int t = threadIdx.x;
    if (t < 32) {
        data[t] = 2 * x[t];
        __threadfence_block();
        flag[t] = 1;
    } else {
        int l = t - 32;
        while (flag[l] == 0) {
        }
        __threadfence_block();
        if (l < n)
            out[l] = data[l] + x[l];
    }
}

extern "C" __global__ void triple_one(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = 3 * x[t];
}

// Counters: arrivals with an atomic add (release), waited for until they reach a bound.
// Reference: out[t] = 3 x[t] by CTA 2.
extern "C" __global__ void triple_last(const int* x, int* part, int* flag, int* out, int n)
{
    int t = threadIdx.x;
    if (blockIdx.x == 2 && t < n)
        out[t] = 3 * x[t];
}

// Stream-K style: CTAs 0 and 1 each write their share and arrive (fetch_add, release); CTA 2
// waits until both have arrived, then sums the shares.
extern "C" __global__ void arrive_count(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x < 2) {
        if (t < n)
            part[blockIdx.x * 64 + t] = (blockIdx.x + 1) * x[t];
        __syncthreads();
        if (t == 0)
            f.fetch_add(1, cuda::memory_order_release);
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) != 2) {
            }
        __syncthreads();
        if (t < n)
            out[t] = part[t] + part[64 + t];
    }
}

// Bug: CTA 2 waits for one arrival only; the other share may not be written yet.
extern "C" __global__ void arrive_count_one(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x < 2) {
        if (t < n)
            part[blockIdx.x * 64 + t] = (blockIdx.x + 1) * x[t];
        __syncthreads();
        if (t == 0)
            f.fetch_add(1, cuda::memory_order_release);
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) < 1) {
            }
        __syncthreads();
        if (t < n)
            out[t] = part[t] + part[64 + t];
    }
}

// Bug: waits for three arrivals where two come: it never ends.
extern "C" __global__ void arrive_count_three(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x;
    if (blockIdx.x < 2) {
        if (t < n)
            part[blockIdx.x * 64 + t] = (blockIdx.x + 1) * x[t];
        __syncthreads();
        if (t == 0)
            f.fetch_add(1, cuda::memory_order_release);
    } else {
        if (t == 0)
            while (f.load(cuda::memory_order_acquire) < 3) {
            }
        __syncthreads();
        if (t < n)
            out[t] = part[t] + part[64 + t];
    }
}

// A software grid barrier: every CTA writes its share, arrives (acq_rel) and waits for all,
// then reads the other CTA's share. Reference: `triple_each`.
extern "C" __global__ void grid_barrier(const int* x, int* part, int* flag, int* out, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x, b = blockIdx.x;
    if (t < n)
        part[b * 64 + t] = (b + 1) * x[t];
    __syncthreads();
    if (t == 0) {
        f.fetch_add(1, cuda::memory_order_acq_rel);
        while (f.load(cuda::memory_order_acquire) < (int)gridDim.x) {
        }
    }
    __syncthreads();
    if (t < n)
        out[b * 64 + t] = part[t] + part[64 + t];
}

extern "C" __global__ void triple_each(const int* x, int* part, int* flag, int* out, int n)
{
    int t = threadIdx.x, b = blockIdx.x;
    if (t < n)
        out[b * 64 + t] = 3 * x[t];
}

// Chains: CTAs take turns on one accumulator (serial split-k). CTA b adds its share after
// CTA b - 1 hands over, then hands over to b + 1. Reference: `sum_shares` (the accumulator
// ends with (1 + 2 + ... + gridDim.x) x).
extern "C" __global__ void sum_shares(const int* x, int* flag, int* acc, int n)
{
    int t = threadIdx.x;
    int g = gridDim.x;
    if (blockIdx.x == 0 && t < n)
        acc[t] = (g * (g + 1) / 2) * x[t];
}

// The turn passes through a status flag: CTA b waits for status b, then stores b + 1.
extern "C" __global__ void turns_status(const int* x, int* flag, int* acc, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x, b = blockIdx.x;
    if (t == 0)
        while (f.load(cuda::memory_order_acquire) != b) {
        }
    __syncthreads();
    if (t < n)
        acc[t] = (b == 0 ? 0 : acc[t]) + (b + 1) * x[t];
    __syncthreads();
    if (t == 0)
        f.store(b + 1, cuda::memory_order_release);
}

// The turn passes through a counter: CTA b waits until b CTAs have arrived, then arrives.
extern "C" __global__ void turns_count(const int* x, int* flag, int* acc, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x, b = blockIdx.x;
    if (t == 0)
        while (f.load(cuda::memory_order_acquire) < b) {
        }
    __syncthreads();
    if (t < n)
        acc[t] = (b == 0 ? 0 : acc[t]) + (b + 1) * x[t];
    __syncthreads();
    if (t == 0)
        f.fetch_add(1, cuda::memory_order_release);
}

// Bug: CTA b waits for any status at least 1 (not for its turn): two CTAs may add at once.
extern "C" __global__ void turns_any(const int* x, int* flag, int* acc, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x, b = blockIdx.x;
    if (t == 0 && b > 0)
        while (f.load(cuda::memory_order_acquire) < 1) {
        }
    __syncthreads();
    if (t < n)
        acc[t] = (b == 0 ? 0 : acc[t]) + (b + 1) * x[t];
    __syncthreads();
    if (t == 0)
        f.store(b + 1, cuda::memory_order_release);
}

// Bug: CTA b hands over (stores b + 1) before it adds its share: the next CTA may read the
// accumulator while it is written.
extern "C" __global__ void turns_early(const int* x, int* flag, int* acc, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x, b = blockIdx.x;
    if (t == 0)
        while (f.load(cuda::memory_order_acquire) != b) {
        }
    __syncthreads();
    if (t == 0)
        f.store(b + 1, cuda::memory_order_release);
    if (t < n)
        acc[t] = (b == 0 ? 0 : acc[t]) + (b + 1) * x[t];
}

// Bug: CTAs 0 and 1 both take the first turn (b / 2 rounded down): they add at once.
extern "C" __global__ void turns_shared(const int* x, int* flag, int* acc, int n)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    int t = threadIdx.x, b = blockIdx.x, turn = b / 2;
    if (t == 0)
        while (f.load(cuda::memory_order_acquire) != turn) {
        }
    __syncthreads();
    if (t < n)
        acc[t] = (b == 0 ? 0 : acc[t]) + (b + 1) * x[t];
    __syncthreads();
    if (t == 0)
        f.store(turn + 1, cuda::memory_order_release);
}

// Turns between the warps of one CTA: warp w's lane 0 waits for turn w; the warp adds its
// share after __syncwarp and hands the turn on after another. Correct on a GPU, but lockstep
// execution holds warp 0 back at the point where the warps reconverge, so keq cannot run it:
// Inconclusive, named (it used to refute it: the wait "spins forever").
extern "C" __global__ void warps_turns(const int* x, int* out, int n)
{
    __shared__ volatile int turn;
    int t = threadIdx.x, w = t / 32, l = t % 32;
    if (t == 0)
        turn = 0;
    __syncthreads();
    if (l == 0)
        while (turn != w) {
        }
    __syncwarp();
    __threadfence_block();
    if (l < n)
        out[l] = (w == 0 ? 0 : out[l]) + (w + 1) * x[l];
    __threadfence_block();
    __syncwarp();
    if (l == 0)
        turn = w + 1;
}

// `sum_shares` with the CTA count as a parameter (a spec over launch shapes names it).
extern "C" __global__ void sum_shares_k(const int* x, int* flag, int* acc, int n, int k)
{
    int t = threadIdx.x;
    if (blockIdx.x == 0 && t < n)
        acc[t] = (k * (k + 1) / 2) * x[t];
}
