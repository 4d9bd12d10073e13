// tests/data/fuzz_sum: one block of 512 threads sums in[0..n) (n <= 512) into out[0].
// Used by tests/fuzz/test_fuzz_real_tolerance.py (real mode, the derived tolerance):
//   sum_tree            reference: shared-memory tree, sequential addressing (depth 9)
//   sum_serial          equivalent as reals: thread 0 adds in[0], in[1], ... in order (n adds)
//   sum_tree_drop_last  planted bug: the same tree over in[0..n-1), the last element dropped
// Build: nvcc -ptx -arch=sm_90 -O3 block_sum.cu -o block_sum.ptx

#define THREADS 512

extern "C" __global__ void sum_tree(const float *in, float *out, int n) {
    __shared__ float s[THREADS];
    unsigned t = threadIdx.x;
    s[t] = (int)t < n ? in[t] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[0] = s[0];
}

extern "C" __global__ void sum_tree_drop_last(const float *in, float *out, int n) {
    __shared__ float s[THREADS];
    unsigned t = threadIdx.x;
    s[t] = (int)t < n - 1 ? in[t] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[0] = s[0];
}

extern "C" __global__ void sum_serial(const float *in, float *out, int n) {
    if (threadIdx.x == 0) {
        float acc = 0.0f;
        for (int i = 0; i < n; i++)
            acc += in[i];
        out[0] = acc;
    }
}
