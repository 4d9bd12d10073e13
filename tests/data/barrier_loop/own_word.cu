// Reference: each thread stages a word in shared memory, waits `reps` times at a barrier,
// then reads back its own word (no other thread's: race-free whatever reps is).
extern "C" __global__ void own_word(float* out, int reps)
{
    __shared__ float s[64];
    s[threadIdx.x] = (float)threadIdx.x;
    for (int r = 0; r < reps; ++r)
        __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
