// Termination. The candidate spins forever where an input element is 0; a kernel that
// never stops is not equivalent to one that does (shown on the emulator with its step
// budget). And a flag handoff between two warps that only terminates if the writer is
// scheduled while the reader spins.

extern "C" __global__ void copy(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = x[t];
}

extern "C" __global__ void copy_spin_on_zero(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n) {
        volatile const int* v = x;
        while (v[t] == 0) {
        }
        out[t] = x[t];
    }
}

// Every thread halves its value until it is 0: always terminates; with a bug (shifting by
// 0) it never does, for every input but 0.
extern "C" __global__ void steps_to_zero(const unsigned* x, unsigned* out, int n)
{
    int t = threadIdx.x;
    if (t < n) {
        unsigned v = x[t], k = 0;
        while (v != 0) {
            v >>= 1;
            ++k;
        }
        out[t] = k;
    }
}

extern "C" __global__ void steps_to_zero_stuck(const unsigned* x, unsigned* out, int n, int s)
{
    int t = threadIdx.x;
    if (t < n) {
        unsigned v = x[t], k = 0;
        while (v != 0) {
            v >>= s;
            ++k;
        }
        out[t] = k;
    }
}

// Warp 1 waits for warp 0's flag (volatile: morally strong, no race on the flag); the data
// handed over is read after the flag is seen. Whether the emulator's schedule lets warp 0
// run while warp 1 spins decides whether it ends.
extern "C" __global__ void handoff(const int* x, int* out, int n)
{
    __shared__ volatile int flag;
    __shared__ int data;
    int t = threadIdx.x;
    if (t == 0)
        flag = 0;
    __syncthreads();
    if (t == 0) {
        data = x[0];
        __threadfence_block();
        flag = 1;
    } else if (t == 32) {
        while (flag == 0) {
        }
        __threadfence_block();
        if (n > 0)
            out[0] = data;
    }
}

extern "C" __global__ void first(const int* x, int* out, int n)
{
    if (threadIdx.x == 0 && n > 0)
        out[0] = x[0];
}
