// Memory layout the PTX ISA leaves open: where each .shared variable lives (and so what lies
// past its end), and the numeric value of a buffer address (only its alignment is known:
// cudaMalloc gives 256 bytes).

extern "C" __global__ void zeros(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = 0;
}

// The low 12 bits of a buffer's address: 0 only if it is 4096-byte aligned.
extern "C" __global__ void address_bits(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = (int)((unsigned long long)x & 0xFFF);
}

// The low 8 bits: 0 for every cudaMalloc'd buffer (256-byte aligned).
extern "C" __global__ void address_aligned_bits(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = (int)((unsigned long long)x & 0xFF);
}

// Which of two buffers lies lower in memory.
extern "C" __global__ void address_order(const int* x, int* out, int n)
{
    int t = threadIdx.x;
    if (t < n)
        out[t] = (unsigned long long)x < (unsigned long long)out ? 0 : 1;
}

// The shared-memory address of a variable, as a number.
extern "C" __global__ void shared_address(const int* x, int* out, int n)
{
    __shared__ int s[32];
    int t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    if (t < n)
        out[t] = (int)__cvta_generic_to_shared(&s[t]) - 4 * t + s[t] - x[t];
}
