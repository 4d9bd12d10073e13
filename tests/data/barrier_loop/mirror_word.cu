// BUG: each thread copies the mirrored thread's word (to the mirrored place, so the output is
// the reference's), which is ordered after its write only by the barriers of the loop: with
// reps == 0 there is none, and the read races with the write.
extern "C" __global__ void mirror_word(float* out, int reps)
{
    __shared__ float s[64];
    s[threadIdx.x] = (float)threadIdx.x;
    for (int r = 0; r < reps; ++r)
        __syncthreads();
    out[63 - threadIdx.x] = s[63 - threadIdx.x];
}
